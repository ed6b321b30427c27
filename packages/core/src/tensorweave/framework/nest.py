"""Nested structures (lists, tuples, namedtuples, dicts) of tensors, as TF's ``nest``, on optree.

Dicts flatten in sorted key order and None is a leaf, as in TF, so a structure and its flat list
correspond the same way everywhere (cond branches, loop variables, scan elements).
"""

import optree


def flatten(structure):
    return optree.tree_leaves(structure, none_is_leaf=True)


def structure_of(structure):
    return optree.tree_structure(structure, none_is_leaf=True)


def pack_sequence_as(structure, flat):
    """``flat`` (a list of leaves) arranged like ``structure``."""
    return optree.tree_unflatten(structure_of(structure), list(flat))


def map_structure(fn, *structures):
    return optree.tree_map(fn, *structures, none_is_leaf=True)


def is_nested(value):
    return not optree.treespec_is_leaf(structure_of(value))


def describe(structure):
    """The shape of a structure with leaves as ``*``, e.g. ``(*, [*, *])``, for error messages."""
    text = repr(structure_of(structure))
    return text[len("PyTreeSpec("):-len(", NoneIsLeaf)")]


def same_structure(a, b):
    return structure_of(a) == structure_of(b)


def leaf_paths(structure, root=""):
    """A readable path per leaf, in flatten order: ``root[1]['h']``."""
    return [root + "".join(f"[{k!r}]" for k in path) for path in optree.tree_paths(structure, none_is_leaf=True)]
