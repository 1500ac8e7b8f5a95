/*
 * dpb_normal.h -- the standard normal distribution: Phi, log Phi, Phi^{-1}.
 *
 * Edge-case contract shared by every function here:
 *   NaN in -> NaN out;  exact endpoints are exact (Phi(-inf) = 0, ndtri(0) = -inf, ...);
 *   out of domain -> quiet NaN (no floating-point flag raised).
 * Accuracy figures are checked against mpmath (50 digits) by tests/special/test_normal.py.
 */
#ifndef DPB_NORMAL_H
#define DPB_NORMAL_H

/* dpb_ndtr -- Phi(x) = P[Z <= x], Z ~ N(0, 1).
 *
 * METHOD  x >= -1: 1 - erfc(x/sqrt2)/2 (x >= 0) or erfc(-x/sqrt2)/2.
 *         x < -1: erfc(t)/2 with t = -x/sqrt2 rounded, plus the first-order
 *         correction -(2/sqrtpi) e^{-t^2} dt for the rounding dt of t (computed
 *         exactly with fma and a two-part 1/sqrt2).  This removes the x^2*eps
 *         error of the textbook formula (scipy loses ~900 ulp at x = -37).
 *         x < -37.5 (subnormal result): exp(-x^2/2 + k ln2 + r) * 2^-k with x^2 split
 *         exactly and the Mills-ratio series, so only the final scaling rounds.
 * ACCURACY  relative, x in [-37.5, 8.3]: <= 4 ulp (tested); subnormal results
 *           to within the subnormal spacing.
 * EDGES  ndtr(-inf) = 0, ndtr(+inf) = 1, NaN -> NaN. */
double dpb_ndtr(double x);

/* dpb_log_ndtr -- log Phi(x).
 *
 * METHOD  x > -1: log1p(-ndtr(-x));  -20 <= x <= -1: log(ndtr(x));
 *         x < -20: -x^2/2 - log(-x) - log sqrt(2 pi) + log1p(S), S the
 *         asymptotic Mills-ratio series, with x^2 split exactly (fma).
 * ACCURACY  relative, x in [-1e5, 8]: <= 4 ulp (tested); beyond: the
 *           leading term -x^2/2 dominates and stays correctly rounded
 *           to within 1 ulp until it overflows to -inf (|x| > 1.3e154).
 * EDGES  log_ndtr(-inf) = -inf, log_ndtr(+inf) = 0, NaN -> NaN. */
double dpb_log_ndtr(double x);

/* dpb_ndtri -- Phi^{-1}(p).
 *
 * METHOD  Wichura's AS241 rational approximations for the starting value
 *         (central |p-1/2| <= 0.425 and intermediate sqrt(-log p) <= 5),
 *         an asymptotic starting value beyond; then Newton steps on
 *         log Phi(x) = log p (tails; log space keeps subnormal p exact)
 *         or on Phi(x) - 1/2 = p - 1/2 via erf (centre, relative accuracy
 *         near x = 0).  For p > 1/2 the tail uses 1 - p, which is exact.
 * ACCURACY  relative, p in [1e-300, 1 - 2^-53] and subnormal p: <= 4 ulp
 *           (tested).
 * EDGES  ndtri(0) = -inf, ndtri(1) = +inf, p outside [0, 1] or NaN -> NaN. */
double dpb_ndtri(double p);

/* dpb_ndtri_complement -- Phi^{-1}(1 - a), computed as -Phi^{-1}(a): no
 * cancellation for tiny a (the naive 1 - a loses everything below 1e-16).
 * Same accuracy and edges as dpb_ndtri (a = 0 -> +inf, a = 1 -> -inf). */
double dpb_ndtri_complement(double a);

/* dpb_normal_pdf -- n(x) = exp(-x^2/2)/sqrt(2 pi), with x^2 split exactly so
 * the relative error stays ~1 ulp in the tails (underflows to 0 beyond |x| ~ 38.6). */
double dpb_normal_pdf(double x);

#endif /* DPB_NORMAL_H */
