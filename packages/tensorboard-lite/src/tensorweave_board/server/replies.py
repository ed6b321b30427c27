"""The API's JSON replies. JSON has no NaN or Infinity, yet event files hold them (a diverged loss, a
foreign writer's NaN wall time or histogram bounds): every reply sends them the same way, as the strings
"NaN", "Infinity" and "-Infinity", which JavaScript's ``Number()`` reads back as the numbers."""

import json
import math

def json_reply(obj):
    """(200, content type, body) for ``obj``."""
    return 200, "application/json", dumps(obj)


def dumps(obj):
    """``obj`` as compact JSON bytes, non-finite floats as strings."""
    try:
        return json.dumps(obj, allow_nan=False, separators=(",", ":")).encode()
    except ValueError:  # (rare: only then is the reply walked)
        return json.dumps(_finite(obj), allow_nan=False, separators=(",", ":")).encode()


def _finite(obj):
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "NaN" if math.isnan(obj) else "Infinity" if obj > 0 else "-Infinity"
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
