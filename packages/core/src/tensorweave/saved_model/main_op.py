"""TF1's ``tf.saved_model.main_op``: the op a loader runs after restoring (initializes what is not restored)."""

from tensorweave.framework import graph as graph_mod
from tensorweave.ops import control_flow_ops, variables

__all__ = ["main_op", "main_op_with_restore"]


def main_op():
    """Initializes local variables and lookup tables (the ops in the ``table_initializer`` collection)."""
    tables = graph_mod.get_collection(graph_mod.GraphKeys.TABLE_INITIALIZERS)
    return control_flow_ops.group(variables.local_variables_initializer(), *tables, name="main_op")


def main_op_with_restore(restore_op_name):
    """``main_op`` after the op ``restore_op_name`` (a Saver's restore op)."""
    with graph_mod.control_dependencies([graph_mod.get_default_graph().as_graph_element(restore_op_name)]):
        return main_op()
