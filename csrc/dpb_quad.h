/*
 * dpb_quad.h -- the panel-quadrature engine behind the trade-off integrals of random
 * allocation: the CLT curve and its slope (dpb_tradeoff.c) and the Edgeworth-corrected
 * curve (dpb_edgeworth.c).  Internal to the C core: nothing here is exposed to Python.
 *
 * Notation as in dpb_tradeoff.h: x = Phi^{-1}(1 - a), w = e^{1/sigma^2}, M = rounds,
 * s = sqrt(M/(M-1)), D = sqrt((M-1)(w-1)), A(z) = (e^{z/sigma + 1/(2 sigma^2)} - 1)/D.
 * The engine integrates over z in [-12, min(hi, 12)] one of
 *     DPB_QUAD_CLT        Phi(xs - A(z)) n(z)
 *     DPB_QUAD_EDGEWORTH  Phi(p(clamp(xs - A(z), ulo, uhi))) n(z),  p = dpb_quad_ew_poly(., c, d)
 *     DPB_QUAD_SLOPE      exp(-((x s - A)^2 - x^2)/2 - z^2/2 - off)
 * by composite 20-point Gauss-Legendre on panels whose edges are the points where the
 * argument of Phi crosses fixed levels, merged with a uniform grid (the METHOD paragraph
 * of dpb_tradeoff_clt in dpb_tradeoff.h explains the choice and its accuracy).
 */
#ifndef DPB_QUAD_H
#define DPB_QUAD_H

#include "dpb_config.h"

enum { DPB_QUAD_CLT = 0, DPB_QUAD_EDGEWORTH = 1, DPB_QUAD_SLOPE = 2 };

/* Most values of u (Edgeworth mode) that get a panel edge: the 10 CDF levels plus
 * the two ends of the monotone branch. */
#define DPB_QUAD_MAXULEV 24

/* Levels of the Phi argument at which panel edges are placed for the CDF integrands
 * (the integrand changes on the scale of one unit of the argument near 0 and doubly
 * exponentially far right; geometric levels give panels of width ~sigma ln 2 there). */
#define DPB_QUAD_NLEVELS_CDF 10
extern const double dpb_quad_levels_cdf[DPB_QUAD_NLEVELS_CDF];

typedef struct {
    int mode;           /* DPB_QUAD_CLT, DPB_QUAD_EDGEWORTH or DPB_QUAD_SLOPE */
    int logform;        /* w overflowed: A = exp(t - lnD) */
    double xs;          /* x s (CLT) or y s (Edgeworth) */
    double x;           /* x (slope) */
    double invD, lnD;
    double sigma, inv_sigma, half_inv_s2;
    double m1;          /* M - 1 */
    /* outer Edgeworth polynomial p_{M-1} and its monotone branch */
    double c, d, ulo, uhi;
    double off;         /* slope: exponent offset */
    int nulev;          /* Edgeworth: values of u = y s - A(z) that get panel edges */
    double ulev[DPB_QUAD_MAXULEV];
} dpb_quad_ctx;

/* p(y) = y - c (y^2 - 1) - d (y^3 - 3y) + c^2 (4y^3 - 7y): the Edgeworth polynomial
 * p_n with c = c_n, d = d_n (see dpb_tradeoff_edgeworth).  The engine applies it inside
 * the Edgeworth integrand; dpb_edgeworth.c inverts it. */
DPB_INLINE double dpb_quad_ew_poly(double y, double c, double d)
{
    double y2 = y * y;
    return y - c * (y2 - 1.0) - d * y * (y2 - 3.0) + c * c * y * (4.0 * y2 - 7.0);
}

/* Common set-up from (a, sigma, M): returns 0 if the context is ready (mode still to
 * be set, Edgeworth fields neutral: c = d = 0, branch (-inf, inf)), else writes the
 * answer of a degenerate case into *out and returns 1: NaN input, a outside [0, 1],
 * sigma <= 0 or M <= 1 -> NaN; a = 0 -> 1; a = 1 -> 0; sigma = inf, M = inf, or
 * w - 1 underflowing to 0 (sigma > 1e154) -> 1 - a; after those exact cases,
 * sigma < sigma_min -> NaN (the caller's refusal, tested before anything that could
 * overflow at tiny sigma: no floating-point flag). */
int dpb_quad_setup(dpb_quad_ctx *q, double a, double sigma, double rounds, double sigma_min, double *out);

/* Switches a ready context to DPB_QUAD_SLOPE and sets its exponent offset: the largest
 * exponent at the edges of a grid refined around the peak, so that the integrand stays
 * in range; the slope is then exp(off) times the integral. */
void dpb_quad_slope_prepare(dpb_quad_ctx *q);

/* The integral over z in [-12, min(hi, 12)] for the context's mode (0 if empty).  CDF
 * modes: panels where Phi(argument) = 1 to 1e-17 contribute their normal mass in closed
 * form; panels bounded below 1e-18, and those right of argument -8.3, are skipped. */
double dpb_quad_integrate(const dpb_quad_ctx *q, double hi);

#endif /* DPB_QUAD_H */
