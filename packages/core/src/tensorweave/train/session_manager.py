"""tf.train.SessionManager: a session whose model is ready, restored from the newest intact checkpoint when
there is one and initialized otherwise (the chief), or waited for until another task readied it (workers)."""

import logging
import time

import numpy as np

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.runtime.session import Session
from tensorweave.train import checkpoint_management

__all__ = ["SessionManager"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


class SessionManager:
    """Creates sessions for ``graph`` and gets their model ready (TF1's API)."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs=30, local_init_run_options=None, local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph or graph_mod.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_feed_dict = local_init_feed_dict

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                            wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """(session, whether it was restored); tries the newest intact checkpoint first, then older ones."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("pass checkpoint_dir or checkpoint_filename_with_path, not both")
        sess = Session(master, graph=self._graph, config=config)
        if saver is None or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        deadline = time.time() + max_wait_secs
        candidates = checkpoint_management.checkpoint_candidates(checkpoint_dir)
        while not candidates and wait_for_checkpoint and time.time() < deadline:
            time.sleep(min(self._recovery_wait_secs, max(0.0, deadline - time.time())))
            candidates = checkpoint_management.checkpoint_candidates(checkpoint_dir)
        for prefix in candidates:
            try:
                saver.restore(sess, prefix)
            except errors.DataLossError as e:
                _log.warning("checkpoint %s is damaged (%s); trying an older one", prefix, e)
                continue
            state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            if state is not None:
                saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
            _log.info("restored the model from %s", prefix)
            return sess, True
        return sess, False

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session whose model is restored from a checkpoint, or initialized by ``init_op``/``init_fn``."""
        sess, restored = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                  wait_for_checkpoint, max_wait_secs, config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("the model is not initialized and no init_op, init_fn or local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, message = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"could not run the local init op: {message}")
        ready, message = self._model_ready(sess, self._ready_op)
        if not ready:
            raise RuntimeError(f"the init operations did not make the model ready: {message}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """(session, whether the model was restored and is ready)."""
        sess, restored = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                  wait_for_checkpoint, max_wait_secs, config)
        if not restored:
            return sess, False
        ok, _ = self._try_run_local_init_op(sess)
        ready, message = self._model_ready(sess, self._ready_op)
        if not ok or not ready:
            _log.info("restored model is not ready: %s", message)
            return sess, False
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A session once another task (the chief) has readied the shared model; None at the timeout."""
        deadline = time.time() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            ready, message = self._model_ready(sess, self._ready_for_local_init_op)
            if ready:
                ok, message = self._try_run_local_init_op(sess)
                if ok:
                    ready, message = self._model_ready(sess, self._ready_op)
                    if ready:
                        return sess
            sess.close()
            if time.time() + self._recovery_wait_secs > deadline:
                raise errors.DeadlineExceededError(None, None, (
                    f"the model on {master!r} was not ready within {max_wait_secs} s: {message}"))
            _log.info("waiting for the model to be ready: %s", message)
            time.sleep(self._recovery_wait_secs)

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, message = self._model_ready(sess, self._ready_for_local_init_op)
        if not ready:
            return False, message
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
        return True, None

    @staticmethod
    def _model_ready(sess, ready_op):
        """(ready, message): ``ready_op`` lists the names of what is not yet initialized."""
        if ready_op is None:
            return True, None
        try:
            pending = np.asarray(sess.run(ready_op)).reshape(-1)
        except errors.FailedPreconditionError as e:
            return False, str(e)
        if pending.size == 0:
            return True, None
        names = [v.decode() if isinstance(v, bytes) else str(v) for v in pending]
        return False, f"variables not initialized: {', '.join(names)}"
