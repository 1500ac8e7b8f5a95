/*
 * dpb_rdp_convert.h -- RDP -> (eps, delta) conversion objectives at one order
 * (SPEC Part B section 7).  The conversion of a curve is the minimum of the
 * objective over the orders; every single order already gives a valid bound, so
 * any subset of orders (or any optimiser) yields a valid, possibly looser, result.
 *
 * Classic (Mironov 2017, Prop. 3):
 *   eps(delta) = rdp(a) + log(1/delta)/(a-1);    log delta(eps) = (a-1)(rdp(a) - eps).
 * Improved (Balle et al. 2020 Thm 21 = Canonne-Kamath-Steinke 2020 Prop 12):
 *   eps(delta) = max{0, rdp(a) + log1p(-1/a) - (log delta + log a)/(a-1)}
 *   log delta(eps) = (a-1)(rdp(a) - eps + log1p(-1/a)) - log a
 *   plus the TV shortcuts (KL <= rdp(a) for a >= 1; TV <= sqrt(1 - e^{-KL})):
 *   eps = 0 if delta^2 >= -expm1(-rdp(a));  log delta <= log(-expm1(-rdp(a)))/2.
 * alpha = inf: eps = rdp(inf) (both); log delta = 0 if rdp(inf) > eps else -inf.
 * alpha = 1 (KL): classic/improved objective is +inf, except the improved TV shortcut.
 * ACCURACY  <= 4 ulp per objective (direct formulas, log1p); tests/test_rdp_convert.py.
 * EDGES     NaN in -> NaN out; alpha < 1, rdp < 0, delta outside (0, 1), eps < 0 -> NaN.
 *           Results are clipped: delta objective <= 0 (log of a probability).
 */
#ifndef DPB_RDP_CONVERT_H
#define DPB_RDP_CONVERT_H

enum { DPB_CONV_CLASSIC = 0, DPB_CONV_IMPROVED = 1 };

double dpb_rdp_eps_objective(double alpha, double rdp, double delta, int conversion);
double dpb_rdp_logdelta_objective(double alpha, double rdp, double eps, int conversion);

#endif /* DPB_RDP_CONVERT_H */
