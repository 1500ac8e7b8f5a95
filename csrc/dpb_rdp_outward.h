/*
 * dpb_rdp_outward.h -- the RDP -> (eps, delta) conversion objectives of dpb_rdp_convert.h,
 * rounded towards the safe side: never below the exact (real-arithmetic) value of the
 * objective at the very doubles given.
 *
 * Why.  Rounding to nearest can land below the bound a value stands for: at the order 9e15
 * the conversion term log(1/delta)/(alpha - 1) ~ 8e-14 is below half an ulp of an RDP value
 * of 9e5, so rdp + term rounds to rdp and the (eps, delta) pair it reports does not hold.
 *
 * METHOD  Each objective is evaluated together with a rigorous bound on its rounding error,
 *         and the result is raised past that bound with exact steps:
 *         - the sums whose rounding decides the result (rdp + c, rdp - eps,
 *           (rdp - eps) + log(1 - 1/alpha)) are error-free transformations (TwoSum): their
 *           error is known exactly, not bounded;
 *         - every other operation contributes its textbook bound: u = 2^-53 per correctly
 *           rounded operation, DPB_OUT_F (2 ulp) per call of log, log1p, expm1 or exp of the
 *           C library (glibc: <= 1 ulp; measured against mpmath by tests/rdp/test_rdp_outward.py,
 *           which fails on a build that exceeds it), DPB_OUT_TINY absolute per subnormal
 *           result; first-order bounds widened by 1 %;
 *         - the result is the smallest double >= (computed value + error bound), exactly
 *           (TwoSum, then one step up).
 *         The branch decisions are made only when certain: the improved conversion's
 *         total-variation shortcut (eps = 0 when delta^2 >= 1 - e^{-rdp}) is taken only where
 *         the inequality holds with margin; at its threshold the conversion formula (an upper
 *         bound of the exact value there) answers instead.
 *         Needs IEEE binary64 arithmetic without extended precision or contraction (x86-64
 *         SSE2, aarch64; FP_CONTRACT is switched off in the .c file; no -ffast-math).
 * ACCURACY never below the exact value; at most 8 ulp of the objective's largest term above it
 *         (tests/rdp/test_rdp_outward.py: hard points and a seeded sample of every magnitude, vs
 *         mpmath at 50 digits; an ulp of x taken as 2^-52 |x|).  delta: never below the exact
 *         value, 0 only where that is 0; its log at most 8 ulp of the largest term of log delta
 *         above the exact one.
 * EDGES   NaN in -> NaN out; alpha < 1, rdp < 0, delta outside (0, 1), eps < 0 -> NaN (as
 *         dpb_rdp_convert.h).  alpha = inf: eps = rdp, log delta = -inf or +inf (clipped to 0);
 *         alpha = 1 (KL): eps = inf, log delta = 0, except where the total-variation bound
 *         answers (improved); rdp = inf: eps = inf, log delta = 0; eps = inf: log delta = -inf.
 *         A log delta below -DBL_MAX (a product beyond the doubles) answers -2^1023 (delta
 *         then rounds up to the smallest subnormal), never -inf.  No floating-point flag is
 *         raised for any input (results beyond DBL_MAX answer inf quietly).
 */
#ifndef DPB_RDP_OUTWARD_H
#define DPB_RDP_OUTWARD_H

/* conversion: DPB_CONV_CLASSIC or DPB_CONV_IMPROVED (dpb_rdp_convert.h) */

/* eps(delta) of one order, >= the exact rdp_eps_objective. */
double dpb_rdp_eps_up(double alpha, double rdp, double delta, int conversion);

/* log delta(eps) of one order (with the improved conversion's total-variation bound), >= the
   exact rdp_logdelta_objective: what ranks the orders. */
double dpb_rdp_logdelta_up(double alpha, double rdp, double eps, int conversion);

/* delta(eps) of one order, >= the exact value (0 only where that is 0): the conversion's part
   through dpb_rdp_exp_up, the improved conversion's total-variation bound sqrt(1 - e^{-rdp})
   directly (a few ulp), not through its logarithm. */
double dpb_rdp_delta_up(double alpha, double rdp, double eps, int conversion);

/* exp(x), never below the exact exponential (0 only at x = -inf); at most 1 for x <= 0. */
double dpb_rdp_exp_up(double x);

#endif /* DPB_RDP_OUTWARD_H */
