// Shared helpers of the native CPU kernels: dtype dispatch, array checks and OpenMP work splitting.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#ifdef TW_OPENMP
#include <omp.h>
#endif

namespace tw {

namespace py = pybind11;

// Below this many element-operations a loop runs on the calling thread. These loops are memory-bound: a
// second thread gained at most 1.2x on the CNN's im2col (2 cores), and when another process holds the other
// core, a parallel region waits for its descheduled half (step medians up to 3x worse under load). Only the
// largest loops (a whole embedding table's Adam update) are worth it.
inline std::atomic<int64_t> parallel_work{int64_t{1} << 24};  // tests lower it to cover the parallel paths

inline int max_threads() {
#ifdef TW_OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

// Calls f(begin, end) on contiguous slices of [0, n) in parallel when n * cost is worth it.
template <class F>
void parallel_range(int64_t n, int64_t cost, F&& f) {
#ifdef TW_OPENMP
    int threads = max_threads();
    if (threads > 1 && n > 1 && n * std::max<int64_t>(cost, 1) >= parallel_work.load(std::memory_order_relaxed)) {
        threads = static_cast<int>(std::min<int64_t>(threads, n));
#pragma omp parallel num_threads(threads)
        {
            const int64_t t = omp_get_thread_num(), count = omp_get_num_threads();
            const int64_t begin = n * t / count, end = n * (t + 1) / count;
            if (begin < end) f(begin, end);
        }
        return;
    }
#endif
    if (n > 0) f(int64_t{0}, n);
}

// Runs body(T{}) for a float32 or float64 array, TypeError otherwise.
template <class Body>
auto dispatch_float(const py::array& a, const char* what, Body&& body) {
    if (py::isinstance<py::array_t<float>>(a)) return body(float{});
    if (py::isinstance<py::array_t<double>>(a)) return body(double{});
    throw py::type_error(std::string(what) + ": native kernels take float32 or float64 arrays, got " +
                         std::string(py::str(a.dtype())));
}

template <typename T>
void require_dtype(const py::array& a, const char* what, const char* name) {
    if (!py::isinstance<py::array_t<T>>(a))
        throw py::type_error(std::string(what) + ": " + name + " has dtype " + std::string(py::str(a.dtype())) +
                             ", expected the same dtype as the other inputs");
}

// A C-contiguous array of T read in place (no copy: the caller passes contiguous arrays).
template <typename T>
const T* in_ptr(const py::array& a, const char* what, const char* name) {
    require_dtype<T>(a, what, name);
    if (!(a.flags() & py::array::c_style))
        throw py::value_error(std::string(what) + ": " + name + " must be C-contiguous");
    return static_cast<const T*>(a.data());
}

// A C-contiguous, writeable array of T updated in place.
template <typename T>
T* out_ptr(py::array& a, const char* what, const char* name) {
    require_dtype<T>(a, what, name);
    if (!(a.flags() & py::array::c_style) || !a.writeable())
        throw py::value_error(std::string(what) + ": " + name + " must be C-contiguous and writeable");
    return static_cast<T*>(a.mutable_data());
}

// Where an elementwise kernel writes: ``out`` when it is a C-contiguous, writeable array of ``like``'s dtype and
// shape (a buffer the executor offers, possibly a dying input), else a new array. Loops writing out[i] from
// inputs at i only are correct even when out is one of the inputs.
template <typename T>
py::array result_like(const py::array& like, const py::object& out) {
    if (!out.is_none() && py::isinstance<py::array_t<T>>(out)) {
        py::array o = out.cast<py::array>();
        if ((o.flags() & py::array::c_style) && o.writeable() && o.ndim() == like.ndim() &&
            std::equal(o.shape(), o.shape() + o.ndim(), like.shape()))
            return o;
    }
    return py::array(like.dtype(), std::vector<py::ssize_t>(like.shape(), like.shape() + like.ndim()));
}

// out[i] = f(in[i]) over n elements. ``out`` is either ``in`` itself (an in-place offer) or a separate array,
// and each case gets its own loop whose pointers do not alias, so both vectorize.
template <typename T, class F>
void map_unary(const T* in, T* out, int64_t n, int64_t cost, F f) {
    parallel_range(n, cost, [&](int64_t begin, int64_t end) {
        if (in == out) {
            T* __restrict io = out;
            for (int64_t i = begin; i < end; ++i) io[i] = f(io[i]);
        } else {
            const T* __restrict a = in;
            T* __restrict o = out;
            for (int64_t i = begin; i < end; ++i) o[i] = f(a[i]);
        }
    });
}

// out[i] = f(a[i], b[i]); ``out`` is ``a``, ``b`` or a separate array.
template <typename T, class F>
void map_binary(const T* a, const T* b, T* out, int64_t n, int64_t cost, F f) {
    parallel_range(n, cost, [&](int64_t begin, int64_t end) {
        if (out == a) {
            T* __restrict o = out;
            const T* __restrict y = b;
            for (int64_t i = begin; i < end; ++i) o[i] = f(o[i], y[i]);
        } else if (out == b) {
            T* __restrict o = out;
            const T* __restrict x = a;
            for (int64_t i = begin; i < end; ++i) o[i] = f(x[i], o[i]);
        } else {
            const T* __restrict x = a;
            const T* __restrict y = b;
            T* __restrict o = out;
            for (int64_t i = begin; i < end; ++i) o[i] = f(x[i], y[i]);
        }
    });
}

// Element strides (not bytes) of a 4-D array.
struct Strides4 {
    int64_t n, h, w, c;
};

inline Strides4 element_strides(const py::array& a) {
    const auto s = a.itemsize();
    return {a.strides(0) / s, a.strides(1) / s, a.strides(2) / s, a.strides(3) / s};
}

// Where a sliding window lands: shared by convolution and pooling (NHWC, TF's padding split).
struct Window {
    int64_t n, h, w, c;            // input
    int64_t kh, kw;                // window
    int64_t sh, sw, dh, dw;        // strides, dilations
    int64_t pad_top, pad_left;
    int64_t out_h, out_w;
};

inline Window window_from(const py::tuple& t) {
    if (t.size() != 14) throw py::value_error("window geometry needs 14 integers");
    int64_t v[14];
    for (size_t i = 0; i < 14; ++i) v[i] = t[i].cast<int64_t>();
    return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
}

}  // namespace tw
