/* dpb_tradeoff.c -- see dpb_tradeoff.h for the contract of each function. */
#include "dpb_config.h"
#include "dpb_normal.h"
#include "dpb_lognormal.h"
#include "dpb_theorem31.h"
#include "dpb_tradeoff.h"
#include "dpb_gl20.h"

/* Optional 2-wide SIMD evaluation of the CLT integrand with glibc's libmvec erfc/expm1/exp,
 * resolved at load time by dpb_vecmath.c (x86-64 Linux, running glibc >= 2.35); otherwise,
 * or with -DDPB_NO_LIBMVEC, the scalar loop.  libmvec's routines are accurate to a few ulp,
 * and the integral needs absolute accuracy only. */
#include "dpb_vecmath.h"

/* ------------------------------------------------------------ simple curves */

double dpb_gaussian_tradeoff(double a, double mu)
{
    double x;
    if (isnan(a) || isnan(mu)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || mu < 0.0) return DPB_NAN;
    if (mu == 0.0) return 1.0 - a;
    if (isinf(mu)) return 0.0;
    if (a == 0.0) return 1.0;
    if (a == 1.0) return 0.0;
    x = dpb_ndtri_complement(a);
    return dpb_ndtr(x - mu);
}

double dpb_f0delta_tradeoff(double a, double delta)
{
    double r;
    if (isnan(a) || isnan(delta)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    r = (1.0 - a) - delta;
    return r > 0.0 ? r : 0.0;
}

double dpb_gaussian_f0delta_tradeoff(double a, double mu, double delta)
{
    double q;
    if (isnan(a) || isnan(mu) || isnan(delta)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || mu < 0.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    q = 1.0 - delta;
    if (delta == 0.0) return dpb_gaussian_tradeoff(a, mu);
    if (a >= q) return 0.0;
    return q * dpb_gaussian_tradeoff(a / q, mu);
}

double dpb_multi_epoch_tradeoff(double a, double delta, double epochs)
{
    double p, r;
    if (isnan(a) || isnan(delta) || isnan(epochs)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || delta < 0.0 || delta > 1.0 || epochs < 0.0) return DPB_NAN;
    if (epochs == 0.0) return 1.0 - a;
    if (delta == 1.0) return 0.0;
    p = epochs * log1p(-delta);
    p = (p < -745.0) ? 0.0 : exp(p);
    r = p - a;
    return r > 0.0 ? r : 0.0;
}

double dpb_gaussian_max_gap(double mu, double delta)
{
    double t;
    if (isnan(mu) || isnan(delta)) return DPB_NAN;
    if (mu < 0.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    if (isinf(mu)) return 1.0;
    t = 0.5 * mu * DPB_SQRT1_2;
    return erf(t) + delta * erfc(t);
}

/* ------------------------------------------------------------ quadrature */

enum { TQ_CLT = 0, TQ_EDGEWORTH = 1, TQ_SLOPE = 2 };

#define TQ_ZLO (-12.0)
#define TQ_ZHI 12.0
#define TQ_ARG_ONE 8.5        /* Phi(arg) >= 1 - 9.5e-18 above this */
#define TQ_ARG_ZERO (-8.3)    /* Phi(arg) < 5.2e-17 below this: panels further right add < 5.2e-17 in all */
#define TQ_PANEL_TOL 1e-18
#define TQ_KMAX 6             /* refinement edges zc +- wz 2^k, |k| <= TQ_KMAX */
#define TQ_STEP 6.0           /* uniform grid step min(TQ_STEP, TQ_STEP_SIGMA sigma) */
#define TQ_STEP_SIGMA 6.0
#define TQ_MAXEDGES 96

typedef struct {
    int mode;
    int logform;        /* w overflowed: A = exp(t - lnD) */
    double xs;          /* x s (CLT) or y s (Edgeworth) */
    double x;           /* x (slope) */
    double invD, lnD;
    double sigma, inv_sigma, half_inv_s2;
    double m1;          /* M - 1 */
    /* outer Edgeworth polynomial p_{M-1} and its monotone branch */
    double c, d, ulo, uhi;
    double off;         /* slope: exponent offset */
    int nulev;          /* Edgeworth: values of u = y s - A(z) that get panel edges */
    double ulev[24];
} tq_ctx;

DPB_INLINE double tq_A(const tq_ctx *q, double z)
{
    double t = z * q->inv_sigma + q->half_inv_s2;
    if (q->logform) {
        double e = t - q->lnD;
        return e > 700.0 ? DPB_INF : exp(e);
    }
    if (t > 700.0) return DPB_INF;
    return expm1(t) * q->invD;
}

DPB_INLINE double ew_p(double y, double c, double d)
{
    double y2 = y * y;
    return y - c * (y2 - 1.0) - d * y * (y2 - 3.0) + c * c * y * (4.0 * y2 - 7.0);
}

/* Phi argument of the CLT / Edgeworth integrands (decreasing in z). */
DPB_INLINE double tq_arg(const tq_ctx *q, double z)
{
    double A = tq_A(q, z), u;
    if (isinf(A)) return -DPB_INF;
    u = q->xs - A;
    if (q->mode == TQ_EDGEWORTH) {
        if (u < q->ulo) u = q->ulo;
        if (u > q->uhi) u = q->uhi;
        return ew_p(u, q->c, q->d);
    }
    return u;
}

/* slope integrand exponent: -((x s - A)^2 - x^2)/2 - z^2/2 */
DPB_INLINE double tq_slope_exp(const tq_ctx *q, double z)
{
    double A = tq_A(q, z);
    if (!(A < 1e100)) return -DPB_INF;
    return -0.5 * (q->x * q->x / q->m1 - 2.0 * q->xs * A + A * A) - 0.5 * z * z;
}

DPB_INLINE double tq_integrand(const tq_ctx *q, double z)
{
    if (q->mode == TQ_SLOPE) {
        double e = tq_slope_exp(q, z) - q->off;
        return e < -745.0 ? 0.0 : exp(e);
    }
    {
        /* absolute accuracy suffices inside the integral: plain erfc, exp */
        double g = tq_arg(q, z), p;
        p = (g < 0.0) ? 0.5 * erfc(-g * DPB_SQRT1_2) : 1.0 - 0.5 * erfc(g * DPB_SQRT1_2);
        return p * exp(-0.5 * z * z) * DPB_INV_SQRT2PI;
    }
}

#ifdef DPB_VECMATH_SSE2
/* CLT integrand at the node pair c -+ dz (lanes 0, 1). */
static __m128d tq_clt_pair(const tq_ctx *q, __m128d z)
{
    const __m128d half = _mm_set1_pd(0.5), one = _mm_set1_pd(1.0), zero = _mm_setzero_pd();
    __m128d t = _mm_add_pd(_mm_mul_pd(z, _mm_set1_pd(q->inv_sigma)), _mm_set1_pd(q->half_inv_s2));
    __m128d A, g, ag, e, phi, nz;
    t = _mm_min_pd(t, _mm_set1_pd(700.0));        /* A is then far beyond the -8.3 cut */
    if (q->logform)
        A = dpb_v2_exp(_mm_sub_pd(t, _mm_set1_pd(q->lnD)));
    else
        A = _mm_mul_pd(dpb_v2_expm1(t), _mm_set1_pd(q->invD));
    g = _mm_sub_pd(_mm_set1_pd(q->xs), A);
    g = _mm_max_pd(g, _mm_set1_pd(-40.0));        /* Phi(-40) = 0 to double precision */
    ag = _mm_andnot_pd(_mm_set1_pd(-0.0), g);     /* |g| */
    e = _mm_mul_pd(half, dpb_v2_erfc(_mm_mul_pd(ag, _mm_set1_pd(DPB_SQRT1_2))));
    {
        __m128d neg = _mm_cmplt_pd(g, zero);
        phi = _mm_or_pd(_mm_and_pd(neg, e), _mm_andnot_pd(neg, _mm_sub_pd(one, e)));
    }
    nz = dpb_v2_exp(_mm_mul_pd(_mm_set1_pd(-0.5), _mm_mul_pd(z, z)));
    return _mm_mul_pd(phi, _mm_mul_pd(nz, _mm_set1_pd(DPB_INV_SQRT2PI)));
}
#endif

static double tq_panel(const tq_ctx *q, double lo, double hi)
{
    double c = 0.5 * (lo + hi), h = 0.5 * (hi - lo), s = 0.0;
    int i;
#ifdef DPB_VECMATH_SSE2
    if (q->mode == TQ_CLT && dpb_vecmath_native) {
        __m128d acc = _mm_setzero_pd(), cc = _mm_set1_pd(c), hh = _mm_set1_pd(h);
        double out[2];
        for (i = 0; i < DPB_GL20_HALF; i++) {
            __m128d dz = _mm_mul_pd(hh, _mm_set_pd(dpb_gl20_x[i], -dpb_gl20_x[i]));
            acc = _mm_add_pd(acc, _mm_mul_pd(_mm_set1_pd(dpb_gl20_w[i]), tq_clt_pair(q, _mm_add_pd(cc, dz))));
        }
        _mm_storeu_pd(out, acc);
        return (out[0] + out[1]) * h;
    }
#endif
    for (i = 0; i < DPB_GL20_HALF; i++) {
        double dz = h * dpb_gl20_x[i];
        s += dpb_gl20_w[i] * (tq_integrand(q, c - dz) + tq_integrand(q, c + dz));
    }
    return s * h;
}

/* Sorted panel edges in [lo, hi]: the unit grid merged with the refinement
 * around zc.  Returns the number of edges (>= 2). */
static int tq_edges(double zc, double wz, double lo, double hi, double *e)
{
    double ref[4 * TQ_KMAX + 3];
    int nref = 0, n = 0, k, j;
    double g;
    for (k = TQ_KMAX; k >= -TQ_KMAX; k--) ref[nref++] = zc - ldexp(wz, k);
    ref[nref++] = zc;
    for (k = -TQ_KMAX; k <= TQ_KMAX; k++) ref[nref++] = zc + ldexp(wz, k);
    e[n++] = lo;
    g = ceil(lo);
    if (g == lo) g += 1.0;
    j = 0;
    for (;;) {
        double next;
        while (j < nref && !(ref[j] > lo)) j++;
        if (j < nref && ref[j] < g) next = ref[j++];
        else next = g, g += 1.0;
        if (!(next < hi)) break;
        if (next - e[n - 1] > 1e-12 * (1.0 + fabs(next))) e[n++] = next;
        if (n >= TQ_MAXEDGES - 1) break;
    }
    if (hi - e[n - 1] <= 1e-12 * (1.0 + fabs(hi)) && n > 1) n--;
    e[n++] = hi;
    return n;
}

/* Levels of the Phi argument g(z) = x s - A(z) at which panel edges are placed
 * (the integrand changes on the scale of one unit of g near g = 0 and doubly
 * exponentially far right; geometric levels give panels of width ~sigma ln 2 there). */
static const double tq_levels_cdf[] = { 8.5, 4.0, 2.0, 1.0, 0.0, -1.0, -2.0, -4.0, -8.3, -16.0 };
static const double tq_levels_pdf[] = { 32.0, 16.0, 8.0, 4.0, 2.0, 1.0, 0.0, -1.0, -2.0, -4.0, -8.0, -16.0, -32.0 };

/* Sorted panel edges in [lo, hi]: the points where g(z) crosses the levels,
 * merged with a uniform grid of step TQ_STEP (which bounds the panel width for
 * the n(z) factor).  Returns the number of edges (>= 2). */
static int tq_edges_levels(const tq_ctx *q, const double *lev, int nlev, double lo, double hi, double *e,
                           double *ev)
{
    double ref[32], rl[32];
    int nref = 0, n = 0, j = 0, k;
    double g;
    double step = fmin(TQ_STEP, TQ_STEP_SIGMA * q->sigma);
    for (k = 0; k < nlev; k++) {
        double t = q->xs - lev[k] + q->invD;     /* e^{t(z)} = D (xs - level + 1/D) */
        if (t > 0.0) {
            rl[nref] = lev[k];
            ref[nref++] = q->sigma * (q->lnD + log(t)) - 0.5 * q->inv_sigma;
        }
    }
    ev[n] = DPB_NAN;
    e[n++] = lo;
    g = step * ceil(lo / step);
    if (g == lo) g += step;
    for (;;) {
        double next, nv = DPB_NAN;
        while (j < nref && !(ref[j] > e[n - 1])) j++;
        if (j < nref && ref[j] < g) nv = rl[j], next = ref[j++];
        else next = g, g += step;
        if (!(next < hi)) break;
        if (next - e[n - 1] > 1e-12 * (1.0 + fabs(next))) ev[n] = nv, e[n++] = next;
        if (n >= TQ_MAXEDGES - 1) break;
    }
    if (hi - e[n - 1] <= 1e-12 * (1.0 + fabs(hi)) && n > 1) n--;
    ev[n] = DPB_NAN;
    e[n++] = hi;
    return n;
}

static double tq_integrate(const tq_ctx *q, double hi)
{
    double e[TQ_MAXEDGES], g[TQ_MAXEDGES], ev[TQ_MAXEDGES];
    double lo = TQ_ZLO, sum = 0.0;
    int n, j, first;
    if (hi > TQ_ZHI) hi = TQ_ZHI;
    if (!(hi > lo)) return 0.0;
    if (q->mode == TQ_SLOPE)
        n = tq_edges_levels(q, tq_levels_pdf, (int)(sizeof tq_levels_pdf / sizeof(double)), lo, hi, e, ev);
    else if (q->mode == TQ_EDGEWORTH)
        n = tq_edges_levels(q, q->ulev, q->nulev, lo, hi, e, ev);
    else
        n = tq_edges_levels(q, tq_levels_cdf, (int)(sizeof tq_levels_cdf / sizeof(double)), lo, hi, e, ev);
    if (q->mode == TQ_SLOPE) {
        for (j = 0; j < n; j++) {
            double a = tq_A(q, e[j]);
            g[j] = isinf(a) ? -DPB_INF : q->xs - a;
        }
        for (j = 0; j + 1 < n; j++) {
            if (g[j + 1] > 40.0 || g[j] < -40.0) continue;
            sum += tq_panel(q, e[j], e[j + 1]);
        }
        return sum;
    }
    for (j = 0; j < n; j++)   /* at a level crossing of the CLT integrand g is the level */
        g[j] = (q->mode == TQ_CLT && !isnan(ev[j])) ? ev[j] : tq_arg(q, e[j]);
    /* panels where Phi(arg) == 1 to 1e-17: closed-form normal mass */
    first = 0;
    while (first + 1 < n && g[first + 1] > TQ_ARG_ONE) first++;
    sum = dpb_ndtr(e[first]);
    for (j = first; j + 1 < n; j++) {
        double a0 = e[j], a1 = e[j + 1], nmax, bound;
        if (g[j] < TQ_ARG_ZERO) break;
        nmax = (a0 <= 0.0 && a1 >= 0.0) ? DPB_INV_SQRT2PI
               : dpb_normal_pdf(fmin(fabs(a0), fabs(a1)));
        bound = dpb_ndtr(g[j]) * nmax * (a1 - a0);
        if (bound < TQ_PANEL_TOL) continue;
        sum += tq_panel(q, a0, a1);
    }
    return sum;
}

/* Common set-up: returns 0 if the context is ready, else writes the answer
 * for a degenerate case into *out and returns 1. */
static int tq_setup(tq_ctx *q, double a, double sigma, double rounds, double *out)
{
    double eps, hi, lo;
    if (isnan(a) || isnan(sigma) || isnan(rounds)) { *out = DPB_NAN; return 1; }
    if (a < 0.0 || a > 1.0 || !(sigma > 0.0) || !(rounds > 1.0)) { *out = DPB_NAN; return 1; }
    if (a == 0.0) { *out = 1.0; return 1; }
    if (a == 1.0) { *out = 0.0; return 1; }
    if (isinf(sigma) || isinf(rounds)) { *out = 1.0 - a; return 1; }
    eps = dpb_lognormal_variance(sigma);
    if (!(eps > 0.0)) { *out = 1.0 - a; return 1; }   /* underflow: sigma > 1e154 */
    q->sigma = sigma;
    q->inv_sigma = 1.0 / sigma;
    dpb_inv_square(sigma, &hi, &lo);
    q->half_inv_s2 = 0.5 * (hi + lo);
    q->m1 = rounds - 1.0;
    q->x = dpb_ndtri_complement(a);
    q->xs = q->x * sqrt(1.0 + 1.0 / q->m1);
    if (isinf(eps)) {
        /* ln(w - 1) = 1/sigma^2 + log1p(-e^{-1/sigma^2}) */
        q->logform = 1;
        q->lnD = 0.5 * (log(q->m1) + hi + lo + log1p(-exp(-hi)));
        q->invD = 0.0;
    } else {
        double D = sqrt(q->m1 * eps);
        q->logform = 0;
        q->lnD = log(D);
        q->invD = 1.0 / D;
    }
    q->c = q->d = 0.0;
    q->ulo = -DPB_INF;
    q->uhi = DPB_INF;
    q->off = 0.0;
    return 0;
}

/* switch point of Phi(xs - A(z)) and its width */
static void tq_switch(const tq_ctx *q, double *zc, double *wz)
{
    double t = q->xs + q->invD;       /* 1 + xs D = D (xs + 1/D) */
    double half_inv_sigma = 0.5 * q->inv_sigma;
    if (t > 0.0) {
        *zc = q->sigma * (q->lnD + log(t)) - half_inv_sigma;
        *wz = q->sigma / fmax(fabs(t), 1.0);
    } else {
        *zc = q->sigma * q->lnD - half_inv_sigma;
        *wz = q->sigma;
    }
}

double dpb_tradeoff_clt(double a, double sigma, double rounds, int truncated)
{
    tq_ctx q;
    double out, zmax = DPB_INF;
    if (tq_setup(&q, a, sigma, rounds, &out)) return out;
    q.mode = TQ_CLT;
    if (truncated) {
        /* h = 1 + x sqrt((w-1)/M); z_max = sigma ln(M h) - 1/(2 sigma) */
        double r = q.logform ? DPB_INF : q.x * sqrt(dpb_lognormal_variance(sigma) / rounds);
        if (!(r > -1.0)) return 0.0;
        zmax = sigma * (log(rounds) + log1p(r)) - 0.5 * q.inv_sigma;
    }
    out = tq_integrate(&q, zmax);
    if (out > 1.0) out = 1.0;
    if (out < 0.0) out = 0.0;
    return out;
}

double dpb_tradeoff_clt_slope(double a, double sigma, double rounds)
{
    tq_ctx q;
    double out, zc, wz, I, off, e[TQ_MAXEDGES], lg;
    int n, j;
    if (a == 0.0 && sigma > 0.0 && rounds > 1.0) return -DPB_INF;
    if (a == 1.0 && sigma > 0.0 && rounds > 1.0) return 0.0;
    if (tq_setup(&q, a, sigma, rounds, &out)) {
        if (isnan(out)) return out;
        return -1.0;                   /* mu = 0: f = 1 - a */
    }
    q.mode = TQ_SLOPE;
    tq_switch(&q, &zc, &wz);
    /* offset: the largest exponent at the panel edges (the refinement around zc
     * puts edges within w_z/64 of the peak) */
    n = tq_edges(zc, wz, TQ_ZLO, TQ_ZHI, e);
    off = -DPB_INF;
    for (j = 0; j < n; j++) {
        double v = tq_slope_exp(&q, e[j]);
        if (v > off) off = v;
    }
    if (!isfinite(off)) off = 0.0;
    q.off = off;
    I = tq_integrate(&q, DPB_INF);
    if (!(I > 0.0)) return 0.0 * I;     /* -0.0 or NaN */
    lg = off + log(I) + 0.5 * log1p(1.0 / q.m1) - DPB_LOG_SQRT2PI;
    if (lg > DPB_LOG_DBL_MAX) return -DPB_INF;
    return -exp(lg);
}

/* ------------------------------------------------------------ Edgeworth */

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
    if (isfinite(lo) && !(x > ew_p(lo, p->c, p->d))) return DPB_NAN;
    if (isfinite(hi) && !(x < ew_p(hi, p->c, p->d))) return DPB_NAN;
    /* finite bracket */
    if (isinf(lo)) {
        lo = -1.0;
        while (ew_p(lo, p->c, p->d) > x) lo *= 2.0;
    }
    if (isinf(hi)) {
        hi = 1.0;
        while (ew_p(hi, p->c, p->d) < x) hi *= 2.0;
    }
    y = fmin(fmax(x, lo), hi);
    for (it = 0; it < 200; it++) {
        double f = ew_p(y, p->c, p->d) - x, y2 = y * y, yn;
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
    return ew_p(y, p.c, p.d);
}

static int ew_prepare(double a, double sigma, double rounds, tq_ctx *q, double *out)
{
    ew_poly pm, pm1;
    double eps, y;
    int st = 0;
    if (isnan(a) || isnan(sigma) || isnan(rounds) || a < 0.0 || a > 1.0
        || !(sigma > 0.0) || !(rounds >= 3.0)) {
        *out = DPB_NAN;
        return DPB_EW_BAD_INPUT;
    }
    if (tq_setup(q, a, sigma, rounds, out)) return 0;   /* exact endpoints */
    eps = dpb_lognormal_variance(sigma);
    ew_make(eps, rounds, &pm);
    ew_make(eps, rounds - 1.0, &pm1);
    if (!pm.ok || !pm1.ok) st |= DPB_EW_NOT_MONOTONE_AT_0;
    if (st) { *out = DPB_NAN; return st; }
    y = ew_invert(&pm, q->x);
    if (isnan(y)) { *out = DPB_NAN; return DPB_EW_OUT_OF_RANGE; }
    q->mode = TQ_EDGEWORTH;
    q->xs = y * sqrt(1.0 + 1.0 / q->m1);
    q->c = pm1.c;
    q->d = pm1.d;
    q->ulo = pm1.lo;
    q->uhi = pm1.hi;
    /* panel edges: where p_{M-1}(u) crosses the CDF levels, and the clamp points */
    {
        int k, m = 0, i, j;
        double lv[24];
        double plo = isfinite(pm1.lo) ? ew_p(pm1.lo, pm1.c, pm1.d) : -DPB_INF;
        double phi = isfinite(pm1.hi) ? ew_p(pm1.hi, pm1.c, pm1.d) : DPB_INF;
        if (isfinite(pm1.hi)) lv[m++] = pm1.hi;
        if (isfinite(pm1.lo)) lv[m++] = pm1.lo;
        for (k = 0; k < (int)(sizeof tq_levels_cdf / sizeof(double)); k++) {
            double L = tq_levels_cdf[k];
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
    tq_ctx q;
    double out;
    int st = ew_prepare(a, sigma, rounds, &q, &out);
    return st < 0 ? DPB_EW_OK : st;
}

double dpb_tradeoff_edgeworth(double a, double sigma, double rounds)
{
    tq_ctx q;
    double out;
    if (ew_prepare(a, sigma, rounds, &q, &out) >= 0) return out;
    out = tq_integrate(&q, DPB_INF);
    if (out > 1.0) out = 1.0;
    if (out < 0.0) out = 0.0;
    return out;
}

/* ------------------------------------------------------------ Theorem 3.1 */

double dpb_tradeoff_lower_bound(double a, double sigma, double rounds, int coefficient)
{
    dpb_t31_sigma c;
    double dmin, r;
    if (isnan(a) || isnan(sigma) || isnan(rounds)) return DPB_NAN;
    if (a < 0.0 || a > 1.0) return DPB_NAN;
    if (coefficient != DPB_COEF_SIMPLIFIED && coefficient != DPB_COEF_EXACT) return DPB_NAN;
    if (dpb_t31_prepare(sigma, coefficient, &c) != 0) return DPB_NAN;
    if (dpb_t31_status(&c, rounds, DPB_NAN, &dmin) != DPB_T31_VALID) return DPB_NAN;
    r = (1.0 - a) - dmin;
    return r > 0.0 ? r : 0.0;
}
