/*
 * dpb_rdp_base.h -- Renyi-DP curves eps(alpha) of the three base mechanisms used in
 * Section 4 of "Subsampled Renyi Differential Privacy and Analytical Moments Accountant"
 * (Gaussian, Laplace, randomized response; Mironov 2017, "Renyi Differential Privacy", Table II).
 *
 * Domain: alpha in [1, +inf] (alpha = 1 is the KL limit, alpha = inf the
 * pure-DP epsilon).  alpha < 1, NaN, or a parameter outside its domain -> NaN.
 * Values that exceed DBL_MAX -> +inf, no FP flag.
 */
#ifndef DPB_RDP_BASE_H
#define DPB_RDP_BASE_H

/* Gaussian mechanism, sigma = noise std / L2 sensitivity:  eps(a) = a / (2 sigma^2).
 * METHOD   direct.  ACCURACY <= 2 ulp.  EDGES a = inf -> inf; sigma <= 0 or inf -> NaN. */
double dpb_rdp_gaussian(double alpha, double sigma);

/* Laplace mechanism, scale b (L1 sensitivity 1):
 *   eps(a) = log( a/(2a-1) e^{(a-1)/b} + (a-1)/(2a-1) e^{-a/b} ) / (a-1).
 * METHOD   a/b < 0.5: the exact power series in u = 1/b of the log1p argument
 *          (no first-order cancellation); otherwise
 *          1/b + log1p((a-1)/(2a-1) expm1(-(2a-1)/b))/(a-1).
 *          a = 1: 1/b + expm1(-1/b) (series for b > 2);  a = inf: 1/b.
 * ACCURACY relative error <= 1e-14 vs mpmath (tests/rdp/test_rdp_kernels.py), b in [1e-3, 1e6], a in [1, 1e4].
 * EDGES    b <= 0 or inf -> NaN. */
double dpb_rdp_laplace(double alpha, double b);

/* Binary randomized response, truthful with probability p in (0, 1):
 *   eps(a) = log( p^a (1-p)^{1-a} + (1-p)^a p^{1-a} ) / (a-1).
 * METHOD   with r = |log(p/(1-p))|, the log argument minus one equals
 *          2 sinh(a r/2) sinh((a-1) r/2) / cosh(r/2) (exact identity; no cancellation
 *          near p = 1/2), then log1p in log space.  a = 1: (2p-1) log(p/(1-p));  a = inf: r.
 * ACCURACY relative error <= 1e-14 vs mpmath, p in [1e-6, 1 - 1e-6], a in [1, 1e4].
 * EDGES    p outside (0, 1) -> NaN; p = 1/2 -> 0. */
double dpb_rdp_randomized_response(double alpha, double p);

/* Pure-DP epsilon (alpha = inf) of each base mechanism, for subsampling bounds. */
double dpb_rdp_laplace_inf(double b);
double dpb_rdp_rr_inf(double p);

#endif /* DPB_RDP_BASE_H */
