// Conv2D and its two backprops on oneDNN's direct convolutions (float32, NHWC data, [kh, kw, in, out] filters).
//
// Built only when CMake finds oneDNN (TW_ONEDNN); otherwise `onednn` is None and convolutions keep the
// im2col + GEMM path of conv.cpp. oneDNN never builds the window matrix: its kernels block the image in cache
// and keep filters in a register-friendly layout, into which the [kh, kw, in, out] filter is reordered per
// call (a few hundred KiB at most). Primitives are built once per geometry and kept; oneDNN's primitives may
// run concurrently from several threads.
#include "common.hpp"

#ifdef TW_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#endif

namespace tw {

#ifdef TW_ONEDNN
namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum class Pass { forward, backward_data, backward_weights };

// A convolution's geometry as oneDNN takes it; the key of the primitive cache.
struct ConvKey {
    Pass pass;
    int64_t n, h, w, c, out_channels, kh, kw, sh, sw, dh, dw, pad_top, pad_left, out_h, out_w;
    bool bias, relu;

    auto tie() const {
        return std::tie(pass, n, h, w, c, out_channels, kh, kw, sh, sw, dh, dw, pad_top, pad_left, out_h, out_w,
                        bias, relu);
    }
    bool operator<(const ConvKey& o) const { return tie() < o.tie(); }
};

// A built primitive and the layouts it wants; `ok` is false when oneDNN has no implementation for the geometry.
struct Conv {
    bool ok = false;
    dnnl::primitive primitive;
    memory::desc src, weights, dst, bias;         // the primitive's (weights possibly blocked)
    memory::desc user_weights;                    // [kh, kw, in, out]
    dnnl::primitive weights_reorder;              // user -> primitive (forward, backward data) or back
};

dnnl::engine& cpu_engine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

struct Descs {
    memory::desc src, weights_any, user_weights, dst, bias;
    memory::dims strides, dilations, pad_l, pad_r;
};

Descs descs_of(const ConvKey& k) {
    const auto f32 = memory::data_type::f32;
    Descs d;
    d.src = memory::desc({k.n, k.c, k.h, k.w}, f32, tag::nhwc);
    d.dst = memory::desc({k.n, k.out_channels, k.out_h, k.out_w}, f32, tag::nhwc);
    d.user_weights = memory::desc({k.out_channels, k.c, k.kh, k.kw}, f32, tag::hwio);
    d.weights_any = memory::desc({k.out_channels, k.c, k.kh, k.kw}, f32, tag::any);
    d.bias = memory::desc({k.out_channels}, f32, tag::x);
    d.strides = {k.sh, k.sw};
    d.dilations = {k.dh - 1, k.dw - 1};
    d.pad_l = {k.pad_top, k.pad_left};
    // The far side's padding makes the output size come out exactly (negative when a VALID window skips rows).
    d.pad_r = {(k.out_h - 1) * k.sh + (k.kh - 1) * k.dh + 1 - k.h - k.pad_top,
               (k.out_w - 1) * k.sw + (k.kw - 1) * k.dw + 1 - k.w - k.pad_left};
    return d;
}

dnnl::convolution_forward::primitive_desc forward_desc(const ConvKey& k, const Descs& d) {
    dnnl::primitive_attr attr;
    if (k.relu) {
        dnnl::post_ops ops;
        ops.append_eltwise(dnnl::algorithm::eltwise_relu, 0.f, 0.f);
        attr.set_post_ops(ops);
    }
    const auto& e = cpu_engine();
    const auto prop = dnnl::prop_kind::forward_training;
    const auto alg = dnnl::algorithm::convolution_direct;
    if (k.bias)
        return {e, prop, alg, d.src, d.weights_any, d.bias, d.dst, d.strides, d.dilations, d.pad_l, d.pad_r, attr};
    return {e, prop, alg, d.src, d.weights_any, d.dst, d.strides, d.dilations, d.pad_l, d.pad_r, attr};
}

Conv build(const ConvKey& k) {
    Conv conv;
    const Descs d = descs_of(k);
    const auto& e = cpu_engine();
    const auto alg = dnnl::algorithm::convolution_direct;
    try {
        ConvKey plain = k;
        plain.pass = Pass::forward;
        const auto hint = forward_desc(plain, d);
        conv.user_weights = d.user_weights;
        if (k.pass == Pass::forward) {
            conv.primitive = dnnl::convolution_forward(hint);
            conv.weights = hint.weights_desc();
        } else if (k.pass == Pass::backward_data) {
            dnnl::convolution_backward_data::primitive_desc pd(e, alg, d.src, d.weights_any, d.dst, d.strides,
                                                               d.dilations, d.pad_l, d.pad_r, hint);
            conv.primitive = dnnl::convolution_backward_data(pd);
            conv.weights = pd.weights_desc();
        } else {
            dnnl::convolution_backward_weights::primitive_desc pd(e, alg, d.src, d.weights_any, d.dst, d.strides,
                                                                  d.dilations, d.pad_l, d.pad_r, hint);
            conv.primitive = dnnl::convolution_backward_weights(pd);
            conv.weights = pd.diff_weights_desc();
        }
        if (conv.weights != d.user_weights)
            conv.weights_reorder = k.pass == Pass::backward_weights
                ? dnnl::reorder(dnnl::reorder::primitive_desc(e, conv.weights, e, d.user_weights))
                : dnnl::reorder(dnnl::reorder::primitive_desc(e, d.user_weights, e, conv.weights));
        conv.src = d.src;
        conv.dst = d.dst;
        conv.bias = d.bias;
        conv.ok = true;
    } catch (const dnnl::error&) {
        conv.ok = false;  // no implementation for this geometry: the caller takes the im2col path
    }
    return conv;
}

// The primitive for a geometry, built on first use. A program that keeps making new geometries (images of every
// size) starts the cache afresh past kMaxCached; callers still running an evicted primitive hold it.
constexpr size_t kMaxCached = 256;

std::shared_ptr<const Conv> cached(const ConvKey& k) {
    static std::mutex lock;
    static std::map<ConvKey, std::shared_ptr<const Conv>> cache;
    std::lock_guard<std::mutex> guard(lock);
    auto found = cache.find(k);
    if (found != cache.end()) return found->second;
    if (cache.size() >= kMaxCached) cache.clear();
    auto conv = std::make_shared<const Conv>(build(k));
    cache.emplace(k, conv);
    return conv;
}

ConvKey key_of(Pass pass, const Window& g, int64_t out_channels, bool bias, bool relu) {
    return {pass, g.n, g.h, g.w, g.c, out_channels, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_left,
            g.out_h, g.out_w, bias, relu};
}

memory wrap(const memory::desc& desc, const void* data) {
    return memory(desc, cpu_engine(), const_cast<void*>(data));
}

void check_shape(const py::array& a, std::initializer_list<int64_t> want, const char* what, const char* name) {
    const std::vector<int64_t> w(want);
    bool same = a.ndim() == static_cast<py::ssize_t>(w.size());
    for (size_t i = 0; same && i < w.size(); ++i) same = a.shape(i) == w[i];
    if (!same) throw py::value_error(std::string(what) + ": " + name + " does not match the convolution's geometry");
}

// Whether two arrays share any byte (an offered output buffer may be a dying input).
bool overlaps(const py::array& a, const py::array& b) {
    const char* a0 = static_cast<const char*>(a.data());
    const char* b0 = static_cast<const char*>(b.data());
    return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

// The [kh, kw, in, out] filter in the layout the primitive reads: reordered into `scratch`, or the filter itself.
memory filter_for(const Conv& conv, const float* filter, dnnl::stream& stream, memory& scratch) {
    memory user = wrap(conv.user_weights, filter);
    if (!conv.weights_reorder) return user;
    scratch = memory(conv.weights, cpu_engine());
    conv.weights_reorder.execute(stream, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, scratch}});
    return scratch;
}

py::object forward(const py::array& x, const py::array& filter, const py::object& bias, const py::tuple& geometry,
                   bool relu, const py::object& out) {
    const Window g = window_from(geometry);
    const int64_t oc = filter.ndim() == 4 ? filter.shape(3) : -1;
    const bool has_bias = !bias.is_none();
    const auto held = cached(key_of(Pass::forward, g, oc, has_bias, relu));
    const Conv& conv = *held;
    if (!conv.ok) return py::none();
    const float* xp = in_ptr<float>(x, "conv2d", "input");
    const float* fp = in_ptr<float>(filter, "conv2d", "filter");
    check_shape(x, {g.n, g.h, g.w, g.c}, "conv2d", "input");
    check_shape(filter, {g.kh, g.kw, g.c, oc}, "conv2d", "filter");
    py::array b;
    if (has_bias) {
        b = bias.cast<py::array>();
        check_shape(b, {oc}, "conv2d", "bias");
    }
    const float* bp = has_bias ? in_ptr<float>(b, "conv2d", "bias") : nullptr;
    bool into_out = false;
    if (!out.is_none() && py::isinstance<py::array_t<float>>(out)) {
        py::array o = out.cast<py::array>();
        into_out = (o.flags() & py::array::c_style) && o.writeable() && o.ndim() == 4 && o.shape(0) == g.n &&
                   o.shape(1) == g.out_h && o.shape(2) == g.out_w && o.shape(3) == oc && !overlaps(o, x) &&
                   !overlaps(o, filter) && (!has_bias || !overlaps(o, b));
    }
    py::array y = into_out ? out.cast<py::array>() : py::array_t<float>({g.n, g.out_h, g.out_w, oc});
    float* yp = static_cast<float*>(y.mutable_data());
    {
        py::gil_scoped_release nogil;
        dnnl::stream stream(cpu_engine());
        memory scratch;
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(conv.src, xp)},
                                             {DNNL_ARG_WEIGHTS, filter_for(conv, fp, stream, scratch)},
                                             {DNNL_ARG_DST, wrap(conv.dst, yp)}};
        if (has_bias) args.emplace(DNNL_ARG_BIAS, wrap(conv.bias, bp));
        conv.primitive.execute(stream, args);
        stream.wait();
    }
    return std::move(y);
}

py::object backward_data(const py::array& filter, const py::array& dy, const py::tuple& geometry) {
    const Window g = window_from(geometry);
    const int64_t oc = filter.ndim() == 4 ? filter.shape(3) : -1;
    const auto held = cached(key_of(Pass::backward_data, g, oc, false, false));
    const Conv& conv = *held;
    if (!conv.ok) return py::none();
    const float* fp = in_ptr<float>(filter, "conv2d_backprop_input", "filter");
    const float* dyp = in_ptr<float>(dy, "conv2d_backprop_input", "out_backprop");
    check_shape(filter, {g.kh, g.kw, g.c, oc}, "conv2d_backprop_input", "filter");
    check_shape(dy, {g.n, g.out_h, g.out_w, oc}, "conv2d_backprop_input", "out_backprop");
    py::array_t<float> dx({g.n, g.h, g.w, g.c});
    float* dxp = dx.mutable_data();
    {
        py::gil_scoped_release nogil;
        dnnl::stream stream(cpu_engine());
        memory scratch;
        conv.primitive.execute(stream, {{DNNL_ARG_DIFF_DST, wrap(conv.dst, dyp)},
                                        {DNNL_ARG_WEIGHTS, filter_for(conv, fp, stream, scratch)},
                                        {DNNL_ARG_DIFF_SRC, wrap(conv.src, dxp)}});
        stream.wait();
    }
    return std::move(dx);
}

py::object backward_weights(const py::array& x, const py::array& dy, const py::tuple& geometry, int64_t oc) {
    const Window g = window_from(geometry);
    const auto held = cached(key_of(Pass::backward_weights, g, oc, false, false));
    const Conv& conv = *held;
    if (!conv.ok) return py::none();
    const float* xp = in_ptr<float>(x, "conv2d_backprop_filter", "input");
    const float* dyp = in_ptr<float>(dy, "conv2d_backprop_filter", "out_backprop");
    check_shape(x, {g.n, g.h, g.w, g.c}, "conv2d_backprop_filter", "input");
    check_shape(dy, {g.n, g.out_h, g.out_w, oc}, "conv2d_backprop_filter", "out_backprop");
    py::array_t<float> dw({g.kh, g.kw, g.c, oc});
    float* dwp = dw.mutable_data();
    {
        py::gil_scoped_release nogil;
        dnnl::stream stream(cpu_engine());
        memory user = wrap(conv.user_weights, dwp);
        memory result = conv.weights_reorder ? memory(conv.weights, cpu_engine()) : user;
        conv.primitive.execute(stream, {{DNNL_ARG_SRC, wrap(conv.src, xp)}, {DNNL_ARG_DIFF_DST, wrap(conv.dst, dyp)},
                                        {DNNL_ARG_DIFF_WEIGHTS, result}});
        if (conv.weights_reorder) conv.weights_reorder.execute(stream, {{DNNL_ARG_FROM, result}, {DNNL_ARG_TO, user}});
        stream.wait();
    }
    return std::move(dw);
}

}  // namespace
#endif

void register_conv_onednn(py::module_& m) {
#ifdef TW_ONEDNN
    const dnnl_version_t* v = dnnl_version();
    m.attr("onednn") = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    m.def("conv2d_onednn", &forward, py::arg("x"), py::arg("filter"), py::arg("bias"), py::arg("geometry"),
          py::arg("relu") = false, py::arg("out") = py::none(),
          "relu?(conv2d(x, filter) + bias?) of float32 NHWC x and a [kh, kw, in, out] filter, into `out` when it "
          "fits; None when oneDNN has no kernel for the geometry.");
    m.def("conv2d_backprop_input_onednn", &backward_data, py::arg("filter"), py::arg("dy"), py::arg("geometry"),
          "The gradient of conv2d with respect to its NHWC input (float32); None when oneDNN has no kernel.");
    m.def("conv2d_backprop_filter_onednn", &backward_weights, py::arg("x"), py::arg("dy"), py::arg("geometry"),
          py::arg("out_channels"),
          "The gradient of conv2d with respect to its [kh, kw, in, out] filter (float32); None when oneDNN has no "
          "kernel.");
#else
    m.attr("onednn") = py::none();
#endif
}

}  // namespace tw
