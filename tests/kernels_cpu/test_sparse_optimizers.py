"""Each optimizer trains through tf.gather and tf.nn.embedding_lookup: the gradient is an IndexedSlices,
only the rows that were read move (Adam's moments decay everywhere, as TF1's sparse Adam), and the
values follow the float64 numpy formulas of test_optimizers."""

import numpy as np
import pytest

import tensorweave as tf
from test_optimizers import CASES, SHAPE, _initial_state, ref_adam_sparse

RNG = np.random.default_rng(11)
LOOKUPS = {
    "gather": lambda params, ids: tf.gather(params, ids),
    "embedding_lookup": lambda params, ids: tf.nn.embedding_lookup(params, ids),
    "embedding_lookup_sharded": lambda params, ids: tf.nn.embedding_lookup(params, ids, partition_strategy="div"),
}


def _reference_step(case, state, rows, coeffs):
    """One update of ``state`` by the gradient of sum(lookup(var, rows) * coeffs)."""
    _, reference, _ = CASES[case]
    unique = np.unique(rows)
    summed = np.zeros((len(unique), SHAPE[1]))
    np.add.at(summed, np.searchsorted(unique, rows), coeffs)
    if case == "adam":
        dense = np.zeros(SHAPE)
        dense[unique] = summed
        ref_adam_sparse(state, dense, 0.01, 0.9, 0.999, 1e-8)
        return
    sub = {k: v[unique].copy() if isinstance(v, np.ndarray) and v.shape == SHAPE else v for k, v in state.items()}
    reference(sub, summed)
    for k, v in sub.items():
        if isinstance(v, np.ndarray) and v.shape == summed.shape:
            state[k][unique] = v


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizers_update_only_the_rows_a_lookup_read(case, lookup, sess):
    make, _, slots = CASES[case]
    initial = RNG.standard_normal(SHAPE)
    if lookup == "embedding_lookup_sharded":  # rows 0-2 in one variable, 3-4 in the other
        shards = [tf.Variable(initial[:3], name="shard0"), tf.Variable(initial[3:], name="shard1")]
        params, read_all = shards, tf.concat(shards, 0)
    else:
        params = tf.Variable(initial, name="table")
        shards, read_all = [params], params.read_value()
    ids = tf.placeholder(tf.int32, [None])
    coeffs = tf.placeholder(tf.float64, [None, SHAPE[1]])
    loss = tf.reduce_sum(LOOKUPS[lookup](params, ids) * coeffs)
    opt = make()
    grads_and_vars = opt.compute_gradients(loss, var_list=shards)
    assert all(isinstance(g, tf.IndexedSlices) for g, _ in grads_and_vars)
    train = opt.apply_gradients(grads_and_vars)
    slot_reads = {name: tf.concat([opt.get_slot(v, name) for v in shards], 0) for name in slots}
    sess.run(tf.global_variables_initializer())
    state = _initial_state(initial, slots)
    for rows in ([0, 3, 3], [4, 1], [3, 3, 0, 4]):
        c = RNG.standard_normal((len(rows), SHAPE[1]))
        sess.run(train, {ids: rows, coeffs: c})
        _reference_step(case, state, np.array(rows), c)
        np.testing.assert_allclose(sess.run(read_all), state["var"], rtol=1e-12, atol=1e-14)
        for name, read in slot_reads.items():
            np.testing.assert_allclose(sess.run(read), state[name], rtol=1e-12, atol=1e-14)
    if case != "adam":
        np.testing.assert_array_equal(sess.run(read_all)[2], initial[2])  # row 2 was never read
        for name, read in slot_reads.items():
            assert (sess.run(read)[2] == state[name][2]).all() and (state[name][2] == CASES[case][2][name]).all()
