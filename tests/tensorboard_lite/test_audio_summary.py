"""tf.summary.audio: the Summary.Audio values and 16-bit WAV bytes TF1 writes (tests/fixtures/tf1/
make_audio_summary.py), and the dashboard reading them: the run lists the clips and serves each WAV."""

import io
import json
import wave

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf
from tensorweave_board import FileWriter
from tensorweave_board.server.api import Api, NotFound
from tensorweave_board.server.logdir import Logdir

CASES = load("audio_summary")


@pytest.mark.parametrize("name", sorted(CASES))
def test_audio_summary_is_tfs_byte_for_byte(name):
    case = CASES[name]
    with tf.Graph().as_default():
        op = tf.summary.audio(name, tf.constant(array(case["values"], np.float32)), case["sample_rate"],
                              max_outputs=case["max_outputs"])
        with tf.Session() as sess:
            got = tf.Summary.FromString(sess.run(op))
    assert [v.tag for v in got.value] == [v["tag"] for v in case["summary"]]
    for value, want in zip(got.value, case["summary"]):
        audio = value.audio
        assert (audio.sample_rate, audio.num_channels, audio.length_frames, audio.content_type) == (
            pytest.approx(want["sample_rate"]), want["num_channels"], want["length_frames"], want["content_type"])
        assert audio.encoded_audio_string == want["wav"].encode("latin-1")


def test_audio_summary_refuses_what_tf_refuses():
    with pytest.raises(ValueError, match="\\[batch, frames\\]"):
        tf.summary.audio("a", tf.zeros([5]), 8000)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="sample_rate must be a positive"):
        sess.run(tf.summary.audio("b", tf.zeros([1, 5]), tf.constant(-1.0)))


def _get(api, route, **params):
    status, kind, body = api.handle(route, {k: str(v) for k, v in params.items()})
    assert status == 200
    return (json.loads(body) if kind == "application/json" else body), kind


def test_the_dashboard_lists_and_serves_the_clips(tmp_path):
    clips = np.sin(np.linspace(0, 50, 2 * 80)).reshape(2, 80, 1).astype(np.float32) * 0.5
    summary = tf.summary.audio("voice", tf.constant(clips), 4000.0, max_outputs=2)
    with tf.Session() as sess, FileWriter(str(tmp_path / "run")) as writer:
        for step in (0, 10):
            writer.add_summary(sess.run(summary), step)
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    api = Api(logdir)
    (run,) = _get(api, "runs")[0]["runs"]
    assert run["tags"]["audio"] == ["voice/audio/0", "voice/audio/1"]
    listing, _ = _get(api, "audio", run="run", tag="voice/audio/1")
    assert [(c["step"], c["frames"], c["channels"]) for c in listing["clips"]] == [(0, 80, 1), (10, 80, 1)]
    body, kind = _get(api, "audio.wav", run="run", tag="voice/audio/1", index=1)
    assert kind == "audio/wav"
    with wave.open(io.BytesIO(body)) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getnframes()) == (1, 4000, 80)
        samples = np.frombuffer(wav.readframes(80), "<i2")
    np.testing.assert_allclose(samples / 32768.0, clips[1, :, 0], atol=1 / 32768)
    with pytest.raises(NotFound, match="no clip 2"):
        api.handle("audio.wav", {"run": "run", "tag": "voice/audio/1", "index": "2"})
