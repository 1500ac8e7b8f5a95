/* dpb_rdp_base.c -- see dpb_rdp_base.h. */
#include <math.h>
#include "dpb_config.h"
#include "dpb_rdp_common.h"
#include "dpb_rdp_base.h"

double dpb_rdp_gaussian(double alpha, double sigma)
{
    if (alpha != alpha || sigma != sigma) return DPB_NAN;
    if (!(alpha >= 1.0) || !(sigma > 0.0) || sigma == DPB_INF) return DPB_NAN;
    if (alpha == DPB_INF) return DPB_INF;
    {
        double r;
        if (sigma < 1e-154) return DPB_INF;       /* 1/(2 sigma^2) > 5e307: no overflow flag */
        r = 0.5 / sigma / sigma;                  /* no overflow for huge sigma */
        if (r > 1.0 && alpha > DBL_MAX / r) return DPB_INF;
        return alpha * r;
    }
}

double dpb_rdp_laplace_inf(double b)
{
    if (b != b || !(b > 0.0) || b == DPB_INF) return DPB_NAN;
    return 1.0 / b;
}

double dpb_rdp_laplace(double alpha, double b)
{
    double u, am1;
    if (alpha != alpha || b != b) return DPB_NAN;
    if (!(alpha >= 1.0) || !(b > 0.0) || b == DPB_INF) return DPB_NAN;
    u = 1.0 / b;
    if (alpha == DPB_INF) return u;
    if (alpha == 1.0) {
        if (u < 0.5) {                   /* u + expm1(-u) = sum_{k>=2} (-u)^k/k!, no cancellation */
            double t = 0.5 * u * u, x = 0.0;
            int k;
            for (k = 2; k < 40 && fabs(t) > 1e-18 * fabs(x); k++) {
                x += t;
                t *= -u / (double)(k + 1);
            }
            return x;
        }
        return u + expm1(-u);
    }
    am1 = alpha - 1.0;
    if (u < 1.0 ? alpha * u < 0.5 : alpha < 0.5 / u) {
        /* log1p argument X = sum_{k>=2} u^k/k! a(a-1)[(a-1)^{k-1} + (-a)^{k-1}]/(2a-1) */
        double x = 0.0, A = 1.0, B = -1.0, fk = 1.0, t;
        int k;
        for (k = 2; k < 60; k++) {
            fk *= (double)k;
            A *= u * am1;       /* (u(a-1))^{k-1}        */
            B *= -u * alpha;    /* -(-ua)^{k-1}          */
            t = (A + B) / fk;
            x += t;
            if (fabs(t) <= 1e-18 * fabs(x)) break;
        }
        x *= u * alpha * (am1 / (2.0 * alpha - 1.0));
        return log1p(x) / am1;
    }
    if (alpha > 0.5 * DBL_MAX) {
        /* 2 alpha overflows: here alpha - 1 = alpha and 2 alpha - 1 = 2 alpha exactly, so
         * w = 1/2.  The correction |log1p(w e)/alpha| <= ln2/alpha < 8e-309 is below a quarter
         * ulp of u > 1e-290: u exactly, without the underflow of forming it; below, 2 alpha u
         * <= 4e18 cannot overflow */
        if (u > 1e-290) return u;
        return u + log1p(0.5 * expm1(-2.0 * (alpha * u))) / alpha;
    }
    {
        double w = am1 / (2.0 * alpha - 1.0);
        double e = (u > 1e300 / (2.0 * alpha)) ? -1.0 : expm1(-(2.0 * alpha - 1.0) * u);
        return u + log1p(w * e) / am1;
    }
}

/* |log(p/(1-p))| accurately: 2 atanh(2p-1) (exact argument for p >= 1/4). */
static double rr_logit(double p)
{
    if (p >= 0.25 && p <= 0.75) return fabs(2.0 * atanh(2.0 * p - 1.0));
    return fabs(log(p) - log1p(-p));
}

double dpb_rdp_rr_inf(double p)
{
    if (p != p || !(p > 0.0 && p < 1.0)) return DPB_NAN;
    return rr_logit(p);
}

/* log(sinh(x)) for x > 0 */
static double log_sinh(double x)
{
    if (x > 20.0) return x - DPB_LN2 + log1p(-exp(-2.0 * x));
    return log(sinh(x));
}

double dpb_rdp_randomized_response(double alpha, double p)
{
    double r, am1, lx;
    if (alpha != alpha || p != p) return DPB_NAN;
    if (!(alpha >= 1.0) || !(p > 0.0 && p < 1.0)) return DPB_NAN;
    r = rr_logit(p);
    if (r == 0.0) return 0.0;
    if (alpha == DPB_INF) return r;
    if (alpha == 1.0) return fabs(2.0 * p - 1.0) * r;
    am1 = alpha - 1.0;
    /* log(S - 1) = log 2 + log sinh(a r/2) + log sinh((a-1) r/2) - log cosh(r/2) */
    {
        double lc = (r > 40.0) ? 0.5 * r - DPB_LN2 + log1p(exp(-r)) : log(cosh(0.5 * r));
        if (r > 1e300 / alpha) {
            /* a r beyond ~1e300 (a near the largest double): a r/2 would overflow to inf, while
             * the true value is about r
             * (tests/rdp/test_rdp_fuzz_regressions.py::test_randomized_response_rdp_at_the_largest_order).
             * There log sinh(x) = x - log 2 to the last bit and
             * log(1 + e^lx) = lx, so the result is lx/(a-1) = r (a - 1/2)/(a - 1) - (log 2 + lc)/(a - 1),
             * formed without the product a r. */
            return r * ((alpha - 0.5) / am1) - (DPB_LN2 + lc) / am1;
        }
        lx = DPB_LN2 + log_sinh(0.5 * alpha * r) + log_sinh(0.5 * am1 * r) - lc;
    }
    return dpb_log1pexp(lx) / am1;
}
