# cython: language_level=3
"""Raw numpy ufuncs for trade-off curves and Gaussian DP (csrc/dpb_tradeoff.c, csrc/dpb_gdp.c).

Numpy conventions: these never raise; NaN in gives NaN out and arguments outside a
function's domain give NaN.  The validated wrappers live in :mod:`dpbounds.tradeoff`.
"""
cimport cython
from dpbounds._csrc cimport DPB_COEF_SIMPLIFIED, DPB_COEF_EXACT
from dpbounds._tradeoff_csrc cimport *


# ---------------------------------------------------------------- simple curves
@cython.ufunc
cdef double gaussian_tradeoff(double a, double mu) noexcept nogil:
    """G_mu(a) = Phi(Phi^{-1}(1 - a) - mu); NaN for a outside [0, 1] or mu < 0."""
    return dpb_gaussian_tradeoff(a, mu)

@cython.ufunc
cdef double f0delta_tradeoff(double a, double delta) noexcept nogil:
    """f_{0,delta}(a) = max(1 - a - delta, 0)."""
    return dpb_f0delta_tradeoff(a, delta)

@cython.ufunc
cdef double gaussian_f0delta_tradeoff(double a, double mu, double delta) noexcept nogil:
    """(G_mu (x) f_{0,delta})(a) = (1 - delta) G_mu(a/(1 - delta)) for a <= 1 - delta, else 0."""
    return dpb_gaussian_f0delta_tradeoff(a, mu, delta)

@cython.ufunc
cdef double multi_epoch_tradeoff(double a, double delta, double epochs) noexcept nogil:
    """max((1 - delta)^E - a, 0) = f_{0,delta}^{(x)E}(a)."""
    return dpb_multi_epoch_tradeoff(a, delta, epochs)

@cython.ufunc
cdef double gaussian_max_gap(double mu, double delta) noexcept nogil:
    """max_a (1 - a - (G_mu (x) f_{0,delta})(a)) = 1 - (1 - delta) 2 Phi(-mu/2)."""
    return dpb_gaussian_max_gap(mu, delta)


# ---------------------------------------------------------------- random allocation curves
@cython.ufunc
cdef double tradeoff_clt(double a, double sigma, double rounds) noexcept nogil:
    """CLT trade-off integral (SPEC 8, untruncated); an approximation, abs error <= 1e-14."""
    return dpb_tradeoff_clt(a, sigma, rounds, 0)

@cython.ufunc
cdef double tradeoff_clt_truncated(double a, double sigma, double rounds) noexcept nogil:
    """CLT trade-off integral truncated at z_max (SPEC 8); an approximation."""
    return dpb_tradeoff_clt(a, sigma, rounds, 1)

@cython.ufunc
cdef double tradeoff_clt_slope(double a, double sigma, double rounds) noexcept nogil:
    """Derivative f'(a) of the untruncated CLT curve."""
    return dpb_tradeoff_clt_slope(a, sigma, rounds)

@cython.ufunc
cdef double tradeoff_edgeworth(double a, double sigma, double rounds) noexcept nogil:
    """Edgeworth-corrected trade-off integral (SPEC 9); NaN where p_M is not invertible."""
    return dpb_tradeoff_edgeworth(a, sigma, rounds)

@cython.ufunc
cdef long edgeworth_status(double a, double sigma, double rounds) noexcept nogil:
    """Bitmask: 0 defined, 1 bad input, 2 p_n not increasing at 0, 4 x outside p_M's monotone range."""
    return dpb_edgeworth_status(a, sigma, rounds)

@cython.ufunc
cdef double edgeworth_p(double y, double sigma, double n) noexcept nogil:
    """The Edgeworth polynomial p_n(y) of the lognormal likelihood ratio (SPEC 9)."""
    return dpb_edgeworth_p(y, sigma, n)

@cython.ufunc
cdef double tradeoff_lower_bound_exact(double a, double sigma, double rounds) noexcept nogil:
    """max(1 - a - delta_min, 0), coef_exact, where Theorem 3.1 is valid; NaN elsewhere."""
    return dpb_tradeoff_lower_bound(a, sigma, rounds, DPB_COEF_EXACT)

@cython.ufunc
cdef double tradeoff_lower_bound_simplified(double a, double sigma, double rounds) noexcept nogil:
    """max(1 - a - delta_min, 0), coef_simplified, where Theorem 3.1 is valid; NaN elsewhere."""
    return dpb_tradeoff_lower_bound(a, sigma, rounds, DPB_COEF_SIMPLIFIED)


# ---------------------------------------------------------------- Gaussian DP
@cython.ufunc
cdef double normal_mills(double x) noexcept nogil:
    """Lower-tail Mills ratio R(x) = Phi(x)/n(x)."""
    return dpb_normal_mills(x)

@cython.ufunc
cdef double gdp_delta(double eps, double mu) noexcept nogil:
    """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) of mu-GDP."""
    return dpb_gdp_delta(eps, mu)

@cython.ufunc
cdef double gdp_log_delta(double eps, double mu) noexcept nogil:
    """log delta(eps) of mu-GDP."""
    return dpb_gdp_log_delta(eps, mu)

@cython.ufunc
cdef double gdp_epsilon(double delta, double mu) noexcept nogil:
    """Smallest eps >= 0 with delta(eps; mu) <= delta."""
    return dpb_gdp_epsilon(delta, mu)

@cython.ufunc
cdef double gdp_mu_random_allocation(double sigma, double rounds, double epochs) noexcept nogil:
    """sqrt(E (e^{1/sigma^2} - 1)/(M - 1)): Theorem 4.2's asymptotic mu (not a bound)."""
    return dpb_gdp_mu_random_allocation(sigma, rounds, epochs)

@cython.ufunc
cdef double gdp_mu_poisson(double sigma, double sample_rate, double steps) noexcept nogil:
    """Bu et al. CLT mu = p sqrt(T (e^{1/sigma^2} - 1)) for Poisson subsampling."""
    return dpb_gdp_mu_poisson(sigma, sample_rate, steps)

@cython.ufunc
cdef double gdp_mu_poisson_drs(double sigma, double sample_rate, double steps) noexcept nogil:
    """Dong-Roth-Su Cor. 5.4 mu for Poisson subsampling."""
    return dpb_gdp_mu_poisson_drs(sigma, sample_rate, steps)
