# Declarations of the pure-C99 core in csrc/ (internal; not a public Cython API).

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
    int dpb_theorem31_status(double sigma, double rounds, double delta, int coefficient)

cdef extern from "dpb_rounds.h" nogil:
    double DPB_ROUNDS_MAX
    double dpb_rounds_closed_form(double sigma, double delta, int coefficient)
    double dpb_rounds_required(double sigma, double delta, int coefficient, int validity_at_target)
    double dpb_min_dataset_size(double sigma, double rounds, double clip_norm, double noise_ratio)
    double dpb_compose_delta(double delta, double epochs)
    double dpb_per_epoch_delta(double delta_total, double epochs)

cdef extern from "dpb_vecmath.h" nogil:
    int dpb_vecmath_is_native()
