/* dpb_theorem31.c -- see dpb_theorem31.h. */
#include "dpb_config.h"
#include "dpb_lognormal.h"
#include "dpb_theorem31.h"

#define T3_A  0.09973557010035816948  /* 1/(4 sqrt(2 pi)) */
#define T3_B  0.12098536225957167490  /* 1/(2 sqrt(2 e pi)) */
#define T4_C  0.06049268112978583745  /* 1/(4 sqrt(2 e pi)) */
#define T5_C  0.007561585141223229681  /* 1/(32 sqrt(2 e pi)) */

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
    c->rhs = 0.5 * erf(0.5 * c->eps * DPB_SQRT1_2);
    return 0;
}

double dpb_t31_terms(const dpb_t31_sigma *c, double rounds, double terms[6])
{
    double mu, mu2, L, sL, sum;
    int k;
    if (isnan(rounds) || isnan(c->eps) || !(rounds >= 3.0)) {
        for (k = 0; k < 6; k++) terms[k] = DPB_NAN;
        return DPB_NAN;
    }
    if (isinf(rounds)) {
        for (k = 0; k < 6; k++) terms[k] = 0.0;
        return 0.0;
    }
    mu = sqrt(c->eps / (rounds - 1.0));
    if (mu > 1e60) {                     /* vacuous; avoid overflowing mu^4 */
        for (k = 0; k < 5; k++) terms[k] = DPB_INF;
    } else {
        mu2 = mu * mu;
        terms[0] = 2.0 * DPB_BE_CONSTANT * dpb_mul_sat(c->coef, mu);
        terms[1] = DPB_INV_SQRT2PI * mu;
        /* T3 = [A + B (1 + w/(1-1/w))] mu^2 = (A + B) mu^2 + B w^2/(M-1), since
         * w/(1-1/w) mu^2 = w^2/(M-1): finite even where eps underflows (huge sigma) */
        terms[2] = (T3_A + T3_B) * mu2 + T3_B * (dpb_mul_sat(c->w, c->w) / (rounds - 1.0));
        terms[3] = T4_C * mu2 * mu;
        terms[4] = T5_C * mu2 * mu2;
    }
    L = log(rounds);
    sL = sqrt(L);
    /* 4.52/(2.88 sqrt(L) - 2.41/sqrt(L)) = 4.52 sqrt(L)/(2.88 L - 2.41) */
    terms[5] = 4.52 * sL / (2.88 * L - 2.41) * exp(-25.0 / 24.0 * L);
    sum = 0.0;
    for (k = 5; k >= 0; k--) sum += terms[k];   /* smallest first */
    return sum;
}

double dpb_t31_delta_min(const dpb_t31_sigma *c, double rounds)
{
    double t[6];
    return dpb_t31_terms(c, rounds, t);
}

int dpb_t31_status(const dpb_t31_sigma *c, double rounds, double delta, double *delta_min_out)
{
    int st = 0;
    double dmin, lhs_delta;
    if (isnan(c->eps) || isnan(rounds) || isinf(rounds)
        || (!isnan(delta) && !(delta > 0.0 && delta < 1.0))) {
        if (delta_min_out) *delta_min_out = DPB_NAN;
        return DPB_T31_BAD_INPUT;
    }
    if (rounds < 3.0) {
        if (delta_min_out) *delta_min_out = DPB_NAN;
        return DPB_T31_ROUNDS_BELOW_3;
    }
    dmin = dpb_t31_delta_min(c, rounds);
    if (delta_min_out) *delta_min_out = dmin;
    if (c->sigma < 1e10 && c->sigma * c->sigma * log(rounds) < 3.0) st |= DPB_T31_SIGMA_BELOW_EDGE;
    lhs_delta = isnan(delta) ? dmin : delta;
    if (!isnan(delta) && delta < dmin) st |= DPB_T31_DELTA_BELOW_MIN;
    {
        double mu = sqrt(c->eps / (rounds - 1.0));
        double lhs = DPB_BE_CONSTANT * dpb_mul_sat(c->coef, mu) + lhs_delta;
        if (!islessequal(lhs, c->rhs)) st |= DPB_T31_CONDITION2;
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
