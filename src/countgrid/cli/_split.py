"""Seeded stratified splits of sample indices (the demo's train/test split, the folds of
``countgrid evaluate``)."""
from numbers import Integral, Real

import numpy as np

from countgrid._utils.param_validation import Interval, validate_params
from countgrid._utils.validation import check_random_state, encode_labels


def stratified_split(y, test_size=0.2, random_state=0):
    """Seeded stratified train/test split of sample indices.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    test_size : float, default=0.2
        Fraction of every class put in the test set (rounded, at least one
        sample of each class with two or more samples stays in training).
    random_state : int or numpy.random.Generator, default=0

    Returns
    -------
    train, test : ndarray of int
        Sorted indices of the two parts.
    """
    validate_params({"test_size": [Interval(Real, 0, 1, closed="neither")],
                     "random_state": ["random_state"]},
                    {"test_size": test_size, "random_state": random_state}, "stratified_split()")
    classes, codes = encode_labels(y)
    rng = check_random_state(random_state)
    test = []
    for c in range(len(classes)):
        idx = np.flatnonzero(codes == c)
        rng.shuffle(idx)
        n_test = min(int(round(test_size * len(idx))), len(idx) - 1)
        test.append(idx[:n_test])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(len(codes)), test)
    return train, test


def stratified_folds(y, n_folds=5, random_state=0):
    """Seeded stratified k-fold split: a list of ``(train, test)`` index arrays.

    Every class is shuffled and dealt round-robin to the folds, so each fold holds
    ``len(class) / n_folds`` members of each class (rounded); every sample is in exactly
    one test fold.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    n_folds : int, default=5
        At least 2 and at most the size of the smallest class.
    random_state : int or numpy.random.Generator, default=0
    """
    validate_params({"n_folds": [Interval(Integral, 2, None)],
                     "random_state": ["random_state"]},
                    {"n_folds": n_folds, "random_state": random_state}, "stratified_folds()")
    classes, codes = encode_labels(y)
    smallest = np.bincount(codes).min()
    if smallest < n_folds:
        raise ValueError(f"n_folds={n_folds} is more than the {smallest} samples of the "
                         f"smallest class ({str(classes[np.argmin(np.bincount(codes))])!r})")
    rng = check_random_state(random_state)
    fold = np.empty(len(codes), dtype=np.int64)
    for c in range(len(classes)):
        idx = np.flatnonzero(codes == c)
        rng.shuffle(idx)
        fold[idx] = (np.arange(len(idx)) + rng.integers(n_folds)) % n_folds
    return [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(n_folds)]
