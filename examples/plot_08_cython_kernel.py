"""
Calling a kernel from Cython
============================

The C kernels are public (:doc:`../c_api`): a Cython module can ``cimport
countgrid.cython_api`` and call them without the GIL, with no include or library
directory to configure.  This module computes the window sums of a 2-D grid with
``grid_window_sum_f64``, the kernel behind ``CountingGrid.h_``.

Compiling an extension takes longer than the gallery's time budget, so this page shows
the code and checks in Python what it computes.  The test suite compiles modules that
call the kernels this way against the installed package
(``tests/capi/test_downstream_cython.py``).

.. code-block:: cython

    # mymod.pyx
    cimport countgrid.cython_api as cg
    from libc.stdint cimport int64_t

    def window_sum(const double[:, ::1] a, double[:, ::1] out, int64_t e0, int64_t e1,
                   int64_t w0, int64_t w1):
        cdef int64_t extent[2]
        cdef int64_t window[2]
        cdef int status
        extent[0], extent[1], window[0], window[1] = e0, e1, w0, w1
        with nogil:
            status = cg.grid_window_sum_f64(2, extent, window, 0, 1.0, a.shape[0],
                                            &a[0, 0], a.shape[1], &out[0, 0],
                                            out.shape[1], 0)
        if status != cg.CG_OK:
            raise ValueError(f"grid_window_sum_f64 failed with status {status}")

and its ``setup.py``:

.. code-block:: python

    from setuptools import Extension, setup
    from Cython.Build import cythonize

    setup(name="mymod",
          ext_modules=cythonize([Extension("mymod", ["mymod.pyx"])], language_level=3))
"""
# %%
# What the kernel computes: on a torus of extent ``E`` the sum over the window of shape
# ``W`` whose first cell is ``k``, for every ``k`` and every feature.  A counting grid's
# window histograms ``h_`` are these sums divided by the window size, so a fitted grid
# checks the formula (the Cython module returns the same array up to rounding).
import os
import warnings

import numpy as np

import countgrid

# A five-iteration fit is enough here; its "did not converge" warning is expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

rng = np.random.default_rng(0)
X = rng.poisson(1.0, size=(40, 12))
grid = countgrid.CountingGrid((6, 7), (2, 3), n_iter=5, min_iter=1, random_state=0).fit(X)


def window_sum_numpy(a, window):
    out = np.zeros_like(a)
    for d0 in range(window[0]):
        for d1 in range(window[1]):
            out += np.roll(a, (-d0, -d1), axis=(0, 1))
    return out


sums = window_sum_numpy(grid.pi_, (2, 3))
print("max |h_ - window sums / |W||:", np.abs(grid.h_ - sums / 6).max())

# %%
# Where the declarations live: the ``.pxd`` that Cython reads is installed with the
# package.
pxd = os.path.join(os.path.dirname(countgrid.__file__), "cython_api.pxd")
print([line.strip() for line in open(pxd) if "grid_window_sum_f64" in line][:1])
