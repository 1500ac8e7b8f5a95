/* dpb_normal.c -- see dpb_normal.h for the contract of each function. */
#include "dpb_config.h"
#include "dpb_normal.h"

double dpb_normal_pdf(double x)
{
    double h, l;
    if (isnan(x)) return x;
    if (isinf(x)) return 0.0;
    /* x^2 > 1600 > 1500: the value 0 of the branch below, without the overflow of x*x at |x| > 1e154 */
    if (fabs(x) > 40.0) return 0.0;
    if (fabs(x) < 1e-100) return DPB_INV_SQRT2PI;   /* x^2/2 < 1e-200: below an ulp; avoids underflow in the split */
    dpb_two_prod(x, x, &h, &l);
    if (h > 1500.0) return 0.0;          /* avoids the underflow flag */
    /* exp(-(h+l)/2) = exp(-h/2) * (1 - l/2) to first order; |l| <= ulp(h)/2. */
    return DPB_INV_SQRT2PI * exp(-0.5 * h) * (1.0 - 0.5 * l);
}

/* erfc(-x/sqrt2)/2 for x < 0 with the rounding of the argument corrected. */
static double lower_tail(double x)
{
    double nx = -x;
    double t, dt;
    /* dt = nx*(c_hi + c_lo) - t, exactly up to O(2^-106 t) */
    dpb_two_prod(nx, DPB_SQRT1_2, &t, &dt);
    dt += nx * DPB_SQRT1_2_LO;
    double e = erfc(t);
    if (t < 27.0)
        e -= DPB_2_SQRTPI * exp(-t * t) * dt;
    return 0.5 * e;
}

static double subnormal_tail(double x);

double dpb_ndtr(double x)
{
    if (isnan(x)) return x;
    if (x >= 0.0) {
        if (x > 40.0) return 1.0;
        return 1.0 - 0.5 * erfc(x * DPB_SQRT1_2);
    }
    if (x > -1.0) return 0.5 * erfc(-x * DPB_SQRT1_2);
    if (x >= -37.5) return lower_tail(x);
    if (x < -40.0) return 0.0;           /* true value < 1e-349 */
    return subnormal_tail(x);
}

/* |x| Phi(x)/n(x) - 1 for x < -20 (log Phi there, and the subnormal Phi), summed from
 * the asymptotic expansion of the Mills ratio: Phi(x) = n(x)/|x| * (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...).
 * Returns the terms after the leading 1, for log1p; at |x| >= 20 they fall by at least
 * (2k+1)/400 each, so 16 terms reach 1e-19. */
static double scaled_mills_minus_one(double x)
{
    double y = 1.0 / (x * x), term = 1.0, s = 0.0;
    int k;
    for (k = 1; k < 40; k++) {
        term *= -(2.0 * k - 1.0) * y;
        s += term;
        if (fabs(term) < 1e-19 * fabs(s)) break;
    }
    return s;
}

static double log_ndtr_asymptotic(double x)
{
    double h, l;
    dpb_two_prod(x, x, &h, &l);
    return -0.5 * h + ((-0.5 * l - DPB_LOG_SQRT2PI - log(-x)) + log1p(scaled_mills_minus_one(x)));
}

/* Phi(x) for -40 <= x < -37.5, where the result is subnormal.  exp(log Phi)
 * would carry the rounding of a ~700-sized exponent (~20 subnormal spacings);
 * instead evaluate exp(-x^2/2 + k ln2 + r) in the normal range and scale by
 * 2^-k with one final rounding (k ln2_hi is exact: ln2_hi has 32 bits). */
static double subnormal_tail(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const int k = 1000;
    double h, l, r, a;
    dpb_two_prod(x, x, &h, &l);
    r = -0.5 * l - DPB_LOG_SQRT2PI - log(-x) + log1p(scaled_mills_minus_one(x));
    a = (-0.5 * h + k * ln2_hi) + (k * ln2_lo + r);
    return ldexp(exp(a), -k);
}

double dpb_log_ndtr(double x)
{
    if (isnan(x)) return x;
    if (x > -1.0) {
        if (x > 40.0) return 0.0;
        return log1p(-dpb_ndtr(-x));
    }
    if (x >= -20.0) return log(lower_tail(x));
    if (x == -DPB_INF) return x;
    if (x < -1e154) return -DPB_INF;     /* -x^2/2 overflows; no flag */
    return log_ndtr_asymptotic(x);
}

/* ---- inverse ------------------------------------------------------------ */

/* Wichura (1988), AS241 PPND16, central region |q| <= 0.425, r = 0.180625 - q^2 */
static double as241_central(double q)
{
    double r = 0.180625 - q * q;
    double num = (((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r
                       + 6.7265770927008700853e+4) * r + 4.5921953931549871457e+4) * r
                     + 1.3731693765509461125e+4) * r + 1.9715909503065514427e+3) * r
                   + 1.3314166789178437745e+2) * r + 3.3871328727963666080e+0);
    double den = (((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r
                       + 3.9307895800092710610e+4) * r + 2.1213794301586595867e+4) * r
                     + 5.3941960214247511077e+3) * r + 6.8718700749205790830e+2) * r
                   + 4.2313330701600911252e+1) * r + 1.0);
    return q * num / den;
}

/* AS241 intermediate region, r = sqrt(-log s) in (1.6, 5]; returns |x|. */
static double as241_intermediate(double r)
{
    r -= 1.6;
    double num = (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r
                       + 2.41780725177450611770e-1) * r + 1.27045825245236838258e+0) * r
                     + 3.64784832476320460504e+0) * r + 5.76949722146069140550e+0) * r
                   + 4.63033784615654529590e+0) * r + 1.42343711074968357734e+0);
    double den = (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r
                       + 1.51986665636164571966e-2) * r + 1.48103976427480074590e-1) * r
                     + 6.89767334985100004550e-1) * r + 1.67638483018380384940e+0) * r
                   + 2.05319162663775882187e+0) * r + 1.0);
    return num / den;
}

/* Phi^{-1}(s) for 0 < s < 0.075 (returns a negative x).  Newton on
 * g(x) = log Phi(x) - log s, g' = n(x)/Phi(x); log space is well conditioned
 * in the tail and handles subnormal s. */
static double lower_quantile(double s)
{
    double ls = log(s);
    double r = sqrt(-ls), x;
    int it, nit;
    if (r <= 5.0) {
        x = -as241_intermediate(r);
        nit = 1;
    } else {
        /* x^2 = 2L - log(2 pi (2L - log(4 pi L))) with L = -log s, ~1e-4 relative */
        double L = -ls;
        double t = 2.0 * L - log(4.0 * DPB_PI * L);
        x = -sqrt(2.0 * L - log(DPB_2PI * t));
        nit = 3;
    }
    for (it = 0; it < nit; it++) {
        double lp = dpb_log_ndtr(x);
        /* Phi/n = exp(log Phi + x^2/2 + log sqrt(2pi)) */
        double ratio = exp(lp + 0.5 * x * x + DPB_LOG_SQRT2PI);
        x -= (lp - ls) * ratio;
    }
    return x;
}

double dpb_ndtri(double p)
{
    double q;
    if (isnan(p)) return p;
    if (p <= 0.0 || p >= 1.0) {
        if (p == 0.0) return -DPB_INF;
        if (p == 1.0) return DPB_INF;
        return DPB_NAN;
    }
    q = p - 0.5;                         /* exact for p >= 0.25 (Sterbenz) */
    if (fabs(q) <= 0.425) {
        double x = as241_central(q);
        /* one Newton step on Phi(x) - 1/2 = q, residual via erf keeps relative
         * accuracy near x = 0 */
        double res = (p < 0.25) ? dpb_ndtr(x) - p          /* q inexact here */
                                : 0.5 * erf(x * DPB_SQRT1_2) - q;
        return x - res / dpb_normal_pdf(x);
    }
    if (q < 0.0) return lower_quantile(p);
    return -lower_quantile(1.0 - p);     /* 1 - p exact for p > 1/2 */
}

double dpb_ndtri_complement(double a)
{
    return -dpb_ndtri(a);
}
