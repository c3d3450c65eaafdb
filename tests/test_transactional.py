"""fit and partial_fit are transactional (countgrid._base._transactional): a call that fails
or is interrupted half way never leaves a half-trained model that passes the fitted check."""
import numpy as np
import pytest

from countgrid._base import BaseEstimator


class _Toy(BaseEstimator, saveable=False):
    _parameter_constraints = {"fail_at": [int, None]}

    def __init__(self, fail_at=None):
        self.fail_at = fail_at

    def fit(self, X, y=None):
        if X is None:
            raise ValueError("X is None")
        self.coef_ = np.zeros(3)
        for it in range(1, 6):
            self.coef_ = self.coef_ + 1
            if it == self.fail_at:
                raise KeyboardInterrupt
            coef = self.coef_.copy()
            self._checkpoint(lambda coef=coef, it=it: self._apply(coef, it))
        self.n_iter_ = 5
        return self

    def _apply(self, coef, it):
        self.coef_, self.n_iter_ = coef, it
        return f"iteration {it} of 5"

    def partial_fit(self, X, y=None):
        self.coef_ = getattr(self, "coef_", np.zeros(3)) + 1
        self.n_batches_ = getattr(self, "n_batches_", 0) + 1
        if X == "boom":
            raise KeyboardInterrupt
        return self


class _ToyNoCheckpoint(_Toy, saveable=False):
    def _checkpoint(self, apply):
        pass


def test_complete_fit_keeps_everything():
    est = _Toy().fit(1)
    assert est.n_iter_ == 5 and est.coef_.tolist() == [5, 5, 5]
    assert "_fit_checkpoint" not in vars(est)


def test_interrupt_keeps_the_last_checkpoint_and_says_so():
    est = _Toy(fail_at=3)
    with pytest.raises(KeyboardInterrupt) as info:
        est.fit(1)
    assert est.n_iter_ == 2 and est.coef_.tolist() == [2, 2, 2]
    assert any("iteration 2 of 5" in note for note in info.value.__notes__)
    assert "_fit_checkpoint" not in vars(est)


def test_interrupt_before_any_checkpoint_leaves_unfitted():
    est = _Toy(fail_at=1)
    with pytest.raises(KeyboardInterrupt) as info:
        est.fit(1)
    assert not hasattr(est, "coef_") and not hasattr(est, "n_iter_")
    assert any("unfitted" in note for note in info.value.__notes__)


def test_interrupt_without_checkpoints_leaves_unfitted_even_if_fitted_before():
    est = _ToyNoCheckpoint().fit(1)
    est.fail_at = 4
    with pytest.raises(KeyboardInterrupt):
        est.fit(1)
    assert not hasattr(est, "coef_") and not hasattr(est, "n_iter_")


def test_error_before_any_change_keeps_a_previous_fit():
    est = _Toy().fit(1)
    coef = est.coef_
    with pytest.raises(ValueError):
        est.fit(None)
    assert est.coef_ is coef and est.n_iter_ == 5


def test_interrupted_partial_fit_restores_the_state_before_the_call():
    est = _Toy().partial_fit(1).partial_fit(1)
    coef = est.coef_
    with pytest.raises(KeyboardInterrupt) as info:
        est.partial_fit("boom")
    assert est.coef_ is coef and est.n_batches_ == 2
    assert any("before this call" in note for note in info.value.__notes__)
    first = _Toy()
    with pytest.raises(KeyboardInterrupt):
        first.partial_fit("boom")
    assert not hasattr(first, "coef_") and not hasattr(first, "n_batches_")


def test_every_public_fit_is_wrapped():
    import countgrid
    for name in countgrid.__all__:
        cls = getattr(countgrid, name)
        if isinstance(cls, type) and issubclass(cls, BaseEstimator):
            for method in ("fit", "partial_fit"):
                if callable(getattr(cls, method, None)):   # a batch-only class's partial_fit
                    # is a property that raises AttributeError on instances
                    assert getattr(getattr(cls, method), "_countgrid_transactional", False), \
                        (name, method)
