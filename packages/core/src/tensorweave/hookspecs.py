"""The extension points of Tensorweave: every op, kernel, device, graph pass and transport comes
through these hooks, the core's own included.

A plugin is a module (or object) with functions named like the hooks below, marked with ``hookimpl``
(``from tensorweave.hookspecs import hookimpl``: marking a hook needs no other import), and advertised by
an entry point in the ``tensorweave`` group::

    [project.entry-points.tensorweave]
    myplugin = "my_package.plugin"

Each hook receives a *registrar*: an object with ``add_*`` methods that records what the plugin
adds, so ``tensorweave plugins`` can list it and conflicts can name both plugins. A hook that
raises is reported with the plugin's name and the other plugins still load. A plugin with a function
whose name starts with ``tensorweave_`` but is no hook below (a misspelled hook) fails its load, and the
message names the function and the hooks.
"""

import pluggy

hookspec = pluggy.HookspecMarker("tensorweave")
hookimpl = pluggy.HookimplMarker("tensorweave")


@hookspec
def tensorweave_register_ops(registrar):
    """Add op definitions: ``registrar.add_op(op_def)`` or ``registrar.add_ops(op_def_list)``.

    An op definition (``extension.OpDef``) carries the op's inputs, outputs, attrs, shape function,
    gradient and the flags the runtime reads (elementwise, pass-through, constant evaluator...), as the
    core's own definitions do. Op names are global: registering a name another plugin already registered is an
    error that names both plugins.
    """


@hookspec
def tensorweave_register_kernels(registrar):
    """Add kernels: ``registrar.add_kernel(op_type, compute, device_type=, dtypes=, priority=)``
    or ``registrar.add_kernels(kernel_set)``.

    ``compute`` takes the op's inputs as positional parameters and its attrs as keyword-only ones, named
    as the attrs: ``def softclip(x, *, c)``. Registration refuses an attr taken positionally (``def
    softclip(x, c=2.0)`` would always run with 2.0) and a count of positional parameters other than the
    op's inputs, naming the plugin, the op, the function and the parameter.

    A kernel implements one op on one device type for a set of dtypes. When several kernels match,
    the highest ``priority`` wins; equal priorities from different plugins are an error at the
    first run that needs that op (never decided by load order).
    """


@hookspec
def tensorweave_register_devices(registrar):
    """Add device types: ``registrar.add_device_type(name, factory, priority=, available=, reason=)``.

    ``factory(count, context)`` returns ``count`` devices (``runtime.device.Device``) for one process;
    ``context.device_name(type, index)`` gives their full names and ``context.config`` the session's
    ConfigProto. ``count`` comes from ``ConfigProto(device_count=)`` or ``default_count``. A type that
    cannot work here (no hardware, no driver) registers with ``available=False`` and a ``reason``,
    which the plugin listing shows.
    """


@hookspec
def tensorweave_register_graph_passes(registrar):
    """Add graph passes: ``registrar.add_pass(name, fn, order=)``.

    ``fn(plan_graph, options)`` rewrites the pruned client graph of one ``Session.run`` signature in
    place, before placement. Passes run by ascending ``order``; ``options`` says which are enabled.
    """


@hookspec
def tensorweave_register_transports(registrar):
    """Add transports for remote rendezvous: ``registrar.add_transport(scheme, factory)``.

    ``factory(target, config)`` returns an object that carries Send/Recv between processes and
    runs partitions on remote tasks; sessions whose target starts with ``scheme://`` use it. The factory
    may also have ``start_server(server_def)`` (what ``tf.train.Server`` starts for that protocol) and
    ``task_role()``: None while this process is in no job of the transport, else (is_chief, a description
    such as "rank 2 of 3; the chief is rank 0"); MonitoredTrainingSession asks it when ``is_chief`` is not
    given, so only the chief writes checkpoints and summaries; and ``world_size()``, the number of processes of the
    job (what ``ClusterSpec.from_mpi`` splits into ps and worker tasks).
    """


@hookspec
def tensorweave_register_api(registrar):
    """Add public API namespaces: ``registrar.add_module("summary", module)`` makes
    ``tensorweave.summary`` refer to ``module``; a dotted name adds one name to a namespace of the core:
    ``registrar.add_module("train.SummarySaverHook", cls)`` makes ``tf.train.SummarySaverHook`` refer to ``cls``.
    """
