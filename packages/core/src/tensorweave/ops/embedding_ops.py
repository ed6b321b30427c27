"""embedding_lookup: rows of a (possibly sharded) parameter table, with a sparse gradient.

A lookup is a gather per shard, so the gradient is IndexedSlices and an optimizer touches only the rows
that were looked up. Sharded tables split ids by the ``mod`` or ``div`` strategy, as TF1.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    clip_ops, comparison_ops, concat_split_ops, dynamic_partition_ops, fill_ops, gather_ops, mask_ops, math_ops,
    range_ops, segment_ops, shape_ops, unary_math_ops,
)

__all__ = ["embedding_lookup", "embedding_lookup_sparse"]


def _gather(params, ids):
    """A resource variable reads only the rows asked for; anything else goes through Gather."""
    if hasattr(params, "sparse_read"):
        return params.sparse_read(ids)
    return gather_ops.gather(params, ids)


def _rows(params):
    """The number of rows of a shard, as an int where it is static."""
    rows = tensor_shape.as_shape(params.shape)[0].value if params.shape.ndims else None
    return rows if rows is not None else shape_ops.shape(params)[0]


def _clip_rows(embeddings, ids, max_norm):
    """Scales each looked-up row to L2 norm at most ``max_norm`` (over its non-id dimensions)."""
    if max_norm is None:
        return embeddings
    ids_rank, rank = ids.shape.ndims, embeddings.shape.ndims
    if ids_rank is None or rank is None:
        raise ValueError("embedding_lookup with max_norm needs ids and params of known rank")
    return clip_ops.clip_by_norm(embeddings, max_norm, axes=list(range(ids_rank, rank)))


def _div_assignments(flat_ids, params):
    """TF1's 'div' strategy: contiguous id ranges, the first (total % shards) shards one row larger."""
    shards = len(params)
    sizes = [_rows(p) for p in params]
    if all(isinstance(s, int) for s in sizes):
        total = sum(sizes)
        if total < shards:
            raise ValueError(f"embedding_lookup: the 'div' strategy needs at least one row per shard; {shards} "
                             f"shards hold {total} rows in all")
    else:
        total = math_ops.add_n([convert_to_tensor(s, dtype=dtypes.int32) if isinstance(s, int) else s
                                for s in sizes])
        total = unary_math_ops.cast(total, flat_ids.dtype)
    per_shard = total // shards
    extras = total % shards
    assignments = math_ops.maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    in_larger_shard = comparison_ops.less(assignments, extras)
    new_ids = comparison_ops.where(in_larger_shard, flat_ids % (per_shard + 1), (flat_ids - extras) % per_shard)
    return assignments, new_ids


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """``params[ids]``: rows of a tensor or variable, or of a list of shards split by ``partition_strategy``.

    ``ids`` may have any shape; the result has shape ``ids.shape + params.shape[1:]``. With ``mod``, id i
    lives in shard i % n at row i // n; with ``div``, ids are split into contiguous ranges.
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"embedding_lookup: partition_strategy must be 'mod' or 'div', got {partition_strategy!r}")
    shards = list(params) if isinstance(params, (list, tuple)) or hasattr(params, "_get_variable_list") else [params]
    if not shards:
        raise ValueError("embedding_lookup needs at least one parameter tensor")
    with graph_mod.name_scope(name, "embedding_lookup", [ids]):
        ids = convert_to_tensor(ids, name="ids")
        if not ids.dtype.is_integer:
            raise TypeError(f"embedding_lookup: ids must be int32 or int64, got {ids.dtype.name}")
        shards = [p if hasattr(p, "op") else convert_to_tensor(p, name="params") for p in shards]
        if len(shards) == 1:
            with graph_mod.colocate_with(shards[0]):
                return _clip_rows(_gather(shards[0], ids), ids, max_norm)
        flat_ids = shape_ops.reshape(ids, [-1])
        if partition_strategy == "mod":
            assignments, new_ids = flat_ids % len(shards), flat_ids // len(shards)
        else:
            assignments, new_ids = _div_assignments(flat_ids, shards)
        assignments = unary_math_ops.cast(assignments, dtypes.int32)
        positions = range_ops.range(shape_ops.size(flat_ids))
        shard_ids = dynamic_partition_ops.dynamic_partition(new_ids, assignments, len(shards))
        shard_positions = dynamic_partition_ops.dynamic_partition(positions, assignments, len(shards))
        found = []
        for shard, local_ids in zip(shards, shard_ids):
            with graph_mod.colocate_with(shard):
                found.append(_gather(shard, local_ids))
        merged = dynamic_partition_ops.dynamic_stitch(shard_positions, found)
        element_shape = shards[0].shape[1:]
        for shard in shards[1:]:
            element_shape = element_shape.merge_with(shard.shape[1:])
        if element_shape.is_fully_defined():
            out_shape = concat_split_ops.concat(
                [shape_ops.shape(ids), np.asarray(element_shape.as_list(), np.int32)], 0)
        else:
            out_shape = concat_split_ops.concat([shape_ops.shape(ids), shape_ops.shape(found[0])[1:]], 0)
        result = shape_ops.reshape(merged, out_shape)
        result.set_shape(ids.shape.concatenate(element_shape))
        return _clip_rows(result, ids, max_norm)


_COMBINERS = ("sum", "mean", "sqrtn")


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None, combiner=None,
                            max_norm=None):
    """One combined embedding per row of the SparseTensor ``sp_ids`` [batch, ids]: the ``combiner`` ("sum",
    "mean" -- the default -- or "sqrtn") of the looked-up rows, weighted by ``sp_weights`` (same indices) when
    given. As TF1, the result has a row per row up to the last one with ids (rows without ids in between are
    zero); the gradient to ``params`` is IndexedSlices of the rows looked up."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of {_COMBINERS}, got {combiner!r}")
    with graph_mod.name_scope(name or "embedding_lookup_sparse"):
        segment_ids = unary_math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = mask_ops.unique(sp_ids.values)
        embeddings = gather_ops.gather(
            embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm), idx)
        if sp_weights is None:
            weights = fill_ops.ones_like(unary_math_ops.cast(sp_ids.values, embeddings.dtype))
        else:
            weights = unary_math_ops.cast(sp_weights.values, embeddings.dtype)
        ones = fill_ops.ones(shape_ops.expand_dims(shape_ops.rank(embeddings) - 1, 0), dtype=dtypes.int32)
        weights = shape_ops.reshape(weights, concat_split_ops.concat([shape_ops.shape(weights), ones], 0))
        total = segment_ops.segment_sum(embeddings * weights, segment_ids)
        if combiner == "sum":
            return total
        scale = segment_ops.segment_sum(weights if combiner == "mean" else weights * weights, segment_ids)
        if combiner == "sqrtn":
            scale = unary_math_ops.sqrt(scale)
        nonzero = comparison_ops.not_equal(scale, 0)
        safe = comparison_ops.where_v2(nonzero, scale, fill_ops.ones_like(scale))
        return comparison_ops.where_v2(nonzero, total / safe, fill_ops.zeros_like(total))  # empty rows give 0, as TF
