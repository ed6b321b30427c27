"""CPU kernel of StringSplit: bytes split at any byte of the delimiter, with TF1's empty-string rules."""

import re

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: strings live on the host."""


@KERNELS.register("StringSplit")
def _string_split(source, delimiter, *, skip_empty):
    delimiter = delimiter.item() if isinstance(delimiter, np.ndarray) else delimiter
    if source.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"input must be a vector, got shape {list(source.shape)}")
    pattern = re.compile(b"[" + re.escape(delimiter) + b"]") if delimiter else None
    rows, columns, tokens = [], [], []
    width = 0
    for row, text in enumerate(source.tolist()):
        if not text:
            continue  # an empty string has no tokens, even with skip_empty=False (as TF's kernel)
        parts = [text[i:i + 1] for i in range(len(text))] if pattern is None else pattern.split(text)
        if skip_empty:
            parts = [p for p in parts if p]
        rows.extend([row] * len(parts))
        columns.extend(range(len(parts)))
        tokens.extend(parts)
        width = max(width, len(parts))
    indices = np.array([rows, columns], np.int64).T.reshape(-1, 2)
    values = np.empty(len(tokens), dtype=object)
    values[:] = tokens
    return indices, values, np.array([len(source), width], np.int64)
