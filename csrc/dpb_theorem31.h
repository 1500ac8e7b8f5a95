/*
 * dpb_theorem31.h -- the six-term delta bound of Theorem 3.1 (random allocation,
 * one epoch of M rounds, noise multiplier sigma) and its validity condition (2), from
 * "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: Tight
 * Upper and Lower Bounds"
 * (Theorem 3.1, condition (2), eq. (22); terms T3-T6 as derived in Appendix E.3/E.4).
 *
 *   mu = sqrt((w-1)/(M-1)),  w = e^{1/sigma^2},  B = 0.4748
 *   T1 = 2 B coef(sigma) mu
 *   T2 = mu / sqrt(2 pi)
 *   T3 = [1/(4 sqrt(2pi)) + (1 + w/(1 - 1/w)) / (2 sqrt(2 e pi))] mu^2
 *   T4 = mu^3 / (4 sqrt(2 e pi))
 *   T5 = mu^4 / (32 sqrt(2 e pi))
 *   T6 = 4.52 / (2.88 sqrt(ln M) - 2.41/sqrt(ln M)) * M^{-25/24}
 *   delta_min = T1 + ... + T6
 *   (2):  B coef mu + delta <= 1/2 - Phi(-kappa),  kappa = (w-1)/2;  plus M >= 3, sigma^2 ln M >= 3.
 *
 * coef is coef_simplified (eq. (22), the theorem as stated) or coef_exact (section 3.1).
 * Contract: NaN in -> NaN out; sigma <= 0 or M < 3 -> NaN (outside the theorem's
 * domain; M need not be an integer here).  Values that overflow -> +inf without a flag.
 * ACCURACY  delta_min relative error <= 1e-14 (tested against mpmath for
 * sigma in [0.07, 1e4], M in [3, 1e15]): a sum of positive terms, each from
 * the <= 1e-14 coefficients of dpb_lognormal.h.
 */
#ifndef DPB_THEOREM31_H
#define DPB_THEOREM31_H

#include <stddef.h>
#include "dpb_status.h"

enum { DPB_COEF_SIMPLIFIED = 0, DPB_COEF_EXACT = 1 };

/* Status bits of dpb_theorem31_status (0 = Theorem 3.1 applies): the shared vocabulary of
 * dpb_status.h, named for this family. */
enum {
    DPB_T31_VALID = DPB_STATUS_OK,
    DPB_T31_BAD_INPUT = DPB_STATUS_BAD_INPUT,               /* NaN, inf, sigma <= 0, delta outside (0, 1) */
    DPB_T31_ROUNDS_BELOW_3 = DPB_STATUS_ROUNDS_BELOW_3,     /* M < 3 */
    DPB_T31_SIGMA_BELOW_EDGE = DPB_STATUS_SIGMA_BELOW_EDGE, /* sigma < sqrt(3/ln M) */
    DPB_T31_CONDITION2 = DPB_STATUS_CONDITION2,             /* B coef mu + delta > 1/2 - Phi(-kappa) */
    DPB_T31_DELTA_BELOW_MIN = DPB_STATUS_DELTA_BELOW_MIN    /* target delta < delta_min */
};

/* Everything that depends on sigma only; computing it once lets a search over M
 * cost one sqrt, one log and one exp per step. */
typedef struct {
    double sigma;
    double eps;        /* w - 1 */
    double coef;       /* coef_simplified or coef_exact */
    double w;          /* e^{1/sigma^2} (inf where it overflows) */
    double rhs;        /* 1/2 - Phi(-kappa) = erf(kappa/sqrt2)/2 */
    int exact;         /* coefficient == DPB_COEF_EXACT (its sigma -> inf limit is used beyond 1e150) */
} dpb_t31_sigma;

/* Fills *c for (sigma, coefficient); returns 0, or -1 when sigma is not finite > 0. */
int dpb_t31_prepare(double sigma, int coefficient, dpb_t31_sigma *c);
/* Same without rhs (left NaN; dpb_t31_status then evaluates it only when a cheap
 * lower bound does not already settle condition (2)): one erf cheaper. */
int dpb_t31_prepare_delta(double sigma, int coefficient, dpb_t31_sigma *c);

/* Writes T1..T6 into terms[0..5] and returns their sum delta_min(sigma, M). */
double dpb_t31_terms(const dpb_t31_sigma *c, double rounds, double terms[6]);
double dpb_t31_delta_min(const dpb_t31_sigma *c, double rounds);

/* Bitmask of DPB_T31_* reasons why f(a) >= 1 - a - delta is NOT certified.
 * delta = NaN means "evaluate (2) at delta_min" (validity_at='delta_min');
 * a finite delta evaluates (2) at that target (validity_at='target') and also
 * flags delta < delta_min.  rounds_out/delta_min_out receive delta_min if non-NULL. */
int dpb_t31_status(const dpb_t31_sigma *c, double rounds, double delta, double *delta_min_out);

/* The largest lhs = B coef mu + delta for which dpb_t31_status does not flag condition (2)
 * (the larger of its erf-free lower bound and 1/2 - Phi(-kappa); NaN where eps is NaN), so that
 * a loop over many M of one sigma compares lhs <= limit with the same outcome as
 * dpb_t31_status.  Used by the Cartesian-grid kernels of dpb_outer.h. */
double dpb_t31_condition2_limit(const dpb_t31_sigma *c);

/* Loop kernel behind the ufuncs: n points with byte strides, two at a time (the
 * transcendental calls go through 2-wide vector routines where available), each
 * point bit-identical to the one-point functions above.
 *   DPB_T31_MODE_DELTA_MIN  out = dpb_delta_min (NaN outside the domain)
 *   DPB_T31_MODE_BOUND      out = delta_min where Theorem 3.1 applies (at delta_min), NaN elsewhere;
 *                           st (int8, may be NULL) = the DPB_STATUS_* bits of dpb_t31_status
 *   DPB_T31_MODE_CHECKED    as BOUND, with the argument checks of the validated API:
 *                           st = DPB_STATUS_BAD_INPUT where sigma is not finite > 0 or rounds
 *                           is not an integer >= 3 */
enum { DPB_T31_MODE_DELTA_MIN = 0, DPB_T31_MODE_BOUND = 1, DPB_T31_MODE_CHECKED = 2 };
void dpb_t31_eval_n(const char *sigma, ptrdiff_t sigma_stride, const char *rounds, ptrdiff_t rounds_stride,
                    char *out, ptrdiff_t out_stride, char *status, ptrdiff_t status_stride,
                    ptrdiff_t n, int coefficient, int mode);

/* As DPB_T31_MODE_CHECKED for one point with sigma already prepared: returns the status bits
 * and writes delta_min (status 0) or NaN to *out.  The scalar fast path of dpbounds.delta_bound. */
int dpb_t31_checked(const dpb_t31_sigma *c, double rounds, double *out);

/* Scalar entry points (prepare + evaluate), one per ufunc family; each is bit-identical to
 * its ufunc's loop. */
double dpb_delta_min(double sigma, double rounds, int coefficient);
/* delta_min where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere. */
double dpb_delta_bound(double sigma, double rounds, int coefficient);
/* dpb_delta_bound with the argument checks of the validated API; *status as DPB_T31_MODE_CHECKED. */
double dpb_delta_bound_checked(double sigma, double rounds, int coefficient, int *status);
/* T1..T6 into terms[0..5] (NaN where sigma or M is outside the domain). */
void dpb_delta_terms(double sigma, double rounds, int coefficient, double terms[6]);
int dpb_theorem31_status(double sigma, double rounds, double delta, int coefficient);

#endif /* DPB_THEOREM31_H */
