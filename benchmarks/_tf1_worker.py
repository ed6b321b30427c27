"""The TF1 side of ``benchmarks.tf1``: runs under an interpreter that has TensorFlow, one JSON request a line.

``build`` imports a benchmark module and calls its ``tf1_programs(tf)`` with ``tensorflow.compat.v1``;
``time`` runs a built step ``calls`` times and answers the seconds of each call.
"""

import importlib
import json
import sys
import time
import traceback

import numpy as np


def main():
    import tensorflow as real_tf
    tf = real_tf.compat.v1
    tf.disable_v2_behavior()
    steps = {}
    out = sys.stdout
    sys.stdout = sys.stderr  # programs that print must not break the protocol
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "hello":
                reply = {"version": real_tf.__version__}
            elif request["op"] == "build":
                module = importlib.import_module(request["module"])
                cases = {}
                for name, (step, value) in module.tf1_programs(tf).items():
                    steps[f"{request['module']}:{name}"] = step
                    cases[name] = None if value is None else np.asarray(value, np.float64).tolist()
                reply = {"cases": cases}
            elif request["op"] == "time":
                step = steps[request["key"]]
                seconds = []
                for _ in range(request["calls"]):
                    start = time.perf_counter()
                    step()
                    seconds.append(time.perf_counter() - start)
                reply = {"seconds": seconds}
            else:
                reply = {"error": f"unknown request {request['op']!r}"}
        except Exception as e:
            traceback.print_exc()
            reply = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
