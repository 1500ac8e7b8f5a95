/* dpb_logsum.c -- see dpb_logsum.h. */
#include "dpb_logsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 8th-order central difference of q at every grid point (zero outside), in units of 1/u */
static void central_derivative(long n, const double *q, double h, double *dq)
{
    static const double c[4] = {4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};
    for (long i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int k = 1; k <= 4; ++k) {
            double qp = (i + k < n) ? q[i + k] : 0.0;
            double qm = (i - k >= 0) ? q[i - k] : 0.0;
            acc += c[k - 1] * (qp - qm);
        }
        dq[i] = acc / h;
    }
}

/* out[i] += sum_j coef[j] * b[i-K-j] * interp_j(a)(i)  for j < J1 (the near part) */
static void near_part(long n, const double *apad, long pad, const double *b, long K, long J1,
                      int taps, const long *off, const double *w, const double *coef,
                      double *acc, double *out)
{
    for (long j = 0; j < J1; ++j) {
        long i0 = K + j;  /* first i with b[i-K-j] on the grid */
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
        const double *bj = b;  /* b[i - K - j] = b[i - i0] */
        double *o = out + i0;
        for (long i = 0; i < len; ++i) o[i] += cj * bj[i] * acc[i];
    }
}

/* out[i] += h (a[i] * P[i-K-J1] + e^{-d_J1} (a[i] - a'[i]) T[i-K-J1], P = running sum of b,
 * T = e^{-h}-weighted running sum of b: the j >= J1 part, trapezoid weight h) */
static void far_part(long n, const double *a, const double *da, const double *b, long K, long J1,
                     double h, double tail_scale, double *out)
{
    const double eh = exp(-h);
    double P = 0.0, T = 0.0;
    long shift = K + J1;
    for (long i = shift; i < n; ++i) {
        double bb = b[i - shift];
        P += bb;
        T = bb + eh * T;
        out[i] += h * (a[i] * P + tail_scale * (a[i] - da[i]) * T);
    }
}

int dpb_logsum_convolve(long n, const double *qx, const double *qz, int same, double h,
                        long K, long J1, int taps, const long *off, const double *w,
                        const double *coef, double tail_scale, double *out)
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
    double *acc = zpad + (n + 2 * pad), *dx = acc + n, *dz = dx + n;
    memcpy(xpad + pad, qx, (size_t)n * sizeof(double));
    memcpy(zpad + pad, qz, (size_t)n * sizeof(double));
    memset(out, 0, (size_t)n * sizeof(double));
    /* sum over j in a trapezoid of d with the interpolated larger part (doubling: both terms equal) */
    near_part(n, xpad, pad, qz, K, J1, taps, off, w, coef, acc, out);
    central_derivative(n, qx, h, dx);
    far_part(n, qx, dx, qz, K, J1, h, tail_scale, out);
    if (same) {
        for (long i = 0; i < n; ++i) out[i] *= 2.0;
    } else {
        near_part(n, zpad, pad, qx, K, J1, taps, off, w, coef, acc, out);
        central_derivative(n, qz, h, dz);
        far_part(n, qz, dz, qx, K, J1, h, tail_scale, out);
    }
    free(buf);
    return 0;
}
