# The C core (csrc/, built once as the static library dpbcore): one declaration file for
# the Cython modules of the package (the generated _ufuncs.pyx and the hand-written
# _kernels.pyx).  Internal: the headers are not installed, so this is not a public API.

cdef extern from "dpb_config.h" nogil:
    double DPB_BE_CONSTANT

cdef extern from "dpb_normal.h" nogil:
    double dpb_ndtr(double x)
    double dpb_log_ndtr(double x)
    double dpb_ndtri(double p)
    double dpb_ndtri_complement(double a)
    double dpb_normal_pdf(double x)

cdef extern from "dpb_lognormal.h" nogil:
    double dpb_lognormal_variance(double sigma)
    double dpb_lognormal_mu3(double sigma)
    double dpb_lognormal_mu4(double sigma)
    double dpb_lognormal_rho3(double sigma)
    double dpb_coef_simplified(double sigma)
    double dpb_coef_exact(double sigma)

cdef extern from "dpb_theorem31.h" nogil:
    enum:
        DPB_COEF_SIMPLIFIED
        DPB_COEF_EXACT
        DPB_T31_VALID
        DPB_T31_ROUNDS_BELOW_3
        DPB_T31_SIGMA_BELOW_EDGE
        DPB_T31_CONDITION2
        DPB_T31_DELTA_BELOW_MIN
        DPB_T31_BAD_INPUT
    ctypedef struct dpb_t31_sigma:
        double sigma
        double eps
        double coef
        double w
        double rhs
    int dpb_t31_prepare(double sigma, int coefficient, dpb_t31_sigma *c)
    int dpb_t31_prepare_delta(double sigma, int coefficient, dpb_t31_sigma *c)
    double dpb_t31_terms(const dpb_t31_sigma *c, double rounds, double *terms)
    double dpb_t31_delta_min(const dpb_t31_sigma *c, double rounds)
    int dpb_t31_status(const dpb_t31_sigma *c, double rounds, double delta, double *delta_min_out)
    enum:
        DPB_T31_MODE_DELTA_MIN
        DPB_T31_MODE_BOUND
        DPB_T31_MODE_CHECKED
    void dpb_t31_eval_n(const char *sigma, Py_ssize_t sigma_stride, const char *rounds, Py_ssize_t rounds_stride,
                        char *out, Py_ssize_t out_stride, char *status, Py_ssize_t status_stride,
                        Py_ssize_t n, int coefficient, int mode)
    double dpb_delta_min(double sigma, double rounds, int coefficient)
    int dpb_t31_checked(const dpb_t31_sigma *c, double rounds, double *out)
    double dpb_delta_bound(double sigma, double rounds, int coefficient)
    double dpb_delta_bound_checked(double sigma, double rounds, int coefficient, int *status)
    void dpb_delta_terms(double sigma, double rounds, int coefficient, double *terms)
    int dpb_theorem31_status(double sigma, double rounds, double delta, int coefficient)

cdef extern from "dpb_rounds.h" nogil:
    double DPB_ROUNDS_MAX
    double dpb_rounds_closed_form(double sigma, double delta, int coefficient)
    double dpb_rounds_required(double sigma, double delta, int coefficient, int validity_at_target)
    double dpb_min_dataset_size(double sigma, double rounds, double clip_norm, double noise_ratio)
    double dpb_compose_delta(double delta, double epochs)
    double dpb_per_epoch_delta(double delta_total, double epochs)

cdef extern from "dpb_outer.h" nogil:
    ctypedef struct dpb_outer_t31_cols:
        Py_ssize_t n
        const double *rounds
        double *inv_m1
        double *log_m
        double *tail
        Py_ssize_t *odd
        Py_ssize_t n_odd
        double inv_m1_min
    void dpb_outer_t31_columns(dpb_outer_t31_cols *cols, int mode)
    void dpb_outer_delta_bound(const double *sigma, Py_ssize_t r0, Py_ssize_t r1,
                               const dpb_outer_t31_cols *cols, Py_ssize_t c0, Py_ssize_t c1,
                               int coefficient, int mode, double *out, signed char *status, Py_ssize_t ld)
    void dpb_outer_rounds_required(const double *sigma, Py_ssize_t r0, Py_ssize_t r1,
                                   const double *delta, Py_ssize_t c0, Py_ssize_t c1,
                                   int coefficient, int validity_at_target, double *out, Py_ssize_t ld)
    void dpb_outer_dataset_columns(const double *rounds, Py_ssize_t n, double *masked)
    void dpb_outer_min_dataset_size(const double *sigma, Py_ssize_t r0, Py_ssize_t r1,
                                    const double *masked, Py_ssize_t c0, Py_ssize_t c1,
                                    double clip_norm, double noise_ratio, double *out, Py_ssize_t ld)

cdef extern from "dpb_vecmath.h" nogil:
    int dpb_vecmath_is_native()

cdef extern from "dpb_tradeoff.h" nogil:
    double DPB_CLT_SIGMA_MIN
    double dpb_gaussian_tradeoff(double a, double mu)
    double dpb_f0delta_tradeoff(double a, double delta)
    double dpb_gaussian_f0delta_tradeoff(double a, double mu, double delta)
    double dpb_multi_epoch_tradeoff(double a, double delta, double epochs)
    double dpb_gaussian_max_gap(double mu, double delta)
    double dpb_tradeoff_clt(double a, double sigma, double rounds, int truncated)
    double dpb_tradeoff_clt_slope(double a, double sigma, double rounds)
    double dpb_tradeoff_lower_bound(double a, double sigma, double rounds, int coefficient)

cdef extern from "dpb_edgeworth.h" nogil:
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

cdef extern from "dpb_exact_cf.h" nogil:
    void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                                double *re, double *im)
    int dpb_exact_lognormal_cf_tilted(double sigma, int size_biased, int raw, long n, const double *t,
                                       double lam, double *re, double *im)
    int dpb_exact_lognormal_cf_tilted_grid(double sigma, int size_biased, int raw, long n0, long count,
                                            double dt, double lam, double *re, double *im)
    int dpb_exact_lognormal_cf_pair_grid(double sigma, long n0, long count, double dt,
                                          double *re0, double *im0, double *re1, double *im1)

cdef extern from "dpb_tailtab.h" nogil:
    void dpb_tailtab_lower(const double *lam, long nl, const double *y, long ny, const double *c, double *g)
    int dpb_tailtab_upper(const double *lam, long nl, const double *b, long nb, const double *w,
                           const double *y, const long *seg, double c5, double *S, double *J)

cdef extern from "dpb_tailsum.h" nogil:
    void dpb_tail_sums(long n, const double *u, double r, double *a, double *d)

cdef extern from "dpb_logsum.h" nogil:
    int dpb_logsum_convolve(long n, const double *qx, const double *qz, int same, double h,
                            long K, long J1, int taps, const long *off, const double *w,
                            const double *coef, double tail_scale, double *out)
    ctypedef int (*dpb_logsum_stop_fn)(void *ctx) noexcept nogil
    int dpb_logsum_convolve_watched(long n, const double *qx, const double *qz, int same, double h,
                                    long K, long J1, int taps, const long *off, const double *w,
                                    const double *coef, double tail_scale, double *out,
                                    dpb_logsum_stop_fn stop, void *ctx)

cdef extern from "dpb_fourier_series.h" nogil:
    double DPB_FS_ERR_UNITS
    int dpb_fourier_series_re(long N, int ncoef, const double *const *coef, long nx, const double *q,
                              double *out)

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
    void dpb_rdp_pv_logd_range(long lmin, long lmax, const double *logs, const double *lfact, double *logd)
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
    double DPB_RDP_QUAD_MAX_NODES
    double dpb_rdp_poisson_gaussian(double alpha, double sigma, double q, int mode)
    double dpb_rdp_poisson_quad_log(double alpha, double sigma, double q)
    double dpb_rdp_poisson_negseries_log(double alpha, double sigma, double q)

cdef extern from "dpb_rdp_convert.h" nogil:
    enum:
        DPB_CONV_CLASSIC
        DPB_CONV_IMPROVED
    double dpb_rdp_eps_objective(double alpha, double rdp, double delta, int conversion)
    double dpb_rdp_logdelta_objective(double alpha, double rdp, double eps, int conversion)

cdef extern from "dpb_rdp_outward.h" nogil:
    double dpb_rdp_eps_up(double alpha, double rdp, double delta, int conversion)
    double dpb_rdp_logdelta_up(double alpha, double rdp, double eps, int conversion)
    double dpb_rdp_delta_up(double alpha, double rdp, double eps, int conversion)
    double dpb_rdp_exp_up(double x)
