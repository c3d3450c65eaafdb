"""Gaussian mixtures fitted by EM to weighted histograms (Kobayashi, Algorithms 1-3)."""
from countgrid.mixture._histogram_gmm import HistogramGMM

__all__ = ["HistogramGMM"]
