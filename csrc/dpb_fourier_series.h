/*
 * dpb_fourier_series.h -- real part of a Fourier sum at several points, for one to four
 * coefficient arrays at once (the series evaluation of the exact accountant's Fourier laws:
 * FourierLaw.wrapped_cdf_pair and TiltedFourierLaw.wrapped_cdf_pair).
 *
 *   out[k * nx + j] = Re sum_{n=1}^{N} c_k[n-1] exp(-2 pi i frac(n q_j)),   k < ncoef, j < nx,
 *
 * where q_j = x_j / P is the evaluation point in periods and c_k is a complex array stored as
 * interleaved (re, im) doubles (numpy complex128 memory).  The direct numpy form,
 * Re(exp(-2 pi i mod(outer(q, n), 1)) @ c), costs N complex exponentials per point.
 */
#ifndef DPB_FOURIER_SERIES_H
#define DPB_FOURIER_SERIES_H

/*
 * METHOD  n = a B^2 + b B + j (B = 32, 0 <= b, j < B).  Per point, two tables of unit complex
 *         numbers R_j = e(j q) and S_b = e(b B q) are computed directly, and every B^2 terms
 *         T_a = e(a B^2 q); the phase factor of term n is (T_a S_b) R_j: two complex products,
 *         no recurrence, so round-off does not accumulate along n.  Here e(v) = exp(-2 pi i f)
 *         with f = frac(v) reduced EXACTLY: n q is formed as an unevaluated sum hi + lo (exact
 *         product), and the fractional parts of hi and lo are taken separately (exact), so the
 *         only rounding before sin/cos is that of their sum (numpy's mod(n * q, 1) instead rounds
 *         n q first, an error of ulp(n q) that grows with n).  Sums: partial sums per block
 *         of B terms in eight lanes, blocks accumulated with Neumaier's compensated summation.
 * ACCURACY  (u = 2^-53.)  Each table entry e^: the reduced f is one rounding of a number < 3/2
 *         (<= u cycles), 2 pi and the product 2 pi f one rounding each (|f| <= 1/2): angle error
 *         <= 4 pi u; sin and cos within 1 ulp (glibc) of values <= 1: |e^ - e| <= 4 pi u + sqrt(2) u
 *         <= 14u.  Anchor T S: <= 2 * 14u + sqrt(5) u (complex product) <= 31u; phase factor
 *         (T S) R: <= 31u + 14u + sqrt(5) u <= 48u.  Re(c z) summed over a block as a dot product of
 *         2B doubles in eight lanes (eight products each, then three pairwise levels): gamma_11
 *         <= 11u relative to sum(|Re c Re z| + |Im c Im z|) <= sum |c_n| |z_n|; compensated block
 *         accumulation: <= 3u.  Total, for every value (62u by the above, rounded up):
 *             |out - exact| <= DPB_FS_ERR_UNITS * u * sum_n |c_n|,   DPB_FS_ERR_UNITS = 64,
 *         where "exact" uses the given q exactly.  Tested against an independent evaluation with
 *         40-digit arithmetic (mpmath) and against that direct numpy form
 *         (tests/accountant/test_exact.py::test_fourier_series_*, tests/accountant/test_exact_tilted.py).
 * EDGES   N <= 0: out = 0.  nx <= 0: nothing.  Non-finite q_j, or |q_j| N >= 2^52 (where the
 *         exact reduction above would need a third part; far beyond any window of the accountant:
 *         |q| <= 2, N <= 1e7) -> NaN for that point.  ncoef outside 1..4: returns -1 and writes
 *         nothing; else returns 0.  No FP flag is raised for finite input.
 */
#define DPB_FS_ERR_UNITS 64.0

int dpb_fourier_series_re(long N, int ncoef, const double *const *coef, long nx, const double *q,
                          double *out);

#endif /* DPB_FOURIER_SERIES_H */
