"""CPU kernels for array ops."""

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Identity", "IdentityN", "Placeholder", "PlaceholderWithDefault",
    "PreventGradient", "Snapshot", "StopGradient"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too.
Const is not: its value is a host array (a GPU package uploads it once)."""


@KERNELS.register_build("Const")
def _const(node):
    value = node.attrs["value"]
    return lambda: value


@KERNELS.register_build("Placeholder")
def _placeholder(node):
    def fail():
        raise errors.InvalidArgumentError(None, node.source, (
            f"You must feed a value for placeholder tensor {node.name!r} with dtype "
            f"{node.attrs['dtype'].name}"))
    return fail


@KERNELS.register("PlaceholderWithDefault")
def _placeholder_with_default(x):
    return x


@KERNELS.register("Identity")
def _identity(x):
    return x


@KERNELS.register("StopGradient")
def _stop_gradient(x):
    return x


@KERNELS.register("PreventGradient")
def _prevent_gradient(x):
    return x


@KERNELS.register("IdentityN")
def _identity_n(*xs):
    return list(xs)


@KERNELS.register("Snapshot")
def _snapshot(x, *, xp):
    return xp.array(x, copy=True)
