/* dpb_edgeworth.c -- see dpb_edgeworth.h for the contract of each function. */
#include "dpb_config.h"
#include "dpb_lognormal.h"
#include "dpb_quad.h"
#include "dpb_edgeworth.h"

typedef struct {
    double c, d, lo, hi;   /* coefficients and the monotone branch (lo, hi) */
    int ok;
} ew_poly;

static void ew_make(double eps, double n, ew_poly *p)
{
    double g1 = (3.0 + eps) * sqrt(eps);
    double g2 = eps * (16.0 + eps * (15.0 + eps * (6.0 + eps)));
    double c = g1 / (6.0 * sqrt(n)), d = g2 / (24.0 * n);
    double A2 = 12.0 * c * c - 3.0 * d, A1 = -2.0 * c, A0 = 1.0 + 3.0 * d - 7.0 * c * c;
    p->c = c;
    p->d = d;
    p->lo = -DPB_INF;
    p->hi = DPB_INF;
    p->ok = isfinite(c) && isfinite(d) && A0 > 0.0;
    if (!p->ok) return;
    if (A2 == 0.0) {
        if (A1 != 0.0) {
            double r = -A0 / A1;
            if (r > 0.0) p->hi = r; else p->lo = r;
        }
        return;
    }
    {
        double disc = A1 * A1 - 4.0 * A2 * A0, sq, qq, r1, r2;
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
        yn = y - f / fp;
        if (!(yn > lo && yn < hi)) yn = 0.5 * (lo + hi);
        if (fabs(yn - y) <= 1e-16 * fabs(y) || hi - lo <= 4e-16 * fabs(y) + 1e-300) return yn;
        y = yn;
    }
    return y;
}

double dpb_edgeworth_p(double y, double sigma, double n)
{
    ew_poly p;
    double eps;
    if (isnan(y) || isnan(sigma) || isnan(n) || !(sigma > 0.0) || !(n >= 1.0)) return DPB_NAN;
    eps = dpb_lognormal_variance(sigma);
    ew_make(eps, n, &p);
    if (!isfinite(p.c) || !isfinite(p.d)) return DPB_NAN;
    if (isinf(y)) return DPB_NAN;
    return dpb_quad_ew_poly(y, p.c, p.d);
}

static int ew_prepare(double a, double sigma, double rounds, dpb_quad_ctx *q, double *out)
{
    ew_poly pm, pm1;
    double eps, y;
    int st = 0;
    if (isnan(a) || isnan(sigma) || isnan(rounds) || a < 0.0 || a > 1.0
        || !(sigma > 0.0) || !(rounds >= 3.0)) {
        *out = DPB_NAN;
        return DPB_EW_BAD_INPUT;
    }
    if (dpb_quad_setup(q, a, sigma, rounds, out)) return 0;   /* exact endpoints */
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
