/* dpb_tailsum.c -- see dpb_tailsum.h. */
#include "dpb_tailsum.h"

#include <stddef.h>

void dpb_tail_sums(long n, const double *u, double r, double *a, double *d)
{
    double sa, sd;
    long i;
    if (n <= 0)
        return;
    /* the last entry starts both sums as it is (as np.cumsum does: -0.0 stays -0.0) */
    sa = sd = u[n - 1];
    if (a != NULL)
        a[n - 1] = sa;
    if (d != NULL)
        d[n - 1] = sd;
    if (a != NULL && d != NULL) {
        for (i = n - 2; i >= 0; --i) {
            sa += u[i];
            sd = u[i] + r * sd;
            a[i] = sa;
            d[i] = sd;
        }
    } else if (a != NULL) {
        for (i = n - 2; i >= 0; --i) {
            sa += u[i];
            a[i] = sa;
        }
    } else if (d != NULL) {
        for (i = n - 2; i >= 0; --i) {
            sd = u[i] + r * sd;
            d[i] = sd;
        }
    }
}
