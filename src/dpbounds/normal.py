"""The standard normal distribution (notation of docs/theorem31.md).

These are the raw ufuncs of the C core: they follow numpy conventions (NaN in ->
NaN out, NaN outside the domain) instead of raising, like ``scipy.special``.

=====================  ==================================  =========================================
function               definition                          accuracy vs mpmath (tests/special/test_normal.py)
=====================  ==================================  =========================================
``ndtr(x)``            Phi(x)                              <= 4 ulp on [-37.5, 8.3]; subnormal below
``log_ndtr(x)``        log Phi(x)                          <= 4 ulp on [-1e5, 8]
``ndtri(p)``           Phi^{-1}(p)                         <= 4 ulp on [1e-300, 1 - 2**-53], subnormal p
``ndtri_complement``   Phi^{-1}(1 - a) = -Phi^{-1}(a)      as ndtri; no cancellation for tiny a
``normal_pdf(x)``      exp(-x^2/2)/sqrt(2 pi)              ~1 ulp (x^2 split exactly)
=====================  ==================================  =========================================

``ndtr`` beats the textbook ``erfc(-x/sqrt2)/2`` (and scipy, ~1000 ulp at x = -37)
by correcting the rounding of x/sqrt2 to first order.
"""
from dpbounds._ufuncs import log_ndtr, ndtr, ndtri, ndtri_complement, normal_pdf

__all__ = ["ndtr", "log_ndtr", "ndtri", "ndtri_complement", "normal_pdf"]
