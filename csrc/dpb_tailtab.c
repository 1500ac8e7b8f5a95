/* dpb_tailtab.c -- see dpb_tailtab.h. */
#include "dpb_tailtab.h"

#include <math.h>
#include <stdlib.h>

#include "dpb_config.h"

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

/* (e^z - 1, e^z - 1 - z) for 0 <= z < 1e-3 without expm1: e^z - 1 - z by the series the tables
 * have always used (an upper bound, c5 bounding the terms from z^5 on); e^z - 1 by its Taylor
 * polynomial to z^5 / 120 (the rest is below z^6 / 719 < 1.4e-18 z, under half an ulp) */
static void upper_small(double z, double c5, double *e, double *g)
{
    *g = (z * z) * (0.5 + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * c5)));
    *e = z * (1.0 + z * (0.5 + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * (1.0 / 120.0)))));
}

/* the nodes from j on, term by term (expm1 in pairs where both are at or above 1e-3) */
static void upper_terms(const double *wi, const double *yi, long j, long n, double lm, double c5,
                        double *s_out, double *j_out)
{
    double s = 0.0, sj = 0.0;
    while (j < n) {
        const double z0 = lm * yi[j];
        double e0, e1, g0, g1;
        if (j + 1 < n && z0 >= 1e-3 && lm * yi[j + 1] >= 1e-3) {
            const double z1 = lm * yi[j + 1];
            dpb_expm1_2(z0, z1, &e0, &e1);
            g0 = e0 - z0;
            g1 = e1 - z1;
            s += wi[j] * g0;
            sj += (wi[j] * yi[j]) * e0;
            s += wi[j + 1] * g1;
            sj += (wi[j + 1] * yi[j + 1]) * e1;
            j += 2;
            continue;
        }
        if (z0 < 1e-3) {
            upper_small(z0, c5, &e0, &g0);
        } else {
            e0 = dpb_expm1(z0);
            g0 = e0 - z0;
        }
        s += wi[j] * g0;
        sj += (wi[j] * yi[j]) * e0;
        ++j;
    }
    *s_out = s;
    *j_out = sj;
}

int dpb_tailtab_upper(const double *lam, long nl, const double *b, long nb, const double *w,
                      const double *y, const long *seg, double c5, double *S, double *J)
{
    long i, l, j, nmax = 0;
    double *P;
    for (i = 0; i < nb; ++i)
        if (seg[i + 1] - seg[i] > nmax)
            nmax = seg[i + 1] - seg[i];
    P = (double *)malloc(sizeof(double) * 5 * (size_t)(nmax + 1));
    if (!P)
        return DPB_ENOMEM;
    for (i = 0; i < nb; ++i) {
        const double *wi = w + seg[i], *yi = y + seg[i];
        const long n = seg[i + 1] - seg[i];
        double *P2 = P, *P3 = P + (nmax + 1), *P4 = P + 2 * (nmax + 1), *P5 = P + 3 * (nmax + 1),
               *P6 = P + 4 * (nmax + 1);
        int moments = 1;
        /* prefix sums of w y^k, k = 2 .. 6, for the nodes below z = 1e-3 of each lam (the nodes
         * ascend in y, so these are a prefix; checked: else, or on overflow, term by term) */
        P2[0] = P3[0] = P4[0] = P5[0] = P6[0] = 0.0;
        for (j = 0; j < n; ++j) {
            const double t2 = wi[j] * (yi[j] * yi[j]);
            P2[j + 1] = P2[j] + t2;
            P3[j + 1] = P3[j] + t2 * yi[j];
            P4[j + 1] = P4[j] + (t2 * yi[j]) * yi[j];
            P5[j + 1] = P5[j] + ((t2 * yi[j]) * yi[j]) * yi[j];
            P6[j + 1] = P6[j] + (((t2 * yi[j]) * yi[j]) * yi[j]) * yi[j];
            if (j > 0 && !(yi[j] >= yi[j - 1]))
                moments = 0;
        }
        if (!(P6[n] < HUGE_VAL) || !(P2[n] >= 0.0))
            moments = 0;
        for (l = 0; l < nl; ++l) {
            const double lb = lam[l] * b[i], lm = lam[l];
            double s, sj;
            long lo = 0, hi = n;
            if (!(lb <= 30.0) || lb < 1e-3)
                continue;
            if (!moments) {
                upper_terms(wi, yi, 0, n, lm, c5, &S[i * nl + l], &J[i * nl + l]);
                continue;
            }
            /* first node with lm y >= 1e-3 */
            while (lo < hi) {
                const long mid = lo + (hi - lo) / 2;
                if (lm * yi[mid] < 1e-3)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            upper_terms(wi, yi, lo, n, lm, c5, &s, &sj);
            /* the prefix: sum w z^2 (1/2 + z (1/6 + z (1/24 + z c5))) and
             * sum w y z (1 + z (1/2 + z (1/6 + z (1/24 + z / 120)))), z = lm y, through the moments */
            S[i * nl + l] = s + (lm * lm) * (P2[lo] * 0.5 + lm * (P3[lo] * (1.0 / 6.0)
                                              + lm * (P4[lo] * (1.0 / 24.0) + lm * (P5[lo] * c5))));
            J[i * nl + l] = sj + lm * (P2[lo] + lm * (P3[lo] * 0.5 + lm * (P4[lo] * (1.0 / 6.0)
                                        + lm * (P5[lo] * (1.0 / 24.0) + lm * (P6[lo] * (1.0 / 120.0))))));
        }
    }
    free(P);
    return 0;
}
