/*
 * dpb_rdp_common.h -- what the dpb_rdp_* kernels share: the largest order they accept
 * and inline log-space helpers.  Header only; no state.
 *
 * The kernels work with log-magnitudes throughout: a sum of positive terms is kept as
 * log(1 + sum) = log1p(sum of scaled terms) rather than log(exp(0) + ...), which keeps
 * relative accuracy when the RDP is tiny (small sampling rates), and log-binomials come
 * from lgamma (or a caller-supplied table).
 *
 * Every helper follows the csrc contract: NaN in -> NaN out, no floating-point
 * flag raised for in-domain input (log(0) and exp-overflow are avoided by
 * explicit tests, never computed).
 */
#ifndef DPB_RDP_COMMON_H
#define DPB_RDP_COMMON_H

#include <math.h>
#include "dpb_config.h"

/* Largest RDP order alpha the kernels evaluate (above it they return NaN): the
 * integer-order sums are O(alpha) and the improved WOR bound's table O(alpha^2). */
#define DPB_RDP_ALPHA_MAX 1e6

/* log(1 + e^x) without overflow or loss for x << 0.  ACCURACY <= 2 ulp. */
DPB_INLINE double dpb_log1pexp(double x)
{
    if (x > 36.0) return x + exp(-x);      /* e^-x below ulp(x) beyond ~37 */
    if (x < -745.0) return 0.0;            /* exp underflows; avoid the flag */
    return log1p(exp(x));
}

/* log(e^x - 1) for x > 0; -inf at x == 0 (no flag); NaN for x < 0.  ACCURACY <= 2 ulp. */
DPB_INLINE double dpb_logexpm1(double x)
{
    if (x != x || x < 0.0) return DPB_NAN;
    if (x == 0.0) return -DPB_INF;
    if (x > 36.0) return x + log1p(-exp(-x));
    return log(expm1(x));
}

/* log(1 - e^x) for x < 0 (Maechler's log1mexp); -inf at x == 0; NaN for x > 0. */
DPB_INLINE double dpb_log1mexp(double x)
{
    if (x != x || x > 0.0) return DPB_NAN;
    if (x == 0.0) return -DPB_INF;
    if (x > -DPB_LN2) return log(-expm1(x));
    if (x < -745.0) return 0.0;
    return log1p(-exp(x));
}

/* log(e^a + e^b), either may be -inf. */
DPB_INLINE double dpb_logaddexp(double a, double b)
{
    double m, d;
    if (a != a || b != b) return DPB_NAN;
    if (a == -DPB_INF) return b;
    if (b == -DPB_INF) return a;
    m = a > b ? a : b;
    if (m == DPB_INF) return DPB_INF;
    d = -fabs(a - b);
    return m + (d < -745.0 ? 0.0 : log1p(exp(d)));
}

/* Running log-sum-exp accumulator: value = log(s) + m, kept with s in [1, n]. */
typedef struct { double m; double s; } dpb_lse;

DPB_INLINE void dpb_lse_init(dpb_lse *acc) { acc->m = -DPB_INF; acc->s = 0.0; }

/* Below this, a term cannot change the sum: exp(d) <= 3.2e-17 < 2^-53, under half an ulp of
 * s >= 1, so s + exp(d) rounds to s.  Skipping it (and its exp) gives the same double. */
#define DPB_LSE_NEGLIGIBLE (-38.0)

DPB_INLINE void dpb_lse_add(dpb_lse *acc, double x)
{
    double d;
    if (x == -DPB_INF) return;
    if (x <= acc->m) {
        /* s >= 1 here: the first term added set it to 1, and it never decreases below 1 */
        d = x - acc->m;
        if (d > DPB_LSE_NEGLIGIBLE) acc->s += exp(d);
    } else {
        /* the old sum s e^d (1 <= s, log s <= s - 1) is below 3.2e-17 < 2^-53 once
           d < -38 - (s - 1): s e^d + 1 then rounds to 1, the value set without exp */
        d = acc->m - x;
        acc->s = (acc->m == -DPB_INF || d < -745.0 || d < DPB_LSE_NEGLIGIBLE - (acc->s - 1.0))
                 ? 1.0 : acc->s * exp(d) + 1.0;
        acc->m = x;
    }
}

/* log of the accumulated sum (-inf if empty). */
DPB_INLINE double dpb_lse_value(const dpb_lse *acc)
{
    if (acc->m == -DPB_INF) return -DPB_INF;
    return acc->m + log(acc->s);
}

/* log(i!) : exact table when given (lfact[i] = lgamma(i+1)), lgamma otherwise. */
DPB_INLINE double dpb_lfact(long i, const double *lfact)
{
    return lfact ? lfact[i] : lgamma((double)i + 1.0);
}

/* log C(n, k) for integers 0 <= k <= n. */
DPB_INLINE double dpb_lbinom_int(long n, long k, const double *lfact)
{
    return dpb_lfact(n, lfact) - dpb_lfact(k, lfact) - dpb_lfact(n - k, lfact);
}

#endif /* DPB_RDP_COMMON_H */
