/*
 * dpb_exact_cf.h -- characteristic function of the per-round likelihood ratio
 * (docs/accountant.md), the kernel of the exact random-allocation accountant.
 *
 *   Y  = exp(X/sigma - 1/(2 sigma^2)),  X ~ N(0,1)   (E Y = 1; the H0 summand)
 *   wY = exp(X/sigma + 1/(2 sigma^2))                (the size-biased H1 signal term, E wY = w)
 *
 * For Z = Y (size_biased = 0) or Z = wY (size_biased = 1) the kernel returns
 *
 *   r(t) = E[exp(i t (Z - 1))] - 1 - i t (E Z - 1),
 *
 * i.e. chi(t) - 1 for Y (with full RELATIVE accuracy even for tiny t, where r ~ -t^2 (w-1)/2:
 * chi is raised to the power M, so log chi must keep its relative accuracy).
 */
#ifndef DPB_EXACT_CF_H
#define DPB_EXACT_CF_H

/*
 * METHOD  r(t) = int n(z) g(t v(z)) dz with v(z) = exp(z/sigma + m) - 1 and
 *         g(y) = e^{iy} - 1 - iy (Taylor series for |y| < 0.2, direct otherwise).
 *         The integrand is entire in z, so the line of integration may be shifted to
 *         z = u + i eta (docs/accountant.md): with s = 1/sigma, s*eta = min(pi/2, 1.2 s) the factor
 *         exp(i t v) decays instead of oscillating where t e^{s u} is large.  The real line
 *         (eta = 0) is used when t s e^{s u_hi + m} <= 1/2 (no oscillation at all).
 *         Trapezoid rule on u in [-9.5, 9.5 + (2 + size_biased) s], step min(0.2, sigma/4).
 * ACCURACY  relative error <= 1e-12 vs mpmath (tanh-sinh on the same shifted line, 25 digits) for
 *         sigma in {0.7, 1, 3, 20}, t in {1e-5, 0.05, 0.7, 4}, both Y and wY (tests/accountant/test_exact.py::
 *         test_cf_vs_mpmath); relative accuracy at t = 1e-7 checked against -t^2 (w-1)/2.
 *         Self-convergence (step halving): ~2e-14 for sigma >= 0.5 and t in [1e-8, 300], ~1e-12 at
 *         sigma = 0.3.  For large t, |chi| below ~1e-12 is not resolved (absolute error ~1e-13,
 *         from the subtraction of 1 + i t v), which only matters once chi^M is below 1e-24.
 * EDGES   t = 0 -> 0; r(-t) = conj r(t); NaN t or sigma -> NaN; sigma <= 0 or
 *         sigma < 0.2 (outside the tested range; exp would overflow far below) -> NaN.  No FP flag is raised for finite input.
 */
void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                            double *re, double *im);

/*
 * METHOD  Same integral at the complex argument tau = t + i lam (lam >= 0, "exponential tilting":
 *         E[e^{i tau (Z-1)}] = E[e^{i t (Z-1)} e^{-lam (Z-1)}] converges for every lam >= 0 since Z > 0).
 *         Returns r(tau) = E[exp(i tau (Z - 1))] - 1 - i tau (E Z - 1) (raw = 0: relative accuracy at
 *         small |tau|), or chi(tau) = E[exp(i tau (Z - 1))] itself (raw = 1: no cancellation against
 *         i tau (E Z - 1), which for Z = wY at small sigma is ~1e5 |tau| and would cost ~1e-16 of that
 *         in absolute accuracy).  The contour is shifted to
 *         s eta = min(pi/2 - theta, 1.2 s), theta = atan2(lam, |t|) (the direction in which i tau e^{s z}
 *         has the most negative real part, so the integrand decays on the line and is analytic and bounded
 *         in a strip of half-width ~pi/(2 s) around it), quantised to 32 levels (tables built lazily);
 *         the real line is used when t s e^{s u_hi + m} <= 1/2 (no oscillation; e^{-lam v} is smooth).
 *         Node tables are heap-allocated (nodes * 33 * 2 complex); allocation failure -> NaN outputs and the
 *         return value DPB_ENOMEM (0 otherwise); the Cython bridge raises MemoryError.
 * ACCURACY  relative error <= 1e-12 vs mpmath on the shifted line (tests/accountant/test_exact_tilted.py::test_cf_tilted_vs_mpmath:
 *         sigma in {0.3, 0.5, 1, 5}, t in {0, 0.05, 3, 40}, lam in {0.05, 1, 8}, Y and wY); lam = 0 reproduces
 *         dpb_exact_lognormal_cf bit for bit on the real line and to <= 1e-12 relative on the (quantised) shifted line.
 * EDGES   NaN t, lam or sigma -> NaN; lam < 0 or lam > 700 -> NaN (the transform diverges / e^{lam} overflows);
 *         r(-t + i lam) = conj r(t + i lam); sigma < 0.2 -> NaN.  No FP flag is raised for finite input.
 */
int dpb_exact_lognormal_cf_tilted(double sigma, int size_biased, int raw, long n, const double *t,
                                   double lam, double *re, double *im);

/*
 * The same values as dpb_exact_lognormal_cf_tilted at the equally spaced t_j = (n0 + j) dt,
 * j = 0 .. count-1 (n0 >= 0, dt > 0), about ten times faster at large t: the Fourier coefficients
 * of the tilted series.
 * METHOD  Same nodes, weights and contour levels.  In blocks of up to 128 steps on one level,
 *         e^{i tau_j v_q} = e^{i tau_a v_q} e^{i m dt v_q} (anchor tau_a evaluated directly, the
 *         step factors tabulated once per level), so a step costs one complex product per node and
 *         the rounding error does not grow with m.  raw = 0: nodes with |tau v| < 2 over the whole
 *         block are summed through the Taylor expansion of g(B + t C) in t (B = -lam v, C = i v,
 *         40 terms, |t C|, |B| < 2: truncation < 2^40/40! < 1e-35 relative), accumulated as moments
 *         at the anchor; the others as w (e^{i tau v} - 1 - i tau v), the -1 - i tau v part through
 *         sums of w and w v.  Blocks shorter than 16 steps, or (raw = 0) where |tau| grows by more
 *         than 1/0.9 within a block even when shortened to 4 steps, use the direct sums.  Factors
 *         below 1e-150 are dropped (no subnormals).
 * ACCURACY  the same round-off level as dpb_exact_lognormal_cf_tilted: agrees with it to <= 2e-15 relative
 *         at sigma <= 0.7 and the tilts of the tilted series (3e-14 at sigma = 1, lam = 0.5); vs mpmath
 *         <= 4e-15 relative (or the pointwise kernel's own error) at sigma 0.3-0.7, lam ~ 1e-5, t to 0.2;
 *         at lam = 2, t ~ 400 both are at their absolute floor ~1e-15 (1 + t)
 *         (tests/accountant/test_exact_tilted.py::test_cf_tilted_grid_*).
 * EDGES   NaN or out-of-range sigma / lam (as above), n0 < 0, dt <= 0 or non-finite -> NaN; count <= 0: nothing.
 */
int dpb_exact_lognormal_cf_tilted_grid(double sigma, int size_biased, int raw, long n0, long count,
                                        double dt, double lam, double *re, double *im);

/*
 * Both laws at once: dpb_exact_lognormal_cf_tilted_grid at lam = 0, raw = 0 for Y (re0, im0) and
 * for wY (re1, im1) at t_j = (n0 + j) dt, j = 0 .. count-1, from one set of exponentials.
 * METHOD  The size-biased integral in the variable z + s is the H0 integral with the weights
 *         n(z) e^{s z - 1/(2 sigma^2)} (= n(z) (1 + v(z)), computed directly as n(z) e^{s z + m}):
 *         the same nodes z_q and factors e^{i t v_q} serve both sums, so the costly part (anchors,
 *         step tables, node sweeps) is shared.  Nodes on u in [-9.5, 9.5 + 4 s] (the H0 range
 *         joined with the size-biased one, shifted by s); the contour level of each t is the one
 *         of the size-biased law (its upper end), otherwise as dpb_exact_lognormal_cf_tilted_grid.
 * ACCURACY  agrees with dpb_exact_lognormal_cf_tilted_grid (size_biased = 0 and 1) to ~1e-14
 *         relative (a different trapezoid offset / range for wY, and for Y the real line where
 *         the joint range ends above it); tests/accountant/test_exact_tilted.py::test_cf_pair_grid_* check it against
 *         both and against mpmath.
 * EDGES   as dpb_exact_lognormal_cf_tilted_grid (NaN for bad sigma, n0 < 0, dt <= 0 or non-finite).
 */
int dpb_exact_lognormal_cf_pair_grid(double sigma, long n0, long count, double dt,
                                      double *re0, double *im0, double *re1, double *im1);

#endif /* DPB_EXACT_CF_H */
