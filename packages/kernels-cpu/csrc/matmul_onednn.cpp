// float32 MatMul on oneDNN's GEMM (dnnl_sgemm), built with the convolutions (TW_ONEDNN).
//
// Why not numpy's BLAS: OpenBLAS keeps its own threads, which spin for a while after each call; a step that
// alternates GEMMs with oneDNN convolutions and the OpenMP loops of the other native kernels then has two
// thread pools fighting over the same cores (the LeNet step took twice as long as with one pool). oneDNN's
// GEMM runs on the OpenMP threads everything else here uses. Operands are read in place whether C- or
// Fortran-ordered (a transposed view is the other order), so `transpose_a`/`transpose_b` never copy.
#include "common.hpp"

#ifdef TW_ONEDNN
#include <oneapi/dnnl/dnnl.h>

#include <stdexcept>
#include <string>
#endif

namespace tw {

#ifdef TW_ONEDNN
namespace {

// One operand as row-major sgemm reads it: its data, the transposition flag and the leading dimension.
struct GemmOperand {
    const float* data;
    char op;
    int64_t ld;
    int64_t rows, cols;  // of the operand as the product uses it (after the transposition)
};

GemmOperand gemm_operand(const py::array& x, bool transpose) {
    const int64_t r = x.shape(0), c = x.shape(1);
    const bool c_order = x.flags() & py::array::c_style;
    // C-ordered x is stored as itself (ld = c); Fortran-ordered x is stored as its transpose (ld = r).
    const bool read_transposed = c_order ? transpose : !transpose;
    const int64_t ld = std::max<int64_t>(1, c_order ? c : r);
    return {static_cast<const float*>(x.data()), read_transposed ? 'T' : 'N', ld, transpose ? c : r, transpose ? r : c};
}

py::array matmul(const py::array& a, const py::array& b, bool transpose_a, bool transpose_b, const py::object& out) {
    const GemmOperand x = gemm_operand(a, transpose_a), y = gemm_operand(b, transpose_b);
    if (x.cols != y.rows) throw std::invalid_argument("MatMul: inner dimensions differ");
    py::array_t<float> result = out.is_none() ? py::array_t<float>({x.rows, y.cols}) : out.cast<py::array_t<float>>();
    float* c = result.mutable_data();
    dnnl_status_t status;
    {
        py::gil_scoped_release nogil;
        status = dnnl_sgemm(x.op, y.op, x.rows, y.cols, x.cols, 1.0f, x.data, x.ld, y.data, y.ld, 0.0f, c,
                            std::max<int64_t>(1, y.cols));
    }
    if (status != dnnl_success) throw std::runtime_error("oneDNN's sgemm failed with status " + std::to_string(status));
    return std::move(result);
}

}  // namespace
#endif

void register_matmul_onednn(py::module_& m) {
#ifdef TW_ONEDNN
    m.def("matmul_onednn", &matmul, py::arg("a"), py::arg("b"), py::arg("transpose_a"), py::arg("transpose_b"),
          py::arg("out") = py::none(),
          "op(a) @ op(b) of 2-D float32 arrays, each C- or Fortran-ordered with no zero-sized dimension, into `out` "
          "(C-ordered, of the product's shape) when given.");
#endif
}

}  // namespace tw
