/* dpb_tradeoff.c -- see dpb_tradeoff.h for the contract of each function. */
#include "dpb_config.h"
#include "dpb_normal.h"
#include "dpb_lognormal.h"
#include "dpb_theorem31.h"
#include "dpb_quad.h"
#include "dpb_tradeoff.h"

/* ------------------------------------------------------------ simple curves */

double dpb_gaussian_tradeoff(double a, double mu)
{
    double x;
    if (isnan(a) || isnan(mu)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || mu < 0.0) return DPB_NAN;
    if (mu == 0.0) return 1.0 - a;
    if (isinf(mu)) return 0.0;
    if (a == 0.0) return 1.0;
    if (a == 1.0) return 0.0;
    x = dpb_ndtri_complement(a);
    return dpb_ndtr(x - mu);
}

double dpb_f0delta_tradeoff(double a, double delta)
{
    double r;
    if (isnan(a) || isnan(delta)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    r = (1.0 - a) - delta;
    return r > 0.0 ? r : 0.0;
}

double dpb_gaussian_f0delta_tradeoff(double a, double mu, double delta)
{
    double q;
    if (isnan(a) || isnan(mu) || isnan(delta)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || mu < 0.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    q = 1.0 - delta;
    if (delta == 0.0) return dpb_gaussian_tradeoff(a, mu);
    if (a >= q) return 0.0;
    return q * dpb_gaussian_tradeoff(a / q, mu);
}

double dpb_multi_epoch_tradeoff(double a, double delta, double epochs)
{
    double p, r;
    if (isnan(a) || isnan(delta) || isnan(epochs)) return DPB_NAN;
    if (a < 0.0 || a > 1.0 || delta < 0.0 || delta > 1.0 || epochs < 0.0) return DPB_NAN;
    if (epochs == 0.0) return 1.0 - a;
    if (delta == 1.0) return 0.0;
    p = log1p(-delta);
    /* E log(1 - delta) < -745: the power underflows to 0; decided without the product, which
       overflows for huge E (tests/special/test_c_core_edges.py::test_multi_epoch_tradeoff_at_huge_epochs_raises_no_flag) */
    p = (epochs > 1.0 ? p < -745.0 / epochs : epochs * p < -745.0) ? 0.0 : exp(epochs * p);   /* (-745/E overflows at tiny E) */
    r = p - a;
    return r > 0.0 ? r : 0.0;
}

double dpb_gaussian_max_gap(double mu, double delta)
{
    double t;
    if (isnan(mu) || isnan(delta)) return DPB_NAN;
    if (mu < 0.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    if (isinf(mu)) return 1.0;
    t = 0.5 * mu * DPB_SQRT1_2;
    return erf(t) + delta * erfc(t);
}

/* ------------------------------------------------------------ CLT integral */

double dpb_tradeoff_clt(double a, double sigma, double rounds, int truncated)
{
    dpb_quad_ctx q;
    double out, zmax = DPB_INF;
    /* below DPB_CLT_SIGMA_MIN the panels lose accuracy (1.7e-10 at sigma = 0.01, 4e-6 at 0.001
       against mpmath): refused rather than returned unqualified (by the set-up, after the exact
       endpoints and before the overflowing 1/sigma^2) */
    if (dpb_quad_setup(&q, a, sigma, rounds, DPB_CLT_SIGMA_MIN, &out)) return out;
    q.mode = DPB_QUAD_CLT;
    if (truncated) {
        /* h = 1 + x sqrt((w-1)/M); z_max = sigma ln(M h) - 1/(2 sigma) */
        if (q.logform) {
            /* w - 1 overflows: ln r = ln x + ln(w-1)/2 - ln(M)/2 with ln(w-1) = 2 ln D - ln(M-1)
               (r = inf here made the truncated curve the untruncated one) */
            double lr, l1r;
            if (q.x < 0.0) return 0.0;
            lr = (q.x == 0.0) ? -DPB_INF : log(q.x) + q.lnD - 0.5 * (log(q.m1) + log(rounds));
            l1r = (lr > 0.0) ? lr + log1p(exp(-lr)) : log1p(exp(lr));      /* ln(1 + r) */
            zmax = sigma * (log(rounds) + l1r) - 0.5 * q.inv_sigma;
        } else {
            double r = q.x * sqrt(dpb_lognormal_variance(sigma) / rounds);
            if (!(r > -1.0)) return 0.0;
            zmax = sigma * (log(rounds) + log1p(r)) - 0.5 * q.inv_sigma;
        }
    }
    out = dpb_quad_integrate(&q, zmax);
    if (out > 1.0) out = 1.0;
    if (out < 0.0) out = 0.0;
    return out;
}

double dpb_tradeoff_clt_slope(double a, double sigma, double rounds)
{
    dpb_quad_ctx q;
    double out, I, lg;
    /* NaN in -> NaN out (as dpb_quad_setup below), before the ordered comparisons with a NaN,
     * which raise the invalid flag */
    if (isnan(a) || isnan(sigma) || isnan(rounds)) return DPB_NAN;
    if (a == 0.0 && sigma > 0.0 && rounds > 1.0) return -DPB_INF;
    if (a == 1.0 && sigma > 0.0 && rounds > 1.0) return 0.0;
    /* refused below DPB_CLT_SIGMA_MIN like the curve: the same panels lose accuracy there
       (relative 3.4e-5 at sigma = 0.001, a = 0.1, M = 3 against mpmath), and below sigma = 1.3e-154
       1/sigma^2 overflows (tests/contract/test_fp_flags.py::test_clt_slope_refused_below_sigma_min_like_the_curve) */
    if (dpb_quad_setup(&q, a, sigma, rounds, DPB_CLT_SIGMA_MIN, &out)) {
        if (isnan(out)) return out;
        return -1.0;                   /* mu = 0: f = 1 - a */
    }
    dpb_quad_slope_prepare(&q);
    I = dpb_quad_integrate(&q, DPB_INF);
    if (!(I > 0.0)) return 0.0 * I;     /* -0.0 or NaN */
    lg = q.off + log(I) + 0.5 * log1p(1.0 / q.m1) - DPB_LOG_SQRT2PI;
    if (lg > DPB_LOG_DBL_MAX) return -DPB_INF;
    return -exp(lg);
}

/* ------------------------------------------------------------ Theorem 3.1 */

double dpb_tradeoff_lower_bound(double a, double sigma, double rounds, int coefficient)
{
    dpb_t31_sigma c;
    double dmin, r;
    if (isnan(a) || isnan(sigma) || isnan(rounds)) return DPB_NAN;
    if (a < 0.0 || a > 1.0) return DPB_NAN;
    if (coefficient != DPB_COEF_SIMPLIFIED && coefficient != DPB_COEF_EXACT) return DPB_NAN;
    if (dpb_t31_prepare(sigma, coefficient, &c) != 0) return DPB_NAN;
    if (dpb_t31_status(&c, rounds, DPB_NAN, &dmin) != DPB_T31_VALID) return DPB_NAN;
    r = (1.0 - a) - dmin;
    return r > 0.0 ? r : 0.0;
}
