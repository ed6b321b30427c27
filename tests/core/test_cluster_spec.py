"""tf.train.ClusterSpec: jobs, tasks, addresses, equality and clear errors for bad specs."""

import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.hookspecs import hookimpl


def test_dict_lists_and_sparse_tasks():
    spec = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"], "worker": {0: "w0:2222", 2: "w2:2222"}})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("ps") == 2 and spec.num_tasks("worker") == 2
    assert spec.task_indices("worker") == [0, 2]
    assert spec.task_address("ps", 1) == "ps1:2222"
    assert spec.job_tasks("worker") == ["w0:2222", None, "w2:2222"]
    assert spec.as_dict() == {"ps": ["ps0:2222", "ps1:2222"], "worker": {0: "w0:2222", 2: "w2:2222"}}
    assert bool(spec) and not bool(tf.train.ClusterSpec({}))


def test_copy_and_equality():
    d = {"ps": ["a:1"], "worker": ["b:1", "c:1"]}
    spec = tf.train.ClusterSpec(d)
    copy = tf.train.ClusterSpec(spec)
    assert copy == spec and copy == d and hash(copy) == hash(spec)
    assert copy != tf.train.ClusterSpec({"ps": ["a:1"], "worker": ["b:1"]})
    assert copy.as_dict() is not spec.as_dict()


def test_errors_name_the_problem():
    spec = tf.train.ClusterSpec({"ps": ["a:1"]})
    with pytest.raises(ValueError, match="no job 'worker'.*jobs are \\['ps'\\]"):
        spec.num_tasks("worker")
    with pytest.raises(ValueError, match="no task 3 in job 'ps'"):
        spec.task_address("ps", 3)
    with pytest.raises(TypeError, match="expects a dict"):
        tf.train.ClusterSpec(["a:1"])
    with pytest.raises(ValueError, match="address of /job:ps/task:0"):
        tf.train.ClusterSpec({"ps": [""]})
    with pytest.raises(ValueError, match="job name"):
        tf.train.ClusterSpec({"p/s": ["a:1"]})
    with pytest.raises(ValueError, match="task index -1"):
        tf.train.ClusterSpec({"ps": {-1: "a:1"}})
    with pytest.raises(TypeError, match="tasks of job 'ps'"):
        tf.train.ClusterSpec({"ps": "a:1"})


@pytest.fixture
def without_the_distributed_plugin(monkeypatch):
    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", "distributed")
    yield
    monkeypatch.delenv("TENSORWEAVE_DISABLE_PLUGINS")
    plugins.reload()


def test_from_mpi_without_the_distributed_package(without_the_distributed_plugin):
    plugins.reload()
    with pytest.raises(ImportError, match=r"pip install tensorweave\[distributed\]"):
        tf.train.ClusterSpec.from_mpi(num_ps=1)


def test_from_mpi_asks_the_mpi_transport_for_the_world_size(without_the_distributed_plugin):
    """The core reaches the MPI world only through the transport a plugin registers for 'mpi'."""
    def transport(target, config):
        raise AssertionError("from_mpi starts no session")

    transport.world_size = lambda: 5

    class FakeMpi:
        @staticmethod
        @hookimpl
        def tensorweave_register_transports(registrar):
            registrar.add_transport("mpi", transport)

    plugins.reload(extra_plugins=[(FakeMpi, "fake_mpi")])
    spec = tf.train.ClusterSpec.from_mpi(num_ps=2)
    assert spec.as_dict() == {"ps": ["mpi:rank0", "mpi:rank1"], "worker": ["mpi:rank2", "mpi:rank3", "mpi:rank4"]}


def test_server_arguments_are_checked():
    cluster = tf.train.ClusterSpec({"ps": ["h:1"], "worker": ["h:2", "h:3"]})
    with pytest.raises(ValueError, match="job_name is required"):
        tf.train.Server(cluster)
    with pytest.raises(ValueError, match="task_index is required"):
        tf.train.Server(cluster, job_name="worker")
    with pytest.raises(ValueError, match="no task 5 in job 'worker'"):
        tf.train.Server(cluster, job_name="worker", task_index=5)
    with pytest.raises(ValueError, match="no gRPC.*from_mpi"):
        tf.train.Server(cluster, job_name="ps")
    with pytest.raises(ValueError, match="no server for protocol 'nope'"):
        tf.train.Server(cluster, job_name="ps", protocol="nope")
