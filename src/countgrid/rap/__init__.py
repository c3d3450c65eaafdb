"""The Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006)."""
from countgrid.rap._rap import (AUTO_RATE, AUTO_UNITS, BLOCK_ROWS, MAX_COUNT,  # noqa: F401
                                MAX_LOGRATE, MAX_TRIALS, RAP, auto_learning_rate)

# AUTO_RATE, AUTO_UNITS and auto_learning_rate (learning_rate="auto", docs/rap.md) are
# importable from here; they join __all__ once docs/api.rst lists them
__all__ = ["RAP", "MAX_LOGRATE", "MAX_COUNT", "BLOCK_ROWS", "MAX_TRIALS"]
