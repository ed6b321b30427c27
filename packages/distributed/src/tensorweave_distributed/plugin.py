"""The plugin entry point of tensorweave-distributed: the collective ops and their kernels, and the
``mpi://`` session target (Send/Recv between processes), whose transport also says which rank is the chief."""

from tensorweave.hookspecs import hookimpl


@hookimpl
def tensorweave_register_ops(registrar):
    from tensorweave_distributed import collective_ops
    registrar.add_ops(collective_ops.DEFS)


@hookimpl
def tensorweave_register_kernels(registrar):
    from tensorweave_distributed import collective_kernels
    registrar.add_kernels(collective_kernels.KERNELS)


@hookimpl
def tensorweave_register_transports(registrar):
    registrar.add_transport("mpi", _mpi_master)
    registrar.add_note("mpi:// sessions and collectives over MPI; launch with "
                       "mpiexec -n <ranks> python -m mpi4py <script>")


def _mpi_master(target, config):
    from tensorweave_distributed import server  # MPI starts here, not when plugins load
    from tensorweave_distributed.cluster import MpiMaster
    return server.master_for(target, config) or MpiMaster(target, config)


def _start_server(server_def):
    from tensorweave_distributed import server
    return server.start_server(server_def)


def _task_role():
    from tensorweave_distributed.data import task_role
    return task_role()


def _world_size():
    from tensorweave_distributed.world import init
    return init().size


_mpi_master.start_server = _start_server  # what tf.train.Server asks the transport of its protocol
_mpi_master.task_role = _task_role  # what MonitoredTrainingSession asks when it is not told is_chief
_mpi_master.world_size = _world_size  # how many processes ClusterSpec.from_mpi splits into ps and worker tasks
