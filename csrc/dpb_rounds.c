/* dpb_rounds.c -- see dpb_rounds.h. */
#include "dpb_config.h"
#include "dpb_theorem31.h"
#include "dpb_rounds.h"

static int bad_sigma_delta(double sigma, double delta)
{
    return !isgreater(sigma, 0.0) || isinf(sigma) || !(isgreater(delta, 0.0) && isless(delta, 1.0));
}

/* (2 B coef sqrt(eps) + sqrt(eps/(2 pi))) / delta, the square root of M - 1. */
static double closed_form_root(const dpb_t31_sigma *c, double delta)
{
    double se = sqrt(c->eps);
    return dpb_div_sat(dpb_mul_sat(2.0 * DPB_BE_CONSTANT * c->coef + DPB_INV_SQRT2PI, se), delta);
}

double dpb_rounds_closed_form(double sigma, double delta, int coefficient)
{
    dpb_t31_sigma c;
    double r;
    if (bad_sigma_delta(sigma, delta)) return DPB_NAN;
    dpb_t31_prepare(sigma, coefficient, &c);
    r = closed_form_root(&c, delta);
    if (!isless(r, 1e154)) return DPB_INF;
    return 1.0 + r * r;
}

typedef struct {
    const dpb_t31_sigma *c;
    double delta;
    int target;
} feasible_ctx;

/* All conditions of M_exact at integer M (monotone: false ... false true ... true). */
static int feasible(const feasible_ctx *f, double m)
{
    double dmin;
    int st = dpb_t31_status(f->c, m, f->target ? f->delta : DPB_NAN, &dmin);
    return st == 0 && dmin <= f->delta;
}

double dpb_rounds_required(double sigma, double delta, int coefficient, int validity_at_target)
{
    dpb_t31_sigma c;
    if (bad_sigma_delta(sigma, delta)) return DPB_NAN;
    dpb_t31_prepare(sigma, coefficient, &c);
    return dpb_rounds_required_prepared(&c, delta, validity_at_target);
}

double dpb_rounds_required_prepared(const dpb_t31_sigma *cp, double delta, int validity_at_target)
{
    const dpb_t31_sigma c = *cp;
    const double sigma = c.sigma;
    feasible_ctx f;
    double guess, lo, hi, step, r, g2;
    f.c = &c;
    f.delta = delta;
    f.target = validity_at_target;
    if (validity_at_target && !isless(delta, c.rhs))
        return DPB_INF;                  /* (2) needs B coef mu + delta <= rhs with mu > 0 */

    /* Starting guess: the largest of the closed forms for each condition.
     * (a) delta_min <= delta: eq. (4);  (b) sigma^2 ln M >= 3: M = e^{3/sigma^2};
     * (c) condition (2): (3B coef + 1/sqrt(2pi)) mu <= rhs (delta_min mode) or
     *     B coef mu <= rhs - delta (target mode). */
    r = closed_form_root(&c, delta);
    guess = r < 1e8 ? 1.0 + r * r : DPB_ROUNDS_MAX;
    /* sigma^2 overflows above 1.3e154 (the flag numpy reports): e^{3/sigma^2} is 1 there anyway */
    g2 = sigma < 0.03 ? 1e4 : (sigma > 1e150 ? 0.0 : 3.0 / (sigma * sigma));
    if (g2 < 37.0 && exp(g2) > guess) guess = exp(g2);
    else if (g2 >= 37.0) guess = DPB_ROUNDS_MAX;
    if (!isinf(c.coef)) {
        double k = validity_at_target
            ? dpb_div_sat(DPB_BE_CONSTANT * c.coef, c.rhs - delta)
            : dpb_div_sat(dpb_mul_sat(3.0 * DPB_BE_CONSTANT, c.coef) + DPB_INV_SQRT2PI, c.rhs);  /* coef ~ 5 sigma^4 */
        double g3 = k < 1e7 ? 1.0 + c.eps * k * k : DPB_ROUNDS_MAX;
        if (g3 > guess) guess = g3;
    }
    if (!isless(guess, DPB_ROUNDS_MAX)) guess = DPB_ROUNDS_MAX;
    guess = ceil(guess);
    if (guess < 3.0) guess = 3.0;

    /* Exponential bracket [lo, hi] with feasible(hi) and !feasible(lo) (or lo = 2). */
    step = guess * 1e-4 > 1.0 ? floor(guess * 1e-4) : 1.0;
    if (feasible(&f, guess)) {
        hi = guess;
        lo = hi - step;
        while (lo >= 3.0 && feasible(&f, lo)) {
            hi = lo;
            step *= 2.0;
            lo = hi - step;
        }
        if (lo < 3.0) lo = 2.0;          /* 2 stands for "infeasible" */
    } else {
        lo = guess;
        if (lo >= DPB_ROUNDS_MAX) return DPB_INF;
        hi = lo + step;
        while (!feasible(&f, hi < DPB_ROUNDS_MAX ? hi : DPB_ROUNDS_MAX)) {
            if (hi >= DPB_ROUNDS_MAX) return DPB_INF;
            lo = hi;
            step *= 2.0;
            hi = lo + step;
        }
        if (hi > DPB_ROUNDS_MAX) hi = DPB_ROUNDS_MAX;
    }
    while (hi - lo > 1.0) {
        double mid = lo + floor((hi - lo) * 0.5);
        if (feasible(&f, mid)) hi = mid; else lo = mid;
    }
    return hi;
}

double dpb_min_dataset_size(double sigma, double rounds, double clip_norm, double noise_ratio)
{
    if (!isgreater(sigma, 0.0) || isinf(sigma) || !isgreaterequal(rounds, 1.0) || isinf(rounds)
        || !isgreater(clip_norm, 0.0) || isinf(clip_norm) || !isgreater(noise_ratio, 0.0) || isinf(noise_ratio))
        return DPB_NAN;
    return clip_norm * sigma * rounds / noise_ratio;
}

double dpb_compose_delta(double delta, double epochs)
{
    if (!(isgreaterequal(delta, 0.0) && islessequal(delta, 1.0)) || !isgreaterequal(epochs, 1.0) || isinf(epochs)) return DPB_NAN;
    if (delta == 1.0 || epochs == 1.0) return delta;
    {
        double l = log1p(-delta);
        /* epochs * l < -745: expm1 is -1.0 there (it is from -38.8 on); the product itself would
         * overflow for huge epochs (epochs = 4e307, delta = 1 - 2^-53) */
        if (l < -745.0 / epochs) return 1.0;
        return -expm1(epochs * l);
    }
}

double dpb_per_epoch_delta(double delta_total, double epochs)
{
    if (!(isgreaterequal(delta_total, 0.0) && islessequal(delta_total, 1.0)) || !isgreaterequal(epochs, 1.0) || isinf(epochs))
        return DPB_NAN;
    if (delta_total == 1.0 || epochs == 1.0) return delta_total;
    return -expm1(log1p(-delta_total) / epochs);
}
