"""The plugin entry point: the summary ops, their CPU kernels, and ``tf.summary``."""

from tensorweave.hookspecs import hookimpl


@hookimpl
def tensorweave_register_ops(registrar):
    from tensorweave_board import summary_ops
    registrar.add_ops(summary_ops.DEFS)


@hookimpl
def tensorweave_register_kernels(registrar):
    from tensorweave_board import summary_kernels
    registrar.add_kernels(summary_kernels.KERNELS)


@hookimpl
def tensorweave_register_api(registrar):
    from tensorweave_board import summary
    from tensorweave_board.hooks import SummarySaverHook
    registrar.add_module("summary", summary)
    registrar.add_module("train.SummarySaverHook", SummarySaverHook)
