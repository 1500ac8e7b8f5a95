/* dpb_vecmath.c -- see dpb_vecmath.h. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1   /* dlfcn.h: RTLD_* under -std=c99 */
#endif
#include "dpb_vecmath.h"

#ifdef DPB_VECMATH_SSE2
#include <dlfcn.h>

static __m128d scalar_exp2(__m128d x)
{
    double a[2];
    _mm_storeu_pd(a, x);
    return _mm_set_pd(exp(a[1]), exp(a[0]));
}

static __m128d scalar_expm1_2(__m128d x)
{
    double a[2];
    _mm_storeu_pd(a, x);
    return _mm_set_pd(expm1(a[1]), expm1(a[0]));
}

static __m128d scalar_erfc2(__m128d x)
{
    double a[2];
    _mm_storeu_pd(a, x);
    return _mm_set_pd(erfc(a[1]), erfc(a[0]));
}

dpb_v2fn dpb_v2_exp = scalar_exp2, dpb_v2_expm1 = scalar_expm1_2, dpb_v2_erfc = scalar_erfc2;
int dpb_vecmath_native = 0;

/* Runs when the shared object is loaded, before any kernel can be called. */
__attribute__((constructor)) static void dpb_vecmath_init(void)
{
    void *h = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
    void *e, *m, *c;
    if (!h) return;
    e = dlsym(h, "_ZGVbN2v_exp");
    m = dlsym(h, "_ZGVbN2v_expm1");
    c = dlsym(h, "_ZGVbN2v_erfc");
    if (!e || !m || !c) return;      /* glibc < 2.35: stay scalar everywhere */
    /* object-to-function pointer conversion through memcpy-free union (POSIX guarantees it works) */
    {
        union { void *p; dpb_v2fn f; } ue, um, uc;
        ue.p = e;
        um.p = m;
        uc.p = c;
        dpb_v2_exp = ue.f;
        dpb_v2_expm1 = um.f;
        dpb_v2_erfc = uc.f;
    }
    dpb_vecmath_native = 1;
}

int dpb_vecmath_is_native(void)
{
    return dpb_vecmath_native;
}

#else  /* no libmvec: scalar libm (the inline functions in the header) */

int dpb_vecmath_is_native(void)
{
    return 0;
}

#endif
