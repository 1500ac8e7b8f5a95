/* dpb_outer.c -- see dpb_outer.h. */
#include "dpb_config.h"
#include "dpb_theorem31.h"
#include "dpb_rounds.h"
#include "dpb_outer.h"

/* The coefficients of T3..T5, as in dpb_theorem31.c.  The row loop below repeats the
 * operations of t31_terms_given there one for one (tests/special/test_outer.py requires bit identity
 * with the ufuncs, so a change there that is not mirrored here fails the tests). */
#define T3_A  0.09973557010035816948  /* 1/(4 sqrt(2 pi)) */
#define T3_B  0.12098536225957167490  /* 1/(2 sqrt(2 e pi)) */
#define T4_C  0.06049268112978583745  /* 1/(4 sqrt(2 e pi)) */
#define T5_C  0.007561585141223229681  /* 1/(32 sqrt(2 e pi)) */

/* Beyond this w - 1, mu = sqrt((w-1)/(M-1)) may exceed the 1e60 at which the elementwise code
 * saturates its terms (M - 1 >= 2, so mu^2 <= 5e119 below it): such rows take that code. */
#define EPS_FAST_MAX 1e120

#define STATUS_CHUNK 256

/* The row loops below have an AVX2 clone where the CPU has it (DPB_TARGET_CLONES of dpb_config.h). */

static int odd_column(double m, int mode)
{
    return !isgreaterequal(m, 3.0) || isinf(m) || (mode != DPB_T31_MODE_DELTA_MIN && m != floor(m));
}

void dpb_outer_t31_columns(dpb_outer_t31_cols *cols, int mode)
{
    dpb_t31_sigma ref;
    double terms[6];
    ptrdiff_t j;
    /* T6 depends on M only: any regular sigma gives it (dpb_t31_terms, so it is the same value) */
    dpb_t31_prepare_delta(1.0, DPB_COEF_EXACT, &ref);
    cols->n_odd = 0;
    cols->inv_m1_min = DPB_INF;
    for (j = 0; j < cols->n; j++) {
        double m = cols->rounds[j];
        if (odd_column(m, mode)) {
            cols->inv_m1[j] = cols->log_m[j] = cols->tail[j] = 0.0;
            cols->odd[cols->n_odd++] = j;
            continue;
        }
        cols->inv_m1[j] = 1.0 / (m - 1.0);
        if (cols->inv_m1[j] < cols->inv_m1_min) cols->inv_m1_min = cols->inv_m1[j];
        cols->log_m[j] = log(m);
        dpb_t31_terms(&ref, m, terms);
        cols->tail[j] = terms[5];
    }
}

/* The per-row constants; returns 0 when the row can take the fast loop. */
typedef struct {
    double eps, coef, ww, s2, limit;
    double edge;             /* 3 where sigma^2 ln M < 3 is tested (sigma < 1e10), else -inf */
} row_consts;

static int row_prepare(double sigma, int coefficient, const dpb_outer_t31_cols *cols, row_consts *r)
{
    dpb_t31_sigma c;
    if (dpb_t31_prepare_delta(sigma, coefficient, &c) != 0) return -1;
    if (!(c.eps <= EPS_FAST_MAX) || !(c.coef <= 1e150) || !(c.w <= 1e150)) return -1;
    if (!(c.eps * cols->inv_m1_min >= 1e-290)) return -1;   /* mu^2 may be subnormal: t31_terms_given's branch */
    r->eps = c.eps;
    r->coef = c.coef;
    r->ww = dpb_mul_sat(c.w, c.w);
    r->s2 = sigma * sigma;
    r->edge = sigma < 1e10 ? 3.0 : -DPB_INF;   /* s2 ln M < -inf never holds */
    r->limit = dpb_t31_condition2_limit(&c);
    return 0;
}

/* The row loop.  The constants are locals (a store to out cannot change them, so the
 * compiler vectorizes) and the loop has no branch.  Per point: the six-term sum operation
 * for operation as t31_terms_given (mu <= 1e60 and coef <= 1e150 here, so dpb_mul_sat(coef,
 * mu) is the plain product), summed smallest first, then the checks of t31_status_given
 * with delta = NaN (condition (2) at delta_min). */
DPB_TARGET_CLONES static void row_fast(const row_consts *r, const dpb_outer_t31_cols *cols, ptrdiff_t c0, ptrdiff_t c1,
                     double *restrict out, signed char *restrict status)
{
    const double *restrict inv_m1 = cols->inv_m1, *restrict log_m = cols->log_m, *restrict tail = cols->tail;
    const double eps = r->eps, coef = r->coef, ww = r->ww, s2 = r->s2, edge = r->edge, limit = r->limit;
    ptrdiff_t j;
#define DPB_OUTER_POINT                                                         \
    double inv = inv_m1[j];                                                     \
    double mu2 = eps * inv;                                                     \
    double mu = sqrt(mu2);                                                      \
    double t1 = 2.0 * DPB_BE_CONSTANT * (coef * mu);                            \
    double t2 = DPB_INV_SQRT2PI * mu;                                           \
    double t3 = (T3_A + T3_B) * mu2 + T3_B * (ww * inv);                        \
    double t4 = T4_C * mu2 * mu;                                                \
    double t5 = T5_C * mu2 * mu2;                                               \
    double dmin = 0.0;                                                          \
    double lhs;                                                                 \
    int below_edge, cond2;                                                      \
    dmin += tail[j];                                                            \
    dmin += t5;                                                                 \
    dmin += t4;                                                                 \
    dmin += t3;                                                                 \
    dmin += t2;                                                                 \
    dmin += t1;                                                                 \
    lhs = 0.5 * t1 + dmin;                                                      \
    below_edge = s2 * log_m[j] < edge;                                          \
    cond2 = !(lhs <= limit);                                                    \
    out[j] = (below_edge | cond2) ? DPB_NAN : dmin;
    if (status) {
        /* the bits as doubles in a chunk buffer, narrowed in a second pass: a loop that mixes
         * double and int8 data does not vectorize */
        double code[STATUS_CHUNK];
        ptrdiff_t j0, k;
        for (j0 = c0; j0 < c1; j0 += STATUS_CHUNK) {
            ptrdiff_t j1 = c1 - j0 > STATUS_CHUNK ? j0 + STATUS_CHUNK : c1;
            for (j = j0; j < j1; j++) {
                DPB_OUTER_POINT
                code[j - j0] = (below_edge ? (double)DPB_T31_SIGMA_BELOW_EDGE : 0.0)
                               + (cond2 ? (double)DPB_T31_CONDITION2 : 0.0);
            }
            for (k = 0; k < j1 - j0; k++) status[j0 + k] = (signed char)code[k];
        }
    } else {
        for (j = c0; j < c1; j++) {
            DPB_OUTER_POINT
        }
    }
#undef DPB_OUTER_POINT
}

/* First index k with odd[k] >= c0. */
static ptrdiff_t first_odd(const dpb_outer_t31_cols *cols, ptrdiff_t c0)
{
    ptrdiff_t lo = 0, hi = cols->n_odd;
    while (lo < hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (cols->odd[mid] < c0) lo = mid + 1; else hi = mid;
    }
    return lo;
}

void dpb_outer_delta_bound(const double *sigma, ptrdiff_t r0, ptrdiff_t r1,
                           const dpb_outer_t31_cols *cols, ptrdiff_t c0, ptrdiff_t c1,
                           int coefficient, int mode, double *out, signed char *status, ptrdiff_t ld)
{
    const ptrdiff_t sd = (ptrdiff_t)sizeof(double);
    ptrdiff_t i, k0 = first_odd(cols, c0), k;
    for (i = r0; i < r1; i++) {
        double *o = out + i * ld;
        signed char *st = status ? status + i * ld : NULL;
        row_consts r;
        if (c1 - c0 < 4 || row_prepare(sigma[i], coefficient, cols, &r) != 0) {
            /* the elementwise loop itself, sigma broadcast with stride 0 (also for tiles too
             * narrow to repay the row constants: an erf) */
            if (c1 > c0)
                dpb_t31_eval_n((const char *)(sigma + i), 0, (const char *)(cols->rounds + c0), sd,
                               (char *)(o + c0), sd, st ? (char *)(st + c0) : NULL, 1,
                               c1 - c0, coefficient, mode);
            continue;
        }
        row_fast(&r, cols, c0, c1, o, st);
        for (k = k0; k < cols->n_odd && cols->odd[k] < c1; k++) {
            ptrdiff_t j = cols->odd[k];
            dpb_t31_eval_n((const char *)(sigma + i), 0, (const char *)(cols->rounds + j), sd,
                           (char *)(o + j), sd, st ? (char *)(st + j) : NULL, 1, 1, coefficient, mode);
        }
    }
}

void dpb_outer_rounds_required(const double *sigma, ptrdiff_t r0, ptrdiff_t r1,
                               const double *delta, ptrdiff_t c0, ptrdiff_t c1,
                               int coefficient, int validity_at_target, double *out, ptrdiff_t ld)
{
    ptrdiff_t i, j;
    for (i = r0; i < r1; i++) {
        double *o = out + i * ld, s = sigma[i];
        dpb_t31_sigma c;
        if (!isgreater(s, 0.0) || isinf(s)) {   /* the elementwise domain check of sigma */
            for (j = c0; j < c1; j++) o[j] = DPB_NAN;
            continue;
        }
        dpb_t31_prepare(s, coefficient, &c);
        for (j = c0; j < c1; j++) {
            double d = delta[j];
            o[j] = isgreater(d, 0.0) && isless(d, 1.0) ? dpb_rounds_required_prepared(&c, d, validity_at_target)
                                                       : DPB_NAN;
        }
    }
}

void dpb_outer_dataset_columns(const double *rounds, ptrdiff_t n, double *masked)
{
    ptrdiff_t j;
    for (j = 0; j < n; j++) {
        double m = rounds[j];
        /* the declared domain of min_dataset_size's rounds (an integer >= 1), as its ufunc */
        masked[j] = isgreaterequal(m, 1.0) && !isinf(m) && m == floor(m) ? m : DPB_NAN;
    }
}

/* (a * M) / noise_ratio over a row: no branch (a NaN column stays NaN), so it vectorizes. */
DPB_TARGET_CLONES static void dataset_row(double a, double noise_ratio, const double *restrict masked,
                                     ptrdiff_t c0, ptrdiff_t c1, double *restrict out)
{
    ptrdiff_t j;
    for (j = c0; j < c1; j++) out[j] = a * masked[j] / noise_ratio;
}

void dpb_outer_min_dataset_size(const double *sigma, ptrdiff_t r0, ptrdiff_t r1,
                                const double *masked, ptrdiff_t c0, ptrdiff_t c1,
                                double clip_norm, double noise_ratio, double *out, ptrdiff_t ld)
{
    const int scalars_ok = isgreater(clip_norm, 0.0) && !isinf(clip_norm)
                           && isgreater(noise_ratio, 0.0) && !isinf(noise_ratio);
    ptrdiff_t i, j;
    for (i = r0; i < r1; i++) {
        double *o = out + i * ld, s = sigma[i];
        if (!scalars_ok || !isgreater(s, 0.0) || isinf(s)) {
            for (j = c0; j < c1; j++) o[j] = DPB_NAN;
            continue;
        }
        /* clip_norm * sigma * rounds / noise_ratio, left to right as dpb_min_dataset_size */
        dataset_row(clip_norm * s, noise_ratio, masked, c0, c1, o);
    }
}
