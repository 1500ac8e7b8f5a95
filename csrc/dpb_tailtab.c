/* dpb_tailtab.c -- see dpb_tailtab.h. */
#include "dpb_tailtab.h"

#include <math.h>

#include "dpb_vecmath.h"

static double lower_series(double z, const double *c)
{
    double acc = c[8];
    int k;
    for (k = 7; k >= 0; --k) {
        acc = acc * z;
        acc = acc + c[k];
    }
    return (z * z) * acc;
}

void dpb_tailtab_lower(const double *lam, long nl, const double *y, long ny, const double *c, double *g)
{
    long i, j;
    for (i = 0; i < nl; ++i) {
        const double l = lam[i];
        double *gr = g + i * ny;
        j = 0;
        while (j < ny) {
            const double z0 = l * y[j];
            if (j + 1 < ny) {
                const double z1 = l * y[j + 1];
                if (!(z0 < 0.1) && !(z1 < 0.1)) {
                    double r0, r1;
                    dpb_expm1_2(-fmin(z0, 700.0), -fmin(z1, 700.0), &r0, &r1);
                    gr[j] = r0 + z0;
                    gr[j + 1] = r1 + z1;
                    j += 2;
                    continue;
                }
            }
            gr[j] = (z0 < 0.1) ? lower_series(z0, c) : dpb_expm1(-fmin(z0, 700.0)) + z0;
            ++j;
        }
    }
}

void dpb_tailtab_upper(const double *lam, long nl, const double *y, long ny, double c5, double *em, double *gg)
{
    long i, j;
    for (i = 0; i < nl; ++i) {
        const double l = lam[i];
        double *er = em + i * ny, *gr = gg + i * ny;
        for (j = 0; j + 1 < ny; j += 2) {
            const double z0 = l * y[j], z1 = l * y[j + 1];
            dpb_expm1_2(z0, z1, &er[j], &er[j + 1]);
        }
        if (j < ny)
            er[j] = dpb_expm1(l * y[j]);
        for (j = 0; j < ny; ++j) {
            const double z = l * y[j];
            gr[j] = (z < 1e-3) ? (z * z) * (0.5 + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * c5))) : er[j] - z;
        }
    }
}
