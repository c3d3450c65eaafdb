"""The Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006)."""
from countgrid.rap._rap import (AUTO_RATE, AUTO_UNITS, BLOCK_ROWS, MAX_CD_STEPS, MAX_COUNT,
                                MAX_LOGRATE, MAX_TRIALS, RAP, auto_learning_rate)

__all__ = ["RAP", "auto_learning_rate", "AUTO_RATE", "AUTO_UNITS", "MAX_LOGRATE", "MAX_COUNT",
           "BLOCK_ROWS", "MAX_TRIALS", "MAX_CD_STEPS"]
