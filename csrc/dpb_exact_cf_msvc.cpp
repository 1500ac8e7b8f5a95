/* dpb_exact_cf_msvc.cpp -- dpb_exact_cf.c compiled as C++, for MSVC only (setup.py swaps it in
 * on Windows): MSVC's C has no complex arithmetic; the C++ branch of dpb_exact_cf.c supplies
 * it.  The functions keep C linkage, so the Cython modules link to them unchanged. */
#include <math.h>
#include <stdlib.h>
extern "C" {
#include "dpb_exact_cf.h"
}
#include "dpb_exact_cf.c"
