// Bias-add with an optional activation fused into the same pass, and the bias gradient (a sum over every
// axis but the channel one, accumulated in double so long float32 sums keep their precision).
#include <mutex>
#include <vector>

#include "activation.hpp"
#include "common.hpp"

namespace tw {
namespace {

// value viewed as [outer, channels, inner]: inner is 1 for channels-last layouts.
struct Layout {
    int64_t outer, channels, inner;
};

Layout layout_of(const py::array& value, int64_t axis) {
    Layout l{1, value.shape(axis), 1};
    for (int64_t d = 0; d < axis; ++d) l.outer *= value.shape(d);
    for (int64_t d = axis + 1; d < value.ndim(); ++d) l.inner *= value.shape(d);
    return l;
}

// y is x itself (an in-place offer) or a separate array; each case has its own non-aliasing loop.
template <typename T, Activation act>
void bias_add_loop(const T* x, const T* b, T* y, const Layout& l) {
    const bool in_place = x == y;
    if (l.inner == 1) {
        parallel_range(l.outer, l.channels, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                const T* __restrict bias = b;
                if (in_place) {
                    T* __restrict io = y + o * l.channels;
                    for (int64_t c = 0; c < l.channels; ++c) io[c] = activate(io[c] + bias[c], act);
                } else {
                    const T* __restrict in = x + o * l.channels;
                    T* __restrict out = y + o * l.channels;
                    for (int64_t c = 0; c < l.channels; ++c) out[c] = activate(in[c] + bias[c], act);
                }
            }
        });
        return;
    }
    parallel_range(l.outer * l.channels, l.inner, [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
            const T bc = b[oc % l.channels];
            if (in_place) {
                T* __restrict io = y + oc * l.inner;
                for (int64_t k = 0; k < l.inner; ++k) io[k] = activate(io[k] + bc, act);
            } else {
                const T* __restrict in = x + oc * l.inner;
                T* __restrict out = y + oc * l.inner;
                for (int64_t k = 0; k < l.inner; ++k) out[k] = activate(in[k] + bc, act);
            }
        }
    });
}

template <typename T>
py::array bias_add_t(const py::array& value, const py::array& bias, int64_t axis, Activation act,
                     const py::object& out) {
    const T* x = in_ptr<T>(value, "bias_add", "value");
    const T* b = in_ptr<T>(bias, "bias_add", "bias");
    const Layout l = layout_of(value, axis);
    py::array result = result_like<T>(value, out);
    T* y = static_cast<T*>(result.mutable_data());
    py::gil_scoped_release nogil;
    switch (act) {
        case Activation::kRelu: bias_add_loop<T, Activation::kRelu>(x, b, y, l); break;
        case Activation::kRelu6: bias_add_loop<T, Activation::kRelu6>(x, b, y, l); break;
        default: bias_add_loop<T, Activation::kNone>(x, b, y, l);
    }
    return result;
}

template <typename T>
py::array bias_add_grad_t(const py::array& dy, int64_t axis) {
    const T* g = in_ptr<T>(dy, "bias_add_grad", "out_backprop");
    const Layout l = layout_of(dy, axis);
    py::array_t<T> result(l.channels);
    T* out = result.mutable_data();
    std::vector<double> total(l.channels, 0.0);
    {
        py::gil_scoped_release nogil;
        std::mutex merge;
        parallel_range(l.outer, l.channels * l.inner, [&](int64_t begin, int64_t end) {
            std::vector<double> part(l.channels, 0.0);
            for (int64_t o = begin; o < end; ++o) {
                const T* row = g + o * l.channels * l.inner;
                if (l.inner == 1) {
                    for (int64_t c = 0; c < l.channels; ++c) part[c] += row[c];
                } else {
                    for (int64_t c = 0; c < l.channels; ++c) {
                        double s = 0;
                        for (int64_t k = 0; k < l.inner; ++k) s += row[c * l.inner + k];
                        part[c] += s;
                    }
                }
            }
            std::lock_guard<std::mutex> hold(merge);
            for (int64_t c = 0; c < l.channels; ++c) total[c] += part[c];
        });
    }
    for (int64_t c = 0; c < l.channels; ++c) out[c] = static_cast<T>(total[c]);
    return std::move(result);
}

int64_t checked_axis(const py::array& value, int64_t axis, const char* what) {
    if (value.ndim() < 2 || axis < 0 || axis >= value.ndim())
        throw py::value_error(std::string(what) + ": needs a value of rank 2 or more and a valid channel axis");
    return axis;
}

}  // namespace

void register_bias(py::module_& m) {
    m.def("bias_add", [](const py::array& value, const py::array& bias, int64_t axis, const std::string& activation,
                         const py::object& out) {
        checked_axis(value, axis, "bias_add");
        if (bias.ndim() != 1 || bias.shape(0) != value.shape(axis))
            throw py::value_error("bias_add: bias must be 1-D with as many elements as the channel dimension");
        const Activation act = activation_from(activation, "bias_add");
        return dispatch_float(value, "bias_add", [&](auto t) { return bias_add_t<decltype(t)>(value, bias, axis, act, out); });
    }, py::arg("value"), py::arg("bias"), py::arg("axis"), py::arg("activation") = "none", py::arg("out") = py::none(),
       "activation(value + bias) along channel ``axis`` in one pass (activation: none, relu or relu6), into "
       "``out`` when it fits.");
    m.def("bias_add_grad", [](const py::array& dy, int64_t axis) {
        checked_axis(dy, axis, "bias_add_grad");
        return dispatch_float(dy, "bias_add_grad", [&](auto t) { return bias_add_grad_t<decltype(t)>(dy, axis); });
    }, py::arg("out_backprop"), py::arg("axis"), "The sum of out_backprop over every axis but ``axis``.");
}

}  // namespace tw
