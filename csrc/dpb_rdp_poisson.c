/* dpb_rdp_poisson.c -- see dpb_rdp_poisson.h. */
#include <math.h>
#include "dpb_config.h"
#include "dpb_normal.h"
#include "dpb_rdp_common.h"
#include "dpb_rdp_base.h"
#include "dpb_rdp_poisson.h"

/* integer a >= 2: log(A_a - 1) */
static double log_am1_int(long a, double q, double r)
{
    double lq = log(q), l1q = log1p(-q);
    long j;
    dpb_lse acc;
    dpb_lse_init(&acc);
    for (j = 2; j <= a; j++) {
        double x = (double)j * (double)(j - 1) * r;
        dpb_lse_add(&acc, dpb_lbinom_int(a, j, NULL) + (double)(a - j) * l1q + (double)j * lq
                          + dpb_logexpm1(x));
    }
    return dpb_lse_value(&acc);
}

/* log a and the constant log(a) + log(a - 1) - log 2 of log_f's series, computed once per order
 * (hoisted out of the node loop: the same doubles as at every node) */
typedef struct { double la, c0; } log_f_consts;

static void log_f_prepare(double a, log_f_consts *k)
{
    k->la = log(a);
    k->c0 = a > 1.0 ? k->la + log(a - 1.0) - DPB_LN2 : DPB_NAN;   /* unused at a = 1 */
}

/* log f(x) with f = (1+x)^a - 1 - a x (a > 1) or (1+x) log1p(x) - x (a == 1),
 * given lx = log|x| and the sign of x; x > -1.  -inf when f underflows to 0. */
static double log_f(double a, const log_f_consts *kc, double lx, int neg)
{
    double x, ax;
    if (lx == -DPB_INF) return -DPB_INF;
    if (lx < -2.0 - kc->la) {                 /* |a x| < 0.135: power series, no cancellation */
        double s = 1.0, c = 1.0, xv = neg ? -exp(lx) : exp(lx);
        int k;
        if (a == 1.0) {
            /* f = sum_{k>=2} (-1)^k x^k/(k(k-1)) = x^2/2 (1 + sum_{k>=3} 2(-x)^{k-2}/(k(k-1))) */
            double p = 1.0;
            for (k = 3; k < 80; k++) {
                double t;
                p *= -xv;
                t = 2.0 * p / ((double)k * (double)(k - 1));
                s += t;
                if (fabs(t) < 1e-18) break;
            }
            return 2.0 * lx - DPB_LN2 + log(s);
        }
        for (k = 2; k < 200; k++) {           /* c_{k+1}/c_2 */
            c *= (a - (double)k) * xv / ((double)k + 1.0);
            s += c;
            if (fabs(c) < 1e-18 * fabs(s)) break;
        }
        return kc->c0 + 2.0 * lx + log(s);
    }
    if (neg) {
        x = -exp(lx);
        ax = a * x;
        /* x = -1 (q = 1 where the likelihood ratio underflows): f = (1+x)^a - 1 - a x = a - 1, and
           (1+x) log(1+x) - x = 1 at a = 1 -- the forms below would take log1p(-1), a division by
           zero (tests/rdp/test_rdp_fuzz_regressions.py::test_rdp_poisson_quad_log_at_q_one_is_the_gaussian) */
        if (1.0 + x == 0.0) return a == 1.0 ? 0.0 : log(a - 1.0);
        if (a == 1.0) {
            double f = (1.0 + x) * log1p(x) - x;
            return f > 0.0 ? log(f) : -DPB_INF;
        } else {
            /* (1+x)^a - 1 - a x = (1+x) expm1((a-1) log1p(x)) - (a-1) x: no O(1) cancellation as a -> 1 */
            double f = (1.0 + x) * expm1((a - 1.0) * log1p(x)) - (a - 1.0) * x;
            (void)ax;
            return f > 0.0 ? log(f) : -DPB_INF;
        }
    }
    /* x > 0 */
    {
        double l1x = (lx > 0.0) ? lx + dpb_log1pexp(-lx) : log1p(exp(lx));   /* log(1+x) */
        if (a == 1.0) {
            /* (1+x) log(1+x) - x */
            if (lx > 30.0) return l1x + log(l1x - exp(lx - l1x));
            x = exp(lx);
            {
                double f = (1.0 + x) * l1x - x;
                return f > 0.0 ? log(f) : -DPB_INF;
            }
        } else {
            double y = a * l1x;
            if (y > 700.0) {
                /* f = e^y (1 - (1 + a x) e^{-y}); (1+ax) e^{-y} = exp(log(1+ax) - y) */
                double lax = kc->la + lx;
                double l1ax = (lax > 0.0) ? lax + dpb_log1pexp(-lax) : log1p(exp(lax));
                return y + dpb_log1mexp(l1ax - y);
            }
            x = exp(lx);
            {
                double f = (1.0 + x) * expm1((a - 1.0) * l1x) - (a - 1.0) * x;
                return f > 0.0 ? log(f) : -DPB_INF;
            }
        }
    }
}

/* Where the right tail of the quadrature may stop early without changing the result.
 *
 * With u(z) = z/sigma - 1/(2 sigma^2) > 0, x = q (e^u - 1) > 0 and the log-integrand
 * T(z) = log f(x(z)) - z^2/2:  dT/dz = E(x) x'/x - z, where x'/x = 1/(sigma (1 - e^{-u})) and the
 * elasticity E = x f'(x)/f(x) <= c = max(a, 2) for x > 0.  (a >= 2: a f - x f' is 0 at x = 0 with
 * derivative a(a-1)((1+x)^{a-2} - 1) >= 0.  1 <= a < 2: 2 f - x f' is 0 at 0 with derivative
 * a((1+x)^{a-2}(1 + (2-a)x) - 1) >= 0 by Bernoulli's (1+x)^{2-a} <= 1 + (2-a)x, and at a = 1
 * derivative log(1+x) - x/(1+x) >= 0.)  As u grows with z, 1/(1 - e^{-u}) shrinks, so from any Z
 * with Z >= c/(sigma (1 - e^{-u(Z)})) on, T is non-increasing: every later term is at most the
 * current one.  Returns such a Z (with a 1e-9 margin for its own rounding). */
static double quad_z_monotone(double a, double sigma, double inv2s2)
{
    double c = a > 2.0 ? a : 2.0, z = (c + 0.5) / sigma, need;
    int it;
    for (it = 0; it < 4; it++) {               /* need(z) decreases with z: one correction suffices */
        need = c / (sigma * -expm1(-(z / sigma - inv2s2))) * (1.0 + 1e-9);
        if (z >= need) return z;
        z = need;
    }
    return DPB_INF;
}

double dpb_rdp_poisson_quad_log(double a, double sigma, double q)
{
    double d, h, zlo, zhi, lq, inv2s2, z, zmon, slack;
    long n, k;
    log_f_consts kf;
    dpb_lse acc;
    if (a != a || sigma != sigma || q != q) return DPB_NAN;
    if (!(a >= 1.0) || !(sigma > 0.0) || sigma > 1e100 || !(q > 0.0 && q <= 1.0)) return DPB_NAN;
    /* Over the cost cap below for certain, decided before a/sigma and the node count overflow
       (tiny sigma, huge a), which raised the flag numpy reports: h <= 0.23 sigma and h <= 0.2 give
       more than (a/sigma)/h >= 1/(0.23 sigma^2) > 4e6 nodes for sigma < 1e-3, and more than
       5 a/sigma > 5e6 for a > 1e6 sigma. */
    if (sigma < 1e-3 || a > 1e6 * sigma) return DPB_NAN;
    d = 0.9 * DPB_PI * sigma;
    if (d > 5.0) d = 5.0;
    h = DPB_2PI * d / (80.0 + 0.5 * d * d);
    if (h > 0.2) h = 0.2;
    zlo = -40.0;
    zhi = (a / sigma > 0.0 ? a / sigma : 0.0) + 40.0;
    /* the cost cap: NaN at once rather than hours of work (the count grows like a / sigma^2) */
    if (!(ceil((zhi - zlo) / h) <= DPB_RDP_QUAD_MAX_NODES)) return DPB_NAN;
    n = (long)ceil((zhi - zlo) / h);
    lq = log(q);
    inv2s2 = 0.5 / sigma / sigma;
    log_f_prepare(a, &kf);
    zmon = quad_z_monotone(a, sigma, inv2s2);
    /* the computed terms are within this of the exact T (a few hundred ulps of the largest
       magnitude, |T| + z^2 <= |T| + zhi^2, plus 2): the stop below allows twice it */
    slack = 2.0 + 1e-12 * zhi * zhi;
    dpb_lse_init(&acc);
    for (k = 0; k <= n; k++) {
        double u, lx, lf, t;
        int neg;
        z = zlo + (double)k * h;
        u = z / sigma - inv2s2;                 /* log-likelihood ratio of N(1,s^2) vs N(0,s^2) at sigma*z */
        if (u == 0.0) continue;
        if (u > 0.0) { lx = lq + dpb_logexpm1(u); neg = 0; }
        else { lx = lq + log(-expm1(u)); neg = 1; }
        lf = log_f(a, &kf, lx, neg);
        if (lf == -DPB_INF) continue;
        t = lf - 0.5 * z * z;
        /* past zmon every later term is <= this one's exact value (quad_z_monotone): once this one
           is e^38 below the largest with room for the rounding of both, none of them can change
           the sum (dpb_lse_add would skip each), so stopping gives the same double */
        if (z >= zmon && t < acc.m + (DPB_LSE_NEGLIGIBLE - 2.0 * (slack + 1e-12 * fabs(acc.m)))) break;
        dpb_lse_add(&acc, t);
    }
    return dpb_lse_value(&acc) + log(h) - DPB_LOG_SQRT2PI;
}

/* log |C(a, i)| for real non-integer a > 0 and integer i > a, by the reflection
 * |C(a,i)| = Gamma(i-a) / (|Gamma(-a)| i!): every lgamma argument stays away from the poles
 * even when a is within an ulp of an integer (where a - i + 1 would round onto one). */
static double log_abs_binom(double a, long i)
{
    return lgamma((double)i - a) - lgamma((double)i + 1.0) - lgamma(-a);
}

/* log of the MTZ series term of index x (real x > a):  log f(x),  f = |C(a,x)| g(x)  with
 * g(x) = s0(x) + s1(x) the two Gaussian-tail factors (the loop's t, at a real index). */
static double negseries_term_log(double a, double x, double sigma, double s2, double z0,
                                 double lq, double l1q)
{
    double j = a - x, lc = lgamma(x - a) - lgamma(x + 1.0) - lgamma(-a);
    double t0 = lc + x * lq + j * l1q + (x * x - x) / (2.0 * s2) + dpb_log_ndtr((z0 - x) / sigma);
    double t1 = lc + j * lq + x * l1q + (j * j - j) / (2.0 * s2) + dpb_log_ndtr((j - z0) / sigma);
    return dpb_logaddexp(t0, t1);
}

/* Terms summed one by one before the certified tail below takes over (~2 ms of the loop):
 * every input whose loop ended within this many terms gives the same double as before. */
#define NEGSERIES_LOOP_TERMS 16384
/* relative length of the tail's blocks (the trapezoid's relative excess is ~ (this)^2 a^2/12) */
#define NEGSERIES_BLOCK_REL 1e-3

/* An UPPER bound on  sum_{k = e+1, e+3, e+5, ...} f(k)  (log), for an integer e >= floor(a) + 3.
 *
 * Why it is an upper bound.  With r(z) = q/(1-q) exp((2z-1)/(2 sigma^2)) the likelihood ratio
 * and mu0 = N(0, sigma^2), the two Gaussian-tail factors are the integrals
 *   s0(x) = (1-q)^a E_mu0[r^x 1{r<1}],   s1(x) = q^a E_mu0[(mu1/mu0)^a r^-x 1{r>1}],
 * Laplace transforms of positive measures (log r < 0, resp. -log r < 0 on their ranges), so
 * g = s0 + s1 is completely monotone in real x.  So is |C(a,x)| = Gamma(x-a)/(Gamma(x+1)
 * |Gamma(-a)|) for x > a, being B(x-a, a+1)/(Gamma(a+1) |Gamma(-a)|) = c int_0^1 t^(x-1) t^-a
 * (1-t)^a dt.  A product of completely monotone functions is completely monotone, so f is
 * convex and decreasing on [e, inf).  Then, for blocks k = n, n+2, ..., m-2 with edges
 * n-1 < m-1:
 *   (i)  2 f(k) <= int_{k-1}^{k+1} f        (midpoint rule, f convex), so the block's sum is
 *        <= 1/2 int_{n-1}^{m-1} f;
 *   (ii) int_{n-1}^{m-1} f <= (m-n)/2 (f(n-1) + f(m-1))   (trapezoid rule, f convex).
 * The last edge E leaves  sum_{k = E+1, E+3, ...} f(k) <= g(E) sum_{k = E+1, E+3, ...}|C(a,k)|
 *   <= g(E) 1/2 sum_{j >= E} |C(a,j)|   (|C(a,k)| <= (|C(a,k-1)| + |C(a,k)|)/2, |C| decreasing)
 *   =  g(E) |C(a,E)| E / (2a) = f(E) E / (2a),
 * by  sum_{j >= E} |C(a,j)| = |C(a-1,E-1)| = |C(a,E)| E/a  (for E > a: the tail of
 * sum_j (-1)^j C(a,j) = (1-1)^a = 0, whose terms beyond a alternate in sign like (-1)^j).
 * Every step over-estimates; the blocks grow geometrically (relative length
 * NEGSERIES_BLOCK_REL), so (ii)'s excess is ~1e-7 of the tail and (i)'s ~ a^2/(6 e^2) of it.
 * The remainder is taken once it is below e^-45 of `tot` (or the edge reaches 2^50, where the
 * index stops being exactly representable with room to spare; still a bound, only looser).
 * The computed f has a relative rounding error far below 1e-9 where it matters; the result is
 * raised by 1e-6 (relative) to cover it. */
static double negseries_tail_upper_log(double a, double e, double tot, double sigma, double s2,
                                       double z0, double lq, double l1q)
{
    double fe = negseries_term_log(a, e, sigma, s2, z0, lq, l1q), rem;
    long nb;
    dpb_lse tail;
    dpb_lse_init(&tail);
    for (nb = 0; nb < 200000; nb++) {
        double half = floor(0.5 * NEGSERIES_BLOCK_REL * e), e2, fe2;
        rem = fe + log(e / (2.0 * a));
        if (rem < tot - 45.0 || e >= 0x1p50) break;
        if (half < 1.0) half = 1.0;
        e2 = e + 2.0 * half;
        fe2 = negseries_term_log(a, e2, sigma, s2, z0, lq, l1q);
        /* 1/2 (m-n)/2 (f(n-1) + f(m-1)) with m - n = 2 half */
        dpb_lse_add(&tail, log(0.5 * half) + dpb_logaddexp(fe, fe2));
        e = e2;
        fe = fe2;
    }
    dpb_lse_add(&tail, fe + log(e / (2.0 * a)));
    return dpb_lse_value(&tail) + 1e-6;
}

double dpb_rdp_poisson_negseries_log(double a, double sigma, double q)
{
    double fa = floor(a), z0, lq, l1q, s2, prev = DPB_INF;
    long i, i0, it = 0;
    dpb_lse acc;
    if (a != a || sigma != sigma || q != q) return DPB_NAN;
    if (!(a >= 1.0) || !(sigma > 0.0) || sigma > 1e100 || !(q > 0.0 && q < 1.0)) return DPB_NAN;
    dpb_lse_init(&acc);
    if (a == fa) return -DPB_INF;
    /* Every term is -1/(8 sigma^2) + O(log(i/sigma)) (the Gaussian exponents cancel to first
       order), so below sigma = 1e-152 the sum is -0.125/sigma^2 to within an ulp; the loop would
       divide by sigma^2 = 0 below 1.5e-162 and lose it to subnormal rounding before that
       (tests/contract/test_fp_flags.py::test_negseries_log_tiny_sigma_limit).  -inf where it exceeds the doubles: below
       0x1.6a09e667f3bcdp-514 (2.6e-155, the smallest sigma with a finite quotient, by bisection). */
    if (sigma < 1e-152) return sigma < 0x1.6a09e667f3bcdp-514 ? -DPB_INF : -(0.125 / sigma) / sigma;
    lq = log(q); l1q = log1p(-q);
    s2 = sigma * sigma;
    z0 = s2 * (l1q - lq) + 0.5;
    i0 = (long)fa + 2;                               /* first negative coefficient */
    for (i = i0; ; i += 2, it++) {
        if (it == NEGSERIES_LOOP_TERMS) {
            /* still slowly decaying (q near 1/2 with a large sigma: terms ~ i^-(a+1) up to
               i ~ sigma, which once ran 4e6 terms and then stopped short of the tail): add a
               certified upper bound on the rest, from the last summed index i - 2 on */
            dpb_lse_add(&acc, negseries_tail_upper_log(a, (double)(i - 2) + 1.0, dpb_lse_value(&acc),
                                                       sigma, s2, z0, lq, l1q));
            break;
        }
        double j = a - (double)i, lc = log_abs_binom(a, i);
        double di = (double)i;
        double t0 = lc + di * lq + j * l1q + (di * di - di) / (2.0 * s2) + dpb_log_ndtr((z0 - di) / sigma);
        double t1 = lc + j * lq + di * l1q + (j * j - j) / (2.0 * s2) + dpb_log_ndtr((j - z0) / sigma);
        double t = dpb_logaddexp(t0, t1);
        dpb_lse_add(&acc, t);
        if (t < prev) {
            double tot = dpb_lse_value(&acc);
            /* rapid decay: the remaining terms are negligible */
            if (t + log(di) < tot - 40.0) break;
            /* asymptotic regime i >> z0 + sigma: t_i ~ K i^{-p} (p -> a + 2, Mills ratio); sum the
             * tail over i, i+2, ... by the integral  t_i i / (2 (p - 1)) + t_i / 2  once it is below
             * 1e-8 of the total (so its own O(1/i) error is below 1e-12 relative) */
            if (di > z0 + 10.0 * sigma && it > 8) {
                double pexp = (prev - t) / log(di / (di - 2.0));
                if (pexp > 1.5) {
                    double ltail = t + log(di / (2.0 * (pexp - 1.0)) + 0.5);
                    if (ltail < tot - 18.42) {          /* e^-18.42 = 1e-8 */
                        dpb_lse_add(&acc, ltail);
                        break;
                    }
                }
            }
        }
        prev = t;
    }
    return dpb_lse_value(&acc);
}

double dpb_rdp_poisson_gaussian(double alpha, double sigma, double q, int mode)
{
    double la;
    if (alpha != alpha || sigma != sigma || q != q) return DPB_NAN;
    if (!(alpha >= 1.0) || !(sigma > 0.0) || sigma == DPB_INF || !(q >= 0.0 && q <= 1.0))
        return DPB_NAN;
    if (mode != DPB_POISSON_EXACT && mode != DPB_POISSON_COMPAT) return DPB_NAN;
    if (q == 0.0) return 0.0;
    if (q == 1.0) return dpb_rdp_gaussian(alpha, sigma);
    if (alpha == DPB_INF) return DPB_INF;
    if (alpha > DPB_RDP_ALPHA_MAX) return DPB_NAN;
    if (sigma > 1e100)            /* eps = alpha q^2/(2 sigma^2) (1 + O(1/sigma^2)): below 1e-200 */
        return alpha * q * q * (0.5 / sigma / sigma);
    if (alpha == floor(alpha) && alpha >= 2.0) {
        /* 1/(2 sigma^2) beyond the doubles (sigma < ~5e-155): the RDP, ~ alpha/(2 sigma^2) + (alpha/(alpha-1)) log q
           with log q >= -745, is too; inf here, before the series forms inf - inf
           (tests/contract/test_fp_flags.py::test_no_flag_with_two_extreme_arguments: alpha = 40, sigma = 1e-160) */
        if (sigma < 1e-150 && -DPB_LN2 - 2.0 * log(sigma) > DPB_LOG_DBL_MAX) return DPB_INF;
        la = log_am1_int((long)alpha, q, 0.5 / sigma / sigma);
        return dpb_log1pexp(la) / (alpha - 1.0);
    }
    la = dpb_rdp_poisson_quad_log(alpha, sigma, q);
    if (la != la) return DPB_NAN;     /* over the cost cap: quietly (no invalid flag from a comparison) */
    if (alpha == 1.0) return exp(la);
    if (mode == DPB_POISSON_COMPAT) {
        double ln = dpb_rdp_poisson_negseries_log(alpha, sigma, q);
        la = dpb_logaddexp(la, DPB_LN2 + ln);
    }
    return dpb_log1pexp(la) / (alpha - 1.0);
}
