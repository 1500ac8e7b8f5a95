#include "dpb_exact_cf.h"
#include "dpb_config.h"
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#define DPB_CF_ULO (-9.5)
#define DPB_CF_MAXNODES 2048

/* g(y) = e^{iy} - 1 - iy for complex y with Im y >= 0 (or tiny |y|). */
static double complex dpb_cf_g(double complex y)
{
    if (fabs(creal(y)) + fabs(cimag(y)) < 0.25) {
        double complex iy = I * y, term = iy * iy * 0.5, acc = term;
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

void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                            double *re, double *im)
{
    long j, q, nodes;
    double s, m, hu, uhi, eta;
    double complex w_real[DPB_CF_MAXNODES], v_real[DPB_CF_MAXNODES];
    double complex w_sh[DPB_CF_MAXNODES], v_sh[DPB_CF_MAXNODES];
    if (!(sigma >= 0.2) || isnan(sigma)) {
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return;
    }
    nodes = cf_grid(sigma, size_biased, &s, &m, &hu, &uhi);
    eta = fmin(1.5707963267948966192, 1.2 * s) / s;
    /* node tables for the real line and for the shifted line u + i eta */
    for (q = 0; q < nodes; ++q) {
        double u = DPB_CF_ULO + hu * (double)q;
        double gauss = exp(-0.5 * u * u) * DPB_INV_SQRT2PI * hu;
        double ex = exp(s * u + m);
        w_real[q] = gauss;
        v_real[q] = expm1(s * u + m);
        w_sh[q] = gauss * exp(0.5 * eta * eta) * (cos(u * eta) - I * sin(u * eta));
        v_sh[q] = ex * cos(s * eta) - 1.0 + I * (ex * sin(s * eta));
    }
    for (j = 0; j < n; ++j) {
        double tt = t[j], ta;
        double complex acc = 0.0;
        const double complex *wq, *vq;
        if (isnan(tt)) { re[j] = DPB_NAN; im[j] = DPB_NAN; continue; }
        if (tt == 0.0) { re[j] = 0.0; im[j] = 0.0; continue; }
        ta = fabs(tt);
        /* real line unless exp(i t v) oscillates inside the range */
        if (s * uhi + m + log(ta * s) <= -0.69314718055994530942) {
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
static double complex dpb_cf_expi(double complex y)
{
    if (cimag(y) > 745.0)
        return 0.0;
    if (cimag(y) < -700.0)
        return DPB_NAN;
    return exp(-cimag(y)) * (cos(creal(y)) + I * sin(creal(y)));
}

void dpb_exact_lognormal_cf_tilted(double sigma, int size_biased, int raw, long n, const double *t,
                                   double lam, double *re, double *im)
{
    long j, q, nodes;
    int k;
    double s, m, hu, uhi, eta_cap;
    double complex *tab_w, *tab_v;
    unsigned char built[DPB_CF_LEVELS + 1];
    if (!(sigma >= 0.2) || isnan(sigma) || !(lam >= 0.0) || !(lam <= 700.0)) {
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return;
    }
    nodes = cf_grid(sigma, size_biased, &s, &m, &hu, &uhi);
    eta_cap = 1.2 * s; /* cap on s * eta, as in dpb_exact_lognormal_cf */
    tab_w = (double complex *)malloc(sizeof(double complex) * (size_t)nodes * (DPB_CF_LEVELS + 1));
    tab_v = (double complex *)malloc(sizeof(double complex) * (size_t)nodes * (DPB_CF_LEVELS + 1));
    if (tab_w == NULL || tab_v == NULL) {
        free(tab_w); free(tab_v);
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return;
    }
    for (k = 0; k <= DPB_CF_LEVELS; ++k) built[k] = 0;
    for (j = 0; j < n; ++j) {
        double tt = t[j], ta, theta, seta;
        double complex acc = 0.0, tau;
        const double complex *wq, *vq;
        if (isnan(tt)) { re[j] = DPB_NAN; im[j] = DPB_NAN; continue; }
        if (tt == 0.0 && lam == 0.0) { re[j] = raw ? 1.0 : 0.0; im[j] = 0.0; continue; }
        ta = fabs(tt);
        tau = ta + I * lam;
        if (ta == 0.0 || s * uhi + m + log(ta * s) <= -0.69314718055994530942) {
            k = 0;
        } else {
            theta = atan2(lam, ta);
            seta = fmin(1.5707963267948966192 - theta, eta_cap);
            k = (int)floor(seta / 1.5707963267948966192 * DPB_CF_LEVELS + 0.5);
            if (k < 0) k = 0;
            if (k > DPB_CF_LEVELS) k = DPB_CF_LEVELS;
        }
        if (!built[k]) {
            double eta = (k == 0) ? 0.0 : fmin(k * (1.5707963267948966192 / DPB_CF_LEVELS), eta_cap) / s;
            double complex *w = tab_w + (size_t)k * nodes, *v = tab_v + (size_t)k * nodes;
            for (q = 0; q < nodes; ++q) {
                double u = DPB_CF_ULO + hu * (double)q;
                double gauss = exp(-0.5 * u * u) * DPB_INV_SQRT2PI * hu;
                if (k == 0) {
                    w[q] = gauss;
                    v[q] = expm1(s * u + m);
                } else {
                    double ex = exp(s * u + m);
                    w[q] = gauss * exp(0.5 * eta * eta) * (cos(u * eta) - I * sin(u * eta));
                    v[q] = ex * cos(s * eta) - 1.0 + I * (ex * sin(s * eta));
                }
            }
            built[k] = 1;
        }
        wq = tab_w + (size_t)k * nodes;
        vq = tab_v + (size_t)k * nodes;
        if (raw) {
            for (q = 0; q < nodes; ++q)
                acc += wq[q] * dpb_cf_expi(tau * vq[q]);
        } else {
            for (q = 0; q < nodes; ++q)
                acc += wq[q] * dpb_cf_g(tau * vq[q]);
        }
        re[j] = creal(acc);
        im[j] = tt < 0.0 ? -cimag(acc) : cimag(acc);
    }
    free(tab_w);
    free(tab_v);
}
