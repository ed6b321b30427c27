"""CPU kernels of the iterator ops: the iterator resource in the device's containers, as queues' are.

``IteratorV2`` and ``OneShotIterator`` find or make the resource (private to the session unless
``shared_name``); ``IteratorGetNext`` waits for its element on the calling thread and fails with the step's
error if the step is cancelled (a deadline, a closed session).
"""

import numpy as np

from tensorweave.extension import FunctionRunner, KernelSet, ResourceHandle, errors

from tensorweave_cpu.data.base import numpy_dtypes, scalar
from tensorweave_cpu.data.iterator_resource import IteratorResource, parse_string_handle, string_handle
from tensorweave_cpu.shared_resources import find_or_make

KERNELS = KernelSet("CPU")


def _shapes(attr):
    return [None if s.ndims is None else tuple(d.value for d in s.dims) for s in attr]


def _shapes_compatible(a, b):
    return a is None or b is None or (len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b)))


def _iterator(handle):
    resource = getattr(handle, "resource", None)
    if not isinstance(resource, IteratorResource):
        raise errors.InvalidArgumentError(None, None, f"expected an iterator handle, got {handle!r}")
    return resource


def _creator(node):
    """Finds or makes the node's iterator; the handle is kept for later runs (a kernel serves one session's
    plan) until the resource is closed (its container cleared)."""
    dtypes, shapes = numpy_dtypes(node.attrs["output_types"]), _shapes(node.attrs["output_shapes"])
    kept = []

    def create(ctx):
        if kept and not kept[0].resource.closed:
            return kept[0]
        handle = find_or_make(ctx, node, lambda name: IteratorResource(name, dtypes, shapes))
        kept[:] = [handle]
        return handle
    return create


@KERNELS.register_build("IteratorV2", context=True)
def _iterator_v2(node):
    return _creator(node)


@KERNELS.register_build("OneShotIterator", context=True)
def _one_shot(node):
    create, factory = _creator(node), node.attrs["dataset_factory"]
    if not hasattr(factory, "outputs"):
        raise errors.UnimplementedError(None, None, "this OneShotIterator came from an imported graph, whose dataset "
                                                    "factory cannot be run; build the pipeline with tf.data here")

    def compute(ctx):
        handle = create(ctx)
        _iterator(handle).initialize_once(lambda: FunctionRunner(ctx.step.session, factory)([])[0])
        return handle
    return compute


@KERNELS.register("MakeIterator")
def _make_iterator(dataset, handle):
    _iterator(handle).initialize(dataset)


@KERNELS.register("IteratorGetNext", context=True)
def _get_next(ctx, handle):
    return _iterator(handle).get_next(ctx.step.cancellation)


@KERNELS.register("IteratorToStringHandle")
def _to_string_handle(handle):
    _iterator(handle)
    out = np.empty((), dtype=object)
    out[()] = string_handle(handle.device, handle.container, handle.name)
    return out


@KERNELS.register_build("IteratorFromStringHandleV2")
def _from_string_handle(node):
    device_mgr = node.device_mgr
    dtypes, shapes = numpy_dtypes(node.attrs["output_types"]), _shapes(node.attrs["output_shapes"])

    def compute(text):
        device_name, container, name = parse_string_handle(scalar(text, "string_handle"))
        try:
            device = device_mgr.lookup(device_name)
        except errors.InvalidArgumentError:
            raise errors.NotFoundError(None, None, f"the device {device_name!r} of the iterator a string handle "
                                                   f"names is not one of this session's") from None
        resource = device.resource_manager.lookup(container, name)
        if not isinstance(resource, IteratorResource):
            raise errors.InvalidArgumentError(None, None, f"the string handle names {resource!r}, not an iterator")
        if dtypes and [str(d) for d in dtypes] != [str(d) for d in resource.dtypes]:
            raise errors.InvalidArgumentError(None, None, (
                f"the iterator the string handle names hands out components of types "
                f"{[str(d) for d in resource.dtypes]}, not {[str(d) for d in dtypes]} as from_string_handle says"))
        if shapes and not all(_shapes_compatible(a, b) for a, b in zip(shapes, resource.shapes)):
            raise errors.InvalidArgumentError(None, None, (
                f"the iterator the string handle names hands out components of shapes {resource.shapes}, "
                f"incompatible with {shapes} as from_string_handle says"))
        return ResourceHandle(device_name, container, name, resource)
    return compute
