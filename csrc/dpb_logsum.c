/* dpb_logsum.c -- see dpb_logsum.h. */
#include "dpb_logsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 8th-order central differences of q at every grid point (zero outside), in units of 1/u */
static void central_derivatives(long n, const double *q, double h, double *d1, double *d2)
{
    static const double c1[4] = {4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};
    static const double c2[5] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0};
    for (long i = 0; i < n; ++i) {
        double a1 = 0.0, a2 = c2[0] * q[i];
        for (int k = 1; k <= 4; ++k) {
            double qp = (i + k < n) ? q[i + k] : 0.0;
            double qm = (i - k >= 0) ? q[i - k] : 0.0;
            a1 += c1[k - 1] * (qp - qm);
            a2 += c2[k] * (qp + qm);
        }
        d1[i] = a1 / h;
        d2[i] = a2 / (h * h);
    }
}

/* out[i] += sum_j coef[j] * b[i-K-j] * interp_j(a)(i)  for j < J1 (the near part); 1 if
   stop(ctx) asked to give up (checked after each j), else 0 */
static int near_part(long n, const double *apad, long pad, const double *b, long K, long J1,
                     int taps, const long *off, const double *w, const double *coef,
                     double *acc, double *out, dpb_logsum_stop_fn stop, void *ctx)
{
    /* b below 1e-300 (an underflowed left tail, wide for large sums) contributes nothing */
    long fb = 0;
    while (fb < n && !(fabs(b[fb]) > 1e-300)) ++fb;
    for (long j = 0; j < J1; ++j) {
        long i0 = K + j + fb;  /* first i with b[i-K-j] on the grid and not negligible */
        if (i0 >= n) break;
        long len = n - i0;
        const double *wj = w + j * taps;
        const double *src = apad + pad + i0 + off[j];
        for (long i = 0; i < len; ++i) acc[i] = wj[0] * src[i];
        for (int t = 1; t < taps; ++t) {
            const double wt = wj[t];
            const double *s = src + t;
            for (long i = 0; i < len; ++i) acc[i] += wt * s[i];
        }
        const double cj = coef[j];
        const double *bj = b + fb;  /* b[i - K - j] */
        double *o = out + i0;
        for (long i = 0; i < len; ++i) o[i] += cj * bj[i] * acc[i];
        if (stop && stop(ctx)) return 1;
    }
    return 0;
}

/* The j >= J1 part, x = e^{-d} <= tail_scale:  c(d) a(u - g(d)) = a + x (a - a') +
 * x^2 (a - 3/2 a' + 1/2 a'') + O(x^3), so with x_j = x_J1 e^{-(j - J1) h} the sum over j is
 *   h (a[i] P + x_J1 (a - a')[i] T1 + x_J1^2 (a - 3/2 a' + 1/2 a'')[i] T2)   at index i - K - J1,
 * P, T1, T2 the plain, e^{-h}- and e^{-2h}-weighted running sums of b. */
static void far_part(long n, const double *a, const double *da, const double *dda, const double *b,
                     long K, long J1, double h, double tail_scale, double *out)
{
    const double e1 = exp(-h), e2 = exp(-2.0 * h), x2 = tail_scale * tail_scale;
    double P = 0.0, T1 = 0.0, T2 = 0.0;
    long shift = K + J1;
    for (long i = shift; i < n; ++i) {
        double bb = b[i - shift];
        P += bb;
        T1 = bb + e1 * T1;
        T2 = bb + e2 * T2;
        out[i] += h * (a[i] * P + tail_scale * (a[i] - da[i]) * T1
                       + x2 * (a[i] - 1.5 * da[i] + 0.5 * dda[i]) * T2);
    }
}

int dpb_logsum_convolve(long n, const double *qx, const double *qz, int same, double h,
                        long K, long J1, int taps, const long *off, const double *w,
                        const double *coef, double tail_scale, double *out)
{
    return dpb_logsum_convolve_watched(n, qx, qz, same, h, K, J1, taps, off, w, coef, tail_scale,
                                       out, NULL, NULL);
}

int dpb_logsum_convolve_watched(long n, const double *qx, const double *qz, int same, double h,
                                long K, long J1, int taps, const long *off, const double *w,
                                const double *coef, double tail_scale, double *out,
                                dpb_logsum_stop_fn stop, void *ctx)
{
    if (n <= 0) return 0;
    long maxoff = 0;
    for (long j = 0; j < J1; ++j) {
        long lo = -off[j], hi = off[j] + taps;
        if (lo > maxoff) maxoff = lo;
        if (hi > maxoff) maxoff = hi;
    }
    long pad = maxoff + 1;
    double *buf = (double *)calloc((size_t)(2 * (n + 2 * pad) + 3 * n), sizeof(double));
    if (!buf) return -1;
    double *xpad = buf, *zpad = buf + (n + 2 * pad);
    double *acc = zpad + (n + 2 * pad), *d1 = acc + n, *d2 = d1 + n;
    memcpy(xpad + pad, qx, (size_t)n * sizeof(double));
    memcpy(zpad + pad, qz, (size_t)n * sizeof(double));
    memset(out, 0, (size_t)n * sizeof(double));
    /* sum over j in a trapezoid of d with the interpolated larger part (doubling: both terms equal) */
    if (near_part(n, xpad, pad, qz, K, J1, taps, off, w, coef, acc, out, stop, ctx)) {
        free(buf);
        return 1;
    }
    central_derivatives(n, qx, h, d1, d2);
    far_part(n, qx, d1, d2, qz, K, J1, h, tail_scale, out);
    if (same) {
        for (long i = 0; i < n; ++i) out[i] *= 2.0;
    } else {
        if (near_part(n, zpad, pad, qx, K, J1, taps, off, w, coef, acc, out, stop, ctx)) {
            free(buf);
            return 1;
        }
        central_derivatives(n, qz, h, d1, d2);
        far_part(n, qz, d1, d2, qx, K, J1, h, tail_scale, out);
    }
    free(buf);
    return 0;
}
