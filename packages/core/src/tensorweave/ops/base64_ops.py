"""EncodeBase64 and DecodeBase64: strings to and from TF's web-safe base64 (``-`` and ``_`` for ``+`` and ``/``),
``tf.io.encode_base64`` / ``tf.io.decode_base64`` (also at the top level, as TF1)."""

from tensorweave import dtypes
from tensorweave.framework import common_shapes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = ["decode_base64", "encode_base64"]

DEFS.define("EncodeBase64", inputs=["input: string"], outputs=["output: string"], attrs=["pad: bool = False"],
            shape_fn=common_shapes.unchanged_shape, grad=NOT_DIFFERENTIABLE,
            doc="Each string in web-safe base64; '=' padding to a multiple of 4 characters only with pad.")
DEFS.define("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
            shape_fn=common_shapes.unchanged_shape, grad=NOT_DIFFERENTIABLE,
            doc="Each web-safe base64 string decoded; '=' padding is optional.")


def encode_base64(input, pad=False, name=None):  # noqa: A002
    """Web-safe base64 of each string (no '=' padding unless ``pad``)."""
    return apply_op("EncodeBase64", [convert_to_tensor(input, dtype=dtypes.string, name="input")], {"pad": bool(pad)},
                    name=name or "EncodeBase64")


def decode_base64(input, name=None):  # noqa: A002
    """The bytes of each web-safe base64 string (padded or not); another alphabet is an InvalidArgumentError."""
    return apply_op("DecodeBase64", [convert_to_tensor(input, dtype=dtypes.string, name="input")],
                    name=name or "DecodeBase64")
