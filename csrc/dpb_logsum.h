/*
 * dpb_logsum.h -- density of log(X + Z) from the densities of log X and log Z
 * (log-domain convolution; the small-sigma path of the exact random-allocation accountant).
 *
 * A sum of a few lognormals with log-scale 1/sigma ~ 3 spans tens of decades, so no linear
 * grid or Fourier series resolves it; its logarithm is smooth on a uniform grid.  With U = log S,
 *
 *   q_S(u) = int_{d >= ln 2} c(d) [ q_X(u - g(d)) q_Z(u - d) + q_Z(u - g(d)) q_X(u - d) ] dd,
 *   c(d) = 1 / (1 - e^{-d}),   g(d) = -log(1 - e^{-d}),
 *
 * (split at the half-sum point: d = log S - log(smaller part) >= ln 2; the larger part is
 * S - smaller, at log-distance g(d) <= ln 2 below u).  Every density here is of a log.
 */
#ifndef DPB_LOGSUM_H
#define DPB_LOGSUM_H

/*
 * METHOD  Grid u_i = u_0 + i h (i < n) with h = ln 2 / K, so that d_j = (K + j) h lands on the
 *         grid and q_Z(u_i - d_j) = qz[i - K - j] exactly.  For j < J1 the factor q_X(u_i - g_j)
 *         is a Lagrange interpolant with ``taps`` nodes (weights w[j*taps + t] at nodes
 *         i + off[j] + t, prepared by the caller); coef[j] = c(d_j) times the trapezoid weight (h) with
 *         Gregory end corrections at d = ln 2.  For j >= J1 (x = e^{-d} <= tail_scale ~ 2e-6) the
 *         second-order expansion c q_X(u - g) = q_X + x (q_X - q_X') + x^2 (q_X - 3/2 q_X' +
 *         1/2 q_X'') + O(x^3) (derivatives by 8th-order central differences) turns the rest into
 *         three running sums (plain, e^{-h}- and e^{-2h}-weighted), O(n).
 *         ``same`` != 0 means qx == qz (doubling): the two symmetric terms are equal.
 *         Values off the grid are zero; the caller's grid must hold the densities' support.
 * ACCURACY  Set by h and taps (the interpolation error ~ (h/scale)^taps) and the Gregory order;
 *         measured by the caller against a half-resolution run and against direct quadrature.
 * EDGES   n <= 0: nothing.  Returns 0, or -1 if scratch memory could not be allocated.
 */
int dpb_logsum_convolve(long n, const double *qx, const double *qz, int same, double h,
                        long K, long J1, int taps, const long *off, const double *w,
                        const double *coef, double tail_scale, double *out);

/* As dpb_logsum_convolve, asking ``stop(ctx)`` after each near-part node j (O(n taps) work, well
 * under a millisecond) whether to give up: a caller's Ctrl-C watch.  Returns 1 if it stopped
 * (``out`` is then incomplete), else as dpb_logsum_convolve; stop = NULL never stops.  The
 * arithmetic is the same, so a run that is not stopped gives the same bits. */
typedef int (*dpb_logsum_stop_fn)(void *ctx);
int dpb_logsum_convolve_watched(long n, const double *qx, const double *qz, int same, double h,
                                long K, long J1, int taps, const long *off, const double *w,
                                const double *coef, double tail_scale, double *out,
                                dpb_logsum_stop_fn stop, void *ctx);

#endif
