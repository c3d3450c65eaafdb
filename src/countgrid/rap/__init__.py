"""The Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006)."""
from countgrid.rap._rap import BLOCK_ROWS, MAX_COUNT, MAX_LOGRATE, MAX_TRIALS, RAP

__all__ = ["RAP", "MAX_LOGRATE", "MAX_COUNT", "BLOCK_ROWS", "MAX_TRIALS"]
