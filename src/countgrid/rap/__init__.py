"""The Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006)."""
from countgrid.rap._rap import (AUTO_RATE, AUTO_UNITS, BLOCK_ROWS, MAX_COUNT, MAX_LOGRATE, MAX_TRIALS, RAP,
                                auto_learning_rate)

__all__ = ["RAP", "MAX_LOGRATE", "MAX_COUNT", "BLOCK_ROWS", "MAX_TRIALS", "AUTO_RATE", "AUTO_UNITS",
           "auto_learning_rate"]
