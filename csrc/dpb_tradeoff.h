/*
 * dpb_tradeoff.h -- trade-off functions f(a) (type-II error at type-I error a) for
 * random allocation and the Gaussian-DP pieces, from
 * "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: Tight
 * Upper and Lower Bounds"
 * (Gaussian and f_{0,delta} curves: Sections 2, 3.1 and Appendix H.4; CLT integral:
 * Appendix E.2/E.3; lower bound: Theorem 3.1).  The Edgeworth-corrected curve is in
 * dpb_edgeworth.h, the quadrature engine in dpb_quad.h.
 *
 * Notation: x = Phi^{-1}(1 - a) (computed as dpb_ndtri_complement(a)), w = e^{1/sigma^2},
 * M = rounds, s = sqrt(M/(M-1)), D = sqrt((M-1)(w-1)),
 * A(z) = (e^{z/sigma + 1/(2 sigma^2)} - 1)/D.
 *
 * Contract shared by every function here: NaN in -> NaN out; a outside [0, 1] ->
 * NaN; exact endpoints are exact (f(0) = 1, f(1) = 0 for the curves of a mechanism);
 * parameters outside the domain -> quiet NaN (DPB_NAN, no floating-point flag).
 * Accuracy figures are checked against mpmath by tests/tradeoff/test_tradeoff*.py.
 */
#ifndef DPB_TRADEOFF_H
#define DPB_TRADEOFF_H

#include "dpb_domain.h"   /* DPB_CLT_SIGMA_MIN */

#include "dpb_status.h"

/* dpb_gaussian_tradeoff -- G_mu(a) = Phi(Phi^{-1}(1 - a) - mu).
 * METHOD  x = -ndtri(a) (no cancellation for tiny a), then dpb_ndtr(x - mu).
 * ACCURACY  relative <= 2e-13 where G >= 1e-300 for a in [1e-300, 1 - 1e-16],
 *           mu in [0, 30] (tested, measured 1.2e-13); the only error source is the
 *           rounding of x - mu, amplified by |x - mu|^2 in the lower tail.
 * EDGES  G_0(a) = 1 - a exactly; a = 0 -> 1 (mu finite); a = 1 -> 0; mu = +inf -> 0;
 *        mu < 0 -> NaN. */
double dpb_gaussian_tradeoff(double a, double mu);

/* dpb_f0delta_tradeoff -- f_{0,delta}(a) = max(1 - a - delta, 0).
 * ACCURACY  one rounding of (1 - a) - delta (exact when a >= 1/2).
 * EDGES  delta outside [0, 1] -> NaN. */
double dpb_f0delta_tradeoff(double a, double delta);

/* dpb_gaussian_f0delta_tradeoff -- (G_mu (x) f_{0,delta})(a) = (1 - delta) G_mu(a/(1 - delta))
 * for a <= 1 - delta, else 0.  (f_{0,delta} reveals which hypothesis holds with
 * probability delta and nothing otherwise; an optimal test of the product rejects whenever
 * the revealing branch points to H1, at no type-I cost, and spends its level a = (1 - delta) a'
 * on the other branch, where the pair is G_mu's: type-II error (1 - delta) G_mu(a').  The
 * slope of this form matches Lemma H.5 of the paper.)
 * ACCURACY  that of dpb_gaussian_tradeoff plus 2 ulp.  EDGES  delta = 1 -> 0. */
double dpb_gaussian_f0delta_tradeoff(double a, double mu, double delta);

/* dpb_multi_epoch_tradeoff -- max((1 - delta)^E - a, 0): the E-fold product
 * f_{0,delta}^{(x)E} evaluated at a, since f_{0,d1} (x) f_{0,d2} = f_{0,1-(1-d1)(1-d2)}
 * (Section 3.1 and Appendix H.4 of the paper); a lower bound on f^{(x)E} when f >= f_{0,delta}.
 * METHOD  exp(E log1p(-delta)) - a.  ACCURACY  relative <= 1e-15 * (1 + E delta) for the power.
 * EDGES  delta outside [0, 1] or E < 0 -> NaN. */
double dpb_multi_epoch_tradeoff(double a, double delta, double epochs);

/* dpb_gaussian_max_gap -- max_a (1 - a - (G_mu (x) f_{0,delta})(a)) = 1 - (1 - delta) 2 Phi(-mu/2)
 * METHOD  erf(mu/(2 sqrt2)) + delta erfc(mu/(2 sqrt2)): no cancellation for small mu.
 * ACCURACY  relative <= 4 ulp (tested).  EDGES  mu < 0 or delta outside [0, 1] -> NaN. */
double dpb_gaussian_max_gap(double mu, double delta);

/* dpb_tradeoff_clt -- the CLT trade-off integral of Appendix E.2/E.3 of the paper, without
 * its correction term eps'_M (an APPROXIMATION of the random-allocation curve f_M, never a
 * bound).  The threshold of the likelihood-ratio test at level a is h = 1 + x sqrt((w-1)/M)
 * by the CLT under H0; the CLT for the M - 1 rounds without the signal then gives
 *     f(a) = int Phi(x s - A(z)) n(z) dz     (truncated = 0)
 *     f(a) = int_{-inf}^{z_max} ... dz,  z_max = sigma ln(M h) - 1/(2 sigma),
 *            h = 1 + x sqrt((w-1)/M), f = 0 if h <= 0     (truncated = 1)
 * METHOD  composite 20-point Gauss-Legendre (nodes: tools/gen_gauss_legendre.py)
 *         on panels whose edges are (i) the points z where the Phi argument
 *         g(z) = x s - A(z) crosses the levels 8.5, 4, 2, 1, 0, -1, -2, -4, -8.3, -16
 *         (closed form: z = sigma ln(1 + D (x s - level)) - 1/(2 sigma)), merged with
 *         (ii) a uniform grid of step min(6, 6 sigma) on [-12, 12].  The levels put
 *         panels of width ~w_z = sigma/|x s + 1/D| around the switch point z_c (g = 0)
 *         and of width ~sigma ln 2 in the doubly exponential right tail; the grid
 *         bounds the width for the n(z) factor and for the slow exponential on the left.
 *         The level crossings also place panels in the tail when |x s + 1/D| < 1 at small
 *         sigma and M, which a grid around z_c alone misses (tests/tradeoff/test_tradeoff.py::
 *         test_clt_vs_mpmath, hard point a = 0.499053, sigma = 0.31154, M = 3).  The points
 *         z_c +- w_z 2^k, |k| <= 6, serve only to place the slope's exponent offset.
 *         Panels to the left of the point where g drops below 8.5 contribute their
 *         normal mass Phi(z) in closed form (error <= Phi(-8.5) = 9.5e-18); panels whose
 *         bound Phi(g(left)) * max n * width is below 1e-18, and panels to the right of
 *         g = -8.3 (total < Phi(-8.3) = 5.2e-17), are skipped (3.9 panels = 77
 *         evaluations on average over the box).  20 points are needed: 16 lose 4e-13.  Inside the integral
 *         Phi(g) is the plain erfc form (absolute accuracy is what counts there).
 *         A(z) uses expm1; w - 1 comes from dpb_lognormal_variance; for sigma so small
 *         that w overflows, A is formed as exp(t - ln D) with ln D in closed form.
 *         Truncated, when w overflows: ln(1 + r) with ln r = ln x + ln D - ln(M (M-1))/2.
 * ACCURACY  absolute <= 1e-14 vs mpmath for a in [1e-300, 1 - 1e-15],
 *           sigma in [0.3, 50], M in [3, 1e15] (tests/tradeoff/test_tradeoff.py); also measured
 *           <= 1.7e-14 on [DPB_CLT_SIGMA_MIN, 0.3) (tests/tradeoff/test_tradeoff.py::test_clt_small_sigma_vs_mpmath).
 * EDGES  a = 0 -> 1, a = 1 -> 0; sigma <= 0 or M <= 1 -> NaN;
 *        0 < sigma < DPB_CLT_SIGMA_MIN (0.03) -> NaN: there the panels lose accuracy (measured
 *        1.7e-10 at sigma = 0.01, 4e-6 at 0.001), so the value is refused, not returned;
 *        sigma = inf or M = inf -> 1 - a (mu = 0). */
double dpb_tradeoff_clt(double a, double sigma, double rounds, int truncated);

/* dpb_tradeoff_clt_slope -- f_CLT'(a) = -s/n(x) int n(x s - A(z)) n(z) dz for the
 * untruncated curve (differentiate under the integral: dx/da = -1/n(x)).
 * METHOD  the same panels as dpb_tradeoff_clt; n(x s - A)/n(x) is formed in the
 *         exponent with a common offset so that nothing under/overflows.
 * ACCURACY  relative <= 1e-12 vs mpmath on the same box with a in [1e-12, 1 - 1e-12] (tested).
 * EDGES  a = 0 -> -inf; a = 1 -> 0 (the limits of G_mu'); otherwise as dpb_tradeoff_clt,
 *        including the refusal 0 < sigma < DPB_CLT_SIGMA_MIN -> NaN (the panels lose accuracy
 *        there as for the curve: relative 3.4e-5 at sigma = 0.001);
 *        a result below -DBL_MAX -> -inf without a flag. */
double dpb_tradeoff_clt_slope(double a, double sigma, double rounds);

/* dpb_tradeoff_lower_bound -- max(1 - a - delta_min(sigma, M), 0) where Theorem 3.1
 * applies (condition (2) evaluated at delta_min, M >= 3, sigma^2 ln M >= 3), NaN
 * where it does not (never silently).  coefficient: DPB_COEF_SIMPLIFIED or DPB_COEF_EXACT.
 * ACCURACY  absolute <= 1e-15 + that of delta_min (relative 1e-14).
 * EDGES  a outside [0, 1] -> NaN. */
double dpb_tradeoff_lower_bound(double a, double sigma, double rounds, int coefficient);

#endif /* DPB_TRADEOFF_H */
