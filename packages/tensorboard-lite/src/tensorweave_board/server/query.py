"""The API's query parameters, each read with its type and range: anything else is a ``BadRequest`` (HTTP
400) naming the parameter, what it accepts and what it got, so no request can ask for unbounded work or
reach numpy with a value it would fail on."""

import math
import re

_INTEGER = re.compile(r"\s*[+-]?[0-9]{1,18}\s*")  # (ASCII digits: more would only be out of range)


class BadRequest(Exception):
    pass


def _bad(name, accepts, raw):
    return BadRequest(f"{name} must be {accepts}, got {raw!r}")


def text(params, name):
    """A required string parameter (a run, a tag)."""
    value = params.get(name)
    if value is None:
        raise BadRequest(f"{name} is missing: this request needs ?{name}=...")
    return value


def number(params, name, default=None, low=None, high=None, below_high=False):
    """A finite float from ``low`` to ``high`` (``below_high``: strictly below it); ``default`` when absent."""
    raw = params.get(name)
    if raw is None:
        return default
    if low is None:
        accepts = "a finite number"
    else:
        accepts = f"a number from {low:g} to {'below ' if below_high else ''}{high:g}"
    try:
        value = float(raw)
    except ValueError:
        raise _bad(name, accepts, raw) from None
    in_range = low is None or (low <= value < high if below_high else low <= value <= high)
    if not (math.isfinite(value) and in_range):
        raise _bad(name, accepts, raw)
    return value


def integer(params, name, default=None, low=0, high=None):
    """A whole number from ``low`` to ``high`` (no upper bound if None), written as digits; ``default`` when
    absent."""
    raw = params.get(name)
    if raw is None:
        return default
    accepts = f"a whole number from {low}" + (f" to {high}" if high is not None else " up")
    if not _INTEGER.fullmatch(raw):
        raise _bad(name, accepts, raw)
    value = int(raw)
    if value < low or (high is not None and value > high):
        raise _bad(name, accepts, raw)
    return value


def choice(params, name, options, default):
    """One of ``options``; ``default`` when absent."""
    raw = params.get(name, default)
    if raw not in options:
        raise _bad(name, "one of " + ", ".join(options), raw)
    return raw
