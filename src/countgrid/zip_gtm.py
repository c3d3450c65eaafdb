"""The 0.1.0 module path of :class:`countgrid.ZIPGTM` and its model functions, kept so that code written for it
works; the code lives in :mod:`countgrid.gtm`."""
from countgrid.gtm._glm import (irls_poisson, log_px_given_latent,
                                logistic_glm_fun, poisson_glm_fun, zip_terms)
from countgrid.gtm._zip_gtm import ZIPGTM

__all__ = ["ZIPGTM", "zip_terms", "log_px_given_latent", "poisson_glm_fun",
           "logistic_glm_fun", "irls_poisson"]
