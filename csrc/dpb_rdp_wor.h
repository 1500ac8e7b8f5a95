/*
 * dpb_rdp_wor.h -- RDP of a mechanism run on a subsample drawn WITHOUT replacement
 * (a uniformly random size-m subset of n records, gamma = m/n), replace-one
 * neighbours (n public): Theorems 9 and 27, Corollary 10 and the matching lower bound of
 * "Subsampled Renyi Differential Privacy and Analytical Moments Accountant"
 * (Wang, Balle, Kasiviswanathan; theorem numbers of arXiv:1808.00087).
 *
 * Convention: eps(j) is the base mechanism's RDP under REPLACE-ONE neighbours.  For a
 * clipped sum with clip norm C, the replace-one L2 sensitivity is 2C, so the Gaussian's
 * sigma here is noise_std / (2C) (replacing one record moves the sum by up to 2C).
 *
 * All sums are accumulated in log space as log(1 + sum) = log1p(sum of positive
 * scaled terms), which keeps relative accuracy when the RDP is tiny; binomials via lgamma (or a caller-supplied table
 * lfact[i] = lgamma(i + 1)).  Integer-order kernels take eps[] with eps[j] = RDP of
 * the base mechanism at order j, valid for 2 <= j <= a; eps_inf is its pure-DP
 * epsilon (+inf allowed).
 *
 * EDGES (all kernels): NaN in -> NaN out; gamma outside [0, 1] -> NaN;
 *   gamma = 0 -> 0; gamma = 1 -> the base eps(a) (no subsampling).
 */
#ifndef DPB_RDP_WOR_H
#define DPB_RDP_WOR_H

enum { DPB_WOR_THEOREM9 = 0, DPB_WOR_IMPROVED = 1, DPB_WOR_LOWER = 2 };

/* Theorem 9 upper bound at integer a >= 2:
 *   eps'(a) <= log(1 + g^2 C(a,2) min{4(e^{eps2}-1), e^{eps2} min{2,(e^{epsinf}-1)^2}}
 *                 + sum_{j=3..a} g^j C(a,j) e^{(j-1)eps(j)} min{2,(e^{epsinf}-1)^j}) / (a-1),
 * clamped by the base eps(a) and by eps'(inf) = log(1 + g(e^{epsinf}-1)).
 * METHOD   running log-sum-exp of the positive terms, then log1p.  O(a).
 * ACCURACY relative error <= 1e-12 vs an mpmath evaluation for a <= 256 (measured 4.5e-14), <= 5e-12
 *          at a = 1000 (measured 1.4e-12: lgamma values of ~6e3 nats); tests/rdp/test_rdp_kernels.py. */
double dpb_rdp_wor_thm9_int(long a, double gamma, const double *eps, double eps_inf,
                            const double *lfact);

/* log of the Pearson-Vajda forward differences D^l = sum_i (-1)^{l-i} C(l,i) s_i,
 * s_0 = s_1 = 1, s_i = exp(logs[i]) (= e^{(i-1)eps(i)}), for EVEN l <= lmax (odd
 * entries are set to NaN; even ones are >= 0 by construction for a worst-case pair).
 * METHOD   scaled alternating sum with Neumaier compensation; the result is PADDED
 *          with a rigorous bound on the rounding error of the terms and of the sum
 *          (|sum| + err), so it never under-states D^l: the improved bound built on it
 *          stays an upper bound even where the alternating sum cancels.  O(lmax^2).
 * ACCURACY never below the exact D^l (tests/rdp/test_rdp_kernels.py::test_wor_generic_improved_is_valid_upper);
 *          relative excess ~ 1e-16 * sum_i |terms_i| / D^l: 1e-9 at l = 4 for sigma <= 5, but
 *          meaningless where the sum cancels completely (large sigma and l).  The Gaussian kernel
 *          therefore uses quadrature instead (dpb_rdp_wor_gaussian). */
void dpb_rdp_pv_logd(long lmax, const double *logs, const double *lfact, double *logd);
/* The same, for the orders lmin..lmax only (logd[l] for l outside untouched): callers that
 * must stay interruptible fill logd in chunks; every entry is computed independently, so a
 * chunked fill is bit-identical to one dpb_rdp_pv_logd call. */
void dpb_rdp_pv_logd_range(long lmin, long lmax, const double *logs, const double *lfact, double *logd);

/* "Theorem 27" improved bound (Pearson-Vajda) at integer a >= 2: Theorem 9 with each j >= 3
 * factor replaced by min{4 sqrt(|D^{2 floor(j/2)}| |D^{2 ceil(j/2)}|), e^{(j-1)eps(j)} min{2,(e^{epsinf}-1)^j}}.
 * logd from dpb_rdp_pv_logd with lmax >= a + 1.  Valid for mechanisms whose worst-case pair is
 * uniform over orders (Gaussian, Laplace: one neighbouring pair is worst case for every Renyi
 * and Pearson-Vajda divergence and the base RDP is tight, the condition of Theorem 27).  No silent fallback at any order.
 * ACCURACY with exact logd the relative error is <= 1e-13 vs mpmath; with the padded logd of
 *          dpb_rdp_pv_logd (generic base mechanisms) the bound may exceed the exact Theorem 27
 *          where the alternating sum cancels (large sigma, large a) but never falls below it. */
double dpb_rdp_wor_pv_int(long a, double gamma, const double *eps, double eps_inf,
                          const double *logd, const double *lfact);

/* Lower bound at integer a >= 2: the exact divergence of a realisable pair (for the Gaussian,
 * (1-g) N(0, s^2) + g N(1, s^2) against N(0, s^2): the replaced record maps to 1, all others to 0),
 *   eps'(a) >= log(1 + sum_{j=2..a} C(a,j) (1-g)^{a-j} g^j (e^{(j-1)eps(j)} - 1)) / (a-1).
 * ACCURACY relative error <= 1e-12 vs mpmath (measured 8.3e-14). */
double dpb_rdp_wor_lower_int(long a, double gamma, const double *eps, const double *lfact);

/* Corollary 10: eps'(a) at real a >= 1 from eps'(floor a), eps'(ceil a) by linear
 * interpolation of the CGF K = (a-1) eps'; a in [1, 2] -> eps'(2).  Returns NaN for a < 1. */
double dpb_rdp_interp(double a, double eps_floor, double eps_ceil);

/* ------------------------------------------------------------------ Gaussian */

/* Scratch space for the Gaussian kernels (tables grow on demand, cached per sigma). */
typedef struct {
    long n;            /* capacity of the tables (indices 0..n-1) */
    double *lfact;     /* lgamma(i+1), valid for i < nf */
    long nf;
    double *eps;       /* eps[j] = j/(2 sigma^2), valid for j < ne at sigma_eps */
    long ne;
    double sigma_eps;
    double *logs;      /* (j-1) eps(j) */
    double *logd;      /* log D^l, valid for l < nd at sigma_d */
    long nd;
    double sigma_d;
    /* the order-independent part of the upper bounds at (pre_sigma, pre_gamma) */
    double pre_sigma, pre_gamma, pre_lg, pre_lem, pre_c2, pre_sub;
} dpb_rdp_work;

void dpb_rdp_work_init(dpb_rdp_work *w);
void dpb_rdp_work_free(dpb_rdp_work *w);

/* Subsampled (WOR) Gaussian, sigma = noise std / replace-one sensitivity, at real
 * alpha in [1, inf]: bound = DPB_WOR_THEOREM9 | DPB_WOR_IMPROVED | DPB_WOR_LOWER.
 * Upper bounds at fractional alpha use dpb_rdp_interp and are clamped by the base
 * eps(alpha); the lower bound at fractional alpha (and alpha = 1) is the exact
 * divergence of the realisable mixture pair, computed by dpb_rdp_poisson_gaussian
 * (exact mode) with q = gamma.  alpha = inf -> inf for gamma > 0.
 * w may be NULL (a private workspace is allocated and freed: O(alpha^2) per call for
 * the improved bound).  alpha above DPB_RDP_ALPHA_MAX (1e6) -> NaN.
 * The improved bound uses D^l of the Gaussian by quadrature of the positive integrand
 * E[(L-1)^l] (no cancellation at any sigma).
 * ACCURACY relative error <= 1e-12 vs mpmath for sigma in [0.5, 50], gamma in [1e-3, 0.1],
 *          alpha <= 256 (measured: Theorem 9 4.5e-14, Theorem 27 1.1e-13, lower 8.3e-14;
 *          tests/rdp/test_rdp_kernels.py::test_wor_gaussian_vs_mpmath). */
double dpb_rdp_wor_gaussian(double alpha, double sigma, double gamma, int bound,
                            dpb_rdp_work *w);

#endif /* DPB_RDP_WOR_H */
