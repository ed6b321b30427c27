"""Starting every rank from the same weights: ``broadcast_global_variables`` and the hook that runs it when
a ``MonitoredTrainingSession`` is created (after the chief restored its checkpoint, so every rank resumes
from it)."""

from tensorweave.train import SessionRunHook

from tensorweave_distributed.collective_ops import grouped_broadcast


def broadcast_variables(variables, root_rank):
    """An op that sets each of ``variables`` to its value on ``root_rank`` (one fused broadcast)."""
    import tensorweave as tf
    variables = list(variables)
    if not variables:
        return tf.no_op(name="broadcast_variables")
    with tf.name_scope("broadcast_variables"):
        values = grouped_broadcast([v.read_value() if hasattr(v, "read_value") else v for v in variables], root_rank,
                                   name="values")
        return tf.group(*[tf.assign(v, value) for v, value in zip(variables, values)], name="assign")


def broadcast_global_variables(root_rank):
    """An op that sets every global variable to its value on ``root_rank``; run it once after
    initialization (or restore) so every rank trains from the same weights."""
    import tensorweave as tf
    return broadcast_variables(tf.global_variables(), root_rank)


class BroadcastGlobalVariablesHook(SessionRunHook):
    """Broadcasts every global variable from ``root_rank`` when the session is created (Horovod's hook).

    ``device`` places the broadcast op (default: where the graph puts it).
    """

    def __init__(self, root_rank, device=""):
        self.root_rank = root_rank
        self.device = device
        self.bcast_op = None

    def begin(self):
        import tensorweave as tf
        if self.bcast_op is None or self.bcast_op.graph is not tf.get_default_graph():
            with tf.device(self.device):
                self.bcast_op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)
