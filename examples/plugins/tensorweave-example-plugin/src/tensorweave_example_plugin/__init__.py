"""An example Tensorweave plugin: the Swish op (with gradient), the pass-through Annotate op, their CPU kernels
and a TOY device."""

from tensorweave.extension import apply_op


def swish(x, name=None):
    """x * sigmoid(x), computed by this plugin's Swish kernel."""
    return apply_op("Swish", [x], name=name or "Swish")


def annotate(x, note="", name=None):
    """x itself, with a note for tools that read the graph (removed from plans like tf.identity)."""
    return apply_op("Annotate", [x], {"note": note}, name=name or "Annotate")
