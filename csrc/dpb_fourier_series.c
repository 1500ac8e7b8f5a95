/* dpb_fourier_series.c -- see dpb_fourier_series.h (method and error bound there). */
#include "dpb_fourier_series.h"
#include "dpb_config.h"
#include <math.h>

#define FS_B 32                 /* block length; B^2 terms share one direct sin/cos anchor */
#define FS_G 4                  /* points evaluated per pass over the coefficients (memory traffic) */
#define FS_2P52 4503599627370496.0

/* e^{-2 pi i frac(m q)} for an integer m >= 0 with |m q| < 2^52: m q = hi + lo exactly; hi - floor(hi)
 * is exact (a multiple of ulp(hi) in [0, 1)), |lo| <= ulp(hi)/2 <= 1/2, so their sum is the one
 * rounding (<= 2u cycles); reduction to [-1/2, 1/2] subtracts 1 exactly (Sterbenz). */
static void fs_unit(double m, double q, double *re, double *im)
{
    double hi, lo, f, ang;
    dpb_two_prod(m, q, &hi, &lo);
    f = (hi - floor(hi)) + lo;   /* in (-1/2, 3/2) */
    if (f >= 0.5) f -= 1.0;
    ang = -DPB_2PI * f;        /* |ang| <= pi */
    *re = cos(ang);
    *im = sin(ang);
}

/* Neumaier's compensated addition of v into (s, c). */
static inline void fs_acc(double *s, double *c, double v)
{
    double t = *s + v;
    if (fabs(*s) >= fabs(v))
        *c += (*s - t) + v;
    else
        *c += (v - t) + *s;
    *s = t;
}

/* an AVX2 clone where the CPU has it (DPB_TARGET_CLONES of dpb_config.h) */
DPB_TARGET_CLONES int dpb_fourier_series_re(long N, int ncoef, const double *const *coef, long nx,
                                    const double *q, double *out)
{
    long j0;
    if (ncoef < 1 || ncoef > 4)
        return -1;
    for (j0 = 0; j0 < nx; j0 += FS_G) {
        int g, k, ng = (int)((nx - j0) < FS_G ? (nx - j0) : FS_G);
        double Rr[FS_G][FS_B], Ri[FS_G][FS_B], Sr[FS_G][FS_B], Si[FS_G][FS_B];
        double Tr[FS_G], Ti[FS_G];
        double sum[4][FS_G], comp[4][FS_G];
        int ok[FS_G];
        long a, b, j;
        for (g = 0; g < ng; ++g) {
            double qq = q[j0 + g];
            ok[g] = isfinite(qq) && fabs(qq) * (double)(N > 0 ? N : 0) < FS_2P52;
            for (k = 0; k < 4; ++k) { sum[k][g] = 0.0; comp[k][g] = 0.0; }
            if (!ok[g]) continue;
            for (j = 0; j < FS_B; ++j) {
                fs_unit((double)j, qq, &Rr[g][j], &Ri[g][j]);
                fs_unit((double)(j * FS_B), qq, &Sr[g][j], &Si[g][j]);
            }
        }
        for (a = 0; a * FS_B * FS_B <= N; ++a) {
            for (g = 0; g < ng; ++g)
                if (ok[g]) fs_unit((double)(a * FS_B * FS_B), q[j0 + g], &Tr[g], &Ti[g]);
            for (b = 0; b < FS_B; ++b) {
                long n0 = a * FS_B * FS_B + b * FS_B;
                long jlo = (n0 == 0) ? 1 : 0;
                long jhi = (N + 1 - n0) < FS_B ? (N + 1 - n0) : FS_B;
                if (jhi <= jlo) break;
                for (g = 0; g < ng; ++g) {
                    /* zz = (Re z_j, -Im z_j) interleaved like c, so Re(c z) summed over the block is
                     * the plain dot product of the two arrays of 2B doubles */
                    double zz[2 * FS_B];
                    double Ar, Ai;
                    if (!ok[g]) continue;
                    Ar = Tr[g] * Sr[g][b] - Ti[g] * Si[g][b];
                    Ai = Tr[g] * Si[g][b] + Ti[g] * Sr[g][b];
                    for (j = 0; j < FS_B; ++j) {
                        zz[2 * j] = Ar * Rr[g][j] - Ai * Ri[g][j];
                        zz[2 * j + 1] = -(Ar * Ri[g][j] + Ai * Rr[g][j]);
                    }
                    for (k = 0; k < ncoef; ++k) {
                        const double *c = coef[k];
                        double blk;
                        if (jlo == 0 && jhi == FS_B) {
                            /* full block: eight lanes of eight products each */
                            const double *cb = c + 2 * (n0 - 1);
                            double p0 = 0.0, p1 = 0.0, p2 = 0.0, p3 = 0.0;
                            double p4 = 0.0, p5 = 0.0, p6 = 0.0, p7 = 0.0;
                            for (j = 0; j < 2 * FS_B; j += 8) {
                                p0 += cb[j] * zz[j];
                                p1 += cb[j + 1] * zz[j + 1];
                                p2 += cb[j + 2] * zz[j + 2];
                                p3 += cb[j + 3] * zz[j + 3];
                                p4 += cb[j + 4] * zz[j + 4];
                                p5 += cb[j + 5] * zz[j + 5];
                                p6 += cb[j + 6] * zz[j + 6];
                                p7 += cb[j + 7] * zz[j + 7];
                            }
                            blk = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));
                        } else {
                            double p[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
                            for (j = jlo; j < jhi; ++j) {
                                long i2 = 2 * (n0 + j - 1);
                                p[(2 * j) & 7] += c[i2] * zz[2 * j];
                                p[(2 * j + 1) & 7] += c[i2 + 1] * zz[2 * j + 1];
                            }
                            blk = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
                        }
                        fs_acc(&sum[k][g], &comp[k][g], blk);
                    }
                }
            }
        }
        for (g = 0; g < ng; ++g)
            for (k = 0; k < ncoef; ++k)
                out[k * nx + j0 + g] = ok[g] ? sum[k][g] + comp[k][g] : DPB_NAN;
    }
    return 0;
}
