"""Issues 11 and 20's speed targets, checked against the rows of one run (ratios within that run only)."""

EXECUTOR_OVERHEAD_US = 0.5


def _median(rows, case, implementation):
    for row in rows:
        if row["case"] == case and row["implementation"] == implementation:
            return row["median_ms"]
    return None


def _ratio(rows, case, a, b):
    ma, mb = _median(rows, case, a), _median(rows, case, b)
    return None if ma is None or mb is None else ma / mb


def evaluate(rows):
    """[(target, measured, met)]: met is None when the run lacks what the target needs."""
    results = []
    per_op = _median(rows, "per-op overhead (1,000 adds)", "tensorweave")
    bare_add = _median(rows, "per-op overhead (1,000 adds)", "numpy")
    results.append((f"per op, the add included <= {EXECUTOR_OVERHEAD_US} us",
                    None if per_op is None else f"{per_op * 1e3:.2f} us",
                    None if per_op is None else per_op * 1e3 <= EXECUTOR_OVERHEAD_US))
    share = None if per_op is None or bare_add is None else (per_op - bare_add) * 1e3
    results.append(("  of which the executor's (minus a bare numpy add)", None if share is None else f"{share:.2f} us",
                    None))
    for case, limit, against in (("mlp batch 64", 1.0, "numpy"), ("mlp batch 512", 0.75, "numpy"),
                                 ("cnn batch 32", 1.0, "pytorch")):
        ratio = _ratio(rows, case, "tensorweave", against)
        results.append((f"{case}: tensorweave <= {limit:.2f}x {against}",
                        None if ratio is None else f"{ratio:.2f}x", None if ratio is None else ratio <= limit))
    fed = _ratio(rows, "mlp batch 64, input", "tf.data", "feed_dict")
    results.append(("mlp batch 64 input: tf.data <= 1.00x feed_dict", None if fed is None else f"{fed:.2f}x",
                    None if fed is None else fed <= 1.0))
    sparse = _median(rows, "embedding update, sparse rows", "tensorweave")
    dense = _median(rows, "embedding update, dense table", "tensorweave")
    speedup = None if sparse is None or dense is None else dense / sparse
    results.append(("sparse embedding update >= 10x faster than dense", None if speedup is None else f"{speedup:.1f}x",
                    None if speedup is None else speedup >= 10))
    results += _against_tf1(rows)
    return results


def _against_tf1(rows):
    """Issue 20: control flow, RNNs, convolutions and plan building at TF1's speed or better."""
    from benchmarks import control_flow, plan_build
    out = []
    for case, what in ((control_flow.SMALL, "while_loop per iteration (small body)"),
                       (control_flow.MATMUL, "while_loop per iteration (matmul body)"),
                       (control_flow.LSTM_EXAMPLE, "lstm_sequence.py step"),
                       (control_flow.DYNAMIC_RNN, "dynamic_rnn LSTM step"),
                       ("cnn batch 32", "LeNet CNN step"),
                       (plan_build.CASE, "first-run plan building")):
        ratio = _ratio(rows, case, "tensorweave", "tf1")
        out.append((f"{what}: tensorweave <= 1.00x tf1", None if ratio is None else f"{ratio:.2f}x",
                    None if ratio is None else ratio <= 1.0))
    return out
