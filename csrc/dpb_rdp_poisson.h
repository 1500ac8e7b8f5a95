/*
 * dpb_rdp_poisson.h -- RDP of the Poisson-subsampled Gaussian mechanism (each record
 * included independently with probability q; add/remove neighbours; sigma = noise std /
 * L2 sensitivity C), as in Mironov, Talwar and Zhang (2019), "Renyi Differential Privacy of
 * the Sampled Gaussian Mechanism".
 *
 *   A_a = E_{z~N(0,sigma^2)} [ ((1-q) + q exp((2z-1)/(2 sigma^2)))^a ],   eps(a) = log(A_a)/(a-1).
 *
 * Integer a >= 2: the closed sum  A_a - 1 = sum_{j=2..a} C(a,j) (1-q)^{a-j} q^j (e^{j(j-1)/(2 sigma^2)} - 1)
 *   (positive terms, log-sum-exp, log1p: accurate for q down to 1e-300).  Both modes agree here.
 * Real a (and the KL limit a = 1):
 *   DPB_POISSON_EXACT   the definition above, as A_a - 1 = E[(1+x)^a - 1 - a x] with x = q expm1(u)
 *                       (E[x] = 0; the integrand is >= 0 by convexity, so there is no cancellation
 *                       even for q = 1e-9), by the trapezoidal rule in log space on a grid that
 *                       covers both bumps (exponentially convergent: the integrand is analytic in a
 *                       strip of half-width pi sigma).  a = 1: E[(1+x) log1p(x) - x].
 *   DPB_POISSON_COMPAT  the MTZ series with |C(a,i)| as TF-Privacy / dp-accounting / Opacus evaluate
 *                       it: lgamma gives log|C(a,i)|, so the generalised binomials, which
 *                       alternate in sign for i > a + 1, are all added: exact + 2 * sum of the
 *                       negative-coefficient terms.
 *                       Conservative (over-estimates), e.g. +4% at a = 1.5, sigma = 1, q = 0.01.
 *                       The |C| series jumps at a = 1 (its extra terms are O(a-1)/(a-1)); a = 1 itself
 *                       returns the exact KL in both modes.
 *                       The polynomially decaying tail (terms ~ i^-(a+2)) is summed in closed form
 *                       (integral of the fitted power law) once below 1e-8 of the total; a series
 *                       still going after 16384 terms (q near 1/2 with sigma >~ 1e4: terms
 *                       ~ i^-(a+1) up to i ~ sigma) gets a certified upper bound on its rest
 *                       (trapezoid rule over geometric blocks; the terms are convex in i).
 * COST      integer a: O(a).  Real a (exact): about (a/sigma + 80)/h nodes with h = min(0.2, ~0.07 sigma),
 *           i.e. ~1e3-1e4 nodes for sigma >= 0.5, ~130 ns each.  Capped at DPB_RDP_QUAD_MAX_NODES
 *           (1e6, ~0.15 s): a real order that would need more (e.g. sigma = 0.01 with a > ~21,
 *           sigma = 1e-6 at any real a) gives NaN at once, in both modes and in quad_log.
 *           Compat's series: at most 16384 terms, then the tail bound (a few ms per order).
 * ACCURACY  relative error vs mpmath (tests/rdp/test_rdp_kernels.py): integer a <= 1e-13 (measured 8.3e-14,
 *           q in [1e-9, 0.9], a <= 256); real a exact <= 1e-12 (measured 4.0e-15, q in [1e-9, 0.9],
 *           sigma in [0.5, 30], a <= 20.5); compat vs the infinite |C| series <= 1e-10 (3.0e-11;
 *           negseries_log vs its defining integral at sigma in [1e3, 2^53], q in [0.1, 0.9],
 *           a in [1.5, 100.5]: tests/rdp/test_rdp_negseries.py).
 * EDGES     NaN in -> NaN out; q outside [0, 1], sigma <= 0, a < 1 -> NaN; q = 0 -> 0;
 *           q = 1 -> a/(2 sigma^2); a = inf -> inf; a > DPB_RDP_ALPHA_MAX (1e6) -> NaN.
 */
#ifndef DPB_RDP_POISSON_H
#define DPB_RDP_POISSON_H

enum { DPB_POISSON_EXACT = 0, DPB_POISSON_COMPAT = 1 };
/* most quadrature nodes of one real-order evaluation (see COST) */
#define DPB_RDP_QUAD_MAX_NODES 1e6

double dpb_rdp_poisson_gaussian(double alpha, double sigma, double q, int mode);

/* log(A_a - 1) by quadrature (a > 1), or log KL (a == 1).  Exposed for tests. */
double dpb_rdp_poisson_quad_log(double alpha, double sigma, double q);

/* log of  sum over i with C(a,i) < 0 of |C(a,i)| (s0_i + s1_i)  (the MTZ series terms);
 * -inf for integer a.  Exposed for tests. */
double dpb_rdp_poisson_negseries_log(double alpha, double sigma, double q);

#endif /* DPB_RDP_POISSON_H */
