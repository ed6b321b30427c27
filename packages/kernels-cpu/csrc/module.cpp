// tensorweave_cpu._native: the C++ kernels of the CPU package; kernels/native.py registers them.
#include "common.hpp"

namespace tw {
void register_activations(py::module_& m);
void register_bias(py::module_& m);
void register_conv(py::module_& m);
void register_losses(py::module_& m);
void register_pooling(py::module_& m);
void register_scatter(py::module_& m);
void register_training(py::module_& m);
}  // namespace tw

PYBIND11_MODULE(_native, m) {
    m.doc() = "Native CPU kernels of tensorweave-kernels-cpu (float32 and float64)";
#ifdef TW_OPENMP
    m.attr("openmp") = true;
#else
    m.attr("openmp") = false;
#endif
    m.def("threads", &tw::max_threads, "Threads a parallel kernel uses (OpenMP's maximum, 1 without OpenMP).");
    tw::register_activations(m);
    tw::register_bias(m);
    tw::register_conv(m);
    tw::register_losses(m);
    tw::register_pooling(m);
    tw::register_scatter(m);
    tw::register_training(m);
}
