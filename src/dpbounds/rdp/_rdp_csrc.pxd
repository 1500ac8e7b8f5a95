# Declarations of the RDP part of the C core (csrc/dpb_rdp_*.h); internal.

cdef extern from "dpb_rdp_base.h" nogil:
    double dpb_rdp_gaussian(double alpha, double sigma)
    double dpb_rdp_laplace(double alpha, double b)
    double dpb_rdp_randomized_response(double alpha, double p)
    double dpb_rdp_laplace_inf(double b)
    double dpb_rdp_rr_inf(double p)

cdef extern from "dpb_rdp_common.h" nogil:
    double DPB_RDP_ALPHA_MAX

cdef extern from "dpb_rdp_wor.h" nogil:
    enum:
        DPB_WOR_THEOREM9
        DPB_WOR_IMPROVED
        DPB_WOR_LOWER
    ctypedef struct dpb_rdp_work:
        long n
    double dpb_rdp_wor_thm9_int(long a, double gamma, const double *eps, double eps_inf, const double *lfact)
    void dpb_rdp_pv_logd(long lmax, const double *logs, const double *lfact, double *logd)
    double dpb_rdp_wor_pv_int(long a, double gamma, const double *eps, double eps_inf, const double *logd, const double *lfact)
    double dpb_rdp_wor_lower_int(long a, double gamma, const double *eps, const double *lfact)
    double dpb_rdp_interp(double a, double eps_floor, double eps_ceil)
    void dpb_rdp_work_init(dpb_rdp_work *w)
    void dpb_rdp_work_free(dpb_rdp_work *w)
    double dpb_rdp_wor_gaussian(double alpha, double sigma, double gamma, int bound, dpb_rdp_work *w)

cdef extern from "dpb_rdp_poisson.h" nogil:
    enum:
        DPB_POISSON_EXACT
        DPB_POISSON_COMPAT
    double dpb_rdp_poisson_gaussian(double alpha, double sigma, double q, int mode)
    double dpb_rdp_poisson_quad_log(double alpha, double sigma, double q)
    double dpb_rdp_poisson_negseries_log(double alpha, double sigma, double q)

cdef extern from "dpb_rdp_convert.h" nogil:
    enum:
        DPB_CONV_CLASSIC
        DPB_CONV_IMPROVED
    double dpb_rdp_eps_objective(double alpha, double rdp, double delta, int conversion)
    double dpb_rdp_logdelta_objective(double alpha, double rdp, double eps, int conversion)
