"""``tf.train.warm_start``: start a model's variables from another run's checkpoint, as TF 1.15: through
``init_from_checkpoint``, or, for a variable with a ``VocabInfo``, with its rows (or columns) moved from the old
vocabulary's order to the new one's (``checkpoint_ops``)."""

import collections

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.logging import info
from tensorweave.ops import variables
from tensorweave.ops.partitioned_variables import PartitionInfo
from tensorweave.train.checkpoint_ops import load_and_remap_matrix_initializer
from tensorweave.train.checkpoint_utils import _checkpoint_prefix, init_from_checkpoint, initialize_with

__all__ = ["VocabInfo", "warm_start"]


class VocabInfo(collections.namedtuple("VocabInfo", ["new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab",
                                                     "old_vocab_size", "backup_initializer", "axis"])):
    """How a variable's rows (``axis=0``, an embedding) or columns (``axis=1``, a softmax layer's weights) follow
    a vocabulary: the new and old vocabulary files (one entry a line), how many entries of each count
    (``old_vocab_size=-1``: all), the OOV buckets after the new entries, and the initializer of rows or
    columns the old checkpoint does not have (zeros when None)."""

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError(f"The only supported values for the axis argument are 0 and 1.  Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size,
                               backup_initializer, axis)


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"])):
    """``warm_start``'s arguments in one value (what ``tf.estimator.WarmStartSettings`` is)."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


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


def _warm_start_with_vocab(parts, ckpt, vocab_info, prev_tensor_name):
    """Each part's initializer loads its rows (or its columns, for axis=1) remapped to the new vocabulary."""
    if not (vocab_info.new_vocab and vocab_info.new_vocab_size and ckpt and vocab_info.old_vocab):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, current_vocab_size, prev_ckpt, "
                         "prev_vocab_path}.")
    prefix = _checkpoint_prefix(ckpt)
    tensor_name = prev_tensor_name or _full_name(parts[0])
    total_rows = sum(v.get_shape().as_list()[0] for v in parts)
    for v in parts:
        shape = v.get_shape().as_list()
        if len(shape) != 2:
            raise ValueError(f"warm_start: var_name_to_vocab_info remaps the rows or columns of a matrix, but "
                             f"{v.op.name} has shape {shape}")
        slice_info = v._get_save_slice_info()
        partition = None if slice_info is None else PartitionInfo(slice_info.full_shape, slice_info.var_offset)
        by_rows = vocab_info.axis == 0
        init = load_and_remap_matrix_initializer(
            prefix, tensor_name, new_row_vocab_size=vocab_info.new_vocab_size if by_rows else total_rows,
            new_col_vocab_size=shape[1] if by_rows else vocab_info.new_vocab_size,
            old_row_vocab_size=vocab_info.old_vocab_size if by_rows else -1,
            old_row_vocab_file=vocab_info.old_vocab if by_rows else None,
            new_row_vocab_file=vocab_info.new_vocab if by_rows else None,
            old_col_vocab_file=None if by_rows else vocab_info.old_vocab,
            new_col_vocab_file=None if by_rows else vocab_info.new_vocab,
            num_row_oov_buckets=vocab_info.num_oov_buckets if by_rows else 0,
            num_col_oov_buckets=0 if by_rows else vocab_info.num_oov_buckets,
            initializer=vocab_info.backup_initializer)
        with v.graph.as_default():
            value = init(shape, partition_info=partition)
        initialize_with(v, value)


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Makes the selected variables' initializers load them from ``ckpt_to_initialize_from``.

    ``vars_to_warm_start``: a regex over the trainable variables, a list of regexes over the global ones, or a
    list of variables (None selects none but those with a vocabulary). ``var_name_to_vocab_info`` maps a
    variable's name to a ``VocabInfo``: its rows (or columns) are remapped to the new vocabulary.
    ``var_name_to_prev_var_name`` maps a variable's name to its name in the checkpoint. A name either map gives
    that selects nothing is an error, as in TF.
    """
    var_name_to_vocab_info = var_name_to_vocab_info or {}
    var_name_to_prev_var_name = var_name_to_prev_var_name or {}
    grouped = _grouped_variables(vars_to_warm_start)
    used, vocab_used, pending, count = set(), set(), {}, 0
    for var_name, group in grouped.items():
        previous = var_name_to_prev_var_name.get(var_name)
        if previous:
            used.add(var_name)
        vocab_info = var_name_to_vocab_info.get(var_name)
        if vocab_info:
            vocab_used.add(var_name)
            count += 1
            _warm_start_with_vocab(group, ckpt_to_initialize_from, vocab_info, previous)
            continue
        if not vars_to_warm_start:
            continue
        count += 1
        target = group[0] if len(group) == 1 else group
        tensor_name = previous or var_name
        if tensor_name in pending:  # one checkpoint tensor for two variables: load the first batch now
            init_from_checkpoint(ckpt_to_initialize_from, pending)
            pending = {}
        pending[tensor_name] = target
    if pending:
        init_from_checkpoint(ckpt_to_initialize_from, pending)
    info("Warm-started %d variables.", count)
    for given, used_names, what in ((var_name_to_prev_var_name, used, "var_name_to_prev_var_name"),
                                    (var_name_to_vocab_info, vocab_used, "var_name_to_vocab_info")):
        unused = set(given) - used_names
        if unused:
            raise ValueError(f"You provided the following variables in {what} that were not used: {sorted(unused)}."
                             f"  Perhaps you misspelled them?  Here is the list of viable variable names: "
                             f"{sorted(grouped)}")
