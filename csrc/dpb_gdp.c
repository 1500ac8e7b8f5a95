/* dpb_gdp.c -- see dpb_gdp.h for the contract of each function. */
#include "dpb_config.h"
#include "dpb_normal.h"
#include "dpb_lognormal.h"
#include "dpb_gdp.h"

double dpb_normal_mills(double x)
{
    double t, r;
    int k;
    if (isnan(x)) return x;
    if (x == -DPB_INF) return 0.0;
    if (x >= -5.0) {
        if (x > 38.0) return DPB_INF;
        if (fabs(x) < 1e-100) return dpb_ndtr(x) * DPB_SQRT2PI;   /* n(x) = n(0); avoids x*x underflow */
        return dpb_ndtr(x) / dpb_normal_pdf(x);
    }
    t = -x;
    r = t;
    /* levels for <= 3e-19 relative truncation error (checked with mpmath) */
    k = t >= 20.0 ? 8 : t >= 10.0 ? 14 : t >= 7.0 ? 18 : 28;
    for (; k >= 1; k--) r = t + k / r;
    return 1.0 / r;
}

/* -u^2/2 - log sqrt(2 pi), with u^2 split exactly */
static double log_pdf(double u)
{
    double h, l;
    if (fabs(u) < 1e-100) return -DPB_LOG_SQRT2PI;          /* u*u would underflow */
    dpb_two_prod(u, u, &h, &l);
    return -0.5 * h - (0.5 * l + DPB_LOG_SQRT2PI);
}

double dpb_gdp_log_delta(double eps, double mu)
{
    double u, v, ru, rv;
    if (isnan(eps) || isnan(mu) || mu < 0.0) return DPB_NAN;
    if (eps == DPB_INF) return -DPB_INF;
    if (eps == -DPB_INF) return 0.0;
    if (mu == 0.0) return eps >= 0.0 ? -DPB_INF : log(-expm1(eps));
    if (isinf(mu)) return 0.0;
    if (mu < 1.0 && fabs(eps) > mu * 1e300)                             /* eps/mu overflows: |u| = inf */
        return eps > 0.0 ? -DPB_INF : log(-expm1(eps));
    u = 0.5 * mu - eps / mu;
    v = u - mu;
    if (u > 5.0) {
        double lv = dpb_log_ndtr(v) + eps;
        double pu = dpb_ndtr(u);
        if (lv < -745.0) return log(pu);
        return log(pu - exp(lv));
    }
    ru = dpb_normal_mills(u);
    rv = dpb_normal_mills(v);
    if (!(ru > rv)) return -DPB_INF;
    return log_pdf(u) + log(ru - rv);
}

double dpb_gdp_delta(double eps, double mu)
{
    double l = dpb_gdp_log_delta(eps, mu);
    if (isnan(l)) return l;
    if (l < -745.2) return 0.0;
    return exp(l);
}

/* log delta(eps) and d log delta / d eps at eps (mu finite > 0). */
static double gdp_eval(double eps, double mu, double *dlog)
{
    double u = 0.5 * mu - eps / mu, v = u - mu, ru, rv;
    if (u > 5.0) {
        double lv = dpb_log_ndtr(v) + eps;
        double pu = dpb_ndtr(u), ev = (lv < -745.0) ? 0.0 : exp(lv);
        double d = pu - ev;
        *dlog = -ev / d;
        return log(d);
    }
    ru = dpb_normal_mills(u);
    rv = dpb_normal_mills(v);
    *dlog = -rv / (ru - rv);
    return log_pdf(u) + log(ru - rv);
}

double dpb_gdp_epsilon(double delta, double mu)
{
    double lo, hi, eps, ld, d0, u;
    int it;
    if (isnan(delta) || isnan(mu) || mu < 0.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    if (mu == 0.0) return 0.0;
    if (delta == 0.0) return DPB_INF;
    if (isinf(mu)) return delta >= 1.0 ? 0.0 : DPB_INF;
    d0 = erf(0.5 * mu * DPB_SQRT1_2);
    if (delta >= d0) return 0.0;
    ld = log(delta);
    lo = 0.0;
    /* delta(eps) <= Phi(u(eps)): u = Phi^{-1}(delta) gives an upper bracket */
    u = dpb_ndtri(delta);
    hi = mu * (0.5 * mu - u);
    eps = hi;
    /* tail start: log delta = -u^2/2 - log sqrt(2pi) + log(R(u) - R(u - mu)); two
     * fixed-point sweeps in u (R varies slowly) put Newton within a few ulp-doublings */
    if (u < -2.0) {
        int k;
        for (k = 0; k < 2; k++) {
            double r = log(dpb_normal_mills(u) - dpb_normal_mills(u - mu));
            double q = 2.0 * (-ld - DPB_LOG_SQRT2PI + r);
            double e2;
            if (!(q > 0.0)) break;
            u = -sqrt(q);
            e2 = mu * (0.5 * mu - u);
            if (!(e2 > lo && e2 < hi)) break;
            eps = e2;
        }
    }
    for (it = 0; it < 100; it++) {
        double dl, h = gdp_eval(eps, mu, &dl) - ld, en, step;
        if (h == 0.0) return eps;
        if (h > 0.0) lo = eps; else hi = eps;
        step = h / dl;
        en = eps - step;
        if (!(en > lo && en < hi)) {
            en = 0.5 * (lo + hi);
        } else if (fabs(step) <= 1e-9 * en) {
            return en;          /* quadratic convergence: the error is now ~1e-18 relative */
        }
        if (hi - lo <= 4e-16 * hi) return en;
        eps = en;
    }
    return eps;
}

double dpb_gdp_mu_random_allocation(double sigma, double rounds, double epochs)
{
    double e;
    if (isnan(sigma) || isnan(rounds) || isnan(epochs)) return DPB_NAN;
    if (!(sigma > 0.0) || !(rounds > 1.0) || epochs < 0.0) return DPB_NAN;
    if (isinf(rounds)) return isinf(epochs) ? DPB_NAN : 0.0;
    e = dpb_lognormal_variance(sigma);
    if (isinf(e)) return epochs == 0.0 ? 0.0 : DPB_INF;
    return sqrt(epochs * e / (rounds - 1.0));
}

double dpb_gdp_mu_poisson(double sigma, double sample_rate, double steps)
{
    double e;
    if (isnan(sigma) || isnan(sample_rate) || isnan(steps)) return DPB_NAN;
    if (!(sigma > 0.0) || sample_rate < 0.0 || sample_rate > 1.0 || steps < 0.0) return DPB_NAN;
    if (sample_rate == 0.0 || steps == 0.0) return 0.0;
    e = dpb_lognormal_variance(sigma);
    if (isinf(e) || isinf(steps)) return DPB_INF;
    return sample_rate * sqrt(steps * e);
}

/* erf(3y) - 3 erf(y); the series (2/sqrtpi) sum_{n>=1} (-1)^n (3^{2n+1} - 3) y^{2n+1}/(n! (2n+1))
 * for small y, where the O(y) terms cancel exactly. */
static double erf3_minus_3erf(double y)
{
    double y2, p3, py, f, s, term;
    int n;
    if (y > 0.25) return erf(3.0 * y) - 3.0 * erf(y);
    y2 = y * y;
    p3 = 3.0;   /* 3^{2n+1} */
    py = y;     /* y^{2n+1} */
    f = 1.0;    /* (-1)^n / n! */
    s = 0.0;
    for (n = 1; n < 60; n++) {
        p3 *= 9.0;
        py *= y2;
        f *= -1.0 / n;
        term = f * (p3 - 3.0) * py / (2.0 * n + 1.0);
        s += term;
        if (fabs(term) < 1e-18 * fabs(s)) break;
    }
    return DPB_2_SQRTPI * s;
}

double dpb_gdp_mu_poisson_drs(double sigma, double sample_rate, double steps)
{
    double e, a, b, br;
    if (isnan(sigma) || isnan(sample_rate) || isnan(steps)) return DPB_NAN;
    if (!(sigma > 0.0) || sample_rate < 0.0 || sample_rate > 1.0 || steps < 0.0) return DPB_NAN;
    if (sample_rate == 0.0 || steps == 0.0) return 0.0;
    e = dpb_lognormal_variance(sigma);
    if (isinf(e) || isinf(steps)) return DPB_INF;
    a = 1.5 / sigma;
    b = 0.5 / sigma;
    br = e * dpb_ndtr(a) + 0.5 * erf3_minus_3erf(b * DPB_SQRT1_2);
    return sample_rate * sqrt(2.0 * steps * br);
}
