// im2col and col2im: the layout halves of a GEMM convolution (the GEMM itself is numpy's BLAS).
//
// A row of the column matrix is one output position (n, i, j); its kh*kw*C entries are the window laid
// out as [kh, kw, C], which multiplies a [kh, kw, in, out] filter reshaped to [kh*kw*in, out].
#include <cstring>

#include "common.hpp"

namespace tw {
namespace {

template <typename T>
py::array im2col_t(const py::array& x, const Window& g) {
    const Strides4 s = element_strides(x);
    const T* src = static_cast<const T*>(x.data());
    const int64_t k = g.kh * g.kw * g.c, rows = g.n * g.out_h * g.out_w;
    py::array_t<T> cols({rows, k});
    T* dst = cols.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n * g.out_h, g.out_w * k, [&](int64_t begin, int64_t end) {
        for (int64_t ni = begin; ni < end; ++ni) {
            const int64_t n = ni / g.out_h, i = ni % g.out_h;
            T* out = dst + ni * g.out_w * k;
            for (int64_t j = 0; j < g.out_w; ++j) {
                for (int64_t di = 0; di < g.kh; ++di) {
                    const int64_t r = i * g.sh - g.pad_top + di * g.dh;
                    if (r < 0 || r >= g.h) {
                        std::fill_n(out, g.kw * g.c, T(0));
                        out += g.kw * g.c;
                        continue;
                    }
                    for (int64_t dj = 0; dj < g.kw; ++dj, out += g.c) {
                        const int64_t col = j * g.sw - g.pad_left + dj * g.dw;
                        if (col < 0 || col >= g.w) {
                            std::fill_n(out, g.c, T(0));
                            continue;
                        }
                        const T* p = src + n * s.n + r * s.h + col * s.w;
                        if (s.c == 1) {
                            std::memcpy(out, p, sizeof(T) * g.c);
                        } else {
                            for (int64_t c = 0; c < g.c; ++c) out[c] = p[c * s.c];
                        }
                    }
                }
            }
        }
    });
    return std::move(cols);
}

template <typename T>
py::array col2im_t(const py::array& cols, const Window& g) {
    const int64_t k = g.kh * g.kw * g.c;
    if (cols.ndim() != 2 || cols.shape(0) != g.n * g.out_h * g.out_w || cols.shape(1) != k)
        throw py::value_error("col2im: the column matrix does not match the window geometry");
    const T* src = in_ptr<T>(cols, "col2im", "cols");
    py::array_t<T> image({g.n, g.h, g.w, g.c});
    T* dst = image.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n, g.h * g.w * g.c + g.out_h * g.out_w * k, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
            T* img = dst + n * g.h * g.w * g.c;
            std::fill_n(img, g.h * g.w * g.c, T(0));
            const T* in = src + n * g.out_h * g.out_w * k;
            for (int64_t i = 0; i < g.out_h; ++i) {
                for (int64_t j = 0; j < g.out_w; ++j) {
                    for (int64_t di = 0; di < g.kh; ++di) {
                        const int64_t r = i * g.sh - g.pad_top + di * g.dh;
                        if (r < 0 || r >= g.h) {
                            in += g.kw * g.c;
                            continue;
                        }
                        for (int64_t dj = 0; dj < g.kw; ++dj, in += g.c) {
                            const int64_t col = j * g.sw - g.pad_left + dj * g.dw;
                            if (col < 0 || col >= g.w) continue;
                            T* p = img + (r * g.w + col) * g.c;
                            for (int64_t c = 0; c < g.c; ++c) p[c] += in[c];
                        }
                    }
                }
            }
        }
    });
    return std::move(image);
}

}  // namespace

void register_conv(py::module_& m) {
    m.def("im2col", [](const py::array& x, const py::tuple& geometry) {
        if (x.ndim() != 4) throw py::value_error("im2col: the input must be 4-D (NHWC)");
        const Window g = window_from(geometry);
        return dispatch_float(x, "im2col", [&](auto t) { return im2col_t<decltype(t)>(x, g); });
    }, py::arg("x"), py::arg("geometry"),
       "The [N*out_h*out_w, kh*kw*C] window matrix of an NHWC array (any strides, e.g. a transposed NCHW view).");
    m.def("col2im", [](const py::array& cols, const py::tuple& geometry) {
        const Window g = window_from(geometry);
        return dispatch_float(cols, "col2im", [&](auto t) { return col2im_t<decltype(t)>(cols, g); });
    }, py::arg("cols"), py::arg("geometry"),
       "Sums each row of a window matrix back into the NHWC image it was read from (im2col's adjoint).");
}

}  // namespace tw
