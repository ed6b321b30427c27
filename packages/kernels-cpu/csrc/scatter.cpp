// Scatter-add of gradient rows into a table, in place: duplicate ids add one after another, in order,
// as numpy's unbuffered add.at does, so only the touched rows are read and written.
#include "common.hpp"

namespace tw {
namespace {

template <typename T, typename I>
void scatter_add_t(py::array& table, const py::array& indices, const py::array& updates, const std::string& what) {
    T* dst = out_ptr<T>(table, what.c_str(), "the table");
    const I* idx = in_ptr<I>(indices, what.c_str(), "indices");
    const T* src = in_ptr<T>(updates, what.c_str(), "updates");
    const int64_t rows = table.ndim() ? table.shape(0) : 0, n = indices.size();
    const int64_t width = rows ? table.size() / rows : 0;
    const bool scalar = updates.ndim() == 0;
    if (!scalar && updates.size() != n * width)
        throw py::value_error(what + ": updates must hold one row of the table per index, or be a scalar");
    for (int64_t k = 0; k < n; ++k)
        if (idx[k] < 0 || idx[k] >= rows)
            throw py::index_error(what + ": indices[" + std::to_string(k) + "] = " +
                                  std::to_string(static_cast<int64_t>(idx[k])) + " is not in [0, " +
                                  std::to_string(rows) + ")");
    py::gil_scoped_release nogil;
    for (int64_t k = 0; k < n; ++k) {
        T* __restrict row = dst + static_cast<int64_t>(idx[k]) * width;
        if (scalar) {
            for (int64_t c = 0; c < width; ++c) row[c] += src[0];
        } else {
            const T* __restrict add = src + k * width;
            for (int64_t c = 0; c < width; ++c) row[c] += add[c];
        }
    }
}

}  // namespace

void register_scatter(py::module_& m) {
    m.def("scatter_add", [](py::array table, const py::array& indices, const py::array& updates,
                            const std::string& what) {
        if (table.ndim() == 0) throw py::value_error(what + ": cannot scatter into a scalar");
        dispatch_float(table, what.c_str(), [&](auto t) {
            using T = decltype(t);
            if (py::isinstance<py::array_t<int32_t>>(indices)) scatter_add_t<T, int32_t>(table, indices, updates, what);
            else if (py::isinstance<py::array_t<int64_t>>(indices)) scatter_add_t<T, int64_t>(table, indices, updates, what);
            else throw py::type_error(what + ": indices must be int32 or int64");
            return 0;
        });
    }, py::arg("table"), py::arg("indices"), py::arg("updates"), py::arg("what") = "scatter_add",
       "table[indices[k]] += updates[k] for each k in order, in place (a scalar update adds to every named row).");
}

}  // namespace tw
