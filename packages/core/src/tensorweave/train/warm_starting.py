"""``tf.train.warm_start``: start a model's variables from another run's checkpoint, through
``init_from_checkpoint`` (TF 1.15's selection of variables and renaming; vocabulary remapping is not here)."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.logging import info
from tensorweave.ops import variables
from tensorweave.train.checkpoint_utils import init_from_checkpoint

__all__ = ["warm_start"]


def _full_name(variable):
    """A variable's checkpoint name: a partition's is its whole variable's."""
    slice_info = variable._get_save_slice_info()
    return slice_info.full_name if slice_info is not None else variable.op.name


def _grouped_variables(vars_to_warm_start):
    """{checkpoint name: [variable or its partitions]} of the variables ``vars_to_warm_start`` selects."""
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        found = graph_mod.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = [v for scope in vars_to_warm_start for v in graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES,
                                                                                        scope=scope)]
        elif all(isinstance(v, variables.Variable) for v in vars_to_warm_start):
            found = vars_to_warm_start
        else:
            raise ValueError(f"If `vars_to_warm_start` is a list, it must be all `Variable` or all `str`.  Given "
                             f"types are {[type(v) for v in vars_to_warm_start]}")
    else:
        raise ValueError(f"`vars_to_warm_start must be a `list` or `str`.  Given type is {type(vars_to_warm_start)}")
    grouped = {}
    for v in found:
        grouped.setdefault(_full_name(v), []).append(v)
    return grouped


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Makes the selected variables' initializers load them from ``ckpt_to_initialize_from``.

    ``vars_to_warm_start``: a regex over the trainable variables, a list of regexes over the global ones, or a
    list of variables (None selects none). ``var_name_to_prev_var_name`` maps a variable's name to its name in
    the checkpoint; a name it gives that selects nothing is an error, as in TF.
    """
    if var_name_to_vocab_info:
        raise NotImplementedError(
            f"tf.train.warm_start: var_name_to_vocab_info (vocabulary remapping) is not supported; given for "
            f"{sorted(var_name_to_vocab_info)}. Warm-start those variables without it, or remap their rows yourself")
    var_name_to_prev_var_name = var_name_to_prev_var_name or {}
    grouped = _grouped_variables(vars_to_warm_start)
    used, pending = set(), {}
    for var_name, group in grouped.items():
        previous = var_name_to_prev_var_name.get(var_name)
        if previous:
            used.add(var_name)
        if not vars_to_warm_start:
            continue
        target = group[0] if len(group) == 1 else group
        tensor_name = previous or var_name
        if tensor_name in pending:  # one checkpoint tensor for two variables: load the first batch now
            init_from_checkpoint(ckpt_to_initialize_from, pending)
            pending = {}
        pending[tensor_name] = target
    if pending:
        init_from_checkpoint(ckpt_to_initialize_from, pending)
    info("Warm-started %d variables.", len(grouped) if vars_to_warm_start else 0)
    unused = set(var_name_to_prev_var_name) - used
    if unused:
        raise ValueError(f"You provided the following variables in var_name_to_prev_var_name that were not used: "
                         f"{sorted(unused)}.  Perhaps you misspelled them?  Here is the list of viable variable "
                         f"names: {sorted(grouped)}")
