/*
 * dpb_outer.h -- Cartesian-grid ("outer") kernels of the Theorem 3.1 quantities: a sigma axis
 * (rows) times a rounds or delta axis (columns), out[i, j] = f(sigma[i], x[j]), for the
 * quantities whose work factors into a per-row part, a per-column part and a few operations
 * per point.  Every value is bit-identical to the elementwise function (the ufunc loop) at the
 * same point, including where it is NaN and its status bits.
 *
 * The six-term bound of "Trade-off Functions for DP-SGD with Subsampling based on Random
 * Allocation: Tight Upper and Lower Bounds" (Theorem 3.1, see dpb_theorem31.h) is, with
 * g = 1/sqrt(M - 1), a polynomial in g with sigma-only coefficients plus the M-only tail T6:
 *     delta_min = T6(M) + T1 + ... + T5,  T1..T5 = c1 g, c2 g, (c3 + c3') g^2, c4 g^3, c5 g^4.
 * The kernels keep the elementwise evaluation order (mu^2 = eps/(M-1), mu = sqrt(mu^2), the
 * terms from mu and mu^2, summed smallest first), which costs one square root per point more
 * than Horner's scheme in g but makes every value identical, not merely close.
 *
 * Layout: out and status are row-major with leading dimension ld (elements); a call fills the
 * tile rows [r0, r1) x columns [c0, c1), so the caller can check for interrupts between tiles.
 * No allocation, no static state: the column table is caller-owned memory.
 */
#ifndef DPB_OUTER_H
#define DPB_OUTER_H

#include <stddef.h>

/* Per-column (rounds) constants of the six-term bound; the caller provides the arrays
 * (n entries each) and dpb_outer_t31_columns fills them and n_odd. */
typedef struct {
    ptrdiff_t n;             /* number of columns */
    const double *rounds;    /* the rounds axis M[0..n-1] */
    double *inv_m1;          /* 1/(M - 1) */
    double *log_m;           /* ln M */
    double *tail;            /* T6(M) */
    ptrdiff_t *odd;          /* ascending indices of the columns the row loop leaves to the
                                elementwise code: M NaN, < 3 or inf (and, in
                                DPB_T31_MODE_CHECKED, not an integer) */
    ptrdiff_t n_odd;
    double inv_m1_min;       /* the smallest 1/(M - 1) of the regular columns (filled too): a row
                                with (w - 1) inv_m1_min < 1e-290 would need the subnormal-mu^2
                                branch of the elementwise code, so it takes that code */
} dpb_outer_t31_cols;

/* dpb_outer_t31_columns -- fill the column table for mode DPB_T31_MODE_BOUND or
 * DPB_T31_MODE_CHECKED (dpb_theorem31.h).
 * METHOD  per column: one log, one exp (T6 through dpb_t31_terms), one division.
 * ACCURACY  exact copies of the quantities dpb_t31_eval_n computes per point.
 * EDGES  columns outside the fast path are listed in odd[], their other entries are 0. */
void dpb_outer_t31_columns(dpb_outer_t31_cols *cols, int mode);

/* dpb_outer_delta_bound -- out[i, j] = dpb_t31_eval_n(sigma[i], rounds[j]) in mode
 * DPB_T31_MODE_BOUND (the ufuncs delta_bound_*) or DPB_T31_MODE_CHECKED (the ufuncs
 * _delta_bound_checked_*, whose status bits go to status[i, j] when status is not NULL),
 * for i in [r0, r1), j in [c0, c1); cols from dpb_outer_t31_columns with the same mode.
 * METHOD  per row: dpb_t31_prepare_delta (exp, expm1, the coefficient) and the limit of
 *         condition (2) (one erf); per point: one multiply, one square root, the five terms
 *         (8 multiplies, 1 add) and their sum (5 adds), the two validity comparisons.  A row
 *         whose sigma is not finite > 0 or whose w - 1 exceeds 1e120 (sigma < 0.06, where
 *         the elementwise code saturates its terms), and the odd columns, are evaluated by
 *         dpb_t31_eval_n itself.
 * ACCURACY  every value and status bit identical to the elementwise loop (same operations in
 *           the same order); so the relative error <= 1e-14 of dpb_theorem31.h carries over.
 *           tests/special/test_outer.py checks identity on seeded random grids and at hard points.
 * EDGES  as the ufunc: NaN where Theorem 3.1 does not apply or an argument is NaN, sigma <= 0,
 *        M < 3 (and non-integer M in the CHECKED mode, with status DPB_STATUS_BAD_INPUT). */
void dpb_outer_delta_bound(const double *sigma, ptrdiff_t r0, ptrdiff_t r1,
                           const dpb_outer_t31_cols *cols, ptrdiff_t c0, ptrdiff_t c1,
                           int coefficient, int mode, double *out, signed char *status, ptrdiff_t ld);

/* dpb_outer_rounds_required -- out[i, j] = dpb_rounds_required(sigma[i], delta[j], coefficient,
 * validity_at_target) for i in [r0, r1), j in [c0, c1).
 * METHOD  per row: dpb_t31_prepare once; per point: dpb_rounds_required_prepared (the same
 *         bracket-and-bisection search, about 10 to 40 evaluations of delta_min).
 * ACCURACY  identical to the elementwise function (the search is the same code); the result is
 *           the exactly minimal integer M of dpb_rounds.h.
 * EDGES  NaN for sigma not finite > 0 or delta outside (0, 1); inf when no M <= 2^53 qualifies. */
void dpb_outer_rounds_required(const double *sigma, ptrdiff_t r0, ptrdiff_t r1,
                               const double *delta, ptrdiff_t c0, ptrdiff_t c1,
                               int coefficient, int validity_at_target, double *out, ptrdiff_t ld);

/* dpb_outer_dataset_columns -- masked[j] = rounds[j] where it is in the declared domain of the
 * min_dataset_size ufunc (an integer M >= 1), NaN elsewhere: the column table of
 * dpb_outer_min_dataset_size. */
void dpb_outer_dataset_columns(const double *rounds, ptrdiff_t n, double *masked);

/* dpb_outer_min_dataset_size -- out[i, j] = dpb_min_dataset_size(sigma[i], rounds[j],
 * clip_norm, noise_ratio) for i in [r0, r1), j in [c0, c1), given masked from
 * dpb_outer_dataset_columns.
 * METHOD  per row: a = clip_norm * sigma[i]; per point: (a * M) / noise_ratio, the elementwise
 *         formula's own operations in its order (a NaN column propagates, no branch).
 * ACCURACY  identical to the elementwise function (correctly rounded multiply and divide).
 * EDGES  NaN where dpb_min_dataset_size gives NaN: sigma, clip_norm or noise_ratio not finite
 *        > 0, M NaN, < 1 or inf; inf where the value exceeds the double range. */
void dpb_outer_min_dataset_size(const double *sigma, ptrdiff_t r0, ptrdiff_t r1,
                                const double *masked, ptrdiff_t c0, ptrdiff_t c1,
                                double clip_norm, double noise_ratio, double *out, ptrdiff_t ld);

#endif /* DPB_OUTER_H */
