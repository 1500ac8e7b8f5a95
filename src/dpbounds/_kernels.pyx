# cython: language_level=3
"""Hand-written compiled code that is not elementwise (the ufuncs are generated: _ufuncs.pyx).

One extension module, assembled from one file per concern (as scipy.special assembles its
``_ufuncs`` from ``.pxi`` files):

* ``_kernels_accountant.pxi`` -- kernels of the exact random-allocation accountant: the
  lognormal characteristic function (plain, tilted, on a grid), the log-domain convolution,
  the phase-exact Fourier series.
* ``_kernels_rdp.pxi`` -- loops of the Renyi-DP bounds for subsampling without replacement,
  which share a workspace along the flattened arguments.
* ``_kernels_theorem31.pxi`` -- the scalar fast paths in front of the validated Theorem 3.1
  functions of :mod:`dpbounds.allocation_bound` (``delta_bound``, ``rounds_closed_form``,
  ``rounds_required``, ``min_dataset_size``): a call with Python numbers in the domain goes
  straight to C; every other call goes to the Python function, which owns the docstring, the
  argument checks and the error policy.
* ``_kernels_outer.pxi`` -- the Cartesian-grid kernels behind :mod:`dpbounds.outer`
  (``outer_*``, raw: the ufuncs' NaN conventions), run tile by tile with the GIL released and
  Ctrl-C checked between tiles.

This file holds what they share: the imports, and the translation of the C core's error codes.
"""
cimport cython
import functools
import numpy as np
cimport numpy as cnp
from libc.math cimport NAN, INFINITY, isnan, isinf, floor, lgamma, sqrt
from libc.stdlib cimport malloc, free
from cpython.exc cimport PyErr_CheckSignals, PyErr_Occurred
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer
from dpbounds._interrupt cimport dpb_watch, dpb_watch_start, dpb_watch_block_end, dpb_watch_stop
from dpbounds._core cimport *

from dpbounds import _errors
from dpbounds._errors import DPBoundsError
from dpbounds._validation import check_choice

cnp.import_array()


cdef inline int _check_alloc(int rc, str kernel) except -1:
    """The one translation of the C core's DPB_ENOMEM (an allocation failed) into MemoryError."""
    if rc != 0:
        raise MemoryError(f"{kernel}: out of memory")
    return 0


cdef int _raise_pending() except -1:
    """Raise the exception a signal handler left set (KeyboardInterrupt) from the calling kernel."""
    if PyErr_Occurred() != NULL:
        return -1
    raise SystemError("a kernel stopped for a signal but no exception is set")


include "_kernels_accountant.pxi"
include "_kernels_rdp.pxi"
include "_kernels_theorem31.pxi"
include "_kernels_outer.pxi"


def _libmvec_in_use():
    """True when glibc's vector math library (libmvec) serves exp/expm1/erfc in the C core."""
    return bool(dpb_vecmath_is_native())
