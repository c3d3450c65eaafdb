"""The warning of a 0.1.0 module path kept for old code (scikit-learn 0.22's way of moving
its private modules: the old path works, and says where to go, for two releases)."""
import warnings

#: The release that removes the 0.1.0 module paths (deprecated in 0.2.0).
REMOVED_IN = "0.4.0"


def warn_moved_module(old, new, names):
    """Warn (FutureWarning, shown by default) that module ``old`` moved to ``new``.

    Called at the import of ``old``; ``names`` are what it re-exports.
    """
    warnings.warn(
        f"the module {old} is deprecated since countgrid 0.2.0 and will be removed in "
        f"{REMOVED_IN}: import {', '.join(names)} from {new} instead",
        FutureWarning, stacklevel=3)
