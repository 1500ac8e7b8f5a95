/*
 * dpb_exact_cf.h -- characteristic function of the per-round likelihood ratio
 * (SPEC Part A sections 1 and 10b), the kernel of the exact random-allocation accountant.
 *
 *   Y  = exp(X/sigma - 1/(2 sigma^2)),  X ~ N(0,1)   (E Y = 1; the H0 summand)
 *   wY = exp(X/sigma + 1/(2 sigma^2))                (the size-biased H1 signal term, E wY = w)
 *
 * For Z = Y (size_biased = 0) or Z = wY (size_biased = 1) the kernel returns
 *
 *   r(t) = E[exp(i t (Z - 1))] - 1 - i t (E Z - 1),
 *
 * i.e. chi(t) - 1 for Y (with full RELATIVE accuracy even for tiny t, where r ~ -t^2 (w-1)/2:
 * chi is raised to the power M, so log chi must keep its relative accuracy).
 */
#ifndef DPB_EXACT_CF_H
#define DPB_EXACT_CF_H

/*
 * METHOD  r(t) = int n(z) g(t v(z)) dz with v(z) = exp(z/sigma + m) - 1 and
 *         g(y) = e^{iy} - 1 - iy (Taylor series for |y| < 0.2, direct otherwise).
 *         The integrand is entire in z, so the line of integration may be shifted to
 *         z = u + i eta (SPEC 10b): with s = 1/sigma, s*eta = min(pi/2, 1.2 s) the factor
 *         exp(i t v) decays instead of oscillating where t e^{s u} is large.  The real line
 *         (eta = 0) is used when t s e^{s u_hi + m} <= 1/2 (no oscillation at all).
 *         Trapezoid rule on u in [-9.5, 9.5 + (2 + size_biased) s], step min(0.2, sigma/4).
 * ACCURACY  relative error <= 1e-12 for sigma in [0.3, 20], t in [1e-8, 300]
 *         (test_exact_cf.py checks 1e-12 vs mpmath quadrature at 30 digits at sigma >= 0.5, 1e-10 at sigma = 0.3);
 *         typically 2e-14.
 * EDGES   t = 0 -> 0; r(-t) = conj r(t); NaN t or sigma -> NaN; sigma <= 0 or
 *         sigma < 0.2 (outside the tested range; exp would overflow far below) -> NaN.  No FP flag is raised for finite input.
 */
void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                            double *re, double *im);

#endif /* DPB_EXACT_CF_H */
