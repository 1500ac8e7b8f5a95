/* dpb_lognormal.c -- see dpb_lognormal.h. */
#include "dpb_config.h"
#include "dpb_vecmath.h"
#include "dpb_lognormal.h"
#include "dpb_rho3_series.h"

/* exp(hi + lo) for |lo| << 1; +inf (no flag) when the result overflows. */
static double exp_dd(double hi, double lo)
{
    if (hi + lo > DPB_LOG_DBL_MAX - 1e-12) {
        if (hi + lo > DPB_LOG_DBL_MAX + 1e-9) return DPB_INF;
        return exp(hi - 1.0) * exp(1.0 + lo);   /* straddles DBL_MAX: avoid a spurious flag */
    }
    return exp(hi) * (1.0 + lo);
}

/* e^{-y} for y >= 0, flushed to 0 below 1e-304 so no underflow flag is raised. */
static double exp_neg(double y)
{
    return y > 700.0 ? 0.0 : exp(-y);
}

/* Below this sigma, 1/sigma^2 > 1111 and every quantity here exceeds DBL_MAX. */
#define SIGMA_ALL_OVERFLOW 0.03

/* k * (hi + lo) as hi' + lo' (k small integer, exact hi' rounding captured). */
static void scale_dd(double k, double hi, double lo, double *rh, double *rl)
{
    double e;
    dpb_two_prod(k, hi, rh, &e);
    *rl = e + k * lo;
}

/* eps = expm1(y), y = hi + lo */
static double expm1_dd(double hi, double lo)
{
    double em1;
    if (hi > 700.0) return exp_dd(hi, lo);   /* -1 is below half an ulp */
    em1 = expm1(hi);
    return em1 + (1.0 + em1) * lo;
}

/* log(eps) for large y (eps >= 1e10): y + log1p(-e^{-y}), as hi + lo */
static void log_eps_dd(double hi, double lo, double *rh, double *rl)
{
    *rh = hi;
    *rl = lo + log1p(-exp_neg(hi));
}

double dpb_lognormal_variance(double sigma)
{
    double hi, lo;
    if (!isgreater(sigma, 0.0)) return DPB_NAN;
    if (isinf(sigma)) return 0.0;
    if (sigma < SIGMA_ALL_OVERFLOW) return DPB_INF;     /* NaN and sigma <= 0 */
    dpb_inv_square(sigma, &hi, &lo);
    return expm1_dd(hi, lo);
}

double dpb_lognormal_mu3(double sigma)
{
    double hi, lo, e;
    if (!isgreater(sigma, 0.0)) return DPB_NAN;
    if (isinf(sigma)) return 0.0;
    if (sigma < SIGMA_ALL_OVERFLOW) return DPB_INF;
    dpb_inv_square(sigma, &hi, &lo);
    if (hi < 23.0) {                         /* eps < 1e10: direct, no cancellation */
        e = expm1_dd(hi, lo);
        return (3.0 + e) * e * e;
    } else {                                 /* mu3 = eps^3 (1 + 3/eps) */
        double lh, ll, th, tl;
        log_eps_dd(hi, lo, &lh, &ll);
        scale_dd(3.0, lh, ll, &th, &tl);
        return exp_dd(th, tl + log1p(3.0 * exp_neg(hi)));
    }
}

double dpb_lognormal_mu4(double sigma)
{
    double hi, lo, e;
    if (!isgreater(sigma, 0.0)) return DPB_NAN;
    if (isinf(sigma)) return 0.0;
    if (sigma < SIGMA_ALL_OVERFLOW) return DPB_INF;
    dpb_inv_square(sigma, &hi, &lo);
    if (hi < 23.0) {
        e = expm1_dd(hi, lo);
        return ((((e + 6.0) * e + 15.0) * e + 16.0) * e + 3.0) * e * e;
    } else {                                 /* eps^6 (1 + 6/eps + 15/eps^2 + ...) */
        double lh, ll, th, tl, r = exp_neg(hi) / (-expm1(-hi));   /* 1/eps */
        log_eps_dd(hi, lo, &lh, &ll);
        scale_dd(6.0, lh, ll, &th, &tl);
        return exp_dd(th, tl + log1p((((3.0 * r + 16.0) * r + 15.0) * r + 6.0) * r));
    }
}

/* Sum of the series in y = 1/sigma^2 by Estrin's scheme (all terms are positive,
 * so the evaluation order does not matter for accuracy; Estrin's shorter
 * dependency chain is ~3x faster than Horner here).  Plain multiply-adds: a
 * C fma() is a library call on baseline x86-64 and would cost more than it saves.
 * Terms used keep the truncation below 1e-17 relative: 16 for y < 0.04 (sigma > 5),
 * 20 for y < 0.25 (sigma > 2), 31 up to y = 1.384 (sigma = 0.85); checked by
 * tests/special/test_lognormal.py against mpmath at the branch points. */
static double estrin16(const double *c, double y)
{
    double y2 = y * y, y4 = y2 * y2, y8 = y4 * y4;
    double a0 = (c[1] * y + c[0]), a1 = (c[3] * y + c[2]), a2 = (c[5] * y + c[4]);
    double a3 = (c[7] * y + c[6]), a4 = (c[9] * y + c[8]), a5 = (c[11] * y + c[10]);
    double a6 = (c[13] * y + c[12]), a7 = (c[15] * y + c[14]);
    double b0 = (a1 * y2 + a0), b1 = (a3 * y2 + a2), b2 = (a5 * y2 + a4), b3 = (a7 * y2 + a6);
    return (b3 * y4 + b2) * y8 + (b1 * y4 + b0);
}

/* rho3 / y^{3/2} = sum_k dpb_rho3_series[k] y^k, y = 1/sigma^2 (the coefficients are
 * written by tools/gen_rho3_series.py).  The blocks below assume 31 terms. */
typedef char dpb_rho3_series_has_31_terms[(DPB_RHO3_NTERMS == 31) ? 1 : -1];

static double rho3_poly(double y)
{
    const double *h = dpb_rho3_series + 16;  /* terms 16..30, then the table's 0.0 */
    double lo = estrin16(dpb_rho3_series, y);
    double y2, y4, y8, y16;
    if (y < 0.04) return lo;                 /* 16 terms */
    y2 = y * y; y4 = y2 * y2; y8 = y4 * y4; y16 = y8 * y8;
    if (y < 0.25)                            /* 20 terms */
        return ((h[3] * y + h[2]) * y2 + (h[1] * y + h[0])) * y16 + lo;
    return estrin16(h, y) * y16 + lo;        /* 31 terms */
}

/* The series is used from this sigma up: 31 terms reach 1e-16 at y = 1.384. */
#define RHO3_SERIES_SIGMA 0.85

/* rho3 = y^{3/2} P(y), y = hi + lo = 1/sigma^2, for sigma >= RHO3_SERIES_SIGMA */
static double rho3_series(double y_hi, double y_lo, double sigma)
{
    return rho3_poly(y_hi) * (y_hi / sigma) * (y_lo != 0.0 ? 1.0 + 1.5 * y_lo / y_hi : 1.0);
}

/* The three erf factors of the closed form. */
static void rho3_erfs(double sigma, double *e5, double *e3, double *e1)
{
    double a = DPB_SQRT1_2 / (2.0 * sigma);  /* 1/(2 sqrt2 sigma) */
    *e5 = erf(5.0 * a);
    *e3 = erf(3.0 * a);
    *e1 = erf(a);
}

void dpb_lognormal_base_finish(dpb_lnbase *b, double em1)
{
    b->eps = em1 + (1.0 + em1) * b->lo;
    b->w = 1.0 + b->eps;
}

void dpb_lognormal_base(double sigma, dpb_lnbase *b)
{
    dpb_inv_square(sigma, &b->hi, &b->lo);
    if (b->hi > 700.0) {                     /* -1 is far below half an ulp */
        b->eps = b->w = exp_dd(b->hi, b->lo);
        return;
    }
    dpb_lognormal_base_finish(b, dpb_expm1(b->hi));
}

double dpb_lognormal_rho3(double sigma)
{
    double hi, lo, e5, e3, e1, th, tl;
    if (!isgreater(sigma, 0.0)) return DPB_NAN;
    if (sigma < SIGMA_ALL_OVERFLOW) return DPB_INF;
    if (isinf(sigma)) return 0.0;
    dpb_inv_square(sigma, &hi, &lo);
    if (sigma >= RHO3_SERIES_SIGMA) return rho3_series(hi, lo, sigma);
    rho3_erfs(sigma, &e5, &e3, &e1);
    scale_dd(3.0, hi, lo, &th, &tl);
    if (th > DPB_LOG_DBL_MAX + 1e-9) return DPB_INF;
    return exp_dd(th, tl) * e5 - 3.0 * exp_dd(hi, lo) * e3 + 4.0 * e1;
}

double dpb_coef_simplified_base(double sigma, const dpb_lnbase *b)
{
    double om;
    if (isinf(b->w)) return DPB_INF;
    if (sigma > 1e76) return DPB_INF;        /* ~ 5 sigma^4 > DBL_MAX */
    if (b->w < 1e100)                        /* (w^3 + 4)/eps^2, no cancellation */
        return (b->w * b->w * b->w + 4.0) / (b->eps * b->eps);
    om = 1.0 - 1.0 / b->w;                   /* w/(1-1/w)^2; 4/w^3 is below an ulp */
    return b->w / (om * om);
}

double dpb_coef_exact_base(double sigma, const dpb_lnbase *b)
{
    double e5, e3, e1, r;
    if (isinf(b->w)) return DPB_INF;
    if (sigma >= RHO3_SERIES_SIGMA) {
        /* rho3/eps^2 = P(y) y^{3/2}/eps^2 = P(y) sigma (y/eps)^2, y = hi + lo = 1/sigma^2:
         * nothing underflows for huge sigma */
        if (sigma > 1e150)                  /* y < 1e-300: the limit (beyond the doubles from 1.1e308) */
            return sigma > DBL_MAX / DPB_SQRT_8_PI ? DPB_INF : DPB_SQRT_8_PI * sigma;
        r = b->hi / b->eps * (1.0 + b->lo * (sigma * sigma));   /* lo/hi = lo sigma^2 to first order */
        return rho3_poly(b->hi) * sigma * r * r;
    }
    rho3_erfs(sigma, &e5, &e3, &e1);
    if (b->w < 1e100)
        return ((b->w * b->w * b->w) * e5 - 3.0 * b->w * e3 + 4.0 * e1) / (b->eps * b->eps);
    r = 1.0 - 1.0 / b->w;                    /* w^3/eps^2 = w/(1-1/w)^2; the rest is < ulp */
    return b->w / (r * r) * e5;
}

double dpb_coef_simplified(double sigma)
{
    dpb_lnbase b;
    if (!isgreater(sigma, 0.0)) return DPB_NAN;
    if (sigma < SIGMA_ALL_OVERFLOW || isinf(sigma)) return DPB_INF;
    dpb_lognormal_base(sigma, &b);
    return dpb_coef_simplified_base(sigma, &b);
}

double dpb_coef_exact(double sigma)
{
    dpb_lnbase b;
    if (!isgreater(sigma, 0.0)) return DPB_NAN;
    if (sigma < SIGMA_ALL_OVERFLOW || isinf(sigma)) return DPB_INF;
    dpb_lognormal_base(sigma, &b);
    return dpb_coef_exact_base(sigma, &b);
}
