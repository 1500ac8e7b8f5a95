/*
 * dpb_vecmath.h -- exp, expm1 and erfc two values at a time.
 *
 * On x86-64 Linux the 2-wide SSE2 routines of glibc's vector math library (libmvec,
 * _ZGVbN2v_*) are looked up when the extension module is loaded (dlopen/dlsym), so a
 * wheel built against an old glibc still uses them where the running glibc (>= 2.35)
 * has them; otherwise, and with -DDPB_NO_LIBMVEC, every call falls back to scalar libm.
 * libmvec is accurate to a few ulp (the accuracy tests cover both paths) and 2-3x the
 * throughput of scalar libm.  Single values go through the same routine as pairs, so
 * a point's result never depends on which loop (paired ufunc loop, scalar fast path,
 * M_exact search) computed it.
 */
#ifndef DPB_VECMATH_H
#define DPB_VECMATH_H

/* __GNUC__ (GCC, clang): dpb_vecmath.c registers the lookup with __attribute__((constructor)). */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(DPB_NO_LIBMVEC)
#include <emmintrin.h>
#define DPB_VECMATH_SSE2 1
typedef __m128d (*dpb_v2fn)(__m128d);
/* Never NULL: scalar two-lane fallbacks until libmvec is found. */
extern dpb_v2fn dpb_v2_exp, dpb_v2_expm1, dpb_v2_erfc;
/* 1 when all three libmvec routines were found at load time. */
extern int dpb_vecmath_native;
#endif

#include <math.h>

/* 1 when the libmvec routines are in use (for tests and benchmark reports). */
int dpb_vecmath_is_native(void);

#ifdef DPB_VECMATH_SSE2
static inline double dpb_expm1(double x)
{
    return dpb_vecmath_native ? _mm_cvtsd_f64(dpb_v2_expm1(_mm_set_sd(x))) : expm1(x);
}

static inline double dpb_exp(double x)
{
    return dpb_vecmath_native ? _mm_cvtsd_f64(dpb_v2_exp(_mm_set_sd(x))) : exp(x);
}

static inline void dpb_expm1_2(double x0, double x1, double *r0, double *r1)
{
    if (dpb_vecmath_native) {
        double r[2];
        _mm_storeu_pd(r, dpb_v2_expm1(_mm_set_pd(x1, x0)));
        *r0 = r[0];
        *r1 = r[1];
    } else {
        *r0 = expm1(x0);
        *r1 = expm1(x1);
    }
}

static inline void dpb_exp_2(double x0, double x1, double *r0, double *r1)
{
    if (dpb_vecmath_native) {
        double r[2];
        _mm_storeu_pd(r, dpb_v2_exp(_mm_set_pd(x1, x0)));
        *r0 = r[0];
        *r1 = r[1];
    } else {
        *r0 = exp(x0);
        *r1 = exp(x1);
    }
}
#else
static inline double dpb_expm1(double x) { return expm1(x); }
static inline double dpb_exp(double x) { return exp(x); }
static inline void dpb_expm1_2(double x0, double x1, double *r0, double *r1) { *r0 = expm1(x0); *r1 = expm1(x1); }
static inline void dpb_exp_2(double x0, double x1, double *r0, double *r1) { *r0 = exp(x0); *r1 = exp(x1); }
#endif

#endif /* DPB_VECMATH_H */
