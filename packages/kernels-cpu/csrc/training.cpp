// Fused optimizer updates, in place, with TF1's formulas in the numpy kernels' order of operations.
//
// Each optimizer is one step over a contiguous run of elements; a dense update runs it over whole arrays
// (split across threads), a sparse one over the rows its indices name, after summing duplicate rows in
// the order they come (as TF1's optimizers do). Sparse Adam decays every row's moments, as TF1 does.
#include <array>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "common.hpp"

namespace tw {
namespace {

constexpr int kMaxArrays = 4;

template <typename T>
using Arrays = std::array<T*, kMaxArrays>;

template <typename T>
struct Update {
    Arrays<T> arrays{};  // var first, then the slots in the op's order
    int count = 0;
    int64_t size = 0, rows = 0, width = 0;
};

template <typename T>
Update<T> collect(std::initializer_list<py::array*> arrays, const char* what) {
    Update<T> u;
    const py::array& var = **arrays.begin();
    u.size = var.size();
    u.rows = var.ndim() ? var.shape(0) : 1;
    u.width = u.rows ? u.size / u.rows : 0;
    for (py::array* a : arrays) {
        if (a->size() != u.size) throw py::value_error(std::string(what) + ": var and its slots differ in size");
        u.arrays[u.count] = out_ptr<T>(*a, what, u.count == 0 ? "var" : "a slot");
        ++u.count;
    }
    return u;
}

// Unique row ids (ascending) and their summed gradient rows; `sums` is empty when no id repeats.
template <typename T>
struct SummedRows {
    std::vector<int64_t> ids;
    std::vector<T> sums;
};

template <typename T, typename I>
SummedRows<T> sum_rows(const I* idx, int64_t n, const T* grad, int64_t width, int64_t rows, const char* what) {
    for (int64_t k = 0; k < n; ++k)
        if (idx[k] < 0 || idx[k] >= rows)
            throw py::index_error(std::string(what) + ": indices[" + std::to_string(k) + "] = " +
                                  std::to_string(static_cast<int64_t>(idx[k])) + " is not in [0, " +
                                  std::to_string(rows) + ")");
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [idx](int64_t a, int64_t b) { return idx[a] < idx[b]; });
    SummedRows<T> out;
    bool repeats = false;
    for (int64_t k = 1; k < n && !repeats; ++k) repeats = idx[order[k]] == idx[order[k - 1]];
    if (!repeats) {
        out.ids.assign(idx, idx + n);
        return out;
    }
    for (int64_t k = 0; k < n; ++k) {
        const T* g = grad + order[k] * width;
        if (k == 0 || idx[order[k]] != idx[order[k - 1]]) {
            out.ids.push_back(idx[order[k]]);
            out.sums.insert(out.sums.end(), g, g + width);
        } else {
            T* s = out.sums.data() + (out.ids.size() - 1) * width;
            for (int64_t c = 0; c < width; ++c) s[c] += g[c];
        }
    }
    return out;
}

template <typename T>
SummedRows<T> sparse_rows(const py::array& indices, const T* grad, int64_t grad_size, const Update<T>& u,
                          const char* what) {
    if (grad_size != indices.size() * u.width)
        throw py::value_error(std::string(what) + ": the gradient rows do not match the indices and the variable");
    if (py::isinstance<py::array_t<int32_t>>(indices))
        return sum_rows(in_ptr<int32_t>(indices, what, "indices"), indices.size(), grad, u.width, u.rows, what);
    if (py::isinstance<py::array_t<int64_t>>(indices))
        return sum_rows(in_ptr<int64_t>(indices, what, "indices"), indices.size(), grad, u.width, u.rows, what);
    throw py::type_error(std::string(what) + ": indices must be int32 or int64");
}

// Runs step(arrays, grad, n) over every element (dense) or over the rows `indices` names (sparse).
template <typename T, class Step>
void run(const Update<T>& u, const py::array& grad, const py::object& indices, int64_t cost, const char* what,
         Step step) {
    const T* g = in_ptr<T>(grad, what, "grad");
    auto offset = [&u](int64_t at) {
        Arrays<T> p{};
        for (int k = 0; k < u.count; ++k) p[k] = u.arrays[k] + at;
        return p;
    };
    if (indices.is_none()) {
        if (grad.size() != u.size) throw py::value_error(std::string(what) + ": var and grad differ in size");
        py::gil_scoped_release nogil;
        parallel_range(u.size, cost, [&](int64_t begin, int64_t end) { step(offset(begin), g + begin, end - begin); });
        return;
    }
    const SummedRows<T> rows = sparse_rows(indices.cast<py::array>(), g, grad.size(), u, what);
    const T* sums = rows.sums.empty() ? g : rows.sums.data();
    py::gil_scoped_release nogil;
    parallel_range(static_cast<int64_t>(rows.ids.size()), u.width * cost, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) step(offset(rows.ids[k] * u.width), sums + k * u.width, u.width);
    });
}

template <typename T>
void gradient_descent(py::array var, double alpha_, py::array delta, py::object indices) {
    auto u = collect<T>({&var}, "gradient_descent");
    const T alpha = static_cast<T>(alpha_);
    run(u, delta, indices, 2, "gradient_descent", [alpha](Arrays<T> p, const T* g, int64_t n) {
        T* __restrict v = p[0];
        for (int64_t i = 0; i < n; ++i) v[i] -= alpha * g[i];
    });
}

template <typename T>
void momentum(py::array var, py::array accum, double lr_, py::array grad, double momentum_, bool nesterov,
              py::object indices) {
    auto u = collect<T>({&var, &accum}, "momentum");
    const T lr = static_cast<T>(lr_), mu = static_cast<T>(momentum_);
    run(u, grad, indices, 4, "momentum", [=](Arrays<T> p, const T* g, int64_t n) {
        T* __restrict v = p[0];
        T* __restrict a = p[1];
        for (int64_t i = 0; i < n; ++i) {
            a[i] = a[i] * mu + g[i];
            v[i] -= nesterov ? (a[i] * mu + g[i]) * lr : a[i] * lr;
        }
    });
}

template <typename T>
void adagrad(py::array var, py::array accum, double lr_, py::array grad, bool update_slots, py::object indices) {
    auto u = collect<T>({&var, &accum}, "adagrad");
    const T lr = static_cast<T>(lr_);
    run(u, grad, indices, 8, "adagrad", [=](Arrays<T> p, const T* g, int64_t n) {
        T* __restrict v = p[0];
        T* __restrict a = p[1];
        for (int64_t i = 0; i < n; ++i) {
            if (update_slots) a[i] += g[i] * g[i];
            v[i] -= g[i] / std::sqrt(a[i]) * lr;
        }
    });
}

template <typename T>
void adam(py::array var, py::array m_, py::array v_, double beta1_power, double beta2_power, double lr,
          double beta1_, double beta2_, double epsilon_, py::array grad, py::object indices) {
    auto u = collect<T>({&var, &m_, &v_}, "adam");
    const T one = 1, b1 = static_cast<T>(beta1_), b2 = static_cast<T>(beta2_), eps = static_cast<T>(epsilon_);
    const T alpha = static_cast<T>(lr) * std::sqrt(one - static_cast<T>(beta2_power)) /
                    (one - static_cast<T>(beta1_power));
    auto var_step = [=](Arrays<T> p, int64_t n) {
        T* __restrict w = p[0];
        const T* __restrict m = p[1];
        const T* __restrict v = p[2];
        for (int64_t i = 0; i < n; ++i) w[i] -= m[i] / (std::sqrt(v[i]) + eps) * alpha;
    };
    if (indices.is_none()) {
        run(u, grad, indices, 16, "adam", [=](Arrays<T> p, const T* g, int64_t n) {
            T* __restrict m = p[1];
            T* __restrict v = p[2];
            for (int64_t i = 0; i < n; ++i) {
                m[i] += (g[i] - m[i]) * (one - b1);
                v[i] += (g[i] * g[i] - v[i]) * (one - b2);
            }
            var_step(p, n);
        });
        return;
    }
    const T* g = in_ptr<T>(grad, "adam", "grad");
    const SummedRows<T> rows = sparse_rows(indices.cast<py::array>(), g, grad.size(), u, "adam");
    const T* sums = rows.sums.empty() ? g : rows.sums.data();
    py::gil_scoped_release nogil;
    parallel_range(u.size, 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            u.arrays[1][i] *= b1;
            u.arrays[2][i] *= b2;
        }
    });
    for (size_t k = 0; k < rows.ids.size(); ++k) {
        T* m = u.arrays[1] + rows.ids[k] * u.width;
        T* v = u.arrays[2] + rows.ids[k] * u.width;
        const T* gk = sums + k * u.width;
        for (int64_t c = 0; c < u.width; ++c) {
            m[c] += gk[c] * (one - b1);
            v[c] += gk[c] * gk[c] * (one - b2);
        }
    }
    parallel_range(u.size, 8, [&](int64_t begin, int64_t end) {
        Arrays<T> p{};
        for (int k = 0; k < 3; ++k) p[k] = u.arrays[k] + begin;
        var_step(p, end - begin);
    });
}

template <typename T>
void rms_prop(py::array var, py::array ms_, py::array mom_, double lr_, double rho_, double momentum_,
              double epsilon_, py::array grad, py::object indices) {
    auto u = collect<T>({&var, &ms_, &mom_}, "rms_prop");
    const T lr = static_cast<T>(lr_), decay = T(1) - static_cast<T>(rho_), mu = static_cast<T>(momentum_),
            eps = static_cast<T>(epsilon_);
    run(u, grad, indices, 16, "rms_prop", [=](Arrays<T> p, const T* g, int64_t n) {
        T* __restrict w = p[0];
        T* __restrict ms = p[1];
        T* __restrict mom = p[2];
        for (int64_t i = 0; i < n; ++i) {
            ms[i] += (g[i] * g[i] - ms[i]) * decay;
            mom[i] = mom[i] * mu + g[i] / std::sqrt(ms[i] + eps) * lr;
            w[i] -= mom[i];
        }
    });
}

template <typename T>
void centered_rms_prop(py::array var, py::array mg_, py::array ms_, py::array mom_, double lr_, double rho_,
                       double momentum_, double epsilon_, py::array grad, py::object indices) {
    auto u = collect<T>({&var, &mg_, &ms_, &mom_}, "centered_rms_prop");
    const T lr = static_cast<T>(lr_), decay = T(1) - static_cast<T>(rho_), mu = static_cast<T>(momentum_),
            eps = static_cast<T>(epsilon_);
    run(u, grad, indices, 20, "centered_rms_prop", [=](Arrays<T> p, const T* g, int64_t n) {
        T* __restrict w = p[0];
        T* __restrict mg = p[1];
        T* __restrict ms = p[2];
        T* __restrict mom = p[3];
        for (int64_t i = 0; i < n; ++i) {
            ms[i] += (g[i] * g[i] - ms[i]) * decay;
            mg[i] += (g[i] - mg[i]) * decay;
            mom[i] = mom[i] * mu + g[i] / std::sqrt(ms[i] - mg[i] * mg[i] + eps) * lr;
            w[i] -= mom[i];
        }
    });
}

template <class Fn32, class Fn64, class... Args>
void by_dtype(const py::array& var, const char* what, Fn32 f32, Fn64 f64, Args&&... args) {
    dispatch_float(var, what, [&](auto t) {
        if constexpr (std::is_same_v<decltype(t), float>) f32(std::forward<Args>(args)...);
        else f64(std::forward<Args>(args)...);
        return 0;
    });
}

}  // namespace

void register_training(py::module_& m) {
    const auto none = py::none();
    m.def("apply_gradient_descent", [](py::array var, double alpha, py::array delta, py::object indices) {
        by_dtype(var, "gradient_descent", gradient_descent<float>, gradient_descent<double>, var, alpha, delta, indices);
    }, py::arg("var"), py::arg("alpha"), py::arg("delta"), py::arg("indices") = none);
    m.def("apply_momentum", [](py::array var, py::array accum, double lr, py::array grad, double mu, bool nesterov,
                               py::object indices) {
        by_dtype(var, "momentum", momentum<float>, momentum<double>, var, accum, lr, grad, mu, nesterov, indices);
    }, py::arg("var"), py::arg("accum"), py::arg("lr"), py::arg("grad"), py::arg("momentum"),
       py::arg("use_nesterov") = false, py::arg("indices") = none);
    m.def("apply_adagrad", [](py::array var, py::array accum, double lr, py::array grad, bool update_slots,
                              py::object indices) {
        by_dtype(var, "adagrad", adagrad<float>, adagrad<double>, var, accum, lr, grad, update_slots, indices);
    }, py::arg("var"), py::arg("accum"), py::arg("lr"), py::arg("grad"), py::arg("update_slots") = true,
       py::arg("indices") = none);
    m.def("apply_adam", [](py::array var, py::array m_, py::array v, double b1p, double b2p, double lr, double b1,
                           double b2, double eps, py::array grad, py::object indices) {
        by_dtype(var, "adam", adam<float>, adam<double>, var, m_, v, b1p, b2p, lr, b1, b2, eps, grad, indices);
    }, py::arg("var"), py::arg("m"), py::arg("v"), py::arg("beta1_power"), py::arg("beta2_power"), py::arg("lr"),
       py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("grad"), py::arg("indices") = none);
    m.def("apply_rms_prop", [](py::array var, py::array ms, py::array mom, double lr, double rho, double mu,
                               double eps, py::array grad, py::object indices) {
        by_dtype(var, "rms_prop", rms_prop<float>, rms_prop<double>, var, ms, mom, lr, rho, mu, eps, grad, indices);
    }, py::arg("var"), py::arg("ms"), py::arg("mom"), py::arg("lr"), py::arg("rho"), py::arg("momentum"),
       py::arg("epsilon"), py::arg("grad"), py::arg("indices") = none);
    m.def("apply_centered_rms_prop", [](py::array var, py::array mg, py::array ms, py::array mom, double lr,
                                        double rho, double mu, double eps, py::array grad, py::object indices) {
        by_dtype(var, "centered_rms_prop", centered_rms_prop<float>, centered_rms_prop<double>, var, mg, ms, mom, lr,
                 rho, mu, eps, grad, indices);
    }, py::arg("var"), py::arg("mg"), py::arg("ms"), py::arg("mom"), py::arg("lr"), py::arg("rho"),
       py::arg("momentum"), py::arg("epsilon"), py::arg("grad"), py::arg("indices") = none);
}

}  // namespace tw
