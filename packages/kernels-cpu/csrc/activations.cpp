// Relu, relu6 and sigmoid and their gradients (and tanh's), one pass each: numpy's forms take several
// passes and temporaries, and its sigmoid goes through logaddexp, an order of magnitude slower than exp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "activation.hpp"
#include "common.hpp"
#include "vector_math.hpp"

namespace tw {
namespace {

template <typename T, Activation act>
py::array forward_t(const py::array& x) {
    const T* in = in_ptr<T>(x, "activation", "features");
    py::array result(x.dtype(), std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    parallel_range(x.size(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = activate(in[i], act);
    });
    return result;
}

template <typename T, Activation act>
py::array grad_t(const py::array& dy, const py::array& x) {
    if (dy.size() != x.size() || dy.ndim() != x.ndim() ||
        !std::equal(dy.shape(), dy.shape() + dy.ndim(), x.shape()))
        throw py::value_error("activation gradient: gradients and features must have the same shape");
    const T* g = in_ptr<T>(dy, "activation gradient", "gradients");
    const T* in = in_ptr<T>(x, "activation gradient", "features");
    py::array result(dy.dtype(), std::vector<py::ssize_t>(dy.shape(), dy.shape() + dy.ndim()));
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    parallel_range(x.size(), 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = activation_grad(g[i], in[i], act);
    });
    return result;
}

template <typename T>
py::array sigmoid_t(const py::array& x) {
    const T* in = in_ptr<T>(x, "sigmoid", "x");
    py::array result(x.dtype(), std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    parallel_range(x.size(), 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {  // exp of -|x| only: no overflow, full precision in both tails
            const T e = vexp(-std::abs(in[i]));
            out[i] = (in[i] >= T(0) ? T(1) : e) / (T(1) + e);
        }
    });
    return result;
}

// The gradient ops of functions differentiated through their output y: dy * slope(y).
template <typename T, bool is_tanh>
py::array output_grad_t(const py::array& y, const py::array& dy) {
    if (y.size() != dy.size() || y.ndim() != dy.ndim() || !std::equal(y.shape(), y.shape() + y.ndim(), dy.shape()))
        throw py::value_error("output gradient: y and dy must have the same shape");
    const T* ys = in_ptr<T>(y, "output gradient", "y");
    const T* gs = in_ptr<T>(dy, "output gradient", "dy");
    py::array result(y.dtype(), std::vector<py::ssize_t>(y.shape(), y.shape() + y.ndim()));
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    parallel_range(y.size(), 3, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
            out[i] = is_tanh ? gs[i] * (T(1) - ys[i] * ys[i]) : gs[i] * (ys[i] * (T(1) - ys[i]));
    });
    return result;
}

template <Activation act>
void define(py::module_& m, const char* name, const char* grad_name) {
    m.def(name, [](const py::array& x) {
        return dispatch_float(x, "activation", [&](auto t) { return forward_t<decltype(t), act>(x); });
    }, py::arg("features"));
    m.def(grad_name, [](const py::array& dy, const py::array& x) {
        return dispatch_float(dy, "activation gradient", [&](auto t) { return grad_t<decltype(t), act>(dy, x); });
    }, py::arg("gradients"), py::arg("features"));
}

}  // namespace

void register_activations(py::module_& m) {
    define<Activation::kRelu>(m, "relu", "relu_grad");
    define<Activation::kRelu6>(m, "relu6", "relu6_grad");
    m.def("sigmoid", [](const py::array& x) {
        return dispatch_float(x, "sigmoid", [&](auto t) { return sigmoid_t<decltype(t)>(x); });
    }, py::arg("x"), "1 / (1 + exp(-x)), as exp(x) / (1 + exp(x)) for negative x.");
    m.def("sigmoid_grad", [](const py::array& y, const py::array& dy) {
        return dispatch_float(y, "sigmoid_grad", [&](auto t) { return output_grad_t<decltype(t), false>(y, dy); });
    }, py::arg("y"), py::arg("dy"), "dy * y * (1 - y), from the sigmoid's output y.");
    m.def("tanh_grad", [](const py::array& y, const py::array& dy) {
        return dispatch_float(y, "tanh_grad", [&](auto t) { return output_grad_t<decltype(t), true>(y, dy); });
    }, py::arg("y"), py::arg("dy"), "dy * (1 - y * y), from the tanh's output y.");
}

}  // namespace tw
