"""``tf.train.SyncReplicasOptimizer``: synchronous training with backup workers (the OSDI paper, §4.4).

As TF1's: each worker applies ``(gradient, local_step)`` to a gradient accumulator per variable, kept next
to the variable (on its ps task), then waits for a token. The chief's queue runner takes, per variable,
the mean of ``replicas_to_aggregate`` gradients (the accumulator drops those whose local step is older
than its global step), applies them with the wrapped optimizer, and puts one token per replica (the new
global step) in the token queue, which releases the workers for the next step. With
``total_num_replicas`` > ``replicas_to_aggregate`` the slowest workers' gradients arrive stale and are
dropped, so a straggler does not hold the step.

IndexedSlices gradients (an embedding's) go to a SparseConditionalAccumulator and stay sparse end to end:
only touched rows travel, are summed per index and averaged over the gradients taken, and change.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import accumulator_ops, control_flow_ops, data_flow_ops, fill_ops, state_ops, variables
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.queue_runner import QueueRunner
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]


class SyncReplicasOptimizer(Optimizer):
    """Wraps ``opt``: gradients from ``replicas_to_aggregate`` replicas are averaged and applied once."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        super().__init__(use_locking, name)
        if not isinstance(opt, Optimizer):
            raise TypeError(f"SyncReplicasOptimizer wraps a tf.train.Optimizer, got {opt!r}")
        total_num_replicas = replicas_to_aggregate if total_num_replicas is None else total_num_replicas
        if replicas_to_aggregate < 1 or total_num_replicas < 1:
            raise ValueError(f"SyncReplicasOptimizer: replicas_to_aggregate ({replicas_to_aggregate}) and "
                             f"total_num_replicas ({total_num_replicas}) must be >= 1")
        if variable_averages is not None:
            raise ValueError("SyncReplicasOptimizer: variable_averages is not supported here; apply "
                             "tf.train.ExponentialMovingAverage after the optimizer instead")
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._local_step = None
        self._accumulators = []
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The worker's train op (push gradients, wait for a token); builds the chief's aggregation too."""
        if global_step is None:
            raise ValueError("SyncReplicasOptimizer.apply_gradients needs global_step (it numbers the steps "
                             "whose gradients are fresh); pass tf.train.get_or_create_global_step()")
        if self._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradients was already called; make one per graph")
        grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
        if not grads_and_vars:
            raise ValueError("SyncReplicasOptimizer.apply_gradients: no variable has a gradient")
        graph = graph_mod.get_default_graph()
        self._global_step = global_step
        step_dtype = global_step.dtype.base_dtype
        local_anchor = control_flow_ops.no_op(name="sync_rep_local_anchor")  # on this worker's device
        with graph.colocate_with(local_anchor):
            self._local_step = variables.Variable(fill_ops.zeros([], step_dtype), trainable=False,
                                                  collections=[graph_mod.GraphKeys.LOCAL_VARIABLES],
                                                  name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        self.ready_for_local_init_op = variables.report_uninitialized_variables(variables.global_variables())
        with graph.name_scope(name or self._name):
            local_step = self._local_step.read_value()
            pushes, aggregated = [], []
            for grad, var in grads_and_vars:
                with graph.colocate_with(var):  # the accumulator and the take live on the variable's ps
                    push, mean = self._accumulate(grad, var, local_step)
                pushes.append(push)
                aggregated.append((mean, var))
            # outside colocate_with(global_step): each update goes next to its own variable, and variables
            # on different ps tasks must not be tied into one colocation group through the global step
            update_op = self._opt.apply_gradients(aggregated, global_step)
            with graph.colocate_with(global_step):
                self._sync_token_queue = data_flow_ops.FIFOQueue(-1, [step_dtype], shapes=[[]],
                                                                 shared_name="sync_token_q", name="sync_token_q")
                dummy_queue = data_flow_ops.FIFOQueue(1, [dtypes.int32], shapes=[[]],
                                                      shared_name="dummy_queue", name="dummy_queue")
                with graph.control_dependencies([update_op]):
                    tokens = fill_ops.fill([self._tokens_per_step], global_step.read_value())
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
            self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])
            with graph.control_dependencies(pushes), graph.colocate_with(global_step):
                token = self._sync_token_queue.dequeue()
            train_op = state_ops.assign(self._local_step, token, name="train_op")
            self.chief_init_op = control_flow_ops.group(self.local_step_init_op, self._set_accumulator_steps(),
                                                        name="chief_init_op")
        self._gradients_applied = True
        return train_op

    def _accumulate(self, grad, var, local_step):
        """(the worker's apply of ``grad``, the chief's take of the mean of ``replicas_to_aggregate``)."""
        dtype = var.dtype.base_dtype
        shared_name = f"{var.op.name}/grad_accum"
        if not isinstance(grad, IndexedSlices):
            accumulator = accumulator_ops.ConditionalAccumulator(dtype, shape=var.shape, shared_name=shared_name,
                                                                 name="grad_accum")
            self._accumulators.append(accumulator)
            return (accumulator.apply_grad(grad, local_step=local_step),
                    accumulator.take_grad(self._replicas_to_aggregate))
        if not var.shape[1:].is_fully_defined():
            raise ValueError(f"SyncReplicasOptimizer: the sparse gradient of {var.name} needs the variable's row "
                             f"shape, but it is {var.shape}; give the variable a fully defined shape")
        accumulator = accumulator_ops.SparseConditionalAccumulator(dtype, shape=var.shape, shared_name=shared_name,
                                                                   name="sparse_grad_accum")
        self._accumulators.append(accumulator)
        return (accumulator.apply_indexed_slices_grad(grad, local_step=local_step),
                accumulator.take_indexed_slices_grad(self._replicas_to_aggregate))

    def _set_accumulator_steps(self):
        """Each accumulator's global step set to the global step (the chief's start, e.g. from a checkpoint)."""
        graph = graph_mod.get_default_graph()
        sets = []
        for accumulator in self._accumulators:
            with graph.colocate_with(accumulator.accumulator_ref.op):
                sets.append(accumulator.set_global_step(self._global_step.read_value(), name="SetGlobalStep"))
        return control_flow_ops.group(*sets, name="set_accumulator_steps")

    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: it aggregates, applies and releases each step."""
        self._check_applied("get_chief_queue_runner")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """Tokens that let the workers start (the chief runs it once): ``num_tokens`` (default
        replicas_to_aggregate) copies of the global step."""
        self._check_applied("get_init_tokens_op")
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        if num_tokens < 0:
            raise ValueError(f"get_init_tokens_op: num_tokens must be >= 0 or -1, got {num_tokens}")
        graph = graph_mod.get_default_graph()
        # the accumulators first learn the global step the workers start from, so older gradients are stale
        with graph.control_dependencies([self._set_accumulator_steps()]):
            if num_tokens == 0:
                return control_flow_ops.no_op(name="no_init_tokens")
            with graph.colocate_with(self._global_step):
                tokens = fill_ops.fill([num_tokens], self._global_step.read_value())
                return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook that sets the local step and, on the chief, puts the first tokens and starts the runner."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def _check_applied(self, what):
        if not self._gradients_applied:
            raise ValueError(f"SyncReplicasOptimizer.{what}() must come after apply_gradients() (or minimize())")


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._opt = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        self._opt._check_applied("make_session_run_hook")
        self._local_init_op = self._opt.chief_init_op if self._is_chief else self._opt.local_step_init_op
        self._q_runner = self._opt.get_chief_queue_runner() if self._is_chief else None
        self._init_tokens_op = self._opt.get_init_tokens_op(self._num_tokens) if self._is_chief else None

    def after_create_session(self, session, coord):
        session.run(self._local_init_op)
        if self._is_chief:
            session.run(self._init_tokens_op)
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
