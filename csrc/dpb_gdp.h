/*
 * dpb_gdp.h -- Gaussian differential privacy (mu-GDP) conversions and the mu of
 * subsampled Gaussian mechanisms (Section 4 and Theorem 4.2 of
 * "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation: Tight
 * Upper and Lower Bounds").
 *     delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
 * is the standard conversion of Dong, Roth and Su, "Gaussian Differential Privacy".
 * Contract: NaN in -> NaN out; mu < 0, delta outside [0, 1], sigma <= 0, ... -> quiet
 * NaN; limits are returned exactly (mu = 0 -> delta = 0 for eps >= 0; delta = 0 ->
 * eps = inf).  Accuracy figures are checked against mpmath by tests/tradeoff/test_tradeoff.py
 * (test_gdp_delta_vs_mpmath, test_gdp_epsilon_vs_mpmath, test_mu_poisson_drs_vs_mpmath,
 * test_mills_ratio_vs_mpmath); properties (round trip, hockey-stick form, edges) by
 * tests/tradeoff/test_tradeoff_props.py.
 */
#ifndef DPB_GDP_H
#define DPB_GDP_H

/* dpb_normal_mills -- R(x) = Phi(x)/n(x) (the lower-tail Mills ratio).
 * METHOD  -37 <= x <= 38: dpb_ndtr(x)/dpb_normal_pdf(x), each a few ulp (|x| < 1e-100:
 *         dpb_ndtr(x) sqrt(2 pi), since x*x would underflow); x < -37: the continued
 *         fraction 1/(t + 1/(t + 2/(t + ... 8/t))) with t = -x, 8 levels (truncation
 *         < 1e-20 relative for t >= 37).
 * ACCURACY  relative <= 3 ulp on [-1e5, 37.65] (measured vs mpmath at 40 digits: 0.7 ulp
 *           for x < -37, 1.9 ulp on [-37, 37.5], 2.7 ulp just below the overflow, where
 *           n(x) is subnormal); tests/tradeoff/test_tradeoff.py::test_mills_ratio_vs_mpmath checks
 *           relative 2e-15 at nine points from -1e4 to 3.
 * EDGES  NaN -> NaN; x = -inf -> 0; R(x) exceeds DBL_MAX for x > 37.6527229921072
 *        (0x1.2d38c6d50394ep+5) -> +inf, returned directly without raising the overflow flag
 *        (tests/tradeoff/test_tradeoff.py::test_mills_overflow_no_flag).  On (37.5, 37.65] n(x) is
 *        subnormal: the result is finite and accurate as above, and the underflow flag of that
 *        intermediate is raised. */
double dpb_normal_mills(double x);

/* dpb_gdp_delta -- delta(eps) of mu-GDP (eps real, mu >= 0).
 * METHOD  u = mu/2 - eps/mu, v = u - mu.  Since e^eps n(v) = n(u) exactly,
 *         delta = n(u) (R(u) - R(v)) with R the Mills ratio: no overflow of e^eps and no
 *         underflow of Phi(u), Phi(v); formed as exp(log n(u) + log(R(u) - R(v))) so that
 *         subnormal results are right.  For u > 1: Phi(u) - exp(eps + log Phi(v)) (no cancellation
 *         for eps >= 0 there, and no loss of relative accuracy when delta is close to 1); for
 *         eps < 0 where e^eps Phi(v) > Phi(u)/2, -expm1(eps) Phi(v) + (Phi(-v) - Phi(-u)) instead
 *         (two terms >= 0: no cancellation as eps -> 0-).
 *         For mu <= 0.01 and 0 <= eps <= 1/2: the small-mu form in z = eps/mu (dpb_gdp.c), which
 *         never forms R(u) - R(v).
 * ACCURACY  relative <= 1e-13 * max(1, |u|/mu) for delta >= 1e-300 (tested vs mpmath; the
 *           factor |u|/mu is the conditioning of R(u) - R(v) when mu << |u|); no such factor in
 *           the small-mu form (relative <= 1e-13 down to mu = 2.2e-308, measured 7.2e-14: the
 *           rounding of log delta ~ -700 before exp), nor for eps < 0 with mu <= 0.01 (there
 *           z = eps/mu < -30 outside the small-mu form: relative <= 1e-13 down to mu = 5e-324,
 *           measured 5.4e-14).
 * EDGES  mu = 0 -> max(0, -expm1(eps)); mu = inf -> 1 (eps < inf); eps = inf -> 0; eps = -inf -> 1. */
double dpb_gdp_delta(double eps, double mu);
/* log delta(eps; mu) (same method; -inf where delta = 0). */
double dpb_gdp_log_delta(double eps, double mu);

/* dpb_gdp_epsilon -- the smallest eps >= 0 with delta(eps; mu) <= delta.
 * METHOD  bracket [0, mu (mu/2 - Phi^{-1}(delta))] (delta(eps) <= Phi(u)); safeguarded
 *         Newton on log delta(eps) = log delta (derivative -R(v)/(R(u) - R(v))),
 *         bisection whenever a step leaves the bracket; stops at 2 ulp.
 *         mu <= 0.01: safeguarded Newton in z = eps/mu on the small-mu form of log(delta/mu).
 * ACCURACY  relative <= 1e-13 vs an mpmath root for delta in [1e-300, delta(0)), mu in [2.2e-308, 50]
 *           (tested; measured 1.4e-14).  A subnormal eps is rounded up (spacing of the subnormals).
 *           Not claimed beyond mu = 50: from mu ~ 1e40 on the iteration in eps ~ mu^2/2 loses relative
 *           accuracy (measured 2.1e-8 below the truth at mu = 3.8e92, 1.5e-8 at 9.1e42; 1e-16 at 1e20).  Near eps = 0 with large mu, delta(eps) is flat
 *           (delta' = -e^eps Phi(-eps/mu - mu/2)) and eps is only as good as that conditioning allows.
 * EDGES  delta >= delta(0) = erf(mu/(2 sqrt2)) -> 0; delta = 0 -> inf; mu = 0 -> 0;
 *        mu = inf -> inf for delta < 1. */
double dpb_gdp_epsilon(double delta, double mu);

/* dpb_gdp_mu_random_allocation -- sqrt(E (w - 1)/(M - 1)) = mu_M sqrt(E): the Gaussian
 * parameter of Theorem 4.2 for E epochs of random allocation over M rounds (its limit
 * for E = c^2 M is c sqrt(e^{1/sigma^2} - 1)).  ASYMPTOTIC (gamma'_M dropped), not a bound.
 * ACCURACY  relative <= 4 ulp.  EDGES  sigma <= 0, M <= 1, E < 0 -> NaN.
 * The other reading of the same asymptotics, sqrt(E (w - 1)/M) (the Poisson-subsampling limit
 * with rate 1/M over E M steps), is dpb_gdp_mu_poisson(sigma, 1/M, E M) below; the exact
 * accountant's method="gdp_asymptotic" uses that one.  Every caller names which it uses. */
double dpb_gdp_mu_random_allocation(double sigma, double rounds, double epochs);

/* dpb_gdp_mu_poisson -- Bu et al. (2019) CLT: mu = p sqrt(T (e^{1/sigma^2} - 1)).
 * ACCURACY  relative <= 4 ulp.  EDGES  p outside [0, 1], T < 0, sigma <= 0 -> NaN. */
double dpb_gdp_mu_poisson(double sigma, double sample_rate, double steps);

/* dpb_gdp_mu_poisson_drs -- Dong-Roth-Su Cor. 5.4:
 *     mu = p sqrt(2T (e^{1/sigma^2} Phi(3/(2 sigma)) + 3 Phi(-1/(2 sigma)) - 2)),
 * the bracket written as (w-1) Phi(3/(2s)) + (erf(3/(2 sqrt2 s)) - 3 erf(1/(2 sqrt2 s)))/2
 * to avoid cancellation for large sigma.
 * ACCURACY  relative <= 1e-14 for sigma in [0.05, 1e4] (tested).  EDGES  as dpb_gdp_mu_poisson. */
double dpb_gdp_mu_poisson_drs(double sigma, double sample_rate, double steps);

#endif /* DPB_GDP_H */
