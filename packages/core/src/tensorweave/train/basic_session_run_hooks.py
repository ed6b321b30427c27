"""tf.train: basic_session_run_hooks."""

__all__ = []
