#include "dpb_exact_cf.h"
#include "dpb_config.h"
#include <complex.h>
#include <math.h>

#define DPB_CF_ULO (-9.5)

/* g(y) = e^{iy} - 1 - iy for complex y. */
static double complex dpb_cf_g(double complex y)
{
    if (cabs(y) < 0.2) {
        double complex iy = I * y, term = iy * iy * 0.5, acc = term;
        int k;
        for (k = 3; k <= 15; ++k) {
            term *= iy / (double)k;
            acc += term;
        }
        return acc;
    }
    /* |e^{iy}| = e^{-Im y}; Im y >= 0 on the chosen contour, so no overflow.
       Guard anyway: Im y very negative would overflow. */
    if (cimag(y) < -700.0)
        return DPB_NAN;
    return cexp(I * y) - 1.0 - I * y;
}

void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                            double *re, double *im)
{
    long j;
    double s, m, hu, uhi;
    long nodes, q;
    if (!(sigma >= 0.2) || isnan(sigma)) {
        for (j = 0; j < n; ++j) { re[j] = DPB_NAN; im[j] = DPB_NAN; }
        return;
    }
    s = 1.0 / sigma;
    m = (size_biased ? 0.5 : -0.5) * s * s;
    hu = fmin(0.2, 0.25 * sigma);
    uhi = 9.5 + (2.0 + (size_biased ? 1.0 : 0.0)) * s;
    nodes = (long)ceil((uhi - DPB_CF_ULO) / hu) + 1;
    for (j = 0; j < n; ++j) {
        double tt = t[j], ta, eta, enorm;
        double complex acc = 0.0;
        int neg;
        if (isnan(tt)) { re[j] = DPB_NAN; im[j] = DPB_NAN; continue; }
        if (tt == 0.0) { re[j] = 0.0; im[j] = 0.0; continue; }
        neg = tt < 0.0;
        ta = fabs(tt);
        /* real line unless exp(i t v) oscillates inside the range */
        if (s * uhi + m + log(ta * s) <= log(0.5))
            eta = 0.0;
        else
            eta = fmin(1.5707963267948966192, 1.2 * s) / s;
        enorm = exp(0.5 * eta * eta) * DPB_INV_SQRT2PI;
        for (q = 0; q < nodes; ++q) {
            double u = DPB_CF_ULO + hu * (double)q;
            double complex nz, v, y;
            double gauss = exp(-0.5 * u * u);
            if (gauss == 0.0) continue;
            if (eta == 0.0) {
                nz = gauss * DPB_INV_SQRT2PI;
                v = expm1(s * u + m);
            } else {
                double ex = exp(s * u + m);
                nz = gauss * enorm * (cos(u * eta) - I * sin(u * eta));
                v = ex * cos(s * eta) - 1.0 + I * (ex * sin(s * eta));
            }
            y = ta * v;
            acc += nz * dpb_cf_g(y);
        }
        acc *= hu;
        re[j] = creal(acc);
        im[j] = neg ? -cimag(acc) : cimag(acc);
    }
}
