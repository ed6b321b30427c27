"""Graph- and op-level random seeds, as TF1 combines them.

A random op's stream is fixed by the pair (seed, seed2) it carries as attrs; 0 in both means "fresh
entropy". ``get_seed`` derives that pair from the graph seed (``tf.set_random_seed``) and the op's own
``seed`` argument with TF1's rules, so a program that sets the graph seed draws the same numbers in every
run, and ops created in the same order get the same seeds in another graph.
"""

import numbers

from tensorweave.framework import graph as graph_mod

__all__ = ["set_random_seed", "get_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


def _check_seed(seed, what):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{what} must be an integer or None, got {seed!r} ({type(seed).__name__})")
    return int(seed)


def _truncate_seed(seed):
    return seed % _MAXINT32


def set_random_seed(seed):
    """Sets the default graph's seed: every random op built after it draws a repeatable sequence.

    Ops without their own seed take one from the graph's op counter, so re-running the program (or
    rebuilding the same ops in a new graph) reproduces all of its random numbers.
    """
    graph_mod.get_default_graph().seed = _check_seed(seed, "set_random_seed: the graph seed")


def get_seed(op_seed):
    """The (seed, seed2) pair a random op with ``op_seed`` uses in the default graph (TF1's rules).

    Neither the graph seed nor ``op_seed`` set: (None, None), fresh entropy each session. The graph seed
    set: (graph seed, op_seed, or the id of the last op created). Only ``op_seed`` set: (87654321,
    op_seed). (0, 0) becomes (0, 2**31 - 1) so a set seed never reads as "unset".
    """
    graph = graph_mod.get_default_graph()
    op_seed = _check_seed(op_seed, "the op seed")
    graph_seed = _check_seed(graph.seed, "the graph seed")
    if graph_seed is not None:
        if op_seed is None:
            op_seed = graph._id_counter
        seeds = _truncate_seed(graph_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        return None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds
