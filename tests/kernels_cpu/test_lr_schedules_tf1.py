"""Learning-rate schedules against TF 1.15's numbers (tests/fixtures/tf1/make_lr_schedules.py), and the noise of
noisy_linear_cosine_decay against its stated variance."""

import numpy as np
import pytest

import tensorweave as tf
from tf1_fixtures import load, programs_module

CASES = load("lr_schedules")
PROGRAMS = programs_module("lr_schedule_programs")


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_tf1(name):
    step = tf.placeholder(tf.int64, [])
    rate = PROGRAMS.SCHEDULES[name](tf, step)
    with tf.Session() as sess:
        got = [sess.run(rate, {step: k}) for k in CASES[name]["steps"]]
    np.testing.assert_allclose(got, CASES[name]["values"], rtol=1e-5, atol=1e-9)  # float32 cos and pow


def test_schedule_takes_a_variable_global_step_and_python_numbers():
    global_step = tf.train.get_or_create_global_step()
    rate = tf.train.cosine_decay_restarts(0.1, global_step, 10)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(global_step, 10))
        assert sess.run(rate) == pytest.approx(0.1)  # the second period starts again from lr * m_mul**1


def test_noisy_linear_cosine_noise_has_the_stated_variance():
    tf.set_random_seed(3)
    step = tf.placeholder(tf.int64, [])
    # lr 1, beta 0, no cosine period: the rate is linear + noise, noise ~ N(0, 2 / (1 + step) ** 0.5)
    rate = tf.train.noisy_linear_cosine_decay(1.0, step, 100, initial_variance=2.0, variance_decay=0.5,
                                              num_periods=0.0, beta=0.0)
    with tf.Session() as sess:
        noise = np.array([sess.run(rate, {step: 8}) for _ in range(4000)]) - (100 - 8) / 100
    assert abs(noise.mean()) < 0.05
    assert noise.var() == pytest.approx(2.0 / 3.0, rel=0.08)


def test_schedules_need_a_global_step():
    for fn in (tf.train.linear_cosine_decay, tf.train.noisy_linear_cosine_decay):
        with pytest.raises(ValueError, match=f"global_step is required for {fn.__name__}"):
            fn(0.1, None, 10)
    with pytest.raises(ValueError, match="global_step is required for cosine_decay_restarts"):
        tf.train.cosine_decay_restarts(0.1, None, 10)
