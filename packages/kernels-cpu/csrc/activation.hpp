// The activations the native kernels apply and differentiate: relu and relu6, NaN passing through as
// numpy's maximum and clip let it, and a NaN incoming gradient passing through their gradients.
#pragma once

#include <string>

#include "common.hpp"

namespace tw {

enum class Activation { kNone, kRelu, kRelu6 };

inline Activation activation_from(const std::string& name, const char* what) {
    if (name == "none") return Activation::kNone;
    if (name == "relu") return Activation::kRelu;
    if (name == "relu6") return Activation::kRelu6;
    throw py::value_error(std::string(what) + ": unknown activation '" + name + "' (none, relu or relu6)");
}

template <typename T>
inline T activate(T x, Activation act) {
    switch (act) {
        case Activation::kRelu: return x < T(0) ? T(0) : x;
        case Activation::kRelu6: return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
        default: return x;
    }
}

// dy where the activation's slope is 1, else dy * 0 (so NaN and inf in dy still show), from its input x.
template <typename T>
inline T activation_grad(T dy, T x, Activation act) {
    switch (act) {
        case Activation::kRelu: return dy * T(x > T(0));
        case Activation::kRelu6: return dy * T(x > T(0) && x < T(6));
        default: return dy;
    }
}

}  // namespace tw
