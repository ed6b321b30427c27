// tensorweave_cpu._native: the C++ kernels of the CPU package; kernels/native.py registers them.
#include "common.hpp"

namespace py = pybind11;

namespace tw {
void register_activations(py::module_& m);
void register_bias(py::module_& m);
void register_conv(py::module_& m);
void register_conv_onednn(py::module_& m);
void register_losses(py::module_& m);
void register_matmul_onednn(py::module_& m);
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
    m.def("parallel_work", [](py::object work) {
        const int64_t before = tw::parallel_work.load();
        if (!work.is_none()) tw::parallel_work.store(work.cast<int64_t>());
        return before;
    }, py::arg("work") = py::none(),
       "The element-operations from which a loop runs on several threads; sets it when given, returns the old value.");
    tw::register_activations(m);
    tw::register_bias(m);
    tw::register_conv(m);
    tw::register_conv_onednn(m);
    tw::register_losses(m);
    tw::register_matmul_onednn(m);
    tw::register_pooling(m);
    tw::register_scatter(m);
    tw::register_training(m);
}
