"""Session and run configuration with TF1's names: ConfigProto, GraphOptions, RunOptions, RunMetadata."""


class OptimizerOptions:
    """Graph-optimization switches. ``opt_level`` L0 turns the default passes and memory planning off;
    ``do_elementwise_fusion`` and ``do_memory_planning`` turn those two off alone."""

    L1 = 0
    L0 = -1
    DEFAULT = 0

    def __init__(self, opt_level=0, do_common_subexpression_elimination=True, do_constant_folding=True,
                 do_function_inlining=True, max_folded_constant_in_bytes=10 * 1024 * 1024,
                 global_jit_level=0, do_elementwise_fusion=True, do_memory_planning=True):
        self.opt_level = opt_level
        self.do_common_subexpression_elimination = do_common_subexpression_elimination
        self.do_constant_folding = do_constant_folding
        self.do_function_inlining = do_function_inlining
        self.max_folded_constant_in_bytes = max_folded_constant_in_bytes
        self.global_jit_level = global_jit_level
        self.do_elementwise_fusion = do_elementwise_fusion
        self.do_memory_planning = do_memory_planning  # straight-line partitions reuse buffers across steps


class GraphOptions:
    """Graph optimization (``optimizer_options``, passes by name) and ``build_cost_model``: after that many
    traced steps, ``RunMetadata.cost_graph`` reports the cost model's time and output sizes per node."""

    def __init__(self, optimizer_options=None, enable_passes=None, disable_passes=(), infer_shapes=False,
                 build_cost_model=0, place_pruned_graph=False):
        self.optimizer_options = optimizer_options or OptimizerOptions()
        self.enable_passes = enable_passes  # None = every pass whose own switch is on
        self.disable_passes = tuple(disable_passes)
        self.infer_shapes = infer_shapes
        self.build_cost_model = build_cost_model
        self.place_pruned_graph = place_pruned_graph

    def pass_enabled(self, name):
        if name in self.disable_passes:
            return False
        if self.enable_passes is not None:
            return name in self.enable_passes
        opts = self.optimizer_options
        if opts.opt_level == OptimizerOptions.L0:
            return False
        switch = {"cse": opts.do_common_subexpression_elimination,
                  "constant_folding": opts.do_constant_folding,
                  "elementwise_fusion": opts.do_elementwise_fusion}.get(name, True)
        return switch

    def memory_planning_enabled(self):
        opts = self.optimizer_options
        return opts.opt_level != OptimizerOptions.L0 and opts.do_memory_planning


class GPUOptions:
    def __init__(self, allow_growth=True, per_process_gpu_memory_fraction=1.0, visible_device_list=""):
        self.allow_growth = allow_growth
        self.per_process_gpu_memory_fraction = per_process_gpu_memory_fraction
        self.visible_device_list = visible_device_list


class ConfigProto:
    """TF1's session config. ``device_count={'CPU': 2}`` makes two CPU devices."""

    def __init__(self, device_count=None, allow_soft_placement=False, log_device_placement=False,
                 inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, graph_options=None,
                 gpu_options=None, operation_timeout_in_ms=0, use_per_session_threads=False,
                 compress_transfers=False, executor=None, **unknown):
        if unknown:
            raise TypeError(f"ConfigProto got unknown fields {sorted(unknown)}")
        self.device_count = dict(device_count or {})
        self.allow_soft_placement = allow_soft_placement
        self.log_device_placement = log_device_placement
        self.inter_op_parallelism_threads = inter_op_parallelism_threads
        self.intra_op_parallelism_threads = intra_op_parallelism_threads
        self.graph_options = graph_options or GraphOptions()
        self.gpu_options = gpu_options or GPUOptions()
        self.operation_timeout_in_ms = operation_timeout_in_ms
        self.use_per_session_threads = use_per_session_threads
        self.compress_transfers = compress_transfers  # float32 Send/Recv travel as 16 bits
        self.executor = executor  # None (automatic), "linear" or "dataflow"


class RunOptions:
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, trace_level=0, timeout_in_ms=0, output_partition_graphs=False, inter_op_thread_pool=0,
                 report_tensor_allocations_upon_oom=False):
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms
        self.output_partition_graphs = output_partition_graphs
        self.inter_op_thread_pool = inter_op_thread_pool
        self.report_tensor_allocations_upon_oom = report_tensor_allocations_upon_oom


class NodeOutput:
    """One output of a traced op (TF's NodeOutput, flattened): slot, dtype name, shape, bytes."""

    __slots__ = ("slot", "dtype", "shape", "requested_bytes")

    def __init__(self, slot, dtype, shape, requested_bytes):
        self.slot = slot
        self.dtype = dtype
        self.shape = shape
        self.requested_bytes = requested_bytes

    def __repr__(self):
        return f"NodeOutput(slot={self.slot}, dtype={self.dtype}, shape={self.shape}, bytes={self.requested_bytes})"


class NodeExecStats:
    """One op's run in a traced step; times in microseconds since the epoch (start) and relative to it."""

    __slots__ = ("node_name", "op_type", "all_start_micros", "op_start_rel_micros", "op_end_rel_micros",
                 "all_end_rel_micros", "thread_id", "output_bytes", "timeline_label", "output")

    def __init__(self, node_name, op_type, start_us, end_us, thread_id, output_bytes, timeline_label="",
                 output=()):
        self.node_name = node_name
        self.op_type = op_type
        self.all_start_micros = start_us
        self.op_start_rel_micros = 0
        self.op_end_rel_micros = end_us - start_us
        self.all_end_rel_micros = end_us - start_us
        self.thread_id = thread_id
        self.output_bytes = output_bytes
        self.timeline_label = timeline_label
        self.output = list(output)

    def __repr__(self):
        return (f"NodeExecStats({self.node_name!r}, {self.op_type}, start={self.all_start_micros}, "
                f"dur={self.all_end_rel_micros}us, thread={self.thread_id}, bytes={self.output_bytes})")


class DeviceStepStats:
    def __init__(self, device):
        self.device = device
        self.node_stats = []
        self.thread_names = {}


class StepStats:
    def __init__(self):
        self.dev_stats = []


class FunctionGraphs:
    """One signature's graphs (TF 1.15's RunMetadata.FunctionGraphs): as pruned, after the graph
    passes, and per device after placement and partitioning."""

    def __init__(self, pre_optimization_graph=None, post_optimization_graph=None, partition_graphs=()):
        self.pre_optimization_graph = pre_optimization_graph
        self.post_optimization_graph = post_optimization_graph
        self.partition_graphs = list(partition_graphs)


class CostGraphDef:
    """The cost model's view of a plan (TF's CostGraphDef): ``node`` lists CostGraphDef.Node."""

    class Node:
        __slots__ = ("name", "device", "id", "input_info", "control_input", "output_info", "compute_cost")

        def __init__(self, name, device, node_id, input_info, control_input, output_info, compute_cost):
            self.name = name
            self.device = device
            self.id = node_id
            self.input_info = input_info  # [(preceding node id, preceding port)]
            self.control_input = control_input  # [preceding node id]
            self.output_info = output_info  # [{"size": bytes, "shape": [...], "dtype": name}]
            self.compute_cost = compute_cost  # microseconds, measured where traced, else estimated

        def __repr__(self):
            return f"CostGraphDef.Node({self.name!r}, {self.device}, {self.compute_cost}us)"

    def __init__(self, node=()):
        self.node = list(node)


class RunMetadata:
    """Filled by ``Session.run``: ``step_stats`` when tracing; ``partition_graphs`` and
    ``function_graphs`` with ``output_partition_graphs=True`` or FULL_TRACE."""

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
        self.function_graphs = []
        self.cost_graph = None

    def Clear(self):  # noqa: N802 - TF's name
        self.__init__()
