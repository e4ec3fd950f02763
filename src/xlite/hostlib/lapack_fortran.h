// The Fortran LAPACK/BLAS routines hostlib calls, and one typed dispatcher per
// routine so the kernels are written once for s, d, c and z. Internal to
// hostlib: callers use lapack.h.
//
// Fortran ABI (gfortran, which builds Debian's LAPACK): every argument by
// pointer, and one hidden `size_t` length per CHARACTER argument appended at
// the end. Our flags are single characters, so each length is 1.
#ifndef XLITE_HOSTLIB_LAPACK_FORTRAN_H_
#define XLITE_HOSTLIB_LAPACK_FORTRAN_H_

#include <complex>
#include <cstddef>
#include <type_traits>

namespace xlite::hostlib::fortran {

using cf = std::complex<float>;
using cd = std::complex<double>;
using len_t = size_t;

extern "C" {
// BLAS level 3.
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*,
            len_t, len_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, len_t, len_t);
void cgemm_(const char*, const char*, const int*, const int*, const int*, const cf*, const cf*,
            const int*, const cf*, const int*, const cf*, cf*, const int*, len_t, len_t);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const cd*, const cd*,
            const int*, const cd*, const int*, const cd*, cd*, const int*, len_t, len_t);

void strsm_(const char*, const char*, const char*, const char*, const int*, const int*,
            const float*, const float*, const int*, float*, const int*, len_t, len_t, len_t, len_t);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*,
            const double*, const double*, const int*, double*, const int*, len_t, len_t, len_t,
            len_t);
void ctrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const cf*,
            const cf*, const int*, cf*, const int*, len_t, len_t, len_t, len_t);
void ztrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const cd*,
            const cd*, const int*, cd*, const int*, len_t, len_t, len_t, len_t);

void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, cf*, const int*, int*, int*);
void zgetrf_(const int*, const int*, cd*, const int*, int*, int*);

void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void cgeqrf_(const int*, const int*, cf*, const int*, cf*, cf*, const int*, int*);
void zgeqrf_(const int*, const int*, cd*, const int*, cd*, cd*, const int*, int*);

void sgeqp3_(const int*, const int*, float*, const int*, int*, float*, float*, const int*, int*);
void dgeqp3_(const int*, const int*, double*, const int*, int*, double*, double*, const int*, int*);
void cgeqp3_(const int*, const int*, cf*, const int*, int*, cf*, cf*, const int*, float*, int*);
void zgeqp3_(const int*, const int*, cd*, const int*, int*, cd*, cd*, const int*, double*, int*);

void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*,
             const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
             const int*, int*);
void cungqr_(const int*, const int*, const int*, cf*, const int*, const cf*, cf*, const int*, int*);
void zungqr_(const int*, const int*, const int*, cd*, const int*, const cd*, cd*, const int*, int*);

void sormqr_(const char*, const char*, const int*, const int*, const int*, const float*, const int*,
             const float*, float*, const int*, float*, const int*, int*, len_t, len_t);
void dormqr_(const char*, const char*, const int*, const int*, const int*, const double*,
             const int*, const double*, double*, const int*, double*, const int*, int*, len_t,
             len_t);
void cunmqr_(const char*, const char*, const int*, const int*, const int*, const cf*, const int*,
             const cf*, cf*, const int*, cf*, const int*, int*, len_t, len_t);
void zunmqr_(const char*, const char*, const int*, const int*, const int*, const cd*, const int*,
             const cd*, cd*, const int*, cd*, const int*, int*, len_t, len_t);

void spotrf_(const char*, const int*, float*, const int*, int*, len_t);
void dpotrf_(const char*, const int*, double*, const int*, int*, len_t);
void cpotrf_(const char*, const int*, cf*, const int*, int*, len_t);
void zpotrf_(const char*, const int*, cd*, const int*, int*, len_t);

void sgesdd_(const char*, const int*, const int*, float*, const int*, float*, float*, const int*,
             float*, const int*, float*, const int*, int*, int*, len_t);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*, const int*,
             double*, const int*, double*, const int*, int*, int*, len_t);
void cgesdd_(const char*, const int*, const int*, cf*, const int*, float*, cf*, const int*, cf*,
             const int*, cf*, const int*, float*, int*, int*, len_t);
void zgesdd_(const char*, const int*, const int*, cd*, const int*, double*, cd*, const int*, cd*,
             const int*, cd*, const int*, double*, int*, int*, len_t);

void sgesvd_(const char*, const char*, const int*, const int*, float*, const int*, float*, float*,
             const int*, float*, const int*, float*, const int*, int*, len_t, len_t);
void dgesvd_(const char*, const char*, const int*, const int*, double*, const int*, double*,
             double*, const int*, double*, const int*, double*, const int*, int*, len_t, len_t);
void cgesvd_(const char*, const char*, const int*, const int*, cf*, const int*, float*, cf*,
             const int*, cf*, const int*, cf*, const int*, float*, int*, len_t, len_t);
void zgesvd_(const char*, const char*, const int*, const int*, cd*, const int*, double*, cd*,
             const int*, cd*, const int*, cd*, const int*, double*, int*, len_t, len_t);

void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*, const int*,
             int*, const int*, int*, len_t, len_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
             const int*, int*, const int*, int*, len_t, len_t);
void cheevd_(const char*, const char*, const int*, cf*, const int*, float*, cf*, const int*, float*,
             const int*, int*, const int*, int*, len_t, len_t);
void zheevd_(const char*, const char*, const int*, cd*, const int*, double*, cd*, const int*,
             double*, const int*, int*, const int*, int*, len_t, len_t);

void sgeev_(const char*, const char*, const int*, float*, const int*, float*, float*, float*,
            const int*, float*, const int*, float*, const int*, int*, len_t, len_t);
void dgeev_(const char*, const char*, const int*, double*, const int*, double*, double*, double*,
            const int*, double*, const int*, double*, const int*, int*, len_t, len_t);
void cgeev_(const char*, const char*, const int*, cf*, const int*, cf*, cf*, const int*, cf*,
            const int*, cf*, const int*, float*, int*, len_t, len_t);
void zgeev_(const char*, const char*, const int*, cd*, const int*, cd*, cd*, const int*, cd*,
            const int*, cd*, const int*, double*, int*, len_t, len_t);

// gees's SELECT argument is never called with SORT='N'; we always pass null.
void sgees_(const char*, const char*, void*, const int*, float*, const int*, int*, float*, float*,
            float*, const int*, float*, const int*, int*, int*, len_t, len_t);
void dgees_(const char*, const char*, void*, const int*, double*, const int*, int*, double*,
            double*, double*, const int*, double*, const int*, int*, int*, len_t, len_t);
void cgees_(const char*, const char*, void*, const int*, cf*, const int*, int*, cf*, cf*,
            const int*, cf*, const int*, float*, int*, int*, len_t, len_t);
void zgees_(const char*, const char*, void*, const int*, cd*, const int*, int*, cd*, cd*,
            const int*, cd*, const int*, double*, int*, int*, len_t, len_t);

void sgehrd_(const int*, const int*, const int*, float*, const int*, float*, float*, const int*,
             int*);
void dgehrd_(const int*, const int*, const int*, double*, const int*, double*, double*, const int*,
             int*);
void cgehrd_(const int*, const int*, const int*, cf*, const int*, cf*, cf*, const int*, int*);
void zgehrd_(const int*, const int*, const int*, cd*, const int*, cd*, cd*, const int*, int*);

void ssytrd_(const char*, const int*, float*, const int*, float*, float*, float*, float*,
             const int*, int*, len_t);
void dsytrd_(const char*, const int*, double*, const int*, double*, double*, double*, double*,
             const int*, int*, len_t);
void chetrd_(const char*, const int*, cf*, const int*, float*, float*, cf*, cf*, const int*, int*,
             len_t);
void zhetrd_(const char*, const int*, cd*, const int*, double*, double*, cd*, cd*, const int*, int*,
             len_t);

void sgtsv_(const int*, const int*, float*, float*, float*, float*, const int*, int*);
void dgtsv_(const int*, const int*, double*, double*, double*, double*, const int*, int*);
void cgtsv_(const int*, const int*, cf*, cf*, cf*, cf*, const int*, int*);
void zgtsv_(const int*, const int*, cd*, cd*, cd*, cd*, const int*, int*);
}  // extern "C"

// Picks the s/d/c/z routine for T: Pick<T>(s, d, c, z).
template <typename T, typename S, typename D, typename C, typename Z>
constexpr auto Pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same_v<T, float>) {
    return s;
  } else if constexpr (std::is_same_v<T, double>) {
    return d;
  } else if constexpr (std::is_same_v<T, cf>) {
    return c;
  } else {
    static_assert(std::is_same_v<T, cd>, "LAPACK types are float, double, complex<float/double>");
    return z;
  }
}

}  // namespace xlite::hostlib::fortran

#endif  // XLITE_HOSTLIB_LAPACK_FORTRAN_H_
