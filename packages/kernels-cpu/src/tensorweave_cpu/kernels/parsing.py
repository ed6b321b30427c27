"""CPU kernels of the Example parsing ops (ParseExample, ParseSingleExample, ParseSingleSequenceExample);
the parsing itself is tensorweave_cpu.example_parsing."""

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_cpu.example_parsing import ExampleParser, SequenceParser, Spec

KERNELS = KernelSet("CPU")


def _text(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _specs(keys, types, shapes=None, defaults=None):
    if shapes is None:
        return [Spec(_text(k), t) for k, t in zip(keys, types)]
    return [Spec(_text(k), t, s, d) for k, t, s, d in zip(keys, types, shapes, defaults)]


def _flat(triples, dense):
    return [t[0] for t in triples] + [t[1] for t in triples] + [t[2] for t in triples] + list(dense)


@KERNELS.register("ParseExample")
def _parse_example(serialized, names, *rest, Nsparse, Ndense, sparse_types, Tdense, dense_shapes):
    sparse_keys, dense_keys, defaults = rest[:Nsparse], rest[Nsparse:Nsparse + Ndense], rest[Nsparse + Ndense:]
    parser = ExampleParser(_specs(sparse_keys, sparse_types), _specs(dense_keys, Tdense, dense_shapes, defaults),
                           batch=np.ndim(serialized) > 0)
    return _flat(*parser.parse(serialized, names))


@KERNELS.register("ParseSingleExample")
def _parse_single_example(serialized, *defaults, sparse_keys, dense_keys, sparse_types, Tdense, dense_shapes):
    parser = ExampleParser(_specs(sparse_keys, sparse_types), _specs(dense_keys, Tdense, dense_shapes, defaults),
                           batch=False)
    return _flat(*parser.parse(serialized, []))


@KERNELS.register("ParseSingleSequenceExample")
def _parse_single_sequence_example(serialized, missing_ok, *rest, Ncontext_sparse, Ncontext_dense,
                                   Nfeature_list_sparse, Nfeature_list_dense, context_sparse_types, Tcontext_dense,
                                   feature_list_dense_types, context_dense_shapes, feature_list_sparse_types,
                                   feature_list_dense_shapes):
    counts = np.cumsum([0, Ncontext_sparse, Ncontext_dense, Nfeature_list_sparse, Nfeature_list_dense,
                        Ncontext_dense])
    groups = [rest[a:b] for a, b in zip(counts[:-1], counts[1:])]
    context_sparse, context_dense, list_sparse, list_dense, defaults = groups
    debug_name = _text(rest[-1])
    parser = SequenceParser(
        (_specs(context_sparse, context_sparse_types),
         _specs(context_dense, Tcontext_dense, context_dense_shapes, defaults)),
        (_specs(list_sparse, feature_list_sparse_types),
         _specs(list_dense, feature_list_dense_types, feature_list_dense_shapes, [None] * Nfeature_list_dense)),
        [_text(k) for k in np.asarray(missing_ok, dtype=object).reshape(-1)])
    sparse, dense, sequence_sparse, sequence_dense = parser.parse(_text_bytes(serialized), debug_name)
    return _flat(sparse, dense) + _flat(sequence_sparse, sequence_dense)


def _text_bytes(value):
    return value.item() if isinstance(value, np.ndarray) else value
