// Max and average pooling over NHWC arrays (any strides) and their gradients, parallel over the batch.
//
// Padding never takes part: max pooling looks at valid cells only (TF pads with the lowest value) and
// average pooling divides by the number of valid cells. A max window's gradient goes to its first
// maximum in row-major window order, the cell equal to the forward output, as the numpy kernel does.
#include <limits>
#include <vector>

#include "common.hpp"

namespace tw {
namespace {

struct Span {
    int64_t begin, end;
};

inline Span valid(int64_t out_index, int64_t stride, int64_t pad, int64_t window, int64_t size) {
    const int64_t start = out_index * stride - pad;
    return {std::max<int64_t>(start, 0), std::min<int64_t>(start + window, size)};
}

// Max and average pooling differ only in how a window's cells combine; the loops are shared.
template <typename T>
struct MaxOf {
    static T start() { return -std::numeric_limits<T>::infinity(); }
    static T join(T acc, T v) { return (v > acc || v != v) ? v : acc; }
    static T finish(T acc, T) { return acc; }
};

template <typename T>
struct MeanOf {
    static T start() { return T(0); }
    static T join(T acc, T v) { return acc + v; }
    static T finish(T acc, T count) { return acc / count; }
};

template <typename T, template <typename> class Reduce>
py::array pool_t(const py::array& x, const Window& g) {
    const Strides4 s = element_strides(x);
    const T* src = static_cast<const T*>(x.data());
    py::array_t<T> result({g.n, g.out_h, g.out_w, g.c});
    T* dst = result.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n * g.out_h, g.out_w * g.kh * g.kw * g.c, [&](int64_t begin, int64_t end) {
        for (int64_t ni = begin; ni < end; ++ni) {
            const int64_t n = ni / g.out_h, i = ni % g.out_h;
            const Span rows = valid(i, g.sh, g.pad_top, g.kh, g.h);
            for (int64_t j = 0; j < g.out_w; ++j) {
                T* out = dst + (ni * g.out_w + j) * g.c;
                std::fill_n(out, g.c, Reduce<T>::start());
                const Span cols = valid(j, g.sw, g.pad_left, g.kw, g.w);
                for (int64_t r = rows.begin; r < rows.end; ++r)
                    for (int64_t col = cols.begin; col < cols.end; ++col) {
                        const T* p = src + n * s.n + r * s.h + col * s.w;
                        for (int64_t c = 0; c < g.c; ++c) out[c] = Reduce<T>::join(out[c], p[c * s.c]);
                    }
                const T count = static_cast<T>((rows.end - rows.begin) * (cols.end - cols.begin));
                for (int64_t c = 0; c < g.c; ++c) out[c] = Reduce<T>::finish(out[c], count);
            }
        }
    });
    return std::move(result);
}

// x, out and grad are C-contiguous NHWC here (the caller copies other layouts), so the channel loops vectorize.
template <typename T>
py::array max_pool_grad_t(const py::array& x, const py::array& out, const py::array& grad, const Window& g) {
    for (const py::array* a : {&out, &grad})
        if (a->ndim() != 4 || a->shape(0) != g.n || a->shape(1) != g.out_h || a->shape(2) != g.out_w ||
            a->shape(3) != g.c)
            throw py::value_error("max_pool_grad: out and grad must have the pooled shape");
    const T* xs = in_ptr<T>(x, "max_pool_grad", "x");
    const T* os = in_ptr<T>(out, "max_pool_grad", "out");
    const T* gs = in_ptr<T>(grad, "max_pool_grad", "grad");
    py::array_t<T> result({g.n, g.h, g.w, g.c});
    T* dst = result.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n, g.h * g.w * g.c + g.out_h * g.out_w * g.kh * g.kw * g.c, [&](int64_t begin, int64_t end) {
        std::vector<T> open(g.c);  // 1 while the window's gradient has not found its maximum yet
        for (int64_t n = begin; n < end; ++n) {
            T* img = dst + n * g.h * g.w * g.c;
            const T* xn = xs + n * g.h * g.w * g.c;
            std::fill_n(img, g.h * g.w * g.c, T(0));
            for (int64_t i = 0; i < g.out_h; ++i) {
                const Span rows = valid(i, g.sh, g.pad_top, g.kh, g.h);
                for (int64_t j = 0; j < g.out_w; ++j) {
                    const Span cols = valid(j, g.sw, g.pad_left, g.kw, g.w);
                    const int64_t at = ((n * g.out_h + i) * g.out_w + j) * g.c;
                    const T* __restrict best = os + at;
                    const T* __restrict gr = gs + at;
                    T* __restrict pending = open.data();
                    std::fill_n(pending, g.c, T(1));
                    for (int64_t r = rows.begin; r < rows.end; ++r) {
                        for (int64_t col = cols.begin; col < cols.end; ++col) {
                            const T* __restrict xv = xn + (r * g.w + col) * g.c;
                            T* __restrict dv = img + (r * g.w + col) * g.c;
                            for (int64_t c = 0; c < g.c; ++c) {
                                const T hit = xv[c] == best[c] ? pending[c] : T(0);
                                dv[c] += hit != T(0) ? gr[c] : T(0);
                                pending[c] -= hit;
                            }
                        }
                    }
                }
            }
        }
    });
    return std::move(result);
}

template <typename T>
py::array avg_pool_grad_t(const py::array& grad, const Window& g) {
    if (grad.ndim() != 4 || grad.shape(0) != g.n || grad.shape(1) != g.out_h || grad.shape(2) != g.out_w ||
        grad.shape(3) != g.c)
        throw py::value_error("avg_pool_grad: grad must have the pooled shape");
    const Strides4 s = element_strides(grad);
    const T* gs = static_cast<const T*>(grad.data());
    py::array_t<T> result({g.n, g.h, g.w, g.c});
    T* dst = result.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n, g.h * g.w * g.c + g.out_h * g.out_w * g.kh * g.kw * g.c, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
            T* img = dst + n * g.h * g.w * g.c;
            std::fill_n(img, g.h * g.w * g.c, T(0));
            for (int64_t i = 0; i < g.out_h; ++i) {
                const Span rows = valid(i, g.sh, g.pad_top, g.kh, g.h);
                for (int64_t j = 0; j < g.out_w; ++j) {
                    const Span cols = valid(j, g.sw, g.pad_left, g.kw, g.w);
                    const T count = static_cast<T>((rows.end - rows.begin) * (cols.end - cols.begin));
                    const T* p = gs + n * s.n + i * s.h + j * s.w;
                    for (int64_t r = rows.begin; r < rows.end; ++r)
                        for (int64_t col = cols.begin; col < cols.end; ++col) {
                            T* q = img + (r * g.w + col) * g.c;
                            for (int64_t c = 0; c < g.c; ++c) q[c] += p[c * s.c] / count;
                        }
                }
            }
        }
    });
    return std::move(result);
}

void check_input(const py::array& x, const Window& g, const char* what) {
    if (x.ndim() != 4 || x.shape(0) != g.n || x.shape(1) != g.h || x.shape(2) != g.w || x.shape(3) != g.c)
        throw py::value_error(std::string(what) + ": the input does not match the window geometry");
}

}  // namespace

void register_pooling(py::module_& m) {
    m.def("max_pool", [](const py::array& x, const py::tuple& geometry) {
        const Window g = window_from(geometry);
        check_input(x, g, "max_pool");
        return dispatch_float(x, "max_pool", [&](auto t) { return pool_t<decltype(t), MaxOf>(x, g); });
    }, py::arg("x"), py::arg("geometry"), "Max pooling of an NHWC array (NaN wins, as numpy's maximum).");
    m.def("max_pool_grad", [](const py::array& x, const py::array& out, const py::array& grad,
                              const py::tuple& geometry) {
        const Window g = window_from(geometry);
        check_input(x, g, "max_pool_grad");
        return dispatch_float(x, "max_pool_grad", [&](auto t) { return max_pool_grad_t<decltype(t)>(x, out, grad, g); });
    }, py::arg("x"), py::arg("out"), py::arg("grad"), py::arg("geometry"),
       "Routes each window's gradient to its first cell equal to the pooled output.");
    m.def("avg_pool", [](const py::array& x, const py::tuple& geometry) {
        const Window g = window_from(geometry);
        check_input(x, g, "avg_pool");
        return dispatch_float(x, "avg_pool", [&](auto t) { return pool_t<decltype(t), MeanOf>(x, g); });
    }, py::arg("x"), py::arg("geometry"), "Average pooling over the valid cells of each window.");
    m.def("avg_pool_grad", [](const py::array& grad, const py::tuple& geometry) {
        const Window g = window_from(geometry);
        return dispatch_float(grad, "avg_pool_grad", [&](auto t) { return avg_pool_grad_t<decltype(t)>(grad, g); });
    }, py::arg("grad"), py::arg("geometry"), "Spreads each window's gradient evenly over its valid cells.");
}

}  // namespace tw
