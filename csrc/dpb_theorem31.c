/* dpb_theorem31.c -- see dpb_theorem31.h. */
#include "dpb_config.h"
#include "dpb_vecmath.h"
#include "dpb_lognormal.h"
#include "dpb_theorem31.h"

#define T3_A  0.09973557010035816948  /* 1/(4 sqrt(2 pi)) */
#define T3_B  0.12098536225957167490  /* 1/(2 sqrt(2 e pi)) */
#define T4_C  0.06049268112978583745  /* 1/(4 sqrt(2 e pi)) */
#define T5_C  0.007561585141223229681  /* 1/(32 sqrt(2 e pi)) */

/* 1/2 - Phi(-kappa) = erf(kappa/sqrt2)/2 with kappa = eps/2. */
static double condition2_rhs(double eps)
{
    return 0.5 * erf(0.5 * eps * DPB_SQRT1_2);
}

/* A rigorous lower bound of condition2_rhs without erf: erf is increasing,
 * erf(x) >= (2/sqrtpi)(x - x^3/3) (alternating series) and erf(1) > 0.8427.
 * Valid points usually clear it by far, so most never pay for the erf. */
static double rhs_lower_bound(double eps)
{
    double x = 0.5 * eps * DPB_SQRT1_2;
    double lb = x >= 1.0 ? 0.8427 : DPB_2_SQRTPI * (x - x * x * x / 3.0);
    return 0.5 * lb * (1.0 - 1e-12);        /* margin for the rounding of lb */
}

int dpb_t31_prepare_delta(double sigma, int coefficient, dpb_t31_sigma *c)
{
    dpb_lnbase b;
    c->sigma = sigma;
    c->rhs = DPB_NAN;
    c->exact = coefficient == DPB_COEF_EXACT;
    if (!isgreater(sigma, 0.0) || isinf(sigma)) {
        c->eps = c->coef = c->w = DPB_NAN;
        return -1;
    }
    if (sigma < 0.03) {                      /* e^{1/sigma^2} overflows */
        c->eps = c->coef = c->w = DPB_INF;
        return 0;
    }
    dpb_lognormal_base(sigma, &b);
    c->eps = b.eps;
    c->w = b.w;
    c->coef = coefficient == DPB_COEF_EXACT ? dpb_coef_exact_base(sigma, &b)
                                            : dpb_coef_simplified_base(sigma, &b);
    return 0;
}

int dpb_t31_prepare(double sigma, int coefficient, dpb_t31_sigma *c)
{
    if (dpb_t31_prepare_delta(sigma, coefficient, c) != 0) return -1;
    c->rhs = condition2_rhs(c->eps);
    return 0;
}

/* The six terms for finite M >= 3, given L = ln M and ex = dpb_exp(-25/24 L). */
static double t31_terms_given(const dpb_t31_sigma *c, double rounds, double L, double ex, double terms[6])
{
    double mu, mu2, inv_m1, sL, sum;
    int k;
    inv_m1 = 1.0 / (rounds - 1.0);
    if (c->sigma > 1e150) {
        /* eps = 1/sigma^2 to 1e-300 relative, but subnormal or 0 from sigma = 1.3e154 on:
           mu = 1/(sigma sqrt(M - 1)) directly (T1 below uses the exact coefficient's limit) */
        mu = sqrt(inv_m1) / c->sigma;
        mu2 = mu * mu;
    } else {
        mu2 = c->eps * inv_m1;
        /* below 1e-290 mu^2 may be subnormal (sigma ~ 1e150, M ~ 1e15), and sqrt(mu^2) would carry
           its lost digits into T1: mu from the two square roots; mu^2 then enters only T3-T5, as
           an absolute error below 1e-300 (tests/special/test_special_fuzz_regressions.py::test_theorem31_terms_at_huge_sigma_vs_mpmath) */
        mu = mu2 < 1e-290 ? sqrt(c->eps) * sqrt(inv_m1) : sqrt(mu2);
    }
    if (mu > 1e60) {                     /* vacuous; avoid overflowing mu^4 */
        for (k = 0; k < 5; k++) terms[k] = DPB_INF;
    } else {
        /* beyond sigma = 1e150, coef mu from the limit sqrt(8/pi) sigma of the exact coefficient:
           T1 = 2 B sqrt(8/pi)/sqrt(M - 1), where the product coef * mu would underflow mu or
           overflow coef (tests/special/test_special_fuzz_regressions.py::test_theorem31_t1_at_huge_sigma_is_its_limit);
           the simplified coefficient, ~5 sigma^4, is inf there */
        terms[0] = 2.0 * DPB_BE_CONSTANT * (c->sigma > 1e150 && c->exact ? DPB_SQRT_8_PI * sqrt(inv_m1)
                                                                       : dpb_mul_sat(c->coef, mu));
        terms[1] = DPB_INV_SQRT2PI * mu;
        /* T3 = [A + B (1 + w/(1-1/w))] mu^2 = (A + B) mu^2 + B w^2/(M-1), since
         * w/(1-1/w) mu^2 = w^2/(M-1): finite even where eps underflows (huge sigma) */
        terms[2] = (T3_A + T3_B) * mu2 + T3_B * (dpb_mul_sat(c->w, c->w) * inv_m1);
        terms[3] = T4_C * mu2 * mu;
        terms[4] = T5_C * mu2 * mu2;
    }
    sL = sqrt(L);
    /* 4.52/(2.88 sqrt(L) - 2.41/sqrt(L)) = 4.52 sqrt(L)/(2.88 L - 2.41) */
    terms[5] = 4.52 * sL / (2.88 * L - 2.41) * ex;
    sum = 0.0;
    for (k = 5; k >= 0; k--) sum += terms[k];   /* smallest first */
    return sum;
}

/* delta_min and its terms; *log_rounds receives ln M for the validity checks. */
static double t31_eval(const dpb_t31_sigma *c, double rounds, double terms[6], double *log_rounds)
{
    double L;
    int k;
    if (isnan(rounds) || isnan(c->eps) || !(rounds >= 3.0)) {
        for (k = 0; k < 6; k++) terms[k] = DPB_NAN;
        return DPB_NAN;
    }
    if (isinf(rounds)) {
        for (k = 0; k < 6; k++) terms[k] = 0.0;
        return 0.0;
    }
    L = log(rounds);
    *log_rounds = L;
    return t31_terms_given(c, rounds, L, dpb_exp(-25.0 / 24.0 * L), terms);
}

double dpb_t31_terms(const dpb_t31_sigma *c, double rounds, double terms[6])
{
    double L;
    return t31_eval(c, rounds, terms, &L);
}

double dpb_t31_condition2_limit(const dpb_t31_sigma *c)
{
    /* t31_status_given flags (2) iff !(lhs <= lb) && !(lhs <= rhs), i.e. iff !(lhs <= max(lb, rhs)) */
    double lb = rhs_lower_bound(c->eps);
    double rhs = isnan(c->rhs) ? condition2_rhs(c->eps) : c->rhs;
    return lb > rhs ? lb : rhs;
}

double dpb_t31_delta_min(const dpb_t31_sigma *c, double rounds)
{
    double t[6], L;
    return t31_eval(c, rounds, t, &L);
}

/* The validity checks once delta_min, its terms and ln M are known (finite M >= 3). */
static int t31_status_given(const dpb_t31_sigma *c, double delta, double dmin, const double terms[6], double L)
{
    int st = 0;
    double lhs = 0.5 * terms[0] + (isnan(delta) ? dmin : delta);   /* T1 = 2 B coef mu */
    if (c->sigma < 1e10 && c->sigma * c->sigma * L < 3.0) st |= DPB_T31_SIGMA_BELOW_EDGE;
    if (!isnan(delta) && delta < dmin) st |= DPB_T31_DELTA_BELOW_MIN;
    if (!islessequal(lhs, rhs_lower_bound(c->eps))
        && !islessequal(lhs, isnan(c->rhs) ? condition2_rhs(c->eps) : c->rhs))
        st |= DPB_T31_CONDITION2;
    return st;
}

int dpb_t31_status(const dpb_t31_sigma *c, double rounds, double delta, double *delta_min_out)
{
    double dmin, terms[6], L;
    /* M counts rounds: a non-integer M is outside the theorem (BAD_INPUT), never a number */
    if (isnan(c->eps) || isnan(rounds) || isinf(rounds) || rounds != floor(rounds)
        || (!isnan(delta) && !(delta > 0.0 && delta < 1.0))) {
        if (delta_min_out) *delta_min_out = DPB_NAN;
        return DPB_T31_BAD_INPUT;
    }
    if (rounds < 3.0) {
        if (delta_min_out) *delta_min_out = DPB_NAN;
        return DPB_T31_ROUNDS_BELOW_3;
    }
    dmin = t31_eval(c, rounds, terms, &L);
    if (delta_min_out) *delta_min_out = dmin;
    return t31_status_given(c, delta, dmin, terms, L);
}

double dpb_delta_min(double sigma, double rounds, int coefficient)
{
    dpb_t31_sigma c;
    if (dpb_t31_prepare_delta(sigma, coefficient, &c) != 0) return DPB_NAN;
    return dpb_t31_delta_min(&c, rounds);
}

int dpb_theorem31_status(double sigma, double rounds, double delta, int coefficient)
{
    dpb_t31_sigma c;
    if (dpb_t31_prepare(sigma, coefficient, &c) != 0) return DPB_T31_BAD_INPUT;
    return dpb_t31_status(&c, rounds, delta, NULL);
}

/* ---- two points at a time --------------------------------------------------- */

/* The argument domain of the validated API: sigma finite > 0, rounds an integer >= 3. */
static int bad_args(double sigma, double rounds)
{
    return !isgreater(sigma, 0.0) || isinf(sigma)
        || !isgreaterequal(rounds, 3.0) || isinf(rounds) || rounds != floor(rounds);
}

int dpb_t31_checked(const dpb_t31_sigma *c, double rounds, double *out)
{
    int st;
    if (bad_args(c->sigma, rounds)) {
        *out = DPB_NAN;
        return DPB_STATUS_BAD_INPUT;
    }
    st = dpb_t31_status(c, rounds, DPB_NAN, out);
    if (st != 0) *out = DPB_NAN;
    return st;
}

/* One point in any mode, the reference the paired path must reproduce bit for bit. */
static void eval_one(double sigma, double rounds, int kind, int mode, double *out, signed char *st)
{
    dpb_t31_sigma c;
    double dmin;
    int bits;
    if (mode == DPB_T31_MODE_DELTA_MIN) {
        *out = dpb_delta_min(sigma, rounds, kind);
        return;
    }
    if (bad_args(sigma, rounds)) {   /* the bound, checked or not: NaN outside the domain */
        *out = DPB_NAN;
        if (st) *st = (signed char)DPB_STATUS_BAD_INPUT;
        return;
    }
    bits = dpb_t31_prepare_delta(sigma, kind, &c) != 0 ? DPB_STATUS_BAD_INPUT
                                                        : dpb_t31_status(&c, rounds, DPB_NAN, &dmin);
    *out = bits ? DPB_NAN : dmin;
    if (st) *st = (signed char)bits;
}

double dpb_delta_bound(double sigma, double rounds, int coefficient)
{
    double out;
    eval_one(sigma, rounds, coefficient, DPB_T31_MODE_BOUND, &out, NULL);
    return out;
}

double dpb_delta_bound_checked(double sigma, double rounds, int coefficient, int *status)
{
    double out;
    signed char st;
    eval_one(sigma, rounds, coefficient, DPB_T31_MODE_CHECKED, &out, &st);
    *status = st;
    return out;
}

void dpb_delta_terms(double sigma, double rounds, int coefficient, double terms[6])
{
    dpb_t31_sigma c;
    int k;
    if (dpb_t31_prepare(sigma, coefficient, &c) != 0) {
        for (k = 0; k < 6; k++) terms[k] = DPB_NAN;
        return;
    }
    dpb_t31_terms(&c, rounds, terms);
}

/* Points the paired fast path handles: everything finite and ordinary.  The integer test of a
 * finite M >= 3 by truncation, not floor(): without SSE4.1 floor() is a libm call per point;
 * every double >= 2^52 is an integer, and below that the conversion is exact. */
static int regular(double sigma, double rounds, int mode)
{
    return isgreaterequal(sigma, 0.03) && islessequal(sigma, 1e150)
        && isgreaterequal(rounds, 3.0) && !isinf(rounds)
        && (mode == DPB_T31_MODE_DELTA_MIN || rounds >= 4503599627370496.0
            || rounds == (double)(long long)rounds);
}

void dpb_t31_eval_n(const char *sig, ptrdiff_t ss, const char *rnd, ptrdiff_t sr,
                    char *out, ptrdiff_t so, char *st, ptrdiff_t sst,
                    ptrdiff_t n, int kind, int mode)
{
    ptrdiff_t i = 0;
    for (; i + 1 < n; i += 2) {
        double s0 = *(const double *)(sig + i * ss), s1 = *(const double *)(sig + (i + 1) * ss);
        double m0 = *(const double *)(rnd + i * sr), m1 = *(const double *)(rnd + (i + 1) * sr);
        double *o0 = (double *)(out + i * so), *o1 = (double *)(out + (i + 1) * so);
        signed char *t0 = st ? (signed char *)(st + i * sst) : NULL;
        signed char *t1 = st ? (signed char *)(st + (i + 1) * sst) : NULL;
        dpb_lnbase b0, b1;
        dpb_t31_sigma c0, c1;
        double e0, e1, L0, L1, x0, x1, d0, d1, tm0[6], tm1[6];
        if (regular(s0, m0, mode) && regular(s1, m1, mode)) {
            dpb_inv_square(s0, &b0.hi, &b0.lo);
            dpb_inv_square(s1, &b1.hi, &b1.lo);
        } else {
            b0.hi = b1.hi = DPB_INF;
        }
        if (!(b0.hi <= 700.0 && b1.hi <= 700.0)) {   /* rare: one at a time */
            eval_one(s0, m0, kind, mode, o0, t0);
            eval_one(s1, m1, kind, mode, o1, t1);
            continue;
        }
        dpb_expm1_2(b0.hi, b1.hi, &e0, &e1);
        dpb_lognormal_base_finish(&b0, e0);
        dpb_lognormal_base_finish(&b1, e1);
        /* the same fields dpb_t31_prepare_delta fills */
        c0.sigma = s0; c0.eps = b0.eps; c0.w = b0.w; c0.rhs = DPB_NAN; c0.exact = kind == DPB_COEF_EXACT;
        c1.sigma = s1; c1.eps = b1.eps; c1.w = b1.w; c1.rhs = DPB_NAN; c1.exact = kind == DPB_COEF_EXACT;
        c0.coef = kind == DPB_COEF_EXACT ? dpb_coef_exact_base(s0, &b0) : dpb_coef_simplified_base(s0, &b0);
        c1.coef = kind == DPB_COEF_EXACT ? dpb_coef_exact_base(s1, &b1) : dpb_coef_simplified_base(s1, &b1);
        L0 = log(m0);
        L1 = log(m1);
        dpb_exp_2(-25.0 / 24.0 * L0, -25.0 / 24.0 * L1, &x0, &x1);
        d0 = t31_terms_given(&c0, m0, L0, x0, tm0);
        d1 = t31_terms_given(&c1, m1, L1, x1, tm1);
        if (mode == DPB_T31_MODE_DELTA_MIN) {
            *o0 = d0;
            *o1 = d1;
            continue;
        }
        {
            int v0 = t31_status_given(&c0, DPB_NAN, d0, tm0, L0);
            int v1 = t31_status_given(&c1, DPB_NAN, d1, tm1, L1);
            *o0 = v0 ? DPB_NAN : d0;
            *o1 = v1 ? DPB_NAN : d1;
            if (t0) *t0 = (signed char)v0;
            if (t1) *t1 = (signed char)v1;
        }
    }
    if (i < n)
        eval_one(*(const double *)(sig + i * ss), *(const double *)(rnd + i * sr), kind, mode,
                 (double *)(out + i * so), st ? (signed char *)(st + i * sst) : NULL);
}
