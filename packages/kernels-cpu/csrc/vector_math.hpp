// exp that the compiler can vectorize: with TW_LIBMVEC (glibc's libmvec linked), exp and expf carry the
// SIMD declarations glibc's own headers give them only under -ffast-math, which would also drop NaN
// handling. Without it, the scalar std::exp.
#pragma once

#include <cmath>

#ifdef TW_LIBMVEC
extern "C" {
__attribute__((simd("notinbranch"))) float expf(float);
__attribute__((simd("notinbranch"))) double exp(double);
}
#endif

namespace tw {

inline float vexp(float x) {
#ifdef TW_LIBMVEC
    return ::expf(x);
#else
    return std::exp(x);
#endif
}

inline double vexp(double x) {
#ifdef TW_LIBMVEC
    return ::exp(x);
#else
    return std::exp(x);
#endif
}

}  // namespace tw
