#include "dpb_exact_cf.h"
#include "dpb_config.h"
#include <math.h>
#include <stdlib.h>

#ifndef __cplusplus
#include <complex.h>
typedef double complex dpb_complex;
#else
/* MSVC's C compiler has no C99 complex arithmetic (no `dpb_complex`, no operators on its
 * _Dcomplex), so there this file is compiled as C++ (csrc/dpb_exact_cf_msvc.cpp) with the
 * smallest complex type it needs.  Each operator is the formula GCC and clang use in C
 * (Annex G): real operands are not promoted to complex, products are ac - bd, ad + bc.
 * Only their recovery of infinities from NaN products (__muldc3) is not reproduced; the
 * kernels' inputs are finite.  No std::complex: its operators differ between libraries. */
struct dpb_complex {
    double re, im;
    dpb_complex(double r = 0.0, double i = 0.0) : re(r), im(i) {}
};
static inline dpb_complex operator+(dpb_complex a, dpb_complex b) { return dpb_complex(a.re + b.re, a.im + b.im); }
static inline dpb_complex operator+(dpb_complex a, double b) { return dpb_complex(a.re + b, a.im); }
static inline dpb_complex operator+(double a, dpb_complex b) { return dpb_complex(a + b.re, b.im); }
static inline dpb_complex operator-(dpb_complex a, dpb_complex b) { return dpb_complex(a.re - b.re, a.im - b.im); }
static inline dpb_complex operator-(dpb_complex a, double b) { return dpb_complex(a.re - b, a.im); }
static inline dpb_complex operator-(double a, dpb_complex b) { return dpb_complex(a - b.re, -b.im); }
static inline dpb_complex operator-(dpb_complex a) { return dpb_complex(-a.re, -a.im); }
static inline dpb_complex operator*(dpb_complex a, dpb_complex b)
{
    return dpb_complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
static inline dpb_complex operator*(dpb_complex a, double b) { return dpb_complex(a.re * b, a.im * b); }
static inline dpb_complex operator*(double a, dpb_complex b) { return dpb_complex(a * b.re, a * b.im); }
static inline dpb_complex operator/(dpb_complex a, double b) { return dpb_complex(a.re / b, a.im / b); }
static inline dpb_complex &operator+=(dpb_complex &a, dpb_complex b) { return a = a + b; }
static inline dpb_complex &operator*=(dpb_complex &a, dpb_complex b) { return a = a * b; }
static inline double creal(dpb_complex z) { return z.re; }
static inline double cimag(dpb_complex z) { return z.im; }
static inline double cabs(dpb_complex z) { return hypot(z.re, z.im); } /* what glibc's cabs computes */
static const dpb_complex I(0.0, 1.0);
#endif

#define DPB_CF_ULO (-9.5)
#define DPB_CF_MAXNODES 2048

/* g(y) = e^{iy} - 1 - iy for complex y with Im y >= 0 (or tiny |y|). */
static dpb_complex dpb_cf_g(dpb_complex y)
{
    if (fabs(creal(y)) + fabs(cimag(y)) < 0.25) {
        dpb_complex iy = I * y, term = iy * iy * 0.5, acc = term;
        int k;
        for (k = 3; k <= 16; ++k) {
            term *= iy / (double)k;
            acc += term;
        }
        return acc;
    }
    if (cimag(y) > 745.0) /* e^{iy} underflows: skip it without raising a flag */
        return -1.0 - I * y;
    if (cimag(y) < -700.0)
        return DPB_NAN;
    return exp(-cimag(y)) * (cos(creal(y)) + I * sin(creal(y))) - 1.0 - I * y;
}

/* Trapezoid grid in u = (ln Y - m)/s shared by both kernels: scale s = 1/sigma, log-mean m
 * (+1/(2 sigma^2) for the size-biased law), step hu, upper end uhi; returns the node count. */
static long cf_grid(double sigma, int size_biased, double *s, double *m, double *hu, double *uhi)
{
    long nodes;
    *s = 1.0 / sigma;
    *m = (size_biased ? 0.5 : -0.5) * *s * *s;
    *hu = fmin(0.2, 0.25 * sigma);
    *uhi = 9.5 + (2.0 + (size_biased ? 1.0 : 0.0)) * *s;
    nodes = (long)ceil((*uhi - DPB_CF_ULO) / *hu) + 1;
    return nodes > DPB_CF_MAXNODES ? DPB_CF_MAXNODES : nodes;
}

/* Trapezoid nodes q < nodes on the line u + i eta (eta = 0: the real line, v by expm1):
 * w_q = hu n(z_q) (complex weight of the shifted line), v_q = e^{s z_q + m} - 1, z_q = u_q + i eta;
 * w1 (if not NULL) = w_q e^{s z_q + m}, the weights of the size-biased law on the same v_q (change
 * of variable z -> z + s: n(z - s) = n(z) e^{s z - s^2/2}). */
static void cf_nodes(double s, double m, double hu, long nodes, double eta, dpb_complex *w,
                     dpb_complex *v, dpb_complex *w1)
{
    long q;
    for (q = 0; q < nodes; ++q) {
        double u = DPB_CF_ULO + hu * (double)q;
        double gauss = exp(-0.5 * u * u) * DPB_INV_SQRT2PI * hu;
        if (eta == 0.0) {
            w[q] = gauss;
            v[q] = expm1(s * u + m);
            if (w1 != NULL)
                w1[q] = gauss * exp(s * u + m);
        } else {
            double ex = exp(s * u + m);
            w[q] = gauss * exp(0.5 * eta * eta) * (cos(u * eta) - I * sin(u * eta));
            v[q] = ex * cos(s * eta) - 1.0 + I * (ex * sin(s * eta));
            if (w1 != NULL)
                w1[q] = w[q] * (ex * cos(s * eta) + I * (ex * sin(s * eta)));
        }
    }
}

void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                            double *re, double *im)
{
    long j, q, nodes;
    double s, m, hu, uhi, eta;
    dpb_complex w_real[DPB_CF_MAXNODES], v_real[DPB_CF_MAXNODES];
    dpb_complex w_sh[DPB_CF_MAXNODES], v_sh[DPB_CF_MAXNODES];
    if (!(sigma >= 0.2) || isnan(sigma)) {
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return;
    }
    nodes = cf_grid(sigma, size_biased, &s, &m, &hu, &uhi);
    eta = fmin(DPB_PI_2, 1.2 * s) / s;
    /* node tables for the real line and for the shifted line u + i eta */
    cf_nodes(s, m, hu, nodes, 0.0, w_real, v_real, NULL);
    cf_nodes(s, m, hu, nodes, eta, w_sh, v_sh, NULL);
    for (j = 0; j < n; ++j) {
        double tt = t[j], ta;
        dpb_complex acc = 0.0;
        const dpb_complex *wq, *vq;
        if (isnan(tt)) { re[j] = DPB_NAN; im[j] = DPB_NAN; continue; }
        if (tt == 0.0) { re[j] = 0.0; im[j] = 0.0; continue; }
        ta = fabs(tt);
        /* real line unless exp(i t v) oscillates inside the range */
        if (s * uhi + m + log(ta * s) <= -DPB_LN2) {
            wq = w_real; vq = v_real;
        } else {
            wq = w_sh; vq = v_sh;
        }
        for (q = 0; q < nodes; ++q)
            acc += wq[q] * dpb_cf_g(ta * vq[q]);
        re[j] = creal(acc);
        im[j] = tt < 0.0 ? -cimag(acc) : cimag(acc);
    }
}

#define DPB_CF_LEVELS 32

/* e^{iy} for Im y >= -700 (quietly 0 once it underflows) */
static dpb_complex dpb_cf_expi(dpb_complex y)
{
    if (cimag(y) > 745.0)
        return 0.0;
    if (cimag(y) < -700.0)
        return DPB_NAN;
    return exp(-cimag(y)) * (cos(creal(y)) + I * sin(creal(y)));
}

/* Node tables of the tilted kernel, one per contour level (built lazily). */
typedef struct {
    double s, m, hu, uhi, eta_cap;
    long nodes;
    dpb_complex *w, *v;            /* (DPB_CF_LEVELS + 1) * nodes each */
    dpb_complex *w1;               /* pair tables: size-biased weights on the same v (else NULL) */
    unsigned char built[DPB_CF_LEVELS + 1];
} cf_tilted_tables;

static int cf_tilted_init(cf_tilted_tables *tb, double sigma, int size_biased)
{
    int k;
    tb->nodes = cf_grid(sigma, size_biased, &tb->s, &tb->m, &tb->hu, &tb->uhi);
    tb->eta_cap = 1.2 * tb->s; /* cap on s * eta, as in dpb_exact_lognormal_cf */
    tb->w = (dpb_complex *)malloc(sizeof(dpb_complex) * (size_t)tb->nodes * (DPB_CF_LEVELS + 1));
    tb->v = (dpb_complex *)malloc(sizeof(dpb_complex) * (size_t)tb->nodes * (DPB_CF_LEVELS + 1));
    tb->w1 = NULL;
    for (k = 0; k <= DPB_CF_LEVELS; ++k) tb->built[k] = 0;
    if (tb->w == NULL || tb->v == NULL) {
        free(tb->w); free(tb->v);
        tb->w = tb->v = NULL;
        return -1;
    }
    return 0;
}

/* Tables of the pair kernel: the H0 nodes (v of Y) on u in [-9.5, 9.5 + 4 s], the range of the
 * H0 law joined with that of the size-biased law shifted by s (its [-9.5, 9.5 + 3 s] in its own
 * variable), with the H0 weights w and the size-biased weights w1 on the same nodes.  The contour
 * level rule sees the joint upper end (that of the size-biased law). */
static int cf_pair_init(cf_tilted_tables *tb, double sigma)
{
    long nodes;
    if (cf_tilted_init(tb, sigma, 0) != 0)
        return -1;
    tb->uhi += 2.0 * tb->s;
    nodes = (long)ceil((tb->uhi - DPB_CF_ULO) / tb->hu) + 1;
    tb->nodes = nodes > DPB_CF_MAXNODES ? DPB_CF_MAXNODES : nodes;
    free(tb->w); free(tb->v);
    tb->w = (dpb_complex *)malloc(sizeof(dpb_complex) * (size_t)tb->nodes * (DPB_CF_LEVELS + 1));
    tb->v = (dpb_complex *)malloc(sizeof(dpb_complex) * (size_t)tb->nodes * (DPB_CF_LEVELS + 1));
    tb->w1 = (dpb_complex *)malloc(sizeof(dpb_complex) * (size_t)tb->nodes * (DPB_CF_LEVELS + 1));
    if (tb->w == NULL || tb->v == NULL || tb->w1 == NULL) {
        free(tb->w); free(tb->v); free(tb->w1);
        tb->w = tb->v = tb->w1 = NULL;
        return -1;
    }
    return 0;
}

static void cf_tilted_free(cf_tilted_tables *tb)
{
    free(tb->w);
    free(tb->v);
    free(tb->w1);
}

/* contour level for |t| = ta > 0 or ta = 0 */
static int cf_tilted_level(const cf_tilted_tables *tb, double ta, double lam)
{
    int k;
    double theta, seta;
    if (ta == 0.0 || tb->s * tb->uhi + tb->m + log(ta * tb->s) <= -DPB_LN2)
        return 0;
    theta = atan2(lam, ta);
    seta = fmin(DPB_PI_2 - theta, tb->eta_cap);
    k = (int)floor(seta / DPB_PI_2 * DPB_CF_LEVELS + 0.5);
    if (k < 0) k = 0;
    if (k > DPB_CF_LEVELS) k = DPB_CF_LEVELS;
    return k;
}

static void cf_tilted_build(cf_tilted_tables *tb, int k)
{
    double eta;
    if (tb->built[k])
        return;
    eta = (k == 0) ? 0.0 : fmin(k * (DPB_PI_2 / DPB_CF_LEVELS), tb->eta_cap) / tb->s;
    cf_nodes(tb->s, tb->m, tb->hu, tb->nodes, eta, tb->w + (size_t)k * tb->nodes, tb->v + (size_t)k * tb->nodes,
             tb->w1 == NULL ? NULL : tb->w1 + (size_t)k * tb->nodes);
    tb->built[k] = 1;
}

/* the trapezoid sum at tau = |t| + i lam on level k (one point, direct) */
static dpb_complex cf_tilted_point(cf_tilted_tables *tb, int k, dpb_complex tau, int raw)
{
    long q;
    dpb_complex acc = 0.0;
    const dpb_complex *wq, *vq;
    cf_tilted_build(tb, k);
    wq = tb->w + (size_t)k * tb->nodes;
    vq = tb->v + (size_t)k * tb->nodes;
    if (raw) {
        for (q = 0; q < tb->nodes; ++q)
            acc += wq[q] * dpb_cf_expi(tau * vq[q]);
    } else {
        for (q = 0; q < tb->nodes; ++q)
            acc += wq[q] * dpb_cf_g(tau * vq[q]);
    }
    return acc;
}

int dpb_exact_lognormal_cf_tilted(double sigma, int size_biased, int raw, long n, const double *t,
                                  double lam, double *re, double *im)
{
    long j;
    cf_tilted_tables tb;
    if (!(sigma >= 0.2) || isnan(sigma) || !(lam >= 0.0) || !(lam <= 700.0)) {
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return 0;
    }
    if (cf_tilted_init(&tb, sigma, size_biased) != 0) {
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return DPB_ENOMEM;
    }
    for (j = 0; j < n; ++j) {
        double tt = t[j], ta;
        dpb_complex acc;
        if (isnan(tt)) { re[j] = DPB_NAN; im[j] = DPB_NAN; continue; }
        if (tt == 0.0 && lam == 0.0) { re[j] = raw ? 1.0 : 0.0; im[j] = 0.0; continue; }
        ta = fabs(tt);
        acc = cf_tilted_point(&tb, cf_tilted_level(&tb, ta, lam), ta + I * lam, raw);
        re[j] = creal(acc);
        im[j] = tt < 0.0 ? -cimag(acc) : cimag(acc);
    }
    cf_tilted_free(&tb);
    return 0;
}

/* ------------------------------------------------------------------ equally spaced t */

#define DPB_CFG_BLOCK 128       /* steps per anchor */
#define DPB_CFG_TINY 1e-150     /* factors below this are dropped (keeps every product normal) */
#define DPB_CFG_TERMS 40        /* Taylor terms j = 0 .. 39 of the series part (|y| < 2: 2^40/40! < 1e-35) */
#define DPB_CFG_SER 2.0         /* |tau v| below which a node goes to the series part */

/* Step table of one level: T[m][q] = e^{i m dt v_q}, m < DPB_CFG_BLOCK (split re / im). */
typedef struct {
    double *re, *im;
    int level;
    long rows;                        /* rows m < rows are built */
} cf_step_table;

/* rows m < len of the step table of level k, built on demand (short blocks need few rows; a full
 * table costs as much as ~128 pointwise evaluations) */
static void cf_step_build(const cf_tilted_tables *tb, int k, double dt, long len, cf_step_table *st)
{
    long q, mm;
    const dpb_complex *v = tb->v + (size_t)k * tb->nodes;
    if (st->level != k) {
        st->level = k;
        st->rows = 0;
    }
    for (mm = st->rows; mm < len; ++mm) {
        double h = (double)mm * dt;
        for (q = 0; q < tb->nodes; ++q) {
            dpb_complex y = h * v[q], e;
            /* |e^{iy}| = e^{-Im y}: below DPB_CFG_TINY it is dropped */
            e = (cimag(y) > 345.0) ? 0.0 : dpb_cf_expi(y);
            st->re[mm * tb->nodes + q] = fabs(creal(e)) >= DPB_CFG_TINY ? creal(e) : 0.0;
            st->im[mm * tb->nodes + q] = fabs(cimag(e)) >= DPB_CFG_TINY ? cimag(e) : 0.0;
        }
    }
    if (len > st->rows)
        st->rows = len;
}

/* g-form trapezoid sums of both weight sets of pair tables at tau on level k (one point, direct) */
static void cf_pair_point(cf_tilted_tables *tb, int k, dpb_complex tau, dpb_complex *acc0,
                          dpb_complex *acc1)
{
    long q;
    dpb_complex a0 = 0.0, a1 = 0.0;
    const dpb_complex *wq, *vq, *w1q;
    cf_tilted_build(tb, k);
    wq = tb->w + (size_t)k * tb->nodes;
    vq = tb->v + (size_t)k * tb->nodes;
    w1q = tb->w1 + (size_t)k * tb->nodes;
    for (q = 0; q < tb->nodes; ++q) {
        dpb_complex g = dpb_cf_g(tau * vq[q]);
        a0 += wq[q] * g;
        a1 += w1q[q] * g;
    }
    *acc0 = a0;
    *acc1 = a1;
}

/* The grid kernel on tables tb (dpb_exact_lognormal_cf_tilted_grid); pair tables (tb->w1 set,
 * raw = 0) also give the size-biased values in re1, im1 from the same exponentials. */
static int cf_grid_run(cf_tilted_tables *tb, int raw, long n0, long count, double dt, double lam,
                       double *re, double *im, double *re1, double *im1)
{
    long j, q, nodes = tb->nodes;
    int pair = tb->w1 != NULL, rc = 0;
    cf_step_table st = {NULL, NULL, -1, 0};
    double *ar = NULL, *ai = NULL, *ar1 = NULL, *ai1 = NULL;
    dpb_complex mom[DPB_CFG_TERMS], mom1[DPB_CFG_TERMS];
    double inv_fact[DPB_CFG_TERMS];
    inv_fact[0] = 1.0;
    for (j = 1; j < DPB_CFG_TERMS; ++j) inv_fact[j] = inv_fact[j - 1] / (double)j;
    st.re = (double *)malloc(sizeof(double) * (size_t)nodes * DPB_CFG_BLOCK);
    st.im = (double *)malloc(sizeof(double) * (size_t)nodes * DPB_CFG_BLOCK);
    ar = (double *)malloc(sizeof(double) * (size_t)nodes * (pair ? 4 : 2));
    if (st.re == NULL || st.im == NULL || ar == NULL) {
        for (j = 0; j < count; ++j) {
            re[j] = DPB_NAN; im[j] = DPB_NAN;
            if (pair) { re1[j] = DPB_NAN; im1[j] = DPB_NAN; }
        }
        rc = DPB_ENOMEM;
        goto done;
    }
    ai = ar + nodes;
    if (pair) {
        ar1 = ar + 2 * nodes;
        ai1 = ar + 3 * nodes;
    }
    j = 0;
    while (j < count) {
        double ta = (double)(n0 + j) * dt, tb_end, ratio;
        int k = cf_tilted_level(tb, ta, lam);
        long len = 1, mm, qhi = 0;
        int shortened = 0;
        const dpb_complex *w, *v, *w1 = NULL;
        dpb_complex sw = 0.0, swv = 0.0, sw1 = 0.0, swv1 = 0.0, tau_a = ta + I * lam, tau_b;
        double tr; /* |tau| at the block end: the series part is a polynomial in t / tr */
        /* a block: up to DPB_CFG_BLOCK steps on one contour level */
        while (j + len < count && len < DPB_CFG_BLOCK
               && cf_tilted_level(tb, (double)(n0 + j + len) * dt, lam) == k)
            ++len;
        tb_end = (double)(n0 + j + len - 1) * dt;
        tau_b = tb_end + I * lam;
        tr = cabs(tau_b);
        ratio = cabs(tau_a) / tr;
        /* g-form: |tau| must not grow by more than 1/0.9 within a block (nodes outside the
         * series part then have |tau v| >= 1.8 at the anchor, where e^{iy} - 1 - iy does not
         * cancel); at small |tau| a full block grows faster, so the block is shortened to the
         * longest one that keeps the rule (~|tau_a| / (9 |dt|) steps; down to 4: an anchor costs
         * about one direct sum, and a block of 4 saves three) */
        while (!raw && ratio < 0.9 && len >= 5) {
            --len;
            shortened = 1;
            tb_end = (double)(n0 + j + len - 1) * dt;
            tau_b = tb_end + I * lam;
            tr = cabs(tau_b);
            ratio = cabs(tau_a) / tr;
        }
        if (len < (shortened ? 4 : 16) || (ta == 0.0 && lam == 0.0) || (!raw && ratio < 0.9)) {
            /* short run or |tau| still growing fast within the block: direct sums */
            for (mm = 0; mm < len; ++mm) {
                double tt = (double)(n0 + j + mm) * dt;
                dpb_complex acc, acc1;
                if (tt == 0.0 && lam == 0.0) {
                    re[j + mm] = raw ? 1.0 : 0.0; im[j + mm] = 0.0;
                    if (pair) { re1[j + mm] = 0.0; im1[j + mm] = 0.0; }
                    continue;
                }
                if (pair) {
                    cf_pair_point(tb, cf_tilted_level(tb, tt, lam), tt + I * lam, &acc, &acc1);
                    re1[j + mm] = creal(acc1);
                    im1[j + mm] = cimag(acc1);
                } else {
                    acc = cf_tilted_point(tb, cf_tilted_level(tb, tt, lam), tt + I * lam, raw);
                }
                re[j + mm] = creal(acc);
                im[j + mm] = cimag(acc);
            }
            j += len;
            continue;
        }
        cf_tilted_build(tb, k);
        w = tb->w + (size_t)k * nodes;
        v = tb->v + (size_t)k * nodes;
        if (pair)
            w1 = tb->w1 + (size_t)k * nodes;
        cf_step_build(tb, k, dt, len, &st);
        if (!raw)
            for (mm = 0; mm < DPB_CFG_TERMS; ++mm) { mom[mm] = 0.0; mom1[mm] = 0.0; }
        /* anchor: a_q = w_q e^{i tau_a v_q}.  g-form: nodes with |tau v| < DPB_CFG_SER over the whole block
         * (|tau v| grows with |tau|) go to the Taylor expansion of g in t about 0,
         *   g(B + t C) = sum_j t^j C^j g^(j)(B) / j!,  B = -lam v, C = i v  (|t C|, |B| <= |tau v| < 2),
         * accumulated as moments; the others are summed as w (e^{i tau v} - 1 - i tau v). */
        for (q = 0; q < nodes; ++q) {
            dpb_complex y = tau_a * v[q], a, e;
            if (!raw && cabs(tau_b * v[q]) < DPB_CFG_SER) {
                dpb_complex B = -lam * v[q], C = I * v[q] * tr, gB = dpb_cf_g(-I * B), cp = w[q];
                dpb_complex e1 = gB + B; /* e^B - 1 */
                int jj;
                mom[0] += cp * gB;
                cp *= C;
                mom[1] += cp * e1;
                for (jj = 2; jj < DPB_CFG_TERMS; ++jj) {
                    cp *= C;
                    mom[jj] += cp * (1.0 + e1);
                }
                if (pair) {
                    cp = w1[q];
                    mom1[0] += cp * gB;
                    cp *= C;
                    mom1[1] += cp * e1;
                    for (jj = 2; jj < DPB_CFG_TERMS; ++jj) {
                        cp *= C;
                        mom1[jj] += cp * (1.0 + e1);
                    }
                    ar1[q] = 0.0; ai1[q] = 0.0;
                }
                ar[q] = 0.0; ai[q] = 0.0;
                continue;
            }
            if (!raw) {
                sw += w[q];
                swv += w[q] * v[q];
            }
            e = (cimag(y) > 345.0) ? 0.0 : dpb_cf_expi(y);
            a = w[q] * e;
            ar[q] = fabs(creal(a)) >= DPB_CFG_TINY ? creal(a) : 0.0;
            ai[q] = fabs(cimag(a)) >= DPB_CFG_TINY ? cimag(a) : 0.0;
            if (ar[q] != 0.0 || ai[q] != 0.0) qhi = q + 1;
            if (pair) {
                sw1 += w1[q];
                swv1 += w1[q] * v[q];
                a = w1[q] * e;
                ar1[q] = fabs(creal(a)) >= DPB_CFG_TINY ? creal(a) : 0.0;
                ai1[q] = fabs(cimag(a)) >= DPB_CFG_TINY ? cimag(a) : 0.0;
                if (ar1[q] != 0.0 || ai1[q] != 0.0) qhi = q + 1;
            }
        }
        for (mm = 0; mm < len; ++mm) {
            const double *pr = st.re + mm * nodes, *pi = st.im + mm * nodes;
            double sr = 0.0, si = 0.0, sr1 = 0.0, si1 = 0.0, tt = (double)(n0 + j + mm) * dt;
            if (pair) {
                for (q = 0; q < qhi; ++q) {
                    sr += ar[q] * pr[q] - ai[q] * pi[q];
                    si += ar[q] * pi[q] + ai[q] * pr[q];
                    sr1 += ar1[q] * pr[q] - ai1[q] * pi[q];
                    si1 += ar1[q] * pi[q] + ai1[q] * pr[q];
                }
            } else {
                for (q = 0; q < qhi; ++q) {
                    sr += ar[q] * pr[q] - ai[q] * pi[q];
                    si += ar[q] * pi[q] + ai[q] * pr[q];
                }
            }
            if (!raw) {
                dpb_complex tau = tt + I * lam, p = 0.0;
                double x = tt / tr;
                int jj;
                for (jj = DPB_CFG_TERMS - 1; jj >= 0; --jj)
                    p = p * x + mom[jj] * inv_fact[jj];
                p += (sr + I * si) - sw - I * tau * swv;
                sr = creal(p);
                si = cimag(p);
                if (pair) {
                    p = 0.0;
                    for (jj = DPB_CFG_TERMS - 1; jj >= 0; --jj)
                        p = p * x + mom1[jj] * inv_fact[jj];
                    p += (sr1 + I * si1) - sw1 - I * tau * swv1;
                    re1[j + mm] = creal(p);
                    im1[j + mm] = cimag(p);
                }
            }
            re[j + mm] = sr;
            im[j + mm] = si;
        }
        j += len;
    }
done:
    free(st.re);
    free(st.im);
    free(ar);
    return rc;
}

int dpb_exact_lognormal_cf_tilted_grid(double sigma, int size_biased, int raw, long n0, long count,
                                       double dt, double lam, double *re, double *im)
{
    long j;
    int rc;
    cf_tilted_tables tb;
    if (count <= 0)
        return 0;
    if (!(sigma >= 0.2) || isnan(sigma) || !(lam >= 0.0) || !(lam <= 700.0) || n0 < 0
        || !(dt > 0.0) || !(dt < 1e300)) {
        for (j = 0; j < count; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return 0;
    }
    if (cf_tilted_init(&tb, sigma, size_biased) != 0) {
        for (j = 0; j < count; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return DPB_ENOMEM;
    }
    rc = cf_grid_run(&tb, raw, n0, count, dt, lam, re, im, NULL, NULL);
    cf_tilted_free(&tb);
    return rc;
}

int dpb_exact_lognormal_cf_pair_grid(double sigma, long n0, long count, double dt,
                                     double *re0, double *im0, double *re1, double *im1)
{
    long j;
    int rc;
    cf_tilted_tables tb;
    if (count <= 0)
        return 0;
    if (!(sigma >= 0.2) || isnan(sigma) || n0 < 0 || !(dt > 0.0) || !(dt < 1e300)) {
        for (j = 0; j < count; ++j) { re0[j] = DPB_NAN; im0[j] = DPB_NAN; re1[j] = DPB_NAN; im1[j] = DPB_NAN; }
        return 0;
    }
    if (cf_pair_init(&tb, sigma) != 0) {
        for (j = 0; j < count; ++j) { re0[j] = DPB_NAN; im0[j] = DPB_NAN; re1[j] = DPB_NAN; im1[j] = DPB_NAN; }
        return DPB_ENOMEM;
    }
    rc = cf_grid_run(&tb, 0, n0, count, dt, 0.0, re0, im0, re1, im1);
    cf_tilted_free(&tb);
    return rc;
}
