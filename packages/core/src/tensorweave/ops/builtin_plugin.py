"""The core registers its op families (and control flow's device-independent kernels) through the public hooks;
the runtime registers the ops it inserts into plans in ``runtime/builtin_plugin.py``."""

import importlib

from tensorweave.hookspecs import hookimpl

OP_MODULES = (
    "tensorweave.ops.array_ops",
    "tensorweave.ops.shape_ops",
    "tensorweave.ops.fill_ops",
    "tensorweave.ops.concat_split_ops",
    "tensorweave.ops.transpose_ops",
    "tensorweave.ops.pad_tile_ops",
    "tensorweave.ops.slicing_ops",
    "tensorweave.ops.gather_ops",
    "tensorweave.ops.mask_ops",
    "tensorweave.ops.control_flow_ops",
    "tensorweave.ops.data_flow_ops",
    "tensorweave.ops.accumulator_ops",
    "tensorweave.ops.io_ops",
    "tensorweave.ops.dataset_ops",
    "tensorweave.ops.parsing_ops",
    "tensorweave.ops.decode_ops",
    "tensorweave.ops.linalg_ops",
    "tensorweave.ops.linalg_solve_ops",
    "tensorweave.ops.lu_ops",
    "tensorweave.ops.matrix_diag_ops",
    "tensorweave.ops.matrix_band_ops",
    "tensorweave.ops.logging_ops",
    "tensorweave.ops.numerics_ops",
    "tensorweave.ops.math_ops",
    "tensorweave.ops.broadcast_gradient_ops",
    "tensorweave.ops.unary_math_ops",
    "tensorweave.ops.special_math_ops",
    "tensorweave.ops.trig_ops",
    "tensorweave.ops.bitwise_ops",
    "tensorweave.ops.bucketing_ops",
    "tensorweave.ops.set_ops",
    "tensorweave.ops.tensor_scatter_ops",
    "tensorweave.ops.comparison_ops",
    "tensorweave.ops.reduction_ops",
    "tensorweave.ops.cumulative_ops",
    "tensorweave.ops.matmul_ops",
    "tensorweave.ops.segment_ops",
    "tensorweave.ops.range_ops",
    "tensorweave.ops.grid_ops",
    "tensorweave.ops.nn_ops",
    "tensorweave.ops.conv_ops",
    "tensorweave.ops.depthwise_conv_ops",
    "tensorweave.ops.conv3d_ops",
    "tensorweave.ops.space_depth_ops",
    "tensorweave.ops.space_batch_ops",
    "tensorweave.ops.base64_ops",
    "tensorweave.ops.ctc_ops",
    "tensorweave.ops.pooling_ops",
    "tensorweave.ops.loss_ops",
    "tensorweave.ops.top_k_ops",
    "tensorweave.ops.dynamic_partition_ops",
    "tensorweave.ops.normalization_ops",
    "tensorweave.ops.candidate_sampling_ops",
    "tensorweave.ops.random_ops",
    "tensorweave.ops.stack_ops",
    "tensorweave.ops.state_ops",
    "tensorweave.ops.tensor_array_ops",
    "tensorweave.ops.training_ops",
    "tensorweave.ops.image_resize_ops",
    "tensorweave.ops.image_color_ops",
    "tensorweave.ops.image_codec_ops",
    "tensorweave.ops.script_ops",
    "tensorweave.ops.sparse_ops",
    "tensorweave.ops.sparse_math_ops",
    "tensorweave.ops.sparse_slice_ops",
    "tensorweave.ops.sparse_elementwise_ops",
    "tensorweave.ops.checkpoint_remap_ops",
    "tensorweave.ops.sparse_segment_ops",
    "tensorweave.ops.sparse_cross_ops",
    "tensorweave.ops.string_split_ops",
    "tensorweave.ops.string_ops",
    "tensorweave.ops.lookup_ops",
    "tensorweave.ops.image_boxes_ops",
)


@hookimpl
def tensorweave_register_ops(registrar):
    for name in OP_MODULES:
        registrar.add_ops(importlib.import_module(name).DEFS)


@hookimpl
def tensorweave_register_kernels(registrar):
    importlib.import_module("tensorweave.ops.control_flow_ops").register_kernels(registrar)
