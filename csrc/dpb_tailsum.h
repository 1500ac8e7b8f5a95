/*
 * dpb_tailsum.h -- suffix sums of a lattice law, plain and geometrically discounted (the tail
 * sums of the Poisson accountant's composed lattices).
 */
#ifndef DPB_TAILSUM_H
#define DPB_TAILSUM_H

/*
 * dpb_tail_sums -- a[i] = sum_{j >= i} u[j] and d[i] = sum_{j >= i} r^(j - i) u[j], i < n.
 *
 * METHOD  One backward pass: a[i] = u[i] + a[i + 1] (the additions in the order of numpy's
 *         np.cumsum(u[::-1])[::-1], so a is bit for bit that) and d[i] = u[i] + r d[i + 1]
 *         (Horner form: no factor r^(j - i) is formed, nothing overflows for 0 <= r <= 1).
 *         The two recurrences are independent, so they share the loop's latency.
 * ACCURACY  Each term u[j] passes through at most n - 1 additions (a) or n - 1 products and
 *         additions (d): |error| <= gamma_{2n} sum_j r^(j - i) |u[j]| (gamma_k = k u / (1 - k u),
 *         u the unit round-off) against the recurrences with the double r as given; the
 *         caller accounts for r's own rounding (relative error of r^m at most m times r's).
 * EDGES   n <= 0: nothing.  a or d NULL: that sum is not computed.
 */
void dpb_tail_sums(long n, const double *u, double r, double *a, double *d);

#endif
