"""Deprecated 0.1.0 module path, kept so that code written for 0.1.0 works: importing it
warns (FutureWarning) and it goes in 0.4.0; its names live in :mod:`countgrid.gtm`."""
from countgrid._utils.deprecation import warn_moved_module
from countgrid.gtm._glm import (irls_poisson, log_px_given_latent,
                                logistic_glm_fun, poisson_glm_fun, zip_terms)
from countgrid.gtm._zip_gtm import ZIPGTM

__all__ = ["ZIPGTM", "zip_terms", "log_px_given_latent", "poisson_glm_fun",
           "logistic_glm_fun", "irls_poisson"]

warn_moved_module(__name__, "countgrid.gtm", __all__)
