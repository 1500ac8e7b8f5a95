# Declarations of csrc/dpb_exact_*.h (internal).
cdef extern from "dpb_exact_cf.h" nogil:
    void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                                double *re, double *im)
    void dpb_exact_lognormal_cf_tilted(double sigma, int size_biased, int raw, long n, const double *t,
                                       double lam, double *re, double *im)
    void dpb_exact_lognormal_cf_tilted_grid(double sigma, int size_biased, int raw, long n0, long count,
                                            double dt, double lam, double *re, double *im)

cdef extern from "dpb_logsum.h" nogil:
    int dpb_logsum_convolve(long n, const double *qx, const double *qz, int same, double h,
                            long K, long J1, int taps, const long *off, const double *w,
                            const double *coef, double tail_scale, double *out)

cdef extern from "dpb_fourier_series.h" nogil:
    double DPB_FS_ERR_UNITS
    int dpb_fourier_series_re(long N, int ncoef, const double *const *coef, long nx, const double *q,
                              double *out)

cdef extern from "dpb_exact_cf.h" nogil:
    void dpb_exact_lognormal_cf_pair_grid(double sigma, long n0, long count, double dt,
                                          double *re0, double *im0, double *re1, double *im1)
