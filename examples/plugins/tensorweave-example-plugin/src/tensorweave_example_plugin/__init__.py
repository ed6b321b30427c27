"""An example Tensorweave plugin: the Swish op (with gradient), its CPU kernel and a TOY device."""

from tensorweave.extension import apply_op


def swish(x, name=None):
    """x * sigmoid(x), computed by this plugin's Swish kernel."""
    return apply_op("Swish", [x], name=name or "Swish")
