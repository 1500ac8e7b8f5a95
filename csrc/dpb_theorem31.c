/* dpb_theorem31.c -- see dpb_theorem31.h. */
#include "dpb_config.h"
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

/* delta_min and its terms; *log_rounds receives ln M for the validity checks. */
static double t31_eval(const dpb_t31_sigma *c, double rounds, double terms[6], double *log_rounds)
{
    double mu, mu2, inv_m1, L, sL, sum;
    int k;
    if (isnan(rounds) || isnan(c->eps) || !(rounds >= 3.0)) {
        for (k = 0; k < 6; k++) terms[k] = DPB_NAN;
        return DPB_NAN;
    }
    if (isinf(rounds)) {
        for (k = 0; k < 6; k++) terms[k] = 0.0;
        return 0.0;
    }
    inv_m1 = 1.0 / (rounds - 1.0);
    mu2 = c->eps * inv_m1;
    mu = sqrt(mu2);
    if (mu > 1e60) {                     /* vacuous; avoid overflowing mu^4 */
        for (k = 0; k < 5; k++) terms[k] = DPB_INF;
    } else {
        terms[0] = 2.0 * DPB_BE_CONSTANT * dpb_mul_sat(c->coef, mu);
        terms[1] = DPB_INV_SQRT2PI * mu;
        /* T3 = [A + B (1 + w/(1-1/w))] mu^2 = (A + B) mu^2 + B w^2/(M-1), since
         * w/(1-1/w) mu^2 = w^2/(M-1): finite even where eps underflows (huge sigma) */
        terms[2] = (T3_A + T3_B) * mu2 + T3_B * (dpb_mul_sat(c->w, c->w) * inv_m1);
        terms[3] = T4_C * mu2 * mu;
        terms[4] = T5_C * mu2 * mu2;
    }
    L = log(rounds);
    *log_rounds = L;
    sL = sqrt(L);
    /* 4.52/(2.88 sqrt(L) - 2.41/sqrt(L)) = 4.52 sqrt(L)/(2.88 L - 2.41) */
    terms[5] = 4.52 * sL / (2.88 * L - 2.41) * exp(-25.0 / 24.0 * L);
    sum = 0.0;
    for (k = 5; k >= 0; k--) sum += terms[k];   /* smallest first */
    return sum;
}

double dpb_t31_terms(const dpb_t31_sigma *c, double rounds, double terms[6])
{
    double L;
    return t31_eval(c, rounds, terms, &L);
}

double dpb_t31_delta_min(const dpb_t31_sigma *c, double rounds)
{
    double t[6], L;
    return t31_eval(c, rounds, t, &L);
}

int dpb_t31_status(const dpb_t31_sigma *c, double rounds, double delta, double *delta_min_out)
{
    int st = 0;
    double dmin, lhs_delta, terms[6], L;
    if (isnan(c->eps) || isnan(rounds) || isinf(rounds)
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
    if (c->sigma < 1e10 && c->sigma * c->sigma * L < 3.0) st |= DPB_T31_SIGMA_BELOW_EDGE;
    lhs_delta = isnan(delta) ? dmin : delta;
    if (!isnan(delta) && delta < dmin) st |= DPB_T31_DELTA_BELOW_MIN;
    {
        double lhs = 0.5 * terms[0] + lhs_delta;     /* T1 = 2 B coef mu */
        if (!islessequal(lhs, rhs_lower_bound(c->eps))
            && !islessequal(lhs, isnan(c->rhs) ? condition2_rhs(c->eps) : c->rhs))
            st |= DPB_T31_CONDITION2;
    }
    return st;
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
