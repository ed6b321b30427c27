"""The pieces of tensorweave_distributed that need no second process: splitting, negotiation and fusion
plans, 16-bit compression, the transport's encoding, task layouts, settings, and the op wrappers' checks."""

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install tensorweave[distributed]")

from tensorweave_distributed import algorithms, negotiation, reduction, transport  # noqa: E402
from tensorweave_distributed.cluster import Layout  # noqa: E402
from tensorweave_distributed.settings import Settings, from_environment  # noqa: E402


def test_split_bounds_cover_everything_with_the_first_blocks_longer():
    assert algorithms.split_bounds(7, 3) == [0, 3, 5, 7]
    assert algorithms.split_bounds(2, 4) == [0, 1, 2, 2, 2]
    assert algorithms.split_bounds(0, 3) == [0, 0, 0, 0]


def _descriptor(kind="allreduce", dtype="<f4", shape=(4,), op="sum", root=0, algorithm="auto", compression="none",
                tensors=1):
    return (kind, ((dtype, shape),) * tensors, op, root, algorithm, compression)


def test_consecutive_compatible_all_reduces_fuse_up_to_the_threshold():
    settings = Settings(fusion_threshold=40, small_bytes=32, large_bytes=1000)
    ready = [(f"t{i}", [_descriptor()] * 2) for i in range(3)]  # 16 bytes each
    ready.append(("other_dtype", [_descriptor(dtype="<f8")] * 2))  # 32 bytes: t2 and it pass the threshold
    ready.append(("group", [_descriptor(tensors=3)] * 2))  # one op's three tensors: negotiated as one
    ready.append(("bcast", [_descriptor(kind="broadcast", op="sum")] * 2))
    batches = negotiation.plan_batches(ready, settings)
    assert [b.names for b in batches] == [["t0", "t1"], ["t2"], ["other_dtype"], ["group"], ["bcast"]]
    assert [b.algorithm for b in batches[:4]] == ["native", "recursive_doubling", "native", "native"]
    assert negotiation.plan_batches(ready, Settings(fusion_threshold=0))[0].names == ["t0"]


def test_auto_picks_recursive_doubling_small_ring_large_and_mpi_between():
    settings = Settings(small_bytes=100, large_bytes=1000)
    assert [negotiation.choose_algorithm(n, settings) for n in (99, 100, 999, 1000)] == [
        "recursive_doubling", "native", "native", "ring"]


def test_disagreeing_ranks_are_named():
    message = negotiation.check_agreement("grad", [_descriptor(), _descriptor(shape=(5,)), _descriptor()])
    assert "disagree on its shape" in message and "rank 1: [5]" in message and "rank 0: [4]" in message
    message = negotiation.check_agreement("g", [_descriptor(tensors=2), _descriptor(tensors=3)])
    assert "number of tensors (rank 0: 2, rank 1: 3)" in message
    gathered = [_descriptor(kind="allgather", shape=(2, 3)), _descriptor(kind="allgather", shape=(7, 3))]
    assert negotiation.check_agreement("g", gathered) is None
    assert "dtype" in negotiation.check_agreement("x", [_descriptor(), _descriptor(dtype="<i4")])


def test_coordinator_matches_the_nth_submission_of_a_name_on_every_rank():
    class World:
        size = 2
        settings = Settings()

        class engine:
            @staticmethod
            def add_periodic(period, fn):
                pass

    sent = []
    coordinator = negotiation.Coordinator(World, sent.append)
    coordinator.announce(0, [("a", _descriptor()), ("a", _descriptor()), ("b", _descriptor())])
    assert sent == [] and coordinator.pending() == {"a": [0], "b": [0]}
    coordinator.announce(1, [("b", _descriptor()), ("a", _descriptor())])
    assert [batch.names for batch in sent[0]] == [["b", "a"]]
    assert coordinator.pending() == {"a": [0]}


@pytest.mark.parametrize("compression,tolerance", [("float16", 1e-3), ("bfloat16", 8e-3)])
def test_compression_round_trips_within_16_bit_precision(compression, tolerance):
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    wire_dtype = reduction.wire_dtype(values.dtype, compression)
    assert wire_dtype.itemsize == 2
    wire = np.empty(values.size, wire_dtype)
    reduction.to_wire(values, wire, compression)
    restored = reduction.from_wire(wire, np.float32, compression)
    np.testing.assert_allclose(restored, values, rtol=tolerance, atol=tolerance)
    assert reduction.wire_dtype(np.int32, compression) == np.int32  # integers travel as they are


def test_bfloat16_reduction_rounds_the_float32_sum():
    a = np.array([1.0, 3.0, -2.5], np.float32)
    wire_a, wire_b = np.empty(3, np.uint16), np.empty(3, np.uint16)
    reduction.to_wire(a, wire_a, "bfloat16")
    reduction.to_wire(a * 2, wire_b, "bfloat16")
    reduction.reducer("sum", wire_a.dtype, "bfloat16")(wire_a, wire_b)
    np.testing.assert_array_equal(reduction.from_wire(wire_a, np.float32, "bfloat16"), a * 3)


def test_bool_reductions_are_or_and_and():
    into = np.array([True, False, False])
    reduction.reducer("sum", np.bool_)(into, np.array([False, False, True]))
    assert into.tolist() == [True, False, True]
    into = np.array([True, True, False])
    reduction.reducer("min", np.bool_)(into, np.array([True, False, True]))
    assert into.tolist() == [True, False, False]


def test_ops_that_make_no_sense_are_refused_when_the_graph_is_built():
    with pytest.raises(ValueError, match="complex"):
        reduction.check_op("max", np.complex64)
    with pytest.raises(ValueError, match="bool"):
        reduction.check_op("mean", np.bool_)
    with pytest.raises(ValueError, match="unknown reduction"):
        reduction.check_op("product", np.float32)
    assert reduction.compression_name(reduction.Compression.fp16) == "float16"
    assert reduction.compression_name("bf16") == "bfloat16"


@pytest.mark.parametrize("value", [np.arange(12, dtype=np.float64).reshape(3, 4)[:, 1:], np.float16(2.5),
                                   np.array(7, np.int8), np.zeros((0, 5), np.complex64), np.array([True, False]),
                                   np.array([b"a", b"bc"], dtype=object), "text", None])
def test_transport_encoding_round_trips_every_kind_of_value(value):
    meta, payload = transport.encode(value, is_dead=False)
    if meta[0] == "pickle":
        decoded = transport.decode(meta, payload)
    else:
        array, view = transport.allocate(meta)
        if view is not None and payload is not None:
            view[:] = payload
        decoded = transport.decode(meta, array) if array is not None else transport.decode(meta, None)
    if isinstance(value, np.ndarray) and value.dtype != object:
        assert decoded.dtype == value.dtype and decoded.shape == value.shape
        np.testing.assert_array_equal(decoded, value)
    elif isinstance(value, np.ndarray):
        assert decoded.tolist() == value.tolist()
    else:
        assert decoded == value and type(decoded) is type(value)
    assert transport.encode(value, is_dead=True) == (("dead",), None)


def test_layout_maps_tasks_to_ranks_and_names_what_is_missing():
    layout = Layout({"ps": [0], "worker": [1, 2]})
    assert layout.rank_of("worker", 1) == 2 and layout.task_of(0) == ("ps", 0)
    with pytest.raises(ValueError, match="no task worker:2"):
        layout.rank_of("worker", 2)
    with pytest.raises(ValueError, match="two tasks"):
        Layout({"a": [0], "b": [0]})


def test_settings_come_from_the_environment_and_are_checked(monkeypatch):
    monkeypatch.setenv("TENSORWEAVE_ALLREDUCE_ALGORITHM", "ring")
    monkeypatch.setenv("TENSORWEAVE_FUSION_THRESHOLD", "1e6")
    settings = from_environment(heartbeat_timeout=9.0)
    assert (settings.algorithm, settings.fusion_threshold, settings.heartbeat_timeout) == ("ring", 1000000, 9.0)
    monkeypatch.setenv("TENSORWEAVE_ALLREDUCE_ALGORITHM", "bogus")
    with pytest.raises(ValueError, match="unknown all-reduce algorithm"):
        from_environment()
    with pytest.raises(TypeError, match="unknown settings"):
        from_environment(nonsense=1)


def test_graph_wrappers_check_what_they_are_given():
    import tensorweave as tf
    import tensorweave_distributed as twd
    with pytest.raises(ValueError, match="complex"):
        twd.allreduce(tf.constant([1j]), op=twd.Max)
    with pytest.raises(ValueError, match="rank >= 1"):
        twd.allgather(tf.constant(1.0))
    with pytest.raises(ValueError, match="unknown all-reduce algorithm"):
        twd.allreduce(tf.constant([1.0]), algorithm="tree")
    gathered = twd.allgather(tf.zeros([3, 2]))
    assert gathered.shape.as_list() == [None, 2]
    assert twd.allreduce(tf.zeros([3, 2])).shape.as_list() == [3, 2]


def test_running_a_collective_before_init_says_what_to_do():
    import tensorweave as tf
    import tensorweave_distributed as twd
    if twd.is_initialized():
        pytest.skip("initialized in this process")
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError, match=r"init\(\) first"):
        sess.run(twd.allreduce(tf.ones([2])))


@pytest.mark.parametrize("kind", ["allgather", "reduce_scatter"])
def test_a_scalar_cannot_be_gathered_or_scattered(kind):
    from tensorweave_distributed.controller import Request
    with pytest.raises(ValueError, match=f"{kind} 'x' needs arrays of rank >= 1.*reshape it to \\[1\\]"):
        Request("x", kind, [np.float32(1.0)], lambda e, v: None)
    Request("x", kind, [np.zeros(1, np.float32)], lambda e, v: None)  # rank 1 is fine


def test_the_chief_is_tf1s_chief_task_once_tasks_are_named_never_a_parameter_server(monkeypatch):
    from tensorweave_distributed import data

    class World:
        def __init__(self, rank, task_names):
            self.rank, self.size, self.task_names = rank, 3, task_names

        def describe(self, rank):
            return self.task_names.get(rank, f"rank {rank}")

    ps_first = {0: "/job:ps/task:0", 1: "/job:worker/task:0", 2: "/job:worker/task:1"}
    for rank, names, chief in [(0, {}, True), (1, {}, False), (0, ps_first, False), (1, ps_first, True),
                               (2, {**ps_first, 2: "/job:chief/task:0"}, True)]:
        monkeypatch.setattr(data, "get_world", lambda required=True, w=World(rank, names): w)
        assert data.is_chief() is chief, (rank, names)
        assert data.chief_only("ckpt") == ("ckpt" if chief else None)
        assert data.task_role()[0] is chief
