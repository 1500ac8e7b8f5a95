/*
 * dpb_lognormal.h -- moments of the per-round likelihood ratio
 *     Y = exp(X/sigma - 1/(2 sigma^2)),  X ~ N(0, 1),   E[Y] = 1,
 * and the two Berry-Esseen coefficients of Theorem 3.1 of
 * "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: Tight Upper
 * and Lower Bounds" (moments: Appendix D.1; rho3: Proposition D.2; coefficients: eq. (22)
 * and Section 3.1).
 *
 * With w = e^{1/sigma^2} and eps = w - 1 = Var Y:
 *     mu3  = (w + 2) eps^2 = (3 + eps) eps^2
 *     mu4  = (w^4 + 2w^3 + 3w^2 - 3) eps^2 = (3 + 16 eps + 15 eps^2 + 6 eps^3 + eps^4) eps^2
 *     rho3 = E|Y - 1|^3 = w^3 erf(5/(2 sqrt2 sigma)) - 3w erf(3/(2 sqrt2 sigma)) + 4 erf(1/(2 sqrt2 sigma))
 *     coef_simplified = (w^3 + 4)/eps^2,   coef_exact = rho3/eps^2      (eq. (22) and section 3.1)
 *
 * Contract (all functions): sigma NaN -> NaN; sigma <= 0 -> NaN; sigma = +inf -> the
 * limit (0 for the moments; inf for the coefficients, which grow like sigma^4 and sigma);
 * a value whose true magnitude exceeds DBL_MAX -> +inf, without raising the overflow flag.
 * ACCURACY  relative error <= 1e-14 for sigma in [0.07, 1e4] (tested against mpmath);
 * 1/sigma^2 is carried as a double-double so that exp(1/sigma^2) keeps full precision.
 */
#ifndef DPB_LOGNORMAL_H
#define DPB_LOGNORMAL_H

/* eps = w - 1 = expm1(1/sigma^2), the variance of Y. */
double dpb_lognormal_variance(double sigma);
/* Third central moment mu3 = E[(Y-1)^3]. Overflows (-> inf) for sigma < 0.0685. */
double dpb_lognormal_mu3(double sigma);
/* Fourth central moment mu4 = E[(Y-1)^4]. Overflows (-> inf) for sigma < 0.0915. */
double dpb_lognormal_mu4(double sigma);
/* Exact third absolute central moment rho3 = E|Y-1|^3.  Closed form for
 * sigma < 0.85, odd Taylor series in 1/sigma (up to 31 terms, all positive) above,
 * where the closed form cancels (rho3 ~ sqrt(8/pi)/sigma^3). Overflows for sigma < 0.0685. */
double dpb_lognormal_rho3(double sigma);
/* coef_simplified(sigma) = e^{1/s^2}(1 + 4e^{-3/s^2})/(1 - e^{-1/s^2})^2, eq. (22). */
double dpb_coef_simplified(double sigma);
/* coef_exact(sigma) = rho3/eps^2, section 3.1; coef_exact <= coef_simplified. */
double dpb_coef_exact(double sigma);

/* The sigma-dependent quantities shared by the coefficients, from one expm1:
 * y = 1/sigma^2 = hi + lo (double-double), eps = w - 1, w = e^y (inf if it overflows).
 * Precondition: sigma finite and >= 0.03 (callers handle the rest). */
typedef struct {
    double hi, lo, eps, w;
} dpb_lnbase;
void dpb_lognormal_base(double sigma, dpb_lnbase *b);
/* The second half of dpb_lognormal_base for callers that computed em1 = dpb_expm1(hi)
 * themselves (two points at a time); requires hi <= 700 and hi, lo already set. */
void dpb_lognormal_base_finish(dpb_lnbase *b, double em1);
double dpb_coef_simplified_base(double sigma, const dpb_lnbase *b);
double dpb_coef_exact_base(double sigma, const dpb_lnbase *b);

#endif /* DPB_LOGNORMAL_H */
