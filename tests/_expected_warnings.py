"""Filters of the warnings that tests provoke on purpose, each by message and class, for
the tests (``@FEW_ITERATIONS``) or modules (``pytestmark``) where they are expected (a
test that checks a warning asserts it: pytest.warns)."""
import pytest

#: EM stopped at n_iter before meeting tol: the test fits a few iterations on purpose (fast
#: fits), and what it checks holds for any number of iterations
FEW_ITERATIONS = pytest.mark.filterwarnings(
    "ignore:.* did not converge in .* iterations:countgrid.exceptions.ConvergenceWarning")

#: a counting grid larger than its few documents fill, on purpose
LARGE_GRID = pytest.mark.filterwarnings(
    "ignore:.* hold almost no documents:countgrid.exceptions.CapacityWarning")
