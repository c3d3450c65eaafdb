"""Generative topographic mapping of counts with a zero-inflated Poisson observation model
(Alvarez-Medina & Hidalgo-Silva; Bishop, Svensén & Williams 1998)."""
from countgrid.gtm._glm import (irls_poisson, log_px_given_latent, logistic_glm_fun,
                                poisson_glm_fun, zip_terms)
from countgrid.gtm._zip_gtm import MAX_COUNT, ZIPGTM

__all__ = ["ZIPGTM", "MAX_COUNT", "zip_terms", "log_px_given_latent", "poisson_glm_fun",
           "logistic_glm_fun", "irls_poisson"]
