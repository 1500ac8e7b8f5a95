/*
 * dpb_tailtab.h -- the elementwise parts of the tail-bound tables of the random-allocation
 * accountant (dpbounds.accountant._laws.tails._all_tables): e^{-z} - 1 + z and e^{z} - 1 - z on
 * the products z = lam_i y_j of a lam table and the quadrature nodes y_j, one pass, no
 * temporaries.  The node sums (matrix-vector products) stay with the caller.
 */
#ifndef DPB_TAILTAB_H
#define DPB_TAILTAB_H

/*
 * g[i * ny + j] = e^{-z} - 1 + z, z = lam[i] * y[j] (nl x ny, row-major).
 * METHOD  z < 0.1: the series sum_{k=2}^{10} c_k z^k with the caller's coefficients
 *         c[0..8] = (-1)^k / k!, k = 2 .. 10, as z^2 (c_2 + z (c_3 + ... + z c_10)) by Horner
 *         (each product and sum rounded on its own, as the numpy expression it replaces); else
 *         expm1(-min(z, 700)) + z (expm1 of libmvec where available, see dpb_vecmath.h).
 * ACCURACY  the series is an upper bound of the alternating tail (shrinking terms) within 1e-17
 *         relative; expm1 within a few ulp.
 */
void dpb_tailtab_lower(const double *lam, long nl, const double *y, long ny, const double *c, double *g);

/*
 * The node sums of the upper (truncated) transforms, level by level: for truncation level b[i]
 * (nodes seg[i] .. seg[i+1]-1 of w, y: weights and points, y <= b[i]) and every lam[l] with
 * 1e-3 <= lam[l] b[i] <= 30 (the same products and comparisons as the caller's table masks),
 *     S[i nl + l] = sum_j w_j (e^{z_j} - 1 - z_j),   J[i nl + l] = sum_j w_j y_j (e^{z_j} - 1),
 * z_j = lam[l] y_j; other entries are left as they are.
 * METHOD  below z = 1e-3: e^z - 1 - z by the series z^2 (1/2 + z (1/6 + z (1/24 + z c5))) (c5 from
 *         the caller: an upper bound of the terms from z^5 on) and e^z - 1 by its Taylor polynomial
 *         to z^5 / 120 (the rest is below z^6 / 719 < 1.4e-18 z), summed through prefix sums of
 *         the node moments w y^k, k = 2 .. 6 (the nodes of a level ascend in y, so the nodes below
 *         z = 1e-3 are a prefix; term by term where they do not ascend or a moment overflows);
 *         above: expm1 (libmvec where available, see dpb_vecmath.h), minus z for S (as the numpy
 *         expressions these sums replace), summed in node order.
 * ACCURACY  positive terms: each sum within ~n * 2^-52 relative of the exact sum of its terms
 *         (n nodes, a few hundred); a term of S just above z = 1e-3 within ~2 ulp(e^z - 1) /
 *         (z^2 / 2), up to 4e-13 relative (cancellation); S against mpmath within 1e-12 relative
 *         at sigma = 0.5, 5 (tests/accountant/test_tails.py).
 * RETURNS 0, or DPB_ENOMEM (nothing written) when the moment buffer cannot be allocated.
 */
int dpb_tailtab_upper(const double *lam, long nl, const double *b, long nb, const double *w,
                       const double *y, const long *seg, double c5, double *S, double *J);

#endif /* DPB_TAILTAB_H */
