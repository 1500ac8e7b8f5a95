/* dpb_rdp_convert.c -- see dpb_rdp_convert.h. */
#include <math.h>
#include "dpb_config.h"
#include "dpb_rdp_common.h"
#include "dpb_rdp_convert.h"

double dpb_rdp_eps_objective(double a, double rdp, double delta, int conv)
{
    double ld, r;
    if (a != a || rdp != rdp || delta != delta) return DPB_NAN;
    if (!(a >= 1.0) || !(rdp >= 0.0) || !(delta > 0.0 && delta < 1.0)) return DPB_NAN;
    if (conv != DPB_CONV_CLASSIC && conv != DPB_CONV_IMPROVED) return DPB_NAN;
    if (conv == DPB_CONV_IMPROVED && rdp != DPB_INF && delta * delta >= -expm1(-rdp)) return 0.0;
    if (a == DPB_INF) return rdp;
    if (a == 1.0 || rdp == DPB_INF) return DPB_INF;
    ld = log(delta);
    if (conv == DPB_CONV_CLASSIC) return rdp - ld / (a - 1.0);
    r = rdp + log1p(-1.0 / a) - (ld + log(a)) / (a - 1.0);
    return r > 0.0 ? r : 0.0;
}

double dpb_rdp_logdelta_objective(double a, double rdp, double eps, int conv)
{
    double r;
    if (a != a || rdp != rdp || eps != eps) return DPB_NAN;
    if (!(a >= 1.0) || !(rdp >= 0.0) || !(eps >= 0.0)) return DPB_NAN;
    if (conv != DPB_CONV_CLASSIC && conv != DPB_CONV_IMPROVED) return DPB_NAN;
    /* order inf: (a-1) t is +inf or -inf; the improved conversion still takes the
       total-variation bound below (KL <= D_inf), as at every finite order */
    if (a == DPB_INF) r = (rdp > eps) ? DPB_INF : -DPB_INF;
    else if (rdp == DPB_INF) return 0.0;
    else if (a == 1.0) r = DPB_INF;
    else if (eps == DPB_INF) r = -DPB_INF;
    else {
        double t = rdp - eps + (conv == DPB_CONV_CLASSIC ? 0.0 : log1p(-1.0 / a));
        /* (a-1) t without overflow */
        if (a - 1.0 > 1.0 && fabs(t) > DBL_MAX / (a - 1.0)) r = (t > 0.0) ? DPB_INF : -DPB_INF;
        else r = (a - 1.0) * t;
        if (conv == DPB_CONV_IMPROVED) r -= log(a);
    }
    if (conv == DPB_CONV_IMPROVED) {
        double tv = (rdp == 0.0) ? -DPB_INF : 0.5 * dpb_log1mexp(-rdp);
        if (tv < r) r = tv;
    }
    return r < 0.0 ? r : 0.0;
}
