"""The package's knobs: ``init(**overrides)`` wins over ``TENSORWEAVE_*`` environment variables, which win
over the defaults. Every rank must use the same values (the coordinator checks the ones that matter)."""

import dataclasses
import os

ALGORITHMS = ("auto", "ring", "recursive_doubling", "native")
COMPRESSIONS = ("none", "float16", "bfloat16")

_ENV = {
    "heartbeat_interval": "TENSORWEAVE_HEARTBEAT_INTERVAL",
    "heartbeat_timeout": "TENSORWEAVE_HEARTBEAT_TIMEOUT",
    "stall_warning": "TENSORWEAVE_STALL_WARNING",
    "stall_timeout": "TENSORWEAVE_STALL_TIMEOUT",
    "algorithm": "TENSORWEAVE_ALLREDUCE_ALGORITHM",
    "fusion_threshold": "TENSORWEAVE_FUSION_THRESHOLD",
    "small_bytes": "TENSORWEAVE_ALLREDUCE_SMALL_BYTES",
    "large_bytes": "TENSORWEAVE_ALLREDUCE_LARGE_BYTES",
    "spin_seconds": "TENSORWEAVE_MPI_SPIN_SECONDS",
    "job": "TENSORWEAVE_MPI_JOB",
}


@dataclasses.dataclass
class Settings:
    """Times are seconds, sizes bytes.

    - ``heartbeat_interval``/``heartbeat_timeout``: every rank tells every other one it is alive; a rank not
      heard from for ``heartbeat_timeout`` is declared dead and every wait on it fails (UnavailableError).
    - ``stall_warning``/``stall_timeout``: a collective some ranks submitted and others did not gets a warning
      (every ``stall_warning`` s) naming them and what the missing ranks do; once its missing ranks have all been
      idle for ``stall_timeout`` s, the job fails with AbortedError naming it and them (``stall.py``). A busy
      rank is waited for. 0 or less turns either off.
    - ``algorithm``: the all-reduce algorithm when an op does not name one (``auto`` picks by size:
      recursive doubling below ``small_bytes``, the ring from ``large_bytes`` up, MPI's own in between).
    - ``fusion_threshold``: the most bytes one fused all-reduce or broadcast carries (0: no fusion).
    - ``spin_seconds``: how long the MPI thread keeps polling (yielding its core to any other runnable process
      between polls) after the last message before it sleeps between polls.
    - ``job``: the job name of this process's task in ``mpi://`` sessions.
    """

    heartbeat_interval: float = 1.0
    heartbeat_timeout: float = 60.0
    stall_warning: float = 60.0
    stall_timeout: float = 300.0
    algorithm: str = "auto"
    fusion_threshold: int = 64 * 1024 * 1024
    small_bytes: int = 32 * 1024
    large_bytes: int = 1024 * 1024
    spin_seconds: float = 0.002
    job: str = "worker"

    def validate(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown all-reduce algorithm {self.algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
        if self.heartbeat_interval <= 0 or self.heartbeat_timeout <= self.heartbeat_interval:
            raise ValueError(f"heartbeat_timeout ({self.heartbeat_timeout}) must exceed heartbeat_interval "
                             f"({self.heartbeat_interval}) > 0")
        if self.fusion_threshold < 0:
            raise ValueError("fusion_threshold must be >= 0 bytes (0 turns fusion off)")
        return self


def from_environment(**overrides):
    """Defaults, then the environment, then ``overrides`` (None values are ignored)."""
    values = {}
    for field in dataclasses.fields(Settings):
        raw = os.environ.get(_ENV[field.name])
        if raw not in (None, ""):
            try:
                values[field.name] = field.type(raw) if field.type is not int else int(float(raw))
            except ValueError:
                raise ValueError(f"environment variable {_ENV[field.name]}={raw!r} is not a valid "
                                 f"{field.type.__name__}") from None
    unknown = set(overrides) - {f.name for f in dataclasses.fields(Settings)}
    if unknown:
        raise TypeError(f"unknown settings {sorted(unknown)}; known: {sorted(_ENV)}")
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**values).validate()
