/* dpb_rdp_outward.c -- see dpb_rdp_outward.h. */
#include <math.h>
#include "dpb_config.h"
#include "dpb_rdp_convert.h"
#include "dpb_rdp_outward.h"

/* The error-free transformations below are exact only if each operation is rounded once, to
   binary64: no fused multiply-add may merge two of them, no extended precision may hold them. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(_MSC_VER)
#pragma fp_contract(off)
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD > 0
#error "dpb_rdp_outward.c needs binary64 evaluation (FLT_EVAL_METHOD 0): SSE2 on x86"
#endif

/* unit roundoff of binary64 */
#define OUT_U 0x1p-53
/* relative error bound assumed of the C library's log, log1p, expm1 and exp: 2 ulp (an ulp is
   at most 2u relative); glibc documents <= 1 ulp, tests/rdp/test_rdp_outward.py measures it */
#define OUT_F (4.0 * OUT_U)
/* absolute slack for the subnormal range, where relative bounds fail (a few subnormal ulps) */
#define OUT_TINY 0x1p-1071
/* widening of first-order error bounds: the neglected second-order terms are O(u^2) relative */
#define OUT_WIDEN 1.01
/* the answer for a log delta below -DBL_MAX (a product beyond the doubles): the exact value is
   then below -DBL_MAX (1 - 4u) < -2^1023, and exp of it rounds up to the smallest subnormal */
#define OUT_LOG_BEYOND (-0x1p1023)
/* the largest x with exp(x) <= DBL_MAX (the double just below log(DBL_MAX)) */
#define OUT_LOG_DBL_MAX 0x1.62e42fefa39efp+9

/* numpy's maximum / minimum (the second argument where equal, a NaN first argument kept) */
DPB_INLINE double out_max(double x, double y) { return (x > y || x != x) ? x : y; }
DPB_INLINE double out_min(double x, double y) { return (x < y || x != x) ? x : y; }

/* s = fl(a + b) and the exact error e: a + b = s + e (Knuth's TwoSum; finite a, b, no overflow) */
DPB_INLINE void two_sum(double a, double b, double *s, double *e)
{
    double ss = a + b, bb = ss - a;
    *e = (a - (ss - bb)) + (b - bb);
    *s = ss;
}

/* the double above s (s finite); inf quietly above DBL_MAX */
DPB_INLINE double step_up(double s)
{
    return s == DBL_MAX ? DPB_INF : nextafter(s, DPB_INF);
}

/* The smallest double >= v + b for finite v and b >= 0 (exact: TwoSum, then one step); inf,
   quietly, where v + b is beyond DBL_MAX. */
static double raise_up(double v, double b)
{
    double s, e;
    if (v < 0x1p1022 && b < 0x1p1022) {          /* v + b < 2^1023: no overflow anywhere */
        two_sum(v, b, &s, &e);
        return e > 0.0 ? step_up(s) : s;
    }
    /* one operand is >= 2^1022: an operand below 2^-1000 is far below half its ulp (2^969),
       so the sum rounds to the other with the small one as its exact error */
    if (fabs(v) < 0x1p-1000) return v > 0.0 ? step_up(b) : b;
    if (b < 0x1p-1000) return b > 0.0 ? step_up(v) : v;
    /* halves of normal numbers >= 2^-1000 are exact, their sum (<= DBL_MAX) cannot overflow,
       and doubling the result is exact unless it is beyond DBL_MAX */
    two_sum(0.5 * v, 0.5 * b, &s, &e);
    if (e > 0.0) s = step_up(s);
    return s > 0.5 * DBL_MAX ? DPB_INF : 2.0 * s;
}

/* log(1 - 1/a) = -log1p(1/(a - 1)) and its error bound (no cancellation near a = 1, where
   log1p(-1/a) amplifies the rounding of 1/a by a/(a - 1)): y = 1/(a-1) carries relative error
   <= 2u (a - 1 is exact below 2^53, the division rounds once), and
   log1p(y(1 + t)) - log1p(y) <= |t| y/(1 + y). */
DPB_INLINE double log_1m_inv(double am1, double *err)
{
    double y = 1.0 / am1, v = -log1p(y);
    *err = OUT_F * fabs(v) + 2.0 * OUT_U * (y / (1.0 + y));
    return v;
}

double dpb_rdp_eps_up(double a, double r, double d, int conv)
{
    double out;
    if (a != a || r != r || d != d) return DPB_NAN;
    if (!(a >= 1.0) || !(r >= 0.0) || !(d > 0.0 && d < 1.0)) return DPB_NAN;
    if (conv != DPB_CONV_CLASSIC && conv != DPB_CONV_IMPROVED) return DPB_NAN;
    if (a > 1.0 && a != DPB_INF && r != DPB_INF) {
        /* |c| <= 745 / 2^-52 < 2^62: r + c and its TwoSum cannot overflow */
        double am1 = a - 1.0, ld = log(d), c, ec, s, e, g;
        if (conv == DPB_CONV_CLASSIC) {
            c = -ld / am1;
            /* log: F; a - 1: u (exact below 2^53); the division: u */
            ec = fabs(c) * (OUT_F + 2.0 * OUT_U);
        } else {
            double el1, l1 = log_1m_inv(am1, &el1);
            double la = log(a), dd = ld + la;
            double edd = OUT_F * (fabs(ld) + fabs(la)) + OUT_U * fabs(dd);
            double q = dd / am1;
            double eq = edd / am1 + 2.0 * OUT_U * fabs(q);
            c = l1 - q;
            ec = el1 + eq + OUT_U * fabs(c);
        }
        ec = OUT_WIDEN * ec + OUT_TINY;
        two_sum(r, c, &s, &e);
        /* the exact value lies within s + e +- ec; fl(e + ec) is widened by 4u to cover its own rounding */
        g = (e + ec) * (1.0 + 4.0 * OUT_U);
        out = g > 0.0 ? raise_up(s, g) : s;
        if (conv == DPB_CONV_IMPROVED) out = out_max(out, 0.0);
    } else {
        out = (a == DPB_INF) ? r : DPB_INF;
    }
    if (conv == DPB_CONV_IMPROVED && r != DPB_INF) {
        /* total-variation shortcut (delta >= TV): only where delta^2 >= 1 - e^{-rdp} is certain */
        double lhs = d * d * (1.0 - 2.0 * OUT_U) - OUT_TINY;
        double rhs = -expm1(-r) * (1.0 + 2.0 * OUT_F) + OUT_TINY;
        if (lhs >= rhs) out = 0.0;
    }
    return out;
}

/* sqrt(1 - e^{-rdp}), the total-variation bound, rounded up (rdp >= 0, inf allowed).  Computed
   in the linear domain: through its logarithm the rounding of log(y) (a few ulp of |log y|, up
   to 700) would cost up to 1e-13 relative. */
static double tv_up(double r)
{
    double y, y_up, root;
    if (r == 0.0) return 0.0;                   /* rdp = 0: TV = 0 exactly */
    y = -expm1(-r);
    /* >= the exact 1 - e^{-rdp} (expm1: F; the product: u); 1 - e^{-rdp} <= rdp keeps tiny
       (subnormal) RDP values exact */
    y_up = out_min(out_min(y * (1.0 + 2.0 * OUT_F) + OUT_TINY, r), 1.0);
    root = sqrt(y_up);                          /* correctly rounded: one step up covers it */
    return root == 0.0 ? 0.0 : out_min(nextafter(root, DPB_INF), 1.0);
}

/* an upper bound of 0.5 log(1 - e^{-rdp}), the log of the total-variation bound sqrt(1 - e^{-KL}) */
static double log_tv_up(double r)
{
    double tv = tv_up(r), lg;
    if (tv == 0.0) return -DPB_INF;             /* exact (rdp = 0) */
    lg = log(tv);
    return raise_up(lg, OUT_WIDEN * OUT_F * fabs(lg));
}

/* (a - 1) t for a - 1 > 0: the rounded product, or *beyond = +-1 where it is beyond the doubles
   (decided exactly as the rounding to inf would be, without raising the overflow flag) */
DPB_INLINE double times_am1(double am1, double t, int *beyond)
{
    int ea, et, k;
    double m;
    *beyond = 0;
    if (!(am1 > 1.0 && fabs(t) > 1.0)) return am1 * t;     /* |product| <= max(am1, |t|) */
    /* am1 |t| = m 2^k with m = fl(ma mt) in [1/4, 1): rounding commutes with the scaling by 2^k */
    m = frexp(am1, &ea) * frexp(fabs(t), &et);
    k = ea + et;
    if (k < 1024) return am1 * t;                             /* below 2^1023 */
    if (k > 1025 || (k == 1025 && m >= 0.5) || m >= 1.0) {    /* m 2^k >= 2^1024 */
        *beyond = t > 0.0 ? 1 : -1;
        return 0.0;
    }
    return t > 0.0 ? ldexp(m, k) : -ldexp(m, k);
}

/* The conversion's log delta at one order without the total-variation bound, rounded up; the
   arguments are in the domain (a >= 1, r >= 0, eps >= 0, none NaN). */
static double logdelta_conversion(double a, double r, double ep, int conv)
{
    double edge;
    if (a > 1.0 && a != DPB_INF && r != DPB_INF && ep != DPB_INF) {
        double am1 = a - 1.0, t, et, p, el, lv;
        int beyond;
        two_sum(r, -ep, &t, &et);               /* |r - eps| <= max(r, eps): no overflow */
        if (conv == DPB_CONV_CLASSIC) {
            p = times_am1(am1, t, &beyond);
            if (beyond) return beyond > 0 ? 0.0 : OUT_LOG_BEYOND;
            /* (a-1)(t + et) - fl((a-1)' t): the lost et, a - 1 (u above 2^53) and the product (u) */
            el = am1 * fabs(et) * (1.0 + 2.0 * OUT_U) + 2.0 * OUT_U * fabs(p);
            lv = p;
        } else {
            double el1, l1 = log_1m_inv(am1, &el1), t2, et2, ep_, la;
            two_sum(t, l1, &t2, &et2);          /* |l1| <= 37 */
            p = times_am1(am1, t2, &beyond);
            if (beyond) return beyond > 0 ? 0.0 : OUT_LOG_BEYOND;
            ep_ = am1 * (fabs(et + et2) + el1) * (1.0 + 2.0 * OUT_U) + 2.0 * OUT_U * fabs(p);
            la = log(a);
            lv = p - la;
            el = ep_ + OUT_F * fabs(la) + OUT_U * fabs(lv);
        }
        lv = out_max(raise_up(lv, OUT_WIDEN * el + OUT_TINY), -DBL_MAX);
        return out_min(lv, 0.0);
    }
    /* edges, as the raw kernel: order inf gives +-inf, rdp inf gives 0, order 1 (KL) gives +inf,
       eps inf gives -inf (all exact) */
    if (a == DPB_INF) edge = r > ep ? DPB_INF : -DPB_INF;
    else if (r == DPB_INF) edge = 0.0;
    else if (a == 1.0) edge = DPB_INF;
    else edge = -DPB_INF;
    return out_min(edge, 0.0);
}

DPB_INLINE int logdelta_args_ok(double a, double r, double ep, int conv)
{
    return a >= 1.0 && r >= 0.0 && ep >= 0.0 && (conv == DPB_CONV_CLASSIC || conv == DPB_CONV_IMPROVED);
}

double dpb_rdp_logdelta_up(double a, double r, double ep, int conv)
{
    double out;
    if (a != a || r != r || ep != ep || !logdelta_args_ok(a, r, ep, conv)) return DPB_NAN;
    out = logdelta_conversion(a, r, ep, conv);
    if (conv == DPB_CONV_IMPROVED) out = out_min(out, log_tv_up(r));
    return out;
}

double dpb_rdp_exp_up(double x)
{
    double y, out;
    if (x != x) return DPB_NAN;
    if (x == -DPB_INF) return 0.0;
    if (x > OUT_LOG_DBL_MAX) return DPB_INF;     /* beyond DBL_MAX, quietly */
    y = exp(x);
    /* exp: F relative before the rounding to a subnormal, which adds half a subnormal ulp;
       an exact value below the smallest subnormal answers that subnormal */
    out = raise_up(y, OUT_WIDEN * OUT_F * y + 0x1p-1074);
    return x <= 0.0 ? out_min(out, 1.0) : out;
}

double dpb_rdp_delta_up(double a, double r, double ep, int conv)
{
    double out;
    if (a != a || r != r || ep != ep || !logdelta_args_ok(a, r, ep, conv)) return DPB_NAN;
    out = dpb_rdp_exp_up(logdelta_conversion(a, r, ep, conv));
    if (conv == DPB_CONV_IMPROVED) out = out_min(out, tv_up(r));
    return out;
}
