// Relu, relu6 and sigmoid and their gradients (and tanh's), one pass each: numpy's forms take several
// passes and temporaries, and its sigmoid goes through logaddexp, an order of magnitude slower than exp.
#include <algorithm>
#include <cmath>
#include <string>
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

// The gradient kernels: f over two same-shape arrays, shaped like the first; what and the names go in the errors.
template <typename T, typename F>
py::array same_shape_map(const py::array& a, const py::array& b, const py::object& out_, const char* what,
                         const char* a_name, const char* b_name, int64_t cost, F f) {
    if (a.size() != b.size() || a.ndim() != b.ndim() || !std::equal(a.shape(), a.shape() + a.ndim(), b.shape()))
        throw py::value_error(std::string(what) + ": " + a_name + " and " + b_name + " must have the same shape");
    const T* as = in_ptr<T>(a, what, a_name);
    const T* bs = in_ptr<T>(b, what, b_name);
    py::array result = result_like<T>(a, out_);
    T* out = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    map_binary(as, bs, out, a.size(), cost, f);
    return result;
}

template <typename T, Activation act>
py::array grad_t(const py::array& dy, const py::array& x, const py::object& out_) {
    return same_shape_map<T>(dy, x, out_, "activation gradient", "gradients", "features", 2,
                             [](T d, T v) { return activation_grad(d, v, act); });
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
    return same_shape_map<T>(y, dy, out_, "output gradient", "y", "dy", 3,
                             [](T v, T d) { return is_tanh ? d * (T(1) - v * v) : d * (v * (T(1) - v)); });
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
