/*
 * dpb_rounds.h -- inversions of Theorem 3.1 for the number of rounds M, the
 * minimum dataset size, and multi-epoch composition (eq. (3), (4), Section 5 and Table 1 of
 * "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: Tight
 * Upper and Lower Bounds").
 *
 * Contract: NaN in -> NaN out; sigma <= 0, sigma = inf, delta outside (0, 1),
 * epochs < 1 -> NaN.
 */
#ifndef DPB_ROUNDS_H
#define DPB_ROUNDS_H

#include "dpb_theorem31.h"

/* Largest M the exact search considers: 2^53, the last integer a double holds
 * exactly.  Results above it are reported as +inf. */
#define DPB_ROUNDS_MAX 9007199254740992.0

/* Closed form eq. (4):
 *   M = 1 + ( [2 B coef(sigma) sqrt(w-1) + sqrt((w-1)/(2 pi))] / delta )^2
 * (real-valued; the two leading terms of delta_min set equal to delta).
 * Returns +inf (no flag) when the value exceeds DBL_MAX. */
double dpb_rounds_closed_form(double sigma, double delta, int coefficient);

/* Exact inversion: the smallest integer M >= 3 such that delta_min(sigma, M) <= delta
 * AND condition (2) holds (at delta_min when validity_at_target == 0, at delta
 * otherwise) AND sigma^2 ln M >= 3.  Every one of these conditions is monotone in
 * M, so the feasible set is {M >= M*}; M* is found by an exponential bracket
 * around the closed-form guess and an integer bisection, using the very same
 * delta_min evaluation as dpb_delta_min, so delta_min(M*-1) > delta or (2) fails
 * at M*-1 (minimality is exact, not up to a tolerance).
 * Returns +inf when no M <= 2^53 qualifies: either M* > 2^53, or (target mode)
 * delta >= 1/2 - Phi(-kappa) so that (2) can never hold. */
double dpb_rounds_required(double sigma, double delta, int coefficient, int validity_at_target);

/* dpb_rounds_required for a sigma already prepared by dpb_t31_prepare (sigma finite > 0 and
 * delta in (0, 1): the caller checks): the same search, so bit-identical to it.  Lets a grid
 * do the sigma-only work (exp, erf, the coefficient) once per sigma. */
double dpb_rounds_required_prepared(const dpb_t31_sigma *c, double delta, int validity_at_target);

/* Minimum dataset size N = clip_norm * sigma * M / noise_ratio (section 5: the
 * per-round noise C sigma M / N must not exceed noise_ratio).  Real-valued. */
double dpb_min_dataset_size(double sigma, double rounds, double clip_norm, double noise_ratio);

/* E-fold composition of f_{0,delta}: delta_E = 1 - (1 - delta)^E (so f^{xE}(a) >= (1-delta)^E - a). */
double dpb_compose_delta(double delta, double epochs);
/* Inverse: the per-epoch delta with 1 - (1 - delta)^E = delta_total. */
double dpb_per_epoch_delta(double delta_total, double epochs);

#endif /* DPB_ROUNDS_H */
