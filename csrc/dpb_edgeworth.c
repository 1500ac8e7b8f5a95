/* dpb_edgeworth.c -- see dpb_edgeworth.h for the contract of each function. */
#include "dpb_config.h"
#include "dpb_lognormal.h"
#include "dpb_quad.h"
#include "dpb_edgeworth.h"

/* below it dpb_lognormal_variance is +inf (w - 1 beyond the doubles) */
#define DPB_EW_SIGMA_MIN 0.03

typedef struct {
    double c, d, lo, hi;   /* coefficients and the monotone branch (lo, hi) */
    int ok;
} ew_poly;

/* g2 = eps (16 + eps (15 + eps (6 + eps))) (about eps^4), +inf without the overflow flag when it
 * exceeds the doubles (from eps ~ 1.2e77, sigma < 0.0761): each product is checked before it is
 * formed, and the value is the plain product wherever that is finite. */
static double ew_gamma2(double eps)
{
    double t = 6.0 + eps;
    if (isinf(eps) || (eps > 1.0 && t > DBL_MAX / eps)) return DPB_INF;
    t = 15.0 + eps * t;
    if (eps > 1.0 && t > DBL_MAX / eps) return DPB_INF;
    t = 16.0 + eps * t;
    if (eps > 1.0 && t > DBL_MAX / eps) return DPB_INF;
    return eps * t;
}

static void ew_make(double eps, double n, ew_poly *p)
{
    double g2 = ew_gamma2(eps), c;
    /* 24 n overflows for n > 7.5e306, where d < 1e-306 g2: d = 0 there (the value g2/inf gave,
       with the flag), NaN if g2 is infinite as well (inf/inf) */
    if (eps > 1e200) {
        /* gamma1 = (3 + eps) sqrt(eps) overflows from eps ~ 3e205 (sigma ~ 0.0385) although c_n
           may not at huge n: c in logs, so no overflow flag on the way to a finite c
           (tests/special/test_c_core_edges.py::test_edgeworth_coefficient_in_logs_raises_no_flag) */
        double lc = log(eps) * 1.5 + log1p(3.0 / eps) - log(6.0) - 0.5 * log(n);
        c = lc > DPB_LOG_DBL_MAX ? DPB_INF : exp(lc);
    } else {
        c = (3.0 + eps) * sqrt(eps) / (6.0 * sqrt(n));
    }
    double d = (n < DBL_MAX / 24.0) ? g2 / (24.0 * n) : (isinf(g2) ? DPB_NAN : 0.0);
    double A2, A1, A0;
    p->c = c;
    p->d = d;
    p->lo = -DPB_INF;
    p->hi = DPB_INF;
    /* c or d infinite (w - 1 overflows below sigma = 0.03, gamma2 below sigma = 0.0761): no
       polynomial; tested before the coefficients below, where inf - inf would raise the invalid flag */
    p->ok = isfinite(c) && isfinite(d);
    if (!p->ok) return;
    A2 = 12.0 * c * c - 3.0 * d;
    A1 = -2.0 * c;
    A0 = 1.0 + 3.0 * d - 7.0 * c * c;
    p->ok = A0 > 0.0;
    if (!p->ok) return;
    if (A2 == 0.0) {
        if (A1 != 0.0) {
            /* |r| = A0/|A1| > 1e100 (clamped below anyway), decided without the division, which
               overflows for a subnormal A1 (sigma 1e155, M 1e308) */
            double r = fabs(A1) * 1e100 < A0 ? (A1 < 0.0 ? 1e100 : -1e100) : -A0 / A1;
            if (r > 0.0) p->hi = r; else p->lo = r;
        }
    } else {
        /* the coefficients scaled by a power of two (exact: the same roots, bit for bit where
           nothing overflows): A1^2 and A2 A0 overflowed from sigma ~ 0.1 at M ~ 1e3 on (d ~ 1e170),
           raising the flag and turning the branch into NaN */
        int ex;
        double sc, disc, sq, qq, r1, r2;
        frexp(fmax(fabs(A2), fmax(fabs(A1), fabs(A0))), &ex);
        sc = ldexp(1.0, -ex);
        A2 *= sc;
        A1 *= sc;
        A0 *= sc;
        disc = A1 * A1 - 4.0 * A2 * A0;
        if (disc <= 0.0) return;       /* A2 > 0: p' > 0 everywhere */
        sq = sqrt(disc);
        qq = -0.5 * (A1 + (A1 >= 0.0 ? sq : -sq));
        r1 = qq / A2;
        r2 = A0 / qq;
        if (r1 > r2) { double t = r1; r1 = r2; r2 = t; }
        if (A2 < 0.0) { p->lo = r1; p->hi = r2; }
        else if (r1 > 0.0) p->hi = r1;
        else p->lo = r2;
    }
    /* An edge beyond 1e100 (c, d below ~1e-100: sigma 1e154 and M 1e154, or M 1e308) is moved in
       to +-1e100: p is monotone there too, and p(+-1e100) ~ +-1e100 is far beyond every level and
       every x = Phi^{-1}(a) (|x| < 39), so the clamped integrand is unchanged -- and p at the true
       edge (|y| up to 1e231) would overflow its y^3 terms
       (tests/contract/test_fp_flags.py::test_no_flag_with_two_extreme_arguments).
       An infinite edge (no root on that side) stays infinite. */
    if (isfinite(p->hi) && p->hi > 1e100) p->hi = 1e100;
    if (isfinite(p->lo) && p->lo < -1e100) p->lo = -1e100;
}

/* y with p(y) = x on the branch; NaN if x is outside p(branch). */
static double ew_invert(const ew_poly *p, double x)
{
    double lo = p->lo, hi = p->hi, y;
    int it;
    if (isfinite(lo) && !(x > dpb_quad_ew_poly(lo, p->c, p->d))) return DPB_NAN;
    if (isfinite(hi) && !(x < dpb_quad_ew_poly(hi, p->c, p->d))) return DPB_NAN;
    /* finite bracket */
    if (isinf(lo)) {
        lo = -1.0;
        while (dpb_quad_ew_poly(lo, p->c, p->d) > x) lo *= 2.0;
    }
    if (isinf(hi)) {
        hi = 1.0;
        while (dpb_quad_ew_poly(hi, p->c, p->d) < x) hi *= 2.0;
    }
    y = fmin(fmax(x, lo), hi);
    for (it = 0; it < 200; it++) {
        double f = dpb_quad_ew_poly(y, p->c, p->d) - x, y2 = y * y, yn;
        double fp = 1.0 - 2.0 * p->c * y - 3.0 * p->d * (y2 - 1.0) + p->c * p->c * (12.0 * y2 - 7.0);
        if (f == 0.0) return y;
        if (f > 0.0) hi = y; else lo = y;
        /* p' = 0 at a branch edge, where the start value can sit: bisect there instead of f/0
           (tests/special/test_c_core_edges.py::test_edgeworth_inverse_at_a_branch_edge_raises_no_flag) */
        yn = fp > 0.0 ? y - f / fp : 0.5 * (lo + hi);
        if (!(yn > lo && yn < hi)) yn = 0.5 * (lo + hi);
        if (fabs(yn - y) <= 1e-16 * fabs(y) || hi - lo <= 4e-16 * fabs(y) + 1e-300) return yn;
        y = yn;
    }
    return y;
}

/* p(y) wherever the plain form could overflow an intermediate (|y|^3 max(c^2, |d|) near or
 * beyond DBL_MAX/16): p(y) = y^3 B with B = (4c^2 - d) - c/y + (1 + 3d - 7c^2)/y^2 + c/y^3,
 * which has no overflowing term for |y| > 1 and c^2, |d| < 1e232 (the coefficients of a finite
 * gamma2); +-inf without a flag where the true value exceeds the doubles. */
static double ew_poly_large(double y, double c, double d)
{
    double iy = 1.0 / y, B = (4.0 * c * c - d) + iy * (-c + iy * ((1.0 + 3.0 * d - 7.0 * c * c) + iy * c));
    double s = (B < 0.0) != (y < 0.0) ? -1.0 : 1.0;
    if (B == 0.0) return 0.0 * y;
    if (log(fabs(B)) + 3.0 * log(fabs(y)) > DPB_LOG_DBL_MAX) return s * DPB_INF;
    return ((B * y) * y) * y;          /* |B y^k| grows with k: no intermediate exceeds the result */
}

double dpb_edgeworth_p(double y, double sigma, double n)
{
    ew_poly p;
    double eps, m, ay;
    if (isnan(y) || isnan(sigma) || isnan(n) || !(sigma > 0.0) || !(n >= 1.0)) return DPB_NAN;
    eps = dpb_lognormal_variance(sigma);
    ew_make(eps, n, &p);
    if (!isfinite(p.c) || !isfinite(p.d)) return DPB_NAN;
    if (isinf(y)) return DPB_NAN;
    /* the plain form unless its largest product, about 4 c^2 |y|^3, could overflow (from
       |y| ~ 1e102 at sigma = 1; tests/contract/test_fp_flags.py::test_edgeworth_p_at_huge_y_is_the_signed_overflow) */
    m = fmax(p.c * p.c, fabs(p.d));
    ay = fabs(y);
    if (ay <= 1.0 || log(fmax(m, 1.0)) + 3.0 * log(ay) < DPB_LOG_DBL_MAX - 2.8)   /* e^2.8 > 16 */
        return dpb_quad_ew_poly(y, p.c, p.d);
    return ew_poly_large(y, p.c, p.d);
}

static int ew_prepare(double a, double sigma, double rounds, dpb_quad_ctx *q, double *out)
{
    ew_poly pm, pm1;
    double eps, y;
    int st = 0;
    /* rounds an integer, as the ufunc's declared domain says (a fractional M gave status 0 with a
       NaN curve: the loop's domain check refused what the status called defined) */
    if (isnan(a) || isnan(sigma) || isnan(rounds) || a < 0.0 || a > 1.0
        || !(sigma > 0.0) || !(rounds >= 3.0) || (isfinite(rounds) && rounds != floor(rounds))) {
        *out = DPB_NAN;
        return DPB_EW_BAD_INPUT;
    }
    /* exact endpoints; below sigma = 0.03 (SIGMA_ALL_OVERFLOW of dpb_lognormal.c) w - 1 overflows
       the doubles, c_M is infinite and there is no polynomial: the set-up's refusal there, before
       1/sigma^2 overflows at tiny sigma, is that status */
    if (dpb_quad_setup(q, a, sigma, rounds, DPB_EW_SIGMA_MIN, out))
        return isnan(*out) ? DPB_EW_NOT_MONOTONE_AT_0 : 0;
    eps = dpb_lognormal_variance(sigma);
    ew_make(eps, rounds, &pm);
    ew_make(eps, rounds - 1.0, &pm1);
    if (!pm.ok || !pm1.ok) st |= DPB_EW_NOT_MONOTONE_AT_0;
    if (st) { *out = DPB_NAN; return st; }
    y = ew_invert(&pm, q->x);
    if (isnan(y)) { *out = DPB_NAN; return DPB_EW_OUT_OF_RANGE; }
    q->mode = DPB_QUAD_EDGEWORTH;
    q->xs = y * sqrt(1.0 + 1.0 / q->m1);
    q->c = pm1.c;
    q->d = pm1.d;
    q->ulo = pm1.lo;
    q->uhi = pm1.hi;
    /* panel edges: where p_{M-1}(u) crosses the CDF levels, and the clamp points */
    {
        int k, m = 0, i, j;
        double lv[DPB_QUAD_MAXULEV];
        double plo = isfinite(pm1.lo) ? dpb_quad_ew_poly(pm1.lo, pm1.c, pm1.d) : -DPB_INF;
        double phi = isfinite(pm1.hi) ? dpb_quad_ew_poly(pm1.hi, pm1.c, pm1.d) : DPB_INF;
        if (isfinite(pm1.hi)) lv[m++] = pm1.hi;
        if (isfinite(pm1.lo)) lv[m++] = pm1.lo;
        for (k = 0; k < DPB_QUAD_NLEVELS_CDF; k++) {
            double L = dpb_quad_levels_cdf[k];
            if (L > plo && L < phi) lv[m++] = ew_invert(&pm1, L);
        }
        for (i = 1; i < m; i++)           /* insertion sort, descending */
            for (j = i; j > 0 && lv[j] > lv[j - 1]; j--) { double t = lv[j]; lv[j] = lv[j - 1]; lv[j - 1] = t; }
        for (i = 0; i < m; i++) q->ulev[i] = lv[i];
        q->nulev = m;
    }
    *out = 0.0;
    return -1;   /* ready */
}

int dpb_edgeworth_status(double a, double sigma, double rounds)
{
    dpb_quad_ctx q;
    double out;
    int st = ew_prepare(a, sigma, rounds, &q, &out);
    return st < 0 ? DPB_EW_OK : st;
}

double dpb_tradeoff_edgeworth(double a, double sigma, double rounds)
{
    dpb_quad_ctx q;
    double out;
    if (ew_prepare(a, sigma, rounds, &q, &out) >= 0) return out;
    out = dpb_quad_integrate(&q, DPB_INF);
    if (out > 1.0) out = 1.0;
    if (out < 0.0) out = 0.0;
    return out;
}
