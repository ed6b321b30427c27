"""TensorFlow 1.x (its ``compat.v1`` Session) as a reference implementation, run in a child process.

TensorFlow is never a dependency: the suite looks for an interpreter that has it, in this order:
``$TENSORWEAVE_BENCH_TF1_PYTHON``, ``.venv-tf1/bin/python``, and (``make bench`` sets
``TENSORWEAVE_BENCH_TF1_INSTALL=1``) a ``.venv-tf1`` it makes with ``pip install tensorflow-cpu tf_keras``.
Without one, the TF1 rows are left out and the report says why.

A benchmark module offers TF1 programs with ``tf1_programs(tf)``, called in the child with
``tensorflow.compat.v1`` as ``tf``: the same builder functions that take Tensorweave as ``tf`` in the
suite's own process, so both run the same program. The child (``benchmarks._tf1_worker``) builds them,
reports the values they compute (checked against Tensorweave's), and times calls when asked; the suite
asks between its own implementations' calls, round-robin, as for any other implementation.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv-tf1")
_state = {"worker": None, "why": None}


def interpreter():
    """(path of a Python with TensorFlow, None) or (None, why not)."""
    named = os.environ.get("TENSORWEAVE_BENCH_TF1_PYTHON")
    if named:
        return (named, None) if _has_tensorflow(named) else (None, f"{named} cannot import tensorflow")
    python = os.path.join(VENV, "bin", "python")
    if os.path.exists(python) and _has_tensorflow(python):
        return python, None
    if os.environ.get("TENSORWEAVE_BENCH_TF1_INSTALL") != "1":
        return None, ("no TensorFlow: set TENSORWEAVE_BENCH_TF1_PYTHON to a Python that has it, or run "
                      "`make bench` (which installs tensorflow-cpu into .venv-tf1)")
    print("installing tensorflow-cpu into .venv-tf1 for the TF1 reference rows", flush=True)
    made = subprocess.run([sys.executable, "-m", "venv", VENV]).returncode == 0 and subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "tensorflow-cpu", "tf_keras"]).returncode == 0
    if made and _has_tensorflow(python):
        return python, None
    return None, "pip install tensorflow-cpu into .venv-tf1 failed"


def _has_tensorflow(python):
    try:
        return subprocess.run([python, "-c", "import tensorflow"], capture_output=True, timeout=300).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class _Worker:
    def __init__(self, python):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONPATH=ROOT,
                   TF_USE_LEGACY_KERAS="1")  # tf.nn.rnn_cell and tf.layers need Keras 2 (tf_keras)
        self.process = subprocess.Popen([python, "-m", "benchmarks._tf1_worker"], cwd=ROOT, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.version = self.request({"op": "hello"})["version"]

    def request(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the TF1 worker exited (status {self.process.wait()}); see its stderr above")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"TF1 worker: {reply['error']}")
        return reply


def worker():
    """The running TF1 worker, started on first use; None when no TensorFlow is found."""
    if _state["worker"] is None and _state["why"] is None:
        python, why = interpreter()
        if python is None:
            _state["why"] = why
            print(f"(no TF1 rows: {why})", flush=True)
        else:
            _state["worker"] = _Worker(python)
    return _state["worker"]


def version():
    return _state["worker"].version if _state["worker"] is not None else _state["why"]


class RemoteStep:
    """One TF1 program's step in the worker: calling it runs one step there; ``timed(n)`` times n steps."""

    def __init__(self, worker, key):
        self.worker, self.key = worker, key

    def __call__(self):
        self.worker.request({"op": "time", "key": self.key, "calls": 1})

    def timed(self, calls):
        return self.worker.request({"op": "time", "key": self.key, "calls": calls})["seconds"]


def programs(module):
    """{case name: (RemoteStep, checked value or None)} of ``module``'s ``tf1_programs``; {} without TF."""
    w = worker()
    if w is None:
        return {}
    cases = w.request({"op": "build", "module": module})["cases"]
    return {name: (RemoteStep(w, f"{module}:{name}"), value) for name, value in cases.items()}
