# Declarations of csrc/dpb_exact_*.h (internal).
cdef extern from "dpb_exact_cf.h" nogil:
    void dpb_exact_lognormal_cf(double sigma, int size_biased, long n, const double *t,
                                double *re, double *im)
    void dpb_exact_lognormal_cf_tilted(double sigma, int size_biased, int raw, long n, const double *t,
                                       double lam, double *re, double *im)
