/* dpb_rdp_wor.c -- see dpb_rdp_wor.h. */
#include <math.h>
#include <stdlib.h>
#include "dpb_config.h"
#include "dpb_rdp_common.h"
#include "dpb_rdp_base.h"
#include "dpb_rdp_poisson.h"
#include "dpb_rdp_wor.h"

#define DPB_U 1.1102230246251565e-16   /* 2^-53 */

static int bad_gamma(double g) { return g != g || !(g >= 0.0 && g <= 1.0); }

/* shared finishing step: log1p(exp(S))/(a-1) with the two valid clamps */
static double finish_upper(long a, double S, double eps_a, double eps_inf_sub)
{
    double r = dpb_log1pexp(S) / (double)(a - 1);
    if (eps_a == eps_a && eps_a < r) r = eps_a;
    if (eps_inf_sub < r) r = eps_inf_sub;
    return r;
}

/* eps'(inf) = log(1 + g (e^{eps_inf} - 1)) */
static double sub_inf(double lg, double eps_inf)
{
    if (eps_inf == DPB_INF) return DPB_INF;
    if (eps_inf == 0.0) return 0.0;
    return dpb_log1pexp(lg + dpb_logexpm1(eps_inf));
}

/* What upper_int needs beyond the order: fixed for one (gamma, base curve, eps_inf), so callers
 * that evaluate many orders (dpb_rdp_wor_gaussian over a grid) prepare it once. */
typedef struct {
    double lg;      /* log gamma */
    double lem;     /* log(e^{eps_inf} - 1) */
    double c2;      /* the j = 2 factor's log */
    double sub;     /* eps'(inf) */
} upper_pre;

/* 0, or -1 where upper_int answers NaN whatever the order (gamma in (0, 1) assumed) */
static int upper_prepare(double g, const double *eps, double eps_inf, upper_pre *p)
{
    double e2 = eps[2], x1, x2;
    if (eps_inf != eps_inf || eps_inf < 0.0 || e2 != e2) return -1;
    p->lg = log(g);
    p->lem = (eps_inf == DPB_INF) ? DPB_INF : dpb_logexpm1(eps_inf);   /* log(e^{eps_inf} - 1) */
    x1 = DPB_LN4 + dpb_logexpm1(e2);
    x2 = e2 + fmin(DPB_LN2, 2.0 * p->lem);
    p->c2 = fmin(x1, x2);
    p->sub = sub_inf(p->lg, eps_inf);
    return 0;
}

/* upper_sum's tail cut, for the Gaussian base (eps[j] = fl(j r), eps_inf = inf, lfact tabulated).
 *
 * Each computed term is at most B(j) + E, with B(j) = j lg + log C(a, j) + (j - 1) eps[j] + ln 2 (the
 * Pearson-Vajda entry only lowers it) and E the rounding of a few operations and of the lgamma
 * table, below 1e-12 of mag = a |lg| + 4 lgamma(a + 1) + a^2 r + 1.  B(j + 1) - B(j) =
 * lg + log((a - j)/(j + 1)) + j eps[j+1] - (j - 1) eps[j] <= D_j = lg + log((a - j)/(j + 1)) + 2 a r
 * (+ 2 a^2 r u), and D_j decreases in j.  So once D_j <= 0 (with room for its own rounding, from the
 * same table) B is non-increasing from j on, and once a term is also e^38 below the running
 * maximum with room for 2E, every later term is one dpb_lse_add skips: stopping there gives the same
 * double. */
static double upper_sum(long a, const upper_pre *p, const double *eps, const double *logd,
                        const double *lfact, double r)
{
    double lg = p->lg, lem = p->lem, t, f9, tl = 0.0, dl = 0.0, two_ar = 0.0;
    long j;
    int cut = lfact != NULL && r > 0.0 && r < 1e100 && lem == DPB_INF && lg > -DPB_INF;
    dpb_lse acc;
    if (cut) {
        double mag = (double)a * fabs(lg) + 4.0 * lfact[a] + (double)a * (double)a * r + 1.0;
        tl = DPB_LSE_NEGLIGIBLE - 2e-12 * mag - 1e-9;
        dl = -(1e-12 * mag + 1e-12);
        two_ar = 2.0 * (double)a * r;
    }
    dpb_lse_init(&acc);
    dpb_lse_add(&acc, 2.0 * lg + dpb_lbinom_int(a, 2, lfact) + p->c2);       /* j = 2 */
    for (j = 3; j <= a; j++) {
        /* fmin(ln 2, j lem) written out (j lem is never NaN: lem >= -inf, j > 0): a library
           call per term otherwise */
        double jl = (double)j * lem;
        if (eps[j] != eps[j]) return DPB_NAN;
        f9 = (double)(j - 1) * eps[j] + (jl < DPB_LN2 ? jl : DPB_LN2);
        if (logd) {
            long lo = 2 * (j / 2), hi = 2 * ((j + 1) / 2);
            double fd = DPB_LN4 + 0.5 * (logd[lo] + logd[hi]);
            if (fd < f9) f9 = fd;
        }
        t = (double)j * lg + dpb_lbinom_int(a, j, lfact) + f9;
        dpb_lse_add(&acc, t);
        if (cut && j < a && t < acc.m + tl
            && lg + (lfact[a - j] - lfact[a - j - 1]) - (lfact[j + 1] - lfact[j]) + two_ar <= dl)
            break;
    }
    return finish_upper(a, dpb_lse_value(&acc), eps[a], p->sub);
}

static double upper_int(long a, double g, const double *eps, double eps_inf,
                        const double *logd, const double *lfact)
{
    upper_pre p;
    if (bad_gamma(g) || a < 2 || eps_inf != eps_inf || eps_inf < 0.0) return DPB_NAN;
    if (g == 0.0) return 0.0;
    if (g == 1.0) return eps[a];
    if (upper_prepare(g, eps, eps_inf, &p) != 0) return DPB_NAN;
    return upper_sum(a, &p, eps, logd, lfact, DPB_NAN);
}

double dpb_rdp_wor_thm9_int(long a, double gamma, const double *eps, double eps_inf,
                            const double *lfact)
{
    return upper_int(a, gamma, eps, eps_inf, NULL, lfact);
}

double dpb_rdp_wor_pv_int(long a, double gamma, const double *eps, double eps_inf,
                          const double *logd, const double *lfact)
{
    if (!logd) return DPB_NAN;
    return upper_int(a, gamma, eps, eps_inf, logd, lfact);
}

static void pv_logd_range(long lmin, long lmax, const double *logs, const double *lfact,
                          double *logd)
{
    long l, i;
    for (l = lmin; l <= lmax; l++) {
        double m = -DPB_INF, sum = 0.0, comp = 0.0, abss = 0.0, err = 0.0, lfl;
        if (l & 1) { logd[l] = DPB_NAN; continue; }
        if (l == 0) { logd[l] = 0.0; continue; }
        lfl = dpb_lfact(l, lfact);
        for (i = 0; i <= l; i++) {
            double lt = dpb_lbinom_int(l, i, lfact) + logs[i];
            if (lt > m) m = lt;
        }
        if (m == DPB_INF || m != m) { logd[l] = m; continue; }
        for (i = 0; i <= l; i++) {
            double lt = dpb_lbinom_int(l, i, lfact) + logs[i];
            double v = exp(lt - m), tv, s;
            /* rounding bound of this term: lgamma/product/exp errors, relative */
            double tol = 4.0 * DPB_U * (2.0 * lfl + fabs(logs[i]) + fabs(m) + 8.0);
            abss += v;
            err += v * tol;
            if (i & 1) v = -v;
            /* Neumaier */
            s = sum + v;
            if (fabs(sum) >= fabs(v)) tv = (sum - s) + v; else tv = (v - s) + sum;
            comp += tv;
            sum = s;
        }
        sum += comp;
        err += 4.0 * DPB_U * abss;
        {
            double d = sum + err;
            if (!(d > 0.0)) d = err;
            logd[l] = log(d) + m;
        }
    }
}

/* Gaussian D^l for even l by quadrature of the POSITIVE integrand
 * E[(L-1)^l], L = exp(Z/sigma - 1/(2 sigma^2)), Z ~ N(0,1): trapezoidal rule in log space
 * (h = 0.2; the integrand is a signed sum of shifted Gaussians, so the rule converges like
 * exp(-2 pi^2/h^2)), on [-sqrt(l) - 16, l/sigma + sqrt(l) + 1/(2 sigma) + 16], which holds
 * both log-concave bumps with a margin of e^{-128}.  No cancellation at any sigma. */
/* Certificate that the Pearson-Vajda entry cannot win the min of Theorem 27 at even order l
 * AND at every larger order: with L = exp(Z/sigma - 1/(2 sigma^2)) and the l-tilted law
 * log L ~ N(mu, 1/sigma^2), mu = (2l-1)/(2 sigma^2), t = exp(mu - 2/sigma) > 1:
 *   D^l >= E[(L-1)^l 1{L>=t}] >= (1 - 1/t)^l s_l Phi(2) >= s_l / 2
 * whenever Phi(2)(1 - 1/t)^l >= 1/2, so 4 D^l >= 2 s_l (the Theorem-9 entry).  For l >= sigma^2
 * the left side increases with l, and s is log-convex, so the odd-j entries
 * 4 sqrt(D^{j-1} D^{j+1}) >= 2 s_j follow too.  Orders beyond the certificate are stored as
 * +inf: this leaves Theorem 27 exactly unchanged and makes large alpha O(alpha). */
static int pv_gauss_loses(long l, double sigma)
{
    double x;
    if (l < 2 || sqrt((double)l) < sigma) return 0;
    x = (2.0 * (double)l - 1.0) * (0.5 / sigma / sigma) - 2.0 / sigma;
    /* sigma < 2/DBL_MAX: both terms overflow (inf - inf); the 1/sigma^2 term dominates */
    if (x != x) x = DPB_INF;
    if (!(x > 0.0)) return 0;
    return -0.023012 + (double)l * dpb_log1mexp(-x) >= -DPB_LN2;   /* log Phi(2) < -0.023012 */
}

static void pv_logd_gauss_range(long lmin, long lmax, double sigma, double *logd)
{
    const double h = 0.2;
    double c = 0.5 / sigma / sigma;
    long l, k, n;
    for (l = lmin; l <= lmax; l++) {
        double zlo, zhi, sl;
        dpb_lse acc;
        if (l & 1) { logd[l] = DPB_NAN; continue; }
        if (l == 0) { logd[l] = 0.0; continue; }
        /* D^2 enters only the j = 3 entry, together with D^4: the certificate at order 2 (which
         * gates D^4) covers it too.  Without this the quadrature below, whose node count grows like
         * l/sigma, ran for minutes at sigma = 1e-9.  With it the certificate holds at every order
         * for sigma <= 0.5 (x >= 4l - 6 there), so no quadrature runs at all, and above 0.5 an
         * order costs fewer than (2l + 2 sqrt(l) + 33)/h nodes: bounded as sigma -> 0. */
        if (pv_gauss_loses(l > 2 ? l - 2 : 2, sigma)) { logd[l] = DPB_INF; continue; }
        sl = sqrt((double)l);
        zlo = -sl - 16.0;
        zhi = (double)l / sigma + sl + 1.0 / (2.0 * sigma) + 16.0;
        n = (long)ceil((zhi - zlo) / h);
        dpb_lse_init(&acc);
        for (k = 0; k <= n; k++) {
            double z = zlo + (double)k * h, u = z / sigma - c, lm;
            if (u == 0.0) continue;
            lm = (u > 0.0) ? dpb_logexpm1(u) : dpb_log1mexp(u);
            dpb_lse_add(&acc, (double)l * lm - 0.5 * z * z);
        }
        logd[l] = dpb_lse_value(&acc) + log(h) - DPB_LOG_SQRT2PI;
    }
}

void dpb_rdp_pv_logd(long lmax, const double *logs, const double *lfact, double *logd)
{
    pv_logd_range(0, lmax, logs, lfact, logd);
}

void dpb_rdp_pv_logd_range(long lmin, long lmax, const double *logs, const double *lfact, double *logd)
{
    pv_logd_range(lmin, lmax, logs, lfact, logd);
}

double dpb_rdp_wor_lower_int(long a, double gamma, const double *eps, const double *lfact)
{
    double lg, l1g;
    long j;
    dpb_lse acc;
    if (bad_gamma(gamma) || a < 2) return DPB_NAN;
    if (gamma == 0.0) return 0.0;
    if (gamma == 1.0) return eps[a];
    lg = log(gamma);
    l1g = log1p(-gamma);
    dpb_lse_init(&acc);
    for (j = 2; j <= a; j++) {
        double x = (double)(j - 1) * eps[j];
        if (x != x) return DPB_NAN;
        dpb_lse_add(&acc, dpb_lbinom_int(a, j, lfact) + (double)(a - j) * l1g + (double)j * lg
                          + dpb_logexpm1(x));
    }
    return dpb_log1pexp(dpb_lse_value(&acc)) / (double)(a - 1);
}

double dpb_rdp_interp(double a, double ef, double ec)
{
    double f, t;
    if (a != a || ef != ef || ec != ec || !(a >= 1.0)) return DPB_NAN;
    if (a <= 2.0) return ec;
    f = floor(a);
    if (a == f) return ef;
    t = a - f;
    if (ef == DPB_INF || ec == DPB_INF) return DPB_INF;
    if (fabs(ef) > 1e300 || fabs(ec) > 1e300) {
        /* the weights (1-t)(f-1)/(a-1) + t f/(a-1) sum to 1: the value lies between ef and ec, but
           (f - 1) ef overflowed (ef, ec ~ 1e308).  Scaled by 2^-16 and kept between them. */
        double w1 = (1.0 - t) * (f - 1.0) / (a - 1.0), w2 = t * f / (a - 1.0);
        double r = w1 * (ef * 0x1p-16) + w2 * (ec * 0x1p-16);
        r = fmin(fmax(r, fmin(ef, ec) * 0x1p-16), fmax(ef, ec) * 0x1p-16);
        return r * 0x1p16;
    }
    return ((1.0 - t) * (f - 1.0) * ef + t * f * ec) / (a - 1.0);
}

/* ------------------------------------------------------------------ Gaussian */

void dpb_rdp_work_init(dpb_rdp_work *w)
{
    w->n = 0; w->lfact = w->eps = w->logs = w->logd = NULL;
    w->nf = w->ne = w->nd = 0;
    w->sigma_eps = w->sigma_d = DPB_NAN;
    w->pre_sigma = w->pre_gamma = DPB_NAN;
}

void dpb_rdp_work_free(dpb_rdp_work *w)
{
    free(w->lfact); free(w->eps); free(w->logs); free(w->logd);
    dpb_rdp_work_init(w);
}

/* tables valid for indices < n; returns 0 or -1 on allocation failure */
static int work_reserve(dpb_rdp_work *w, long n)
{
    if (n > w->n) {
        long cap = n > 2 * w->n ? n : 2 * w->n;
        double *p;
        p = (double *)realloc(w->lfact, (size_t)cap * sizeof(double)); if (!p) return -1; w->lfact = p;
        p = (double *)realloc(w->eps, (size_t)cap * sizeof(double)); if (!p) return -1; w->eps = p;
        p = (double *)realloc(w->logs, (size_t)cap * sizeof(double)); if (!p) return -1; w->logs = p;
        p = (double *)realloc(w->logd, (size_t)cap * sizeof(double)); if (!p) return -1; w->logd = p;
        w->n = cap;
    }
    return 0;
}

static int work_gauss(dpb_rdp_work *w, double sigma, long n, int need_d)
{
    long j;
    double r = 0.5 / sigma / sigma;
    if (work_reserve(w, n) != 0) return -1;
    for (j = w->nf; j < n; j++) w->lfact[j] = lgamma((double)j + 1.0);
    if (n > w->nf) w->nf = n;
    if (!(w->sigma_eps == sigma)) { w->ne = 0; w->sigma_eps = sigma; w->nd = 0; w->sigma_d = DPB_NAN; }
    for (j = w->ne; j < n; j++) {
        w->eps[j] = (double)j * r;
        w->logs[j] = (j < 2) ? 0.0 : (double)j * (double)(j - 1) * r;
    }
    if (n > w->ne) w->ne = n;
    if (need_d) {
        if (!(w->sigma_d == sigma)) { w->nd = 0; w->sigma_d = sigma; }
        if (n > w->nd) {
            pv_logd_gauss_range(w->nd, n - 1, sigma, w->logd);
            w->nd = n;
        }
    }
    return 0;
}

static double gauss_int(long a, double sigma, double gamma, int bound, dpb_rdp_work *w)
{
    if (work_gauss(w, sigma, a + 2, bound == DPB_WOR_IMPROVED) != 0) return DPB_NAN;
    if (bound == DPB_WOR_LOWER) return dpb_rdp_wor_lower_int(a, gamma, w->eps, w->lfact);
    /* gamma in (0, 1) here (the caller answered 0 and 1); the orders of one (sigma, gamma)
       share what upper_prepare computes, the same doubles as a fresh upper_int */
    if (!(w->pre_sigma == sigma && w->pre_gamma == gamma)) {
        upper_pre p;
        if (upper_prepare(gamma, w->eps, DPB_INF, &p) != 0) return DPB_NAN;
        w->pre_lg = p.lg; w->pre_lem = p.lem; w->pre_c2 = p.c2; w->pre_sub = p.sub;
        w->pre_sigma = sigma; w->pre_gamma = gamma;
    }
    {
        upper_pre p;
        p.lg = w->pre_lg; p.lem = w->pre_lem; p.c2 = w->pre_c2; p.sub = w->pre_sub;
        /* the r that work_gauss built eps[] from: the Gaussian's tail cut applies */
        return upper_sum(a, &p, w->eps, bound == DPB_WOR_IMPROVED ? w->logd : NULL, w->lfact,
                         0.5 / sigma / sigma);
    }
}

double dpb_rdp_wor_gaussian(double alpha, double sigma, double gamma, int bound,
                            dpb_rdp_work *w)
{
    dpb_rdp_work local;
    double res, base, f, c;
    if (alpha != alpha || sigma != sigma || gamma != gamma) return DPB_NAN;
    if (!(alpha >= 1.0) || !(sigma > 0.0) || sigma == DPB_INF || bad_gamma(gamma)) return DPB_NAN;
    if (bound != DPB_WOR_THEOREM9 && bound != DPB_WOR_IMPROVED && bound != DPB_WOR_LOWER)
        return DPB_NAN;
    if (gamma == 0.0) return 0.0;
    base = dpb_rdp_gaussian(alpha, sigma);
    if (gamma == 1.0) return base;
    if (alpha == DPB_INF) return DPB_INF;
    if (alpha > DPB_RDP_ALPHA_MAX) return DPB_NAN;
    f = floor(alpha);
    if (bound == DPB_WOR_LOWER && (alpha != f || alpha < 2.0))
        return dpb_rdp_poisson_gaussian(alpha, sigma, gamma, DPB_POISSON_EXACT);
    if (!w) { dpb_rdp_work_init(&local); w = &local; }
    if (alpha < 2.0) f = c = 2.0; else c = ceil(alpha);
    {
        double ef = gauss_int((long)f, sigma, gamma, bound, w);
        double ec = (c == f) ? ef : gauss_int((long)c, sigma, gamma, bound, w);
        res = dpb_rdp_interp(alpha, ef, ec);
    }
    if (w == &local) dpb_rdp_work_free(&local);
    if (bound != DPB_WOR_LOWER && base < res) res = base;
    return res;
}
