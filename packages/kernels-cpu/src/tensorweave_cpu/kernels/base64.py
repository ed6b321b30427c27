"""CPU kernels for EncodeBase64 and DecodeBase64 (Python's base64 over each string, in TF's web-safe alphabet)."""

import base64
import re

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
_WEB_SAFE = re.compile(rb"[A-Za-z0-9_-]*={0,2}")


def _each(x, fn):
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, value in enumerate(x.reshape(-1)):
        flat[i] = fn(value if isinstance(value, bytes) else str(value).encode())
    return out


@KERNELS.register("EncodeBase64")
def _encode_base64(x, *, pad):
    def encode(value):
        encoded = base64.urlsafe_b64encode(value)
        return encoded if pad else encoded.rstrip(b"=")
    return _each(x, encode)


def _decode(value):
    if not _WEB_SAFE.fullmatch(value) or len(value.rstrip(b"=")) % 4 == 1 or (b"=" in value and len(value) % 4):
        raise ValueError(f"Invalid base64 string {value[:40]!r}: TF's base64 is web-safe ('-' and '_' for '+' and "
                         f"'/'), with optional '=' padding to a multiple of 4 characters")
    stripped = value.rstrip(b"=")
    return base64.urlsafe_b64decode(stripped + b"=" * (-len(stripped) % 4))


@KERNELS.register("DecodeBase64")
def _decode_base64(x):
    return _each(x, _decode)
