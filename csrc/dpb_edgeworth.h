/*
 * dpb_edgeworth.h -- the Edgeworth-corrected trade-off curve of random allocation: the
 * CLT integral of dpb_tradeoff.h with the skewness and kurtosis corrections of the
 * Edgeworth expansion (an APPROXIMATION of the true curve f_M, never a bound).
 *
 * Notation and shared contract as in dpb_tradeoff.h (x = Phi^{-1}(1 - a), w = e^{1/sigma^2},
 * M = rounds, s = sqrt(M/(M-1)), A(z) = (e^{z/sigma + 1/(2 sigma^2)} - 1)/D).
 */
#ifndef DPB_EDGEWORTH_H
#define DPB_EDGEWORTH_H

#include "dpb_status.h"

/* Reasons why dpb_tradeoff_edgeworth returns NaN (dpb_edgeworth_status): the shared bits of
 * dpb_status.h, named for this family. */
enum {
    DPB_EW_OK = DPB_STATUS_OK,
    DPB_EW_BAD_INPUT = DPB_STATUS_BAD_INPUT,                 /* NaN, a outside [0,1], sigma <= 0, M < 3 or not an integer */
    DPB_EW_NOT_MONOTONE_AT_0 = DPB_STATUS_NOT_MONOTONE_AT_0, /* p_M'(0) <= 0 or p_{M-1}'(0) <= 0: no branch through 0 */
    DPB_EW_OUT_OF_RANGE = DPB_STATUS_OUT_OF_RANGE           /* Phi^{-1}(1-a) outside p_M(monotone branch) */
};

/* dpb_tradeoff_edgeworth -- the Edgeworth-corrected integral of Theorem 4.1 and Appendix
 * H.1/H.3 of "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation:
 * Tight Upper and Lower Bounds" (APPROXIMATION; c_n and d_n are the standard Edgeworth
 * coefficients of the standardised sum of n lognormal terms):
 *     f(a) = int Phi( p_{M-1}( p_M^{-1}(x) s - A(z) ) ) n(z) dz,
 *     p_n(y) = y - c_n (y^2 - 1) - d_n (y^3 - 3y) + c_n^2 (4y^3 - 7y),
 *     c_n = gamma1/(6 sqrt n),  d_n = gamma2/(24 n),  gamma1 = (w+2) sqrt(w-1),
 *     gamma2 = w^4 + 2w^3 + 3w^2 - 6.
 * METHOD  p_M^{-1} on the monotone branch of p_M through 0 (between the roots of the
 *         quadratic p_M', if any) by safeguarded Newton/bisection to 1 ulp; outside
 *         its branch the outer p_{M-1} is frozen at the branch end (a monotone
 *         continuation, so the integrand stays a distribution function of u);
 *         quadrature as in dpb_tradeoff_clt with panel edges where p_{M-1}(u) crosses
 *         the levels and at the two freezing points (kinks).
 * ACCURACY  absolute <= 1e-13 vs an mpmath evaluation of the same formula where
 *           c_M = gamma1/(6 sqrt M) <= 2.2 (tested; measured <= 1.2e-16).  Far outside
 *           (e.g. c_M ~ 700 at sigma = 0.37, M = 207) the cubic is so steep that only
 *           ~1e-8 is reached -- a regime where the expansion means nothing anyway.
 * NOTE    For the lognormal, p_n'(0) = 1 + 3 d_n - 7 c_n^2 > 0 always, so
 *         DPB_EW_NOT_MONOTONE_AT_0 is a safeguard that does not trigger.
 * EDGES  a = 0 -> 1, a = 1 -> 0; NaN where not invertible (see dpb_edgeworth_status). */
double dpb_tradeoff_edgeworth(double a, double sigma, double rounds);
/* DPB_EW_* bitmask explaining a NaN of dpb_tradeoff_edgeworth (0 = defined). */
int dpb_edgeworth_status(double a, double sigma, double rounds);
/* p_n(y) for the lognormal of sigma (n = number of summands); NaN for n < 1. */
double dpb_edgeworth_p(double y, double sigma, double n);

#endif /* DPB_EDGEWORTH_H */
