# Declarations of csrc/dpb_tradeoff.h, csrc/dpb_edgeworth.h and csrc/dpb_gdp.h (internal).

cdef extern from "dpb_tradeoff.h" nogil:
    double dpb_gaussian_tradeoff(double a, double mu)
    double dpb_f0delta_tradeoff(double a, double delta)
    double dpb_gaussian_f0delta_tradeoff(double a, double mu, double delta)
    double dpb_multi_epoch_tradeoff(double a, double delta, double epochs)
    double dpb_gaussian_max_gap(double mu, double delta)
    double dpb_tradeoff_clt(double a, double sigma, double rounds, int truncated)
    double dpb_tradeoff_clt_slope(double a, double sigma, double rounds)
    double dpb_tradeoff_lower_bound(double a, double sigma, double rounds, int coefficient)

cdef extern from "dpb_edgeworth.h" nogil:
    enum:
        DPB_EW_OK
        DPB_EW_BAD_INPUT
        DPB_EW_NOT_MONOTONE_AT_0
        DPB_EW_OUT_OF_RANGE
    double dpb_tradeoff_edgeworth(double a, double sigma, double rounds)
    int dpb_edgeworth_status(double a, double sigma, double rounds)
    double dpb_edgeworth_p(double y, double sigma, double n)

cdef extern from "dpb_gdp.h" nogil:
    double dpb_normal_mills(double x)
    double dpb_gdp_delta(double eps, double mu)
    double dpb_gdp_log_delta(double eps, double mu)
    double dpb_gdp_epsilon(double delta, double mu)
    double dpb_gdp_mu_random_allocation(double sigma, double rounds, double epochs)
    double dpb_gdp_mu_poisson(double sigma, double sample_rate, double steps)
    double dpb_gdp_mu_poisson_drs(double sigma, double sample_rate, double steps)
