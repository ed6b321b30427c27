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


def _forward(x):
    """The input itself: these ops matter only to feeding, placement or differentiation, not to the value."""
    return x


for _op_type in ("PlaceholderWithDefault", "Identity", "StopGradient", "PreventGradient"):
    KERNELS.add(_op_type, _forward)


@KERNELS.register("IdentityN")
def _identity_n(*xs):
    return list(xs)


@KERNELS.register("Snapshot")
def _snapshot(x, *, xp):
    return xp.array(x, copy=True)
