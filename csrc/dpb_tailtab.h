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
 * For z = lam[i] * y[j] (nl x ny, row-major): em = e^{z} - 1 (expm1) and gg = e^{z} - 1 - z,
 * gg by the series z^2 (1/2 + z (1/6 + z (1/24 + z c5))) below z = 1e-3 (c5 from the caller,
 * an upper bound of the terms from z^5 on), em - z above.
 */
void dpb_tailtab_upper(const double *lam, long nl, const double *y, long ny, double c5, double *em, double *gg);

#endif /* DPB_TAILTAB_H */
