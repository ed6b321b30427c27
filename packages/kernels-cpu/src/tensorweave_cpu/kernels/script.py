"""CPU kernels of PyFunc and PyFuncStateless: call the registered Python function, check what it returns against
``Tout`` and turn its exceptions into TF1's OpErrors (the class by the exception's type, the message its
``Type: text`` line and the function's traceback)."""

import traceback

import numpy as np

from tensorweave.extension import KernelSet, call_py_func, dtypes, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: the function gets host numpy arrays."""

_ERROR_CLASSES = (  # the first match wins, as TF's py_func kernel checks them
    ((ValueError, TypeError), errors.InvalidArgumentError),
    ((StopIteration,), errors.OutOfRangeError),
    ((MemoryError,), errors.ResourceExhaustedError),
    ((NotImplementedError,), errors.UnimplementedError),
)
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _type_name(dtype):
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


def _raised(exc):
    if isinstance(exc, errors.OpError):
        return exc
    cls = next((c for kinds, c in _ERROR_CLASSES if isinstance(exc, kinds)), errors.UnknownError)
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next)
    text = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    return cls(None, None, f"{text}\n{''.join(lines).rstrip()}")


def _checked(token, results, tout):
    if len(results) != len(tout):
        raise errors.InvalidArgumentError(
            None, None, f"{token} returns {len(results)} values, but expects to see {len(tout)} values.")
    for i, (value, dtype) in enumerate(zip(results, tout)):
        try:
            got = dtypes.as_dtype(value.dtype) if value.dtype.kind != "O" else dtypes.string
        except TypeError:
            raise errors.UnimplementedError(None, None, f"{i}-th value returned by {token} has numpy type "
                                            f"{value.dtype}, which no tensor type holds") from None
        if got is not dtype:
            raise errors.InvalidArgumentError(
                None, None, f"{i}-th value returned by {token} is {_type_name(got)}, but expects {_type_name(dtype)}")
        if dtype is dtypes.string and any(not isinstance(v, bytes) for v in value.reshape(-1)):
            raise errors.InvalidArgumentError(None, None, f"{i}-th value returned by {token} holds a value that "
                                              f"is not bytes or str, but expects string")
    return results


def _host(value):
    """What TF hands the function: an array, or for a scalar a numpy scalar (bytes for a string)."""
    value = np.asarray(value)
    return value[()] if value.ndim == 0 else value


def _py_func(*args, token, Tout):  # noqa: N803 - the op's attr names
    try:
        results = call_py_func(token, [_host(a) for a in args])
    except Exception as exc:  # noqa: BLE001 - every exception of the user's function becomes an OpError
        raise _raised(exc) from exc
    return _checked(token, results, list(Tout))


KERNELS.add("PyFunc", _py_func)
KERNELS.add("PyFuncStateless", _py_func)
