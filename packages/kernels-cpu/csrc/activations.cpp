// Relu and relu6 and their gradients in one pass each (numpy's gradient takes a compare, a temporary
// mask and a multiply).
#include <algorithm>
#include <vector>

#include "activation.hpp"
#include "common.hpp"

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
}

}  // namespace tw
