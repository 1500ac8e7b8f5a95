/* dpb_quad.c -- see dpb_quad.h.  File-local helpers keep the prefix tq_ ("trade-off
 * quadrature"). */
#include "dpb_config.h"
#include "dpb_normal.h"
#include "dpb_lognormal.h"
#include "dpb_quad.h"
#include "dpb_gl20.h"

/* Optional 2-wide SIMD evaluation of the CLT integrand with glibc's libmvec erfc/expm1/exp,
 * resolved at load time by dpb_vecmath.c (x86-64 Linux, running glibc >= 2.35); otherwise,
 * or with -DDPB_NO_LIBMVEC, the scalar loop.  libmvec's routines are accurate to a few ulp,
 * and the integral needs absolute accuracy only. */
#include "dpb_vecmath.h"

#define TQ_ZLO (-12.0)
#define TQ_ZHI 12.0
#define TQ_ARG_ONE 8.5        /* Phi(arg) >= 1 - 9.5e-18 above this */
#define TQ_ARG_ZERO (-8.3)    /* Phi(arg) < 5.2e-17 below this: panels further right add < 5.2e-17 in all */
#define TQ_PANEL_TOL 1e-18
#define TQ_KMAX 6             /* refinement edges zc +- wz 2^k, |k| <= TQ_KMAX */
#define TQ_STEP 6.0           /* uniform grid step min(TQ_STEP, TQ_STEP_SIGMA sigma) */
#define TQ_STEP_SIGMA 6.0
#define TQ_MAXEDGES 96

DPB_INLINE double tq_A(const dpb_quad_ctx *q, double z)
{
    double t = z * q->inv_sigma + q->half_inv_s2;
    if (q->logform) {
        double e = t - q->lnD;
        return e > 700.0 ? DPB_INF : exp(e);
    }
    if (t > 700.0) return DPB_INF;
    return expm1(t) * q->invD;
}

/* Phi argument of the CLT / Edgeworth integrands (decreasing in z). */
DPB_INLINE double tq_arg(const dpb_quad_ctx *q, double z)
{
    double A = tq_A(q, z), u;
    if (isinf(A)) return -DPB_INF;
    u = q->xs - A;
    if (q->mode == DPB_QUAD_EDGEWORTH) {
        if (u < q->ulo) u = q->ulo;
        if (u > q->uhi) u = q->uhi;
        return dpb_quad_ew_poly(u, q->c, q->d);
    }
    return u;
}

/* slope integrand exponent: -((x s - A)^2 - x^2)/2 - z^2/2 */
DPB_INLINE double tq_slope_exp(const dpb_quad_ctx *q, double z)
{
    double A = tq_A(q, z);
    if (!(A < 1e100)) return -DPB_INF;
    return -0.5 * (q->x * q->x / q->m1 - 2.0 * q->xs * A + A * A) - 0.5 * z * z;
}

DPB_INLINE double tq_integrand(const dpb_quad_ctx *q, double z)
{
    if (q->mode == DPB_QUAD_SLOPE) {
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
static __m128d tq_clt_pair(const dpb_quad_ctx *q, __m128d z)
{
    const __m128d half = _mm_set1_pd(0.5), one = _mm_set1_pd(1.0), zero = _mm_setzero_pd();
    __m128d t = _mm_add_pd(_mm_mul_pd(z, _mm_set1_pd(q->inv_sigma)), _mm_set1_pd(q->half_inv_s2));
    __m128d A, g, ag, e, phi, nz;
    /* Clamp the exponent of A at 700: A is then far beyond the -8.3 cut.  In the log form the
     * exponent is t - ln D, clamped after the subtraction: t itself reaches 1/(2 sigma^2) > 354
     * there, and clamping t would make A tiny where it is huge
     * (tests/tradeoff/test_tradeoff.py::test_clt_small_sigma_vs_mpmath). */
    if (q->logform)
        A = dpb_v2_exp(_mm_min_pd(_mm_sub_pd(t, _mm_set1_pd(q->lnD)), _mm_set1_pd(700.0)));
    else
        A = _mm_mul_pd(dpb_v2_expm1(_mm_min_pd(t, _mm_set1_pd(700.0))), _mm_set1_pd(q->invD));
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

static double tq_panel(const dpb_quad_ctx *q, double lo, double hi)
{
    double c = 0.5 * (lo + hi), h = 0.5 * (hi - lo), s = 0.0;
    int i;
#ifdef DPB_VECMATH_SSE2
    if (q->mode == DPB_QUAD_CLT && dpb_vecmath_native) {
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

/* Sorted points in [lo, hi]: the unit grid merged with the refinement zc +- wz 2^k
 * around zc.  Returns their number (>= 2).  Used only to find the slope's exponent
 * offset (dpb_quad_slope_prepare); the panels themselves come from tq_edges_levels. */
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
 * exponentially far right; geometric levels give panels of width ~sigma ln 2 there).
 * The slope's integrand n(x s - A(z)) n(z) gets the wider, symmetric pdf levels. */
const double dpb_quad_levels_cdf[DPB_QUAD_NLEVELS_CDF] = { 8.5, 4.0, 2.0, 1.0, 0.0, -1.0, -2.0, -4.0, -8.3, -16.0 };
static const double tq_levels_pdf[] = { 32.0, 16.0, 8.0, 4.0, 2.0, 1.0, 0.0, -1.0, -2.0, -4.0, -8.0, -16.0, -32.0 };

/* Sorted panel edges in [lo, hi]: the points where g(z) crosses the levels,
 * merged with a uniform grid of step TQ_STEP (which bounds the panel width for
 * the n(z) factor).  Returns the number of edges (>= 2). */
static int tq_edges_levels(const dpb_quad_ctx *q, const double *lev, int nlev, double lo, double hi, double *e,
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
    /* The uniform grid must fit in TQ_MAXEDGES with the level crossings: below sigma ~ 0.048 a
     * step of 6 sigma would overflow the edge array (the last panel then silently spanned the
     * rest of the range) and below sigma ~ 1e-14 the loop made no progress at all.  The level
     * crossings still bracket the switch of Phi(g), so the wider uniform step only bounds the
     * panel width for the n(z) factor, as TQ_STEP does. */
    step = fmax(step, (hi - lo) / (double)(TQ_MAXEDGES - 3 - nref));
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

double dpb_quad_integrate(const dpb_quad_ctx *q, double hi)
{
    double e[TQ_MAXEDGES], g[TQ_MAXEDGES], ev[TQ_MAXEDGES];
    double lo = TQ_ZLO, sum = 0.0;
    int n, j, first;
    if (hi > TQ_ZHI) hi = TQ_ZHI;
    if (!(hi > lo)) return 0.0;
    if (q->mode == DPB_QUAD_SLOPE)
        n = tq_edges_levels(q, tq_levels_pdf, (int)(sizeof tq_levels_pdf / sizeof(double)), lo, hi, e, ev);
    else if (q->mode == DPB_QUAD_EDGEWORTH)
        n = tq_edges_levels(q, q->ulev, q->nulev, lo, hi, e, ev);
    else
        n = tq_edges_levels(q, dpb_quad_levels_cdf, DPB_QUAD_NLEVELS_CDF, lo, hi, e, ev);
    if (q->mode == DPB_QUAD_SLOPE) {
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
        g[j] = (q->mode == DPB_QUAD_CLT && !isnan(ev[j])) ? ev[j] : tq_arg(q, e[j]);
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

int dpb_quad_setup(dpb_quad_ctx *q, double a, double sigma, double rounds, double sigma_min, double *out)
{
    double eps, hi, lo;
    if (isnan(a) || isnan(sigma) || isnan(rounds)) { *out = DPB_NAN; return 1; }
    if (a < 0.0 || a > 1.0 || !(sigma > 0.0) || !(rounds > 1.0)) { *out = DPB_NAN; return 1; }
    if (a == 0.0) { *out = 1.0; return 1; }
    if (a == 1.0) { *out = 0.0; return 1; }
    if (isinf(sigma) || isinf(rounds)) { *out = 1.0 - a; return 1; }
    /* the caller's refusal, before 1/sigma and 1/sigma^2 below: they overflow (raising the flag
       numpy reports as a RuntimeWarning) for sigma < 1.3e-154, where the answer is this NaN anyway */
    if (sigma < sigma_min) { *out = DPB_NAN; return 1; }
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
    } else if (eps > DBL_MAX / q->m1) {
        /* (M - 1)(w - 1) overflows although w - 1 does not (sigma 0.07, M 1e308;
           tests/contract/test_fp_flags.py::test_no_flag_with_two_extreme_arguments); D > 1e154, so 1/D is
           below every other term */
        q->logform = 1;
        q->lnD = 0.5 * (log(q->m1) + log(eps));
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
static void tq_switch(const dpb_quad_ctx *q, double *zc, double *wz)
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

void dpb_quad_slope_prepare(dpb_quad_ctx *q)
{
    double zc, wz, off, e[TQ_MAXEDGES];
    int n, j;
    q->mode = DPB_QUAD_SLOPE;
    tq_switch(q, &zc, &wz);
    /* offset: the largest exponent at the panel edges (the refinement around zc
     * puts edges within w_z/64 of the peak) */
    n = tq_edges(zc, wz, TQ_ZLO, TQ_ZHI, e);
    off = -DPB_INF;
    for (j = 0; j < n; j++) {
        double v = tq_slope_exp(q, e[j]);
        if (v > off) off = v;
    }
    if (!isfinite(off)) off = 0.0;
    q->off = off;
}
