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
py::array forward_t(const py::array& x, const py::object& out_) {
    const T* in = in_ptr<T>(x, "activation", "features");
    py::array result = result_like<T>(x, out_);
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    map_unary(in, out, x.size(), 1, [](T v) { return activate(v, act); });
    return result;
}

template <typename T, Activation act>
py::array grad_t(const py::array& dy, const py::array& x, const py::object& out_) {
    if (dy.size() != x.size() || dy.ndim() != x.ndim() ||
        !std::equal(dy.shape(), dy.shape() + dy.ndim(), x.shape()))
        throw py::value_error("activation gradient: gradients and features must have the same shape");
    const T* g = in_ptr<T>(dy, "activation gradient", "gradients");
    const T* in = in_ptr<T>(x, "activation gradient", "features");
    py::array result = result_like<T>(dy, out_);
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    map_binary(g, in, out, x.size(), 2, [](T d, T v) { return activation_grad(d, v, act); });
    return result;
}

template <typename T>
py::array sigmoid_t(const py::array& x, const py::object& out_) {
    const T* in = in_ptr<T>(x, "sigmoid", "x");
    py::array result = result_like<T>(x, out_);
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    map_unary(in, out, x.size(), 16, [](T v) {  // exp of -|x| only: no overflow, full precision in both tails
        const T e = vexp(-std::abs(v));
        return (v >= T(0) ? T(1) : e) / (T(1) + e);
    });
    return result;
}

// The gradient ops of functions differentiated through their output y: dy * slope(y).
template <typename T, bool is_tanh>
py::array output_grad_t(const py::array& y, const py::array& dy, const py::object& out_) {
    if (y.size() != dy.size() || y.ndim() != dy.ndim() || !std::equal(y.shape(), y.shape() + y.ndim(), dy.shape()))
        throw py::value_error("output gradient: y and dy must have the same shape");
    const T* ys = in_ptr<T>(y, "output gradient", "y");
    const T* gs = in_ptr<T>(dy, "output gradient", "dy");
    py::array result = result_like<T>(y, out_);
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    map_binary(ys, gs, out, y.size(), 3, [](T v, T d) { return is_tanh ? d * (T(1) - v * v) : d * (v * (T(1) - v)); });
    return result;
}

template <Activation act>
void define(py::module_& m, const char* name, const char* grad_name) {
    m.def(name, [](const py::array& x, const py::object& out) {
        return dispatch_float(x, "activation", [&](auto t) { return forward_t<decltype(t), act>(x, out); });
    }, py::arg("features"), py::arg("out") = py::none());
    m.def(grad_name, [](const py::array& dy, const py::array& x, const py::object& out) {
        return dispatch_float(dy, "activation gradient", [&](auto t) { return grad_t<decltype(t), act>(dy, x, out); });
    }, py::arg("gradients"), py::arg("features"), py::arg("out") = py::none());
}

}  // namespace

void register_activations(py::module_& m) {
    define<Activation::kRelu>(m, "relu", "relu_grad");
    define<Activation::kRelu6>(m, "relu6", "relu6_grad");
    m.def("sigmoid", [](const py::array& x, const py::object& out) {
        return dispatch_float(x, "sigmoid", [&](auto t) { return sigmoid_t<decltype(t)>(x, out); });
    }, py::arg("x"), py::arg("out") = py::none(), "1 / (1 + exp(-x)), as exp(x) / (1 + exp(x)) for negative x.");
    m.def("sigmoid_grad", [](const py::array& y, const py::array& dy, const py::object& out) {
        return dispatch_float(y, "sigmoid_grad", [&](auto t) { return output_grad_t<decltype(t), false>(y, dy, out); });
    }, py::arg("y"), py::arg("dy"), py::arg("out") = py::none(), "dy * y * (1 - y), from the sigmoid's output y.");
    m.def("tanh_grad", [](const py::array& y, const py::array& dy, const py::object& out) {
        return dispatch_float(y, "tanh_grad", [&](auto t) { return output_grad_t<decltype(t), true>(y, dy, out); });
    }, py::arg("y"), py::arg("dy"), py::arg("out") = py::none(), "dy * (1 - y * y), from the tanh's output y.");
}

}  // namespace tw
