// Fused softmax cross-entropy with its gradient, dense and sparse labels, with TF's arithmetic:
// shift by the row maximum, loss = sum(labels * (log(sum(exp)) - shifted)), backprop = softmax - labels.
#include <cmath>
#include <sstream>
#include <vector>

#include "common.hpp"

namespace tw {
namespace {

// Shifts a row by its maximum, writes exp(shifted) to e and returns log(sum(exp(shifted))).
template <typename T>
T exp_shifted(const T* x, int64_t classes, T* shifted, T* e) {
    T top = x[0];
    for (int64_t c = 1; c < classes; ++c) top = x[c] > top ? x[c] : top;
    T sum = 0;
    for (int64_t c = 0; c < classes; ++c) {
        shifted[c] = x[c] - top;
        e[c] = std::exp(shifted[c]);
        sum += e[c];
    }
    return std::log(sum);
}

// Both losses fill (loss, backprop) one row at a time, in parallel, with a scratch row for the shifted logits.
template <typename T, typename Row>
py::tuple per_row(int64_t rows, int64_t classes, Row row) {
    py::array_t<T> loss(rows), backprop({rows, classes});
    T* l = loss.mutable_data();
    T* b = backprop.mutable_data();
    {
        py::gil_scoped_release nogil;
        parallel_range(rows, classes * 8, [&](int64_t begin, int64_t end) {
            std::vector<T> shifted(classes);
            for (int64_t r = begin; r < end; ++r) l[r] = row(r, shifted.data(), b + r * classes);
        });
    }
    return py::make_tuple(loss, backprop);
}

template <typename T>
py::tuple softmax_xent_t(const py::array& logits, const py::array& labels) {
    if (logits.ndim() != 2 || labels.ndim() != 2 || logits.shape(0) != labels.shape(0) ||
        logits.shape(1) != labels.shape(1))
        throw py::value_error("softmax_xent: logits and labels must be 2-D and the same shape");
    const T* x = in_ptr<T>(logits, "softmax_xent", "logits");
    const T* y = in_ptr<T>(labels, "softmax_xent", "labels");
    const int64_t rows = logits.shape(0), classes = logits.shape(1);
    return per_row<T>(rows, classes, [&](int64_t r, T* shifted, T* br) {
        const T* xr = x + r * classes;
        const T* yr = y + r * classes;
        const T log_sum = classes ? exp_shifted(xr, classes, shifted, br) : T(0);
        const T sum = std::exp(log_sum);
        T total = 0;
        for (int64_t c = 0; c < classes; ++c) {
            total += yr[c] * (log_sum - shifted[c]);
            br[c] = br[c] / sum - yr[c];
        }
        return total;
    });
}

template <typename T, typename L>
py::tuple sparse_softmax_xent_t(const py::array& logits, const py::array& labels) {
    const T* x = in_ptr<T>(logits, "sparse_softmax_xent", "logits");
    const L* y = in_ptr<L>(labels, "sparse_softmax_xent", "labels");
    const int64_t rows = logits.shape(0), classes = logits.shape(1);
    for (int64_t r = 0; r < rows; ++r) {
        if (y[r] < 0 || y[r] >= classes) {
            std::ostringstream msg;
            msg << "Received a label value of " << y[r] << " which is outside the valid range of [0, " << classes
                << "). Label values:";
            for (int64_t k = 0; k < std::min<int64_t>(rows, 20); ++k) msg << ' ' << y[k];
            if (rows > 20) msg << " ...";
            throw py::value_error(msg.str());
        }
    }
    return per_row<T>(rows, classes, [&](int64_t r, T* shifted, T* br) {
        const T log_sum = exp_shifted(x + r * classes, classes, shifted, br);
        const T sum = std::exp(log_sum);
        for (int64_t c = 0; c < classes; ++c) br[c] /= sum;
        br[y[r]] -= T(1);
        return log_sum - shifted[y[r]];
    });
}

}  // namespace

void register_losses(py::module_& m) {
    m.def("softmax_xent", [](const py::array& logits, const py::array& labels) {
        return dispatch_float(logits, "softmax_xent", [&](auto t) { return softmax_xent_t<decltype(t)>(logits, labels); });
    }, py::arg("logits"), py::arg("labels"), "(loss, backprop) of softmax cross-entropy with dense labels.");
    m.def("sparse_softmax_xent", [](const py::array& logits, const py::array& labels) {
        if (logits.ndim() != 2 || labels.ndim() != 1 || labels.shape(0) != logits.shape(0))
            throw py::value_error("sparse_softmax_xent: logits must be 2-D and labels 1-D with the same first dimension");
        return dispatch_float(logits, "sparse_softmax_xent", [&](auto t) {
            using T = decltype(t);
            if (py::isinstance<py::array_t<int32_t>>(labels)) return sparse_softmax_xent_t<T, int32_t>(logits, labels);
            if (py::isinstance<py::array_t<int64_t>>(labels)) return sparse_softmax_xent_t<T, int64_t>(logits, labels);
            throw py::type_error("sparse_softmax_xent: labels must be int32 or int64");
        });
    }, py::arg("logits"), py::arg("labels"), "(loss, backprop) of softmax cross-entropy with class-index labels.");
}

}  // namespace tw
