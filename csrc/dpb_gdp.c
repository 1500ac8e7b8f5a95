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
    if (x >= -37.0) {
        /* Above X_MILLS_OVERFLOW the quotient Phi(x)/n(x) exceeds DBL_MAX: return inf directly rather
           than dividing by a subnormal n(x), which gives the same inf but raises the overflow flag
           (the largest double with a finite quotient, found by bisection over the doubles). */
        if (x > 0x1.2d38c6d50394ep+5) return DPB_INF;
        if (fabs(x) < 1e-100) return dpb_ndtr(x) * DPB_SQRT2PI;   /* n(x) = n(0); avoids x*x underflow */
        return dpb_ndtr(x) / dpb_normal_pdf(x);
    }
    t = -x;
    r = t;
    k = 8;      /* t >= 37: truncation error < 1e-20 */
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

/* ---------------------------------------------------------------- small mu
 * For mu <= DPB_GDP_SMALL_MU and -min(1/2, 30 mu) <= eps <= 1/2 the general form below, n(u)(R(u) - R(v)),
 * subtracts two Mills ratios that agree to ~log10(|u|/mu) digits: about 10 of the 16 at
 * mu = 1e-10, all of them below mu ~ 1e-16.  Here the difference is never formed
 * (tests/tradeoff/test_tradeoff.py::test_gdp_delta_vs_mpmath and ::test_gdp_epsilon_vs_mpmath, down to
 * mu = 2.2e-308).  With z = eps/mu, h = mu/2 and Rt(t) = Phi(-t)/n(t) the upper-tail Mills ratio,
 *     delta = n(z - h) (Rt(z - h) - Rt(z + h))                       (exact)
 *           = n(z - h) mu q(z) (1 + c),   q(z) = -Rt'(z) = 1 - z Rt(z),
 * from the Taylor series of Rt about z (an entire function): with P_n = Rt^(n)(z) h^n,
 *     Rt(z - h) - Rt(z + h) = -2 sum_k P_{2k+1}/(2k+1)!,  c = sum_{k>=1} P_{2k+1}/((2k+1)! P_1),
 * and P_{n+1} = (z h) P_n + n h^2 P_{n-1} (from Rt' = z Rt - 1).  z h = eps/2 <= 1/4 and
 * h <= 0.005, so the scaled recurrence neither overflows nor amplifies its rounding relative
 * to P_1 (|c| <= ~h^2 + eps^2/24 ~ 1e-2).  q(z) comes without cancellation from the continued
 * fraction Rt(t) = 1/(t + 1/K), K = t + 2/(t + 3/(t + ...)), as q = 1/(1 + t K) (t >= 3; depth
 * 80/40/20 from t = 3/4/8 on: truncation below 2e-16, checked against mpmath), directly as
 * 1 - t Rt(t) below 3 (condition <= 6).  The whole answer is
 *     log(delta/mu) = log n(z) + eps/2 - h^2/2 + log q(z) + log1p(c). */
#define DPB_GDP_SMALL_MU 0.01
#define DPB_GDP_SMALL_EPS 0.5

/* q(t) = 1 - t Rt(t) and Rt(t) for -30 <= t <= 1e150 (t < 0: q = 1 + |t| Rt(t), no cancellation) */
static double upper_mills_q(double t, double *rt)
{
    double K;
    int k, depth;
    if (t < 3.0) {
        *rt = dpb_normal_mills(-t);
        return 1.0 - t * *rt;
    }
    depth = t >= 8.0 ? 20 : (t >= 4.0 ? 40 : 80);
    K = t;
    for (k = depth; k >= 2; k--) K = t + k / K;
    *rt = 1.0 / (t + 1.0 / K);
    return 1.0 / (1.0 + t * K);
}

/* log(delta/mu) for mu <= DPB_GDP_SMALL_MU, -min(1/2, 30 mu) <= eps <= DPB_GDP_SMALL_EPS, z = zh + zl = eps/mu
 * (zl: the rounding error of zh, or 0) <= 1e150; *dlog (if not NULL): d/dz log(delta/mu) =
 * -Rt(z + h)/(q (1 + c)), to first order in h (a Newton direction only). */
static double gdp_small_mu_log_ratio(double zh, double zl, double eps, double mu, double *dlog)
{
    double h = 0.5 * mu, rt, q = upper_mills_q(zh, &rt), c = 0.0, lp, sq, sql;
    /* c = O(h^2) for every z >= 0 (the O((z h)^2) parts of P_3/P_1 cancel): below h = 1e-9 it is
       under 1e-18 and the series is skipped -- there P_1 = -q h could underflow and c be 0/0
       (z ~ 1e119 at mu ~ 1e-120; tests/tradeoff/test_tradeoff_fuzz_regressions.py::test_gdp_log_delta_at_huge_eps_over_mu_is_finite) */
    if (h > 1e-9 && q > 0.0) {
        double zhh = zh * h, h2 = h * h, pm = rt, p = -q * h, p1 = p, fact = 1.0, pn;
        int n;
        for (n = 1; n < 15; n++) {              /* p = P_n, pm = P_{n-1} */
            pn = zhh * p + n * h2 * pm;
            pm = p;
            p = pn;
            fact *= (n + 1);
            if ((n + 1) % 2 == 1) {             /* P_{n+1} with n + 1 odd */
                double term = p / (fact * p1);
                c += term;
                if (fabs(term) <= 1e-18 * (1.0 + fabs(c))) break;
            }
        }
    }
    if (fabs(zh) < 1e-100) lp = -DPB_LOG_SQRT2PI;
    else {
        dpb_two_prod(zh, zh, &sq, &sql);
        lp = -0.5 * sq - (0.5 * sql + zh * zl + DPB_LOG_SQRT2PI);
    }
    if (dlog) *dlog = -(rt - h * q) / (q * (1.0 + c));
    return lp + 0.5 * eps - 0.5 * h * h + log(q) + log1p(c);
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
    /* eps down to -30 mu as well (z >= -30: Rt(z) <= ~1e196, no cancellation in q = 1 + |z| Rt),
       where the general form cancels to 0 at a tiny mu
       (tests/tradeoff/test_tradeoff_fuzz_regressions.py::test_gdp_delta_small_mu_negative_eps_vs_mpmath) */
    if (mu <= DPB_GDP_SMALL_MU && eps >= -DPB_GDP_SMALL_EPS && eps >= -30.0 * mu && eps <= DPB_GDP_SMALL_EPS
        && eps <= mu * 1e150) {
        double zh = eps / mu, zl = 0.0, ph, pl;
        if (mu >= 1e-290) {                     /* the remainder eps - zh mu, exactly (Dekker) */
            dpb_two_prod(zh, mu, &ph, &pl);
            zl = ((eps - ph) - pl) / mu;
        }
        return log(mu) + gdp_small_mu_log_ratio(zh, zl, eps, mu, NULL);
    }
    u = 0.5 * mu - eps / mu;
    v = u - mu;
    if (u > 1.0) {
        double lv = dpb_log_ndtr(v) + eps;
        double pu = dpb_ndtr(u), ev, d;
        if (lv < -745.0) return log(pu);
        ev = exp(lv);
        if (!(eps < 0.0 && ev > 0.5 * pu)) return log(pu - ev);
        /* eps < 0 with e^eps Phi(v) above Phi(u)/2: Phi(u) - e^eps Phi(v) cancels (both round to 1
           at eps = -2.2e-308, mu = 5e-324, where it gave log 0 and the divide-by-zero flag).  The
           same delta as two terms >= 0: -expm1(eps) Phi(v) + (Phi(-v) - Phi(-u)); the second is the
           conditioned difference of the general form (<= mu n(u): negligible for mu <= 0.01, where
           only z = eps/mu < -30 reaches this branch). */
        d = -expm1(eps) * dpb_ndtr(v) + (dpb_ndtr(-v) - dpb_ndtr(-u));
        return d > 0.0 ? log(d) : -DPB_INF;
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

/* F = log delta(eps) and its first two derivatives in eps (mu finite > 0). */
static double gdp_eval(double eps, double mu, double *d1, double *d2)
{
    double u = 0.5 * mu - eps / mu, v = u - mu, ru, rv, dr, p1, p2, g1, g2;
    if (u > 1.0) {
        double lv = dpb_log_ndtr(v) + eps;
        /* e^lv >= 1 >= Phi(u) (not formed: it may overflow), or d = 0 below: delta rounds to 0
           here (mu ~ 1e90: eps + log Phi(v) cancels to nothing), where log 0 and -ev/0 would raise
           the divide-by-zero flag; -inf with a zero slope sends the caller to bisection */
        double pu = dpb_ndtr(u), ev = lv >= 0.0 ? DPB_INF : (lv < -745.0 ? 0.0 : exp(lv));
        double d = pu - ev, f1;
        if (!(d > 0.0)) {
            *d1 = *d2 = 0.0;
            return -DPB_INF;
        }
        f1 = -ev / d;
        *d1 = f1;
        *d2 = (-ev + dpb_normal_pdf(u) / mu) / d - f1 * f1;
        return log(d);
    }
    ru = dpb_normal_mills(u);
    rv = dpb_normal_mills(v);
    dr = ru - rv;
    /* R' = 1 + x R, R'' = R + x R' (only the Newton/Halley direction depends on these) */
    p1 = (1.0 + u * ru) - (1.0 + v * rv);
    p2 = (ru + u * (1.0 + u * ru)) - (rv + v * (1.0 + v * rv));
    g1 = -u + p1 / dr;
    g2 = -1.0 + p2 / dr - (p1 / dr) * (p1 / dr);
    *d1 = -g1 / mu;
    *d2 = mu < 0x1p512 ? g2 / (mu * mu) : g2 / mu / mu;   /* mu^2 overflows from 2^512 = 1.3e154 on */
    return log_pdf(u) + log(dr);
}

/* The five-term asymptotic series of the lower-tail Mills ratio,
 * S(x) = (1/t)(1 - 1/t^2 + 3/t^4 - 15/t^6 + 105/t^8), t = -x, and its derivative S'(x),
 * for x <= -2.5 (start values of dpb_gdp_epsilon only). */
static void mills_ratio_series5(double x, double *S, double *dS)
{
    double it = -1.0 / x, y = it * it;
    *S = (1.0 - y * (1.0 - y * (3.0 - y * (15.0 - 105.0 * y)))) * it;
    *dS = y * (1.0 - y * (3.0 - y * (15.0 - y * (105.0 - 945.0 * y))));
}

/* a * b > 0 without forming a product that can overflow (both are ~eps, up to 1e308, when
 * mu ~ 1e154): the product itself where it cannot, so the decision is unchanged elsewhere */
static int gdp_same_sign(double a, double b)
{
    if (fabs(a) < 1e150 && fabs(b) < 1e150) return a * b > 0.0;
    return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0);
}

/* dpb_gdp_epsilon for mu <= DPB_GDP_SMALL_MU (then eps = z mu <= 0.39 for any delta >= 5e-324,
 * inside the small-mu form): safeguarded Newton in z on log(delta/mu), with bisection whenever a
 * step leaves the bracket.  log(delta(z)/mu) falls like -z^2/2, so z is well conditioned:
 * d log z / d log delta ~ -1/z^2. */
static double gdp_epsilon_small_mu(double delta, double mu)
{
    double r, target, lo = 0.0, hi, z, f, d, e;
    int it;
    if (delta >= mu) return 0.0;          /* delta(0) < mu/sqrt(2 pi); and delta/mu cannot overflow below */
    r = delta / mu;
    /* delta/mu itself where it is a normal double (one rounding instead of two logs of ~700) */
    target = r >= DBL_MIN ? log(r) : log(delta) - log(mu);
    if (gdp_small_mu_log_ratio(0.0, 0.0, 0.0, mu, NULL) <= target) return 0.0;   /* delta >= delta(0) */
    /* start: log(delta/mu) ~ -z^2/2 - log sqrt(2 pi) - 2 log z for large z; the value there is
       below the target (q < 1/z^2... up to the small corrections), else hi doubles */
    z = sqrt(fmax(2.0 * (-target - DPB_LOG_SQRT2PI), 1.0));
    for (it = 0; it < 2 && z > 1.0; it++) z = sqrt(fmax(2.0 * (-target - DPB_LOG_SQRT2PI - 2.0 * log(z)), 1.0));
    hi = 2.0 * z + 1.0;
    while (gdp_small_mu_log_ratio(hi, 0.0, hi * mu, mu, NULL) > target) hi *= 2.0;   /* bounded: ~-hi^2/2 */
    for (it = 0; it < 100; it++) {
        double zn;
        f = gdp_small_mu_log_ratio(z, 0.0, z * mu, mu, &d) - target;
        if (f == 0.0) break;
        if (f > 0.0) lo = z; else hi = z;
        zn = z - f / d;
        if (!(zn > lo && zn < hi)) zn = 0.5 * (lo + hi);
        if (fabs(zn - z) <= 2e-16 * z || hi - lo <= 2e-16 * hi) { z = zn; break; }
        z = zn;
    }
    e = z * mu;
    /* a subnormal eps carries the absolute spacing of the subnormals: rounded up, so that
       delta(eps) <= delta still holds where the spacing exceeds the error of z */
    return e < DBL_MIN ? nextafter(e, DPB_INF) : e;
}

double dpb_gdp_epsilon(double delta, double mu)
{
    double lo, hi, eps, ld, d0;
    int it;
    if (isnan(delta) || isnan(mu) || mu < 0.0 || delta < 0.0 || delta > 1.0) return DPB_NAN;
    if (mu == 0.0) return 0.0;
    if (delta == 0.0) return DPB_INF;
    if (isinf(mu)) return delta >= 1.0 ? 0.0 : DPB_INF;
    if (mu <= DPB_GDP_SMALL_MU) return gdp_epsilon_small_mu(delta, mu);
    d0 = erf(0.5 * mu * DPB_SQRT1_2);
    if (delta >= d0) return 0.0;
    /* delta <= Phi(u), u = mu/2 - eps/mu, so u >= Phi^{-1}(delta) > -inf and, for delta <= 1 - 2^-53,
       u < 8.3: eps > mu (mu/2 - 8.3), beyond the doubles from mu = 1.9e154 on.  +inf there, before
       the start value and the iteration overflow (the flags numpy reported). */
    if (mu > 1e154 && 0.5 * mu - 8.3 > DBL_MAX / mu) return DPB_INF;
    ld = log(delta);
    lo = 0.0;
    hi = DPB_INF;
    /* start: log delta = -u^2/2 - log sqrt(2pi) + log(R(u) - R(u - mu)); with the
     * asymptotic series R(x) ~ S(x) = (1/t)(1 - 1/t^2 + 3/t^4 - 15/t^6 + 105/t^8), t = -x,
     * one Newton step on G(u) = u^2/2 - L0 - log(S(u) - S(u - mu)) (logs and divisions
     * only) from the closed-form guess; the Halley iteration on the true F then needs
     * one or two evaluations. */
    {
        double L0 = -ld - DPB_LOG_SQRT2PI, u, q;
        int k;
        q = 2.0 * (L0 + log(mu));
        u = -sqrt(q > 1.0 ? q : 1.0);
        if (u < -2.5) {          /* R(u) - R(u - mu) ~ mu/(|u| (|u| + mu)) */
            double q2 = q - 2.0 * log(-u * (mu - u));
            if (q2 > 6.25) u = -sqrt(q2);
        }
        /* one Newton step on the series: further steps cost more than the exact
         * Halley iterations they save (measured: 185 vs 240 ns per point) */
        for (k = 0; k < 1 && u < -2.5; k++) {
            double su, sv, du, dv, r, G, Gp, un;
            mills_ratio_series5(u, &su, &du);
            mills_ratio_series5(u - mu, &sv, &dv);
            r = su - sv;
            if (!(r > 0.0)) break;
            G = 0.5 * u * u - L0 - log(r);
            Gp = u - (du - dv) / r;
            if (!(Gp < 0.0)) break;
            un = u - G / Gp;
            if (!(un < -2.5)) break;
            if (fabs(un - u) <= 1e-9 * fabs(u)) { u = un; break; }
            u = un;
        }
        eps = mu * (0.5 * mu - u);
    }
    for (it = 0; it < 100; it++) {
        double f1, f2, h = gdp_eval(eps, mu, &f1, &f2) - ld, en, step, den, newton;
        if (h == 0.0) return eps;
        if (h > 0.0) lo = eps; else hi = eps;
        if (!(f1 != 0.0)) {
            /* the derivative underflowed (mu ~ 1e43 and up: -R(v)/(mu (R(u) - R(v)))): bisection,
               not h/0 (tests/contract/test_fp_flags.py::test_gdp_epsilon_at_huge_mu_vs_mpmath) */
            en = isinf(hi) ? 2.0 * eps + 1.0 : 0.5 * (lo + hi);
            if (isfinite(hi) && hi - lo <= 4e-16 * hi) return en;
            eps = en;
            continue;
        }
        newton = h / f1;
        den = 2.0 * f1 * f1 - h * f2;
        step = 2.0 * h * f1 / den;                       /* Halley */
        if (!(den > 0.0) || !gdp_same_sign(step, newton) || !(fabs(step) <= 2.0 * fabs(newton)))
            step = newton;                               /* far from the root: Newton */
        en = eps - step;
        /* within 3e-5: Halley converges cubically, so after this step the error is
         * ~C (3e-5)^3 ~ 1e-14 relative at most (tests/tradeoff/test_tradeoff.py checks 1e-13) */
        if (fabs(newton) <= 3e-5 * eps)
            return (en > lo && en < hi) ? en : eps;   /* (a step below 1/2 ulp leaves eps) */
        if (!(en > lo && en < hi))
            en = isinf(hi) ? 2.0 * eps + 1.0 : 0.5 * (lo + hi);
        if (isfinite(hi) && hi - lo <= 4e-16 * hi) return en;
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
    /* E (w - 1) overflows for huge E although mu may not */
    if (e > 1.0 && epochs > DBL_MAX / e) return sqrt(epochs / (rounds - 1.0)) * sqrt(e);
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
    /* T (w - 1) overflows for huge T although mu does not */
    if (e > 1.0 && steps > DBL_MAX / e) return sample_rate * (sqrt(steps) * sqrt(e));
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
    /* 2 T br overflows for T near DBL_MAX although mu does not
       (tests/contract/test_fp_flags.py::test_gdp_mu_at_huge_counts_is_finite) */
    if (steps > 0.5 * DBL_MAX || (br > 1.0 && 2.0 * steps > DBL_MAX / br))
        return sample_rate * (sqrt(2.0 * br) * sqrt(steps));
    return sample_rate * sqrt(2.0 * steps * br);
}
