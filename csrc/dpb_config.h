/*
 * dpb_config.h -- portability macros and constants shared by the dpbounds C core.
 *
 * Pure C99: no Python.h anywhere under csrc/.  Every constant carries 20+ digits so
 * that the compiler rounds it correctly to double.
 */
#ifndef DPB_CONFIG_H
#define DPB_CONFIG_H

#include <float.h>
#include <math.h>
#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define DPB_INLINE static inline __attribute__((always_inline))
#define DPB_LIKELY(x) __builtin_expect(!!(x), 1)
#define DPB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DPB_INLINE static inline
#define DPB_LIKELY(x) (x)
#define DPB_UNLIKELY(x) (x)
#endif

/* DPB_TARGET_CLONES: an AVX2 clone of a hot loop, chosen at load time where the CPU has it (GCC
 * function multi-versioning: 4-wide instead of 2-wide, three-operand instructions).  A clone is
 * bit-identical to the default one: ISO C mode (-std=c99) keeps FP contraction off and nothing
 * is reassociated, so both round the same operations in the same order.  glibc only: the
 * clones are dispatched by an ifunc, which musl does not implement.  -DDPB_NO_CLONES turns them off. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) \
    && !defined(DPB_NO_CLONES)
#define DPB_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DPB_TARGET_CLONES
#endif

/* Quiet NaN / inf as constants: producing them raises no floating-point flag,
 * unlike 0.0/0.0 or 1e308*10, so numpy prints no RuntimeWarning. */
#define DPB_NAN ((double)NAN)
#define DPB_INF ((double)INFINITY)

#define DPB_PI           3.1415926535897932384626433832795028841971693993751
#define DPB_PI_2         1.5707963267948966192313216916397514420985846996876  /* pi/2 */
#define DPB_2PI          6.283185307179586476925286766559005768394338798750   /* 2 pi */
#define DPB_SQRT2PI      2.5066282746310005024157652848110452530069867406099
#define DPB_INV_SQRT2PI  0.39894228040143267793994605993438186847585863116493
#define DPB_LOG_SQRT2PI  0.91893853320467274178032973640561763986139747363778
#define DPB_SQRT1_2      0.70710678118654752440084436210484903928483593768847
#define DPB_SQRT1_2_LO   (-4.8336466567264567e-17) /* SQRT1_2 - (double)SQRT1_2 */
#define DPB_SQRT2        1.4142135623730950488016887242096980785696718753769
#define DPB_2_SQRTPI     1.1283791670955125738961589031215451716881012586580
#define DPB_SQRT_8_PI    1.595769121605730711759784239737527473903 /* sqrt(8/pi) = E|Z|^3 */
#define DPB_SQRT_2EPI    4.1327313541224929384693918842998526494455219169913 /* sqrt(2 e pi) */
/* Return value of C functions that allocate scratch memory: 0, or DPB_ENOMEM when the
 * allocation failed (the outputs are then NaN); the Cython bridge raises MemoryError. */
#define DPB_ENOMEM (-1)
#define DPB_LN2          0.69314718055994530941723212145817656807550013436026
#define DPB_LN4          1.3862943611198906188344642429163531361510002687205
#define DPB_LOG_DBL_MAX  709.782712893383996732223389910657145504

/* Berry-Esseen constant for i.i.d. summands (Shevtsova 2011), as used by
 * Theorem 3.1 of the random-allocation paper.  That paper's Table 1 pins the value: its
 * printed figures are reproduced with 0.4748 and not with 0.4690 or 0.4785. */
#define DPB_BE_CONSTANT  0.4748

/* Exact product a*b = hi + lo (|a*b| < 1e300, no underflow).  With hardware FMA
 * compiled in this is one fma; portable wheels target baseline x86-64, where C's
 * fma() is a slow library call, so Dekker/Veltkamp splitting is used instead. */
#if defined(__FMA__) || defined(__FP_FAST_FMA) || defined(__aarch64__)
DPB_INLINE void dpb_two_prod(double a, double b, double *hi, double *lo)
{
    *hi = a * b;
    *lo = fma(a, b, -*hi);
}
#else
DPB_INLINE void dpb_split(double a, double *h, double *l)
{
    double t = 134217729.0 * a;           /* 2^27 + 1 */
    *h = t - (t - a);
    *l = a - *h;
}

DPB_INLINE void dpb_two_prod(double a, double b, double *hi, double *lo)
{
    double ah, al, bh, bl;
    *hi = a * b;
    dpb_split(a, &ah, &al);
    dpb_split(b, &bh, &bl);
    *lo = ((ah * bh - *hi) + ah * bl + al * bh) + al * bl;
}
#endif

/* a*b for a, b >= 0, +inf (without the overflow flag) when it exceeds DBL_MAX.
 * inf * 0 gives inf: callers pass positive quantities whose 0 is an underflow
 * and whose inf an overflow of a growing factor (e.g. coef ~ sigma^4, mu ~ 1/sigma). */
DPB_INLINE double dpb_mul_sat(double a, double b)
{
    if (DPB_LIKELY(a <= 1e150 && b <= 1e150)) return a * b;   /* cannot overflow; no division on the hot path */
    if (isinf(a) || isinf(b)) return DPB_INF;
    if (a > 1.0 && b > 1.0 && b > DBL_MAX / a) return DPB_INF;
    return a * b;
}

/* a/b for a >= 0, b > 0, +inf (without the overflow flag) when it exceeds DBL_MAX. */
DPB_INLINE double dpb_div_sat(double a, double b)
{
    if (isinf(a) || (b < 1.0 && a > b * DBL_MAX)) return DPB_INF;
    return a / b;
}

/* 1/sigma^2 as an unevaluated sum hi + lo (about 2^-104 relative).
 * Needed because exp(1/sigma^2) amplifies the rounding of 1/sigma^2 by
 * 1/sigma^2 (x600 at sigma = 0.07). */
DPB_INLINE void dpb_inv_square(double s, double *hi, double *lo)
{
    double s2, s2l, r, e;
    if (s > 1e150) {                /* s*s would overflow; 1/s^2 < 1e-300 needs no tail */
        r = 1.0 / s;
        *hi = r * r;
        *lo = 0.0;
        return;
    }
    if (s >= 1.0) {                 /* y <= 1: exp amplifies its rounding by <= 1, no tail needed */
        *hi = 1.0 / (s * s);
        *lo = 0.0;
        return;
    }
    dpb_two_prod(s, s, &s2, &s2l);
    r = 1.0 / s2;
    {
        double p, pl;
        dpb_two_prod(r, s2, &p, &pl);   /* 1 - r*s2 exactly: 1 - p is exact (Sterbenz) */
        e = (1.0 - p) - pl;
    }
    e -= r * s2l;
    *hi = r;
    *lo = r * e;
}

#endif /* DPB_CONFIG_H */
