"""Checkpoint ops (SaveV2, RestoreV2, MergeV2Checkpoints), the file-name ops a sharded save needs,
whole-file reads and writes, and readers (TF1's tf.TextLineReader and friends) that turn the file names
of a queue into records. The on-disk checkpoint format is formats/checkpoint_format.py."""

from tensorweave import dtypes
from tensorweave.formats.checkpoint_values import parse_shape_and_slice
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.records.options import TFRecordOptions

DEFS = OpDefList()

__all__ = ["FixedLengthRecordReader", "IdentityReader", "ReaderBase", "TFRecordReader", "TextLineReader",
           "WholeFileReader", "matching_files", "read_file", "string_join", "write_file"]

DEFS.define("SaveV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string", "tensors: dtypes"],
            attrs=["dtypes: list(type) >= 1"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Writes the tensors (or slices of them, per shape_and_slices) as a checkpoint at prefix.")
RESTORE = DEFS.define(
    "RestoreV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
    outputs=["tensors: dtypes"], attrs=["dtypes: list(type) >= 1", "shapes: list(shape) >= 0 = []"],
    is_stateful=True, grad=NOT_DIFFERENTIABLE,
    doc="Reads the named tensors (or slices) of the checkpoint at prefix, all verified before any is returned. "
        "With shapes, each value's shape is checked too.")
DEFS.define("MergeV2Checkpoints", inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
            attrs=["delete_old_dirs: bool = True", "allow_missing_files: bool = False"], is_stateful=True,
            grad=NOT_DIFFERENTIABLE,
            doc="Makes one checkpoint at destination_prefix of the per-shard checkpoints of a sharded save.")
DEFS.define("ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
            outputs=["filename: string"], grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape,
            doc="basename-00001-of-00004: the name of one shard.")
STRING_JOIN = DEFS.define("StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
                          attrs=["N: int >= 1", "separator: string = ''"], grad=NOT_DIFFERENTIABLE,
                          doc="Joins strings elementwise (scalars broadcast).")
DEFS.define("StaticRegexFullMatch", inputs=["input: string"], outputs=["output: bool"], attrs=["pattern: string"],
            grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.unchanged_shape,
            doc="Whether each string matches ``pattern`` (RE2 syntax; Python's re here) as a whole; TF's Saver "
                "checks a save path for a URL scheme with it.")
DEFS.define("ReadFile", inputs=["filename: string"], outputs=["contents: string"], grad=NOT_DIFFERENTIABLE,
            shape_fn=common_shapes.scalar_shape, doc="The bytes of a file.")
DEFS.define("WriteFile", inputs=["filename: string", "contents: string"], is_stateful=True,
            grad=NOT_DIFFERENTIABLE, doc="Writes bytes to a file (atomically), creating its directory.")
DEFS.define("MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"], grad=NOT_DIFFERENTIABLE,
            shape_fn=lambda op: [tensor_shape.TensorShape([None])], is_stateful=True,  # never folded: files change
            doc="The sorted names of the files matching a glob pattern (or any of a vector of patterns).")


@RESTORE.set_shape_fn
def _restore_shape(op):
    shapes = op.get_attr("shapes")
    if shapes:
        return list(shapes)
    specs = constant_value(op.inputs[2])
    out = []
    for i in range(len(op.outputs)):
        spec = specs.reshape(-1)[i] if specs is not None and specs.size == len(op.outputs) else None
        out.append(_slice_shape(spec))


def _slice_shape(spec):
    if spec is None:
        return tensor_shape.TensorShape(None)
    _, extents = parse_shape_and_slice(spec)
    return tensor_shape.TensorShape(None) if extents is None else tensor_shape.TensorShape([n for _, n in extents])


@STRING_JOIN.set_shape_fn
def _string_join_shape(op):
    result = tensor_shape.TensorShape([])
    for t in op.inputs:
        if t.shape.ndims != 0:
            result = t.shape if result.ndims == 0 else result.merge_with(t.shape)
    return result


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None, checkpoint_format=None):
    """Saves ``tensors`` under ``tensor_names`` as the checkpoint ``prefix``; ``checkpoint_format="tensorflow"``
    writes TensorFlow's format (the private attr ``_checkpoint_format``, which TensorFlow ignores: its SaveV2
    writes that format anyway)."""
    attrs = {"_checkpoint_format": checkpoint_format} if checkpoint_format not in (None, "tensorweave") else {}
    return apply_op("SaveV2", [prefix, _strings(tensor_names), _strings(shape_and_slices), list(tensors)], attrs,
                    name=name or "SaveV2")


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes, shapes=None, name=None):  # noqa: A002
    """Reads ``tensor_names`` from the checkpoint ``prefix``; returns one tensor per name."""
    return apply_op("RestoreV2", [prefix, _strings(tensor_names), _strings(shape_and_slices)],
                   {"dtypes": list(dtypes), "shapes": list(shapes or [])}, name=name or "RestoreV2")


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True, name=None):
    prefixes = apply_op("Pack", [[convert_to_tensor(p, dtype=dtypes.string) for p in checkpoint_prefixes]],
                        {"axis": 0}, name="checkpoint_prefixes")
    return apply_op("MergeV2Checkpoints", [prefixes, destination_prefix],
                    {"delete_old_dirs": delete_old_dirs}, name=name or "MergeV2Checkpoints")


def sharded_filename(basename, shard, num_shards, name=None):
    return apply_op("ShardedFilename", [basename, shard, num_shards], name=name or "ShardedFilename")


def string_join(inputs, separator="", name=None):
    """Joins string tensors elementwise: ``tf.string_join(['a', t], '/')``."""
    return apply_op("StringJoin", [[convert_to_tensor(i, dtype=dtypes.string) for i in inputs]],
                    {"separator": separator}, name=name or "StringJoin")


def read_file(filename, name=None):
    return apply_op("ReadFile", [convert_to_tensor(filename, dtype=dtypes.string)], name=name or "ReadFile")


def write_file(filename, contents, name=None):
    return apply_op("WriteFile", [convert_to_tensor(filename, dtype=dtypes.string),
                                  convert_to_tensor(contents, dtype=dtypes.string)], name=name or "WriteFile")


def matching_files(pattern, name=None):
    """The sorted file names matching ``pattern`` (a glob, or a vector of them), read when the op runs."""
    return apply_op("MatchingFiles", [convert_to_tensor(pattern, dtype=dtypes.string)], name=name or "MatchingFiles")


def _strings(values):
    return convert_to_tensor(values, dtype=dtypes.string)


# ---- readers --------------------------------------------------------------------------------------------
_READER_ATTRS = ["container: string = ''", "shared_name: string = ''"]


def _define_reader(name, attrs=(), doc=""):
    DEFS.define(name, outputs=["reader_handle: resource"], attrs=list(attrs) + _READER_ATTRS, is_stateful=True,
                grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape, doc=doc)


_define_reader("TextLineReaderV2", ["skip_header_lines: int = 0"], "Records are the lines of each file.")
_define_reader("TFRecordReaderV2", ["compression_type: string = ''"],
               "Records are those of each TFRecord file (compression_type '', 'ZLIB' or 'GZIP'); keys file:offset.")
_define_reader("WholeFileReaderV2", doc="A record is a whole file: (its name, its contents).")
_define_reader("IdentityReaderV2", doc="A record is the work unit itself: (work, work).")
_define_reader("FixedLengthRecordReaderV2", ["header_bytes: int = 0", "record_bytes: int", "footer_bytes: int = 0",
                                             "hop_bytes: int = 0", "encoding: string = ''"],
               doc="Records are record_bytes long, every hop_bytes, between a header and a footer.")
DEFS.define("ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
            outputs=["key: string", "value: string"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            shape_fn=lambda op: [tensor_shape.TensorShape([])] * 2,
            doc="The next record, dequeuing the next work unit when the current one is done.")
DEFS.define("ReaderReadUpToV2", inputs=["reader_handle: resource", "queue_handle: resource", "num_records: int64"],
            outputs=["keys: string", "values: string"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            shape_fn=lambda op: [tensor_shape.TensorShape([None])] * 2,
            doc="Up to num_records records; fewer at the end of a work unit.")
for _name, _doc in (("ReaderNumRecordsProducedV2", "Records produced so far."),
                    ("ReaderNumWorkUnitsCompletedV2", "Work units finished so far.")):
    DEFS.define(_name, inputs=["reader_handle: resource"], outputs=["count: int64"], is_stateful=True,
                grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape, doc=_doc)
DEFS.define("ReaderResetV2", inputs=["reader_handle: resource"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Forgets the current work unit and the counts.")


class ReaderBase:
    """Reads records from the work units (file names) of a queue. TF1's ``tf.ReaderBase``."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return self._supports_serialize

    @staticmethod
    def _queue_ref(queue):
        return queue.queue_ref if hasattr(queue, "queue_ref") else queue

    def read(self, queue, name=None):
        """(key, value): the next record, taking the next file name from ``queue`` when needed."""
        return apply_op("ReaderReadV2", [self._reader_ref, self._queue_ref(queue)], name=name or "ReaderReadV2")

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values): up to ``num_records`` records (fewer when a file ends)."""
        return apply_op("ReaderReadUpToV2", [self._reader_ref, self._queue_ref(queue),
                                             convert_to_tensor(num_records, dtype=dtypes.int64)],
                        name=name or "ReaderReadUpToV2")

    def num_records_produced(self, name=None):
        return apply_op("ReaderNumRecordsProducedV2", [self._reader_ref], name=name or "ReaderNumRecordsProducedV2")

    def num_work_units_completed(self, name=None):
        return apply_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref],
                        name=name or "ReaderNumWorkUnitsCompletedV2")

    def reset(self, name=None):
        return apply_op("ReaderResetV2", [self._reader_ref], name=name or "ReaderResetV2")


def _reader(op_type, name, **attrs):
    attrs["container"] = graph_mod.get_default_graph().current_container
    return apply_op(op_type, [], attrs, name=name)


class TextLineReader(ReaderBase):
    """Records are lines (without the newline); keys are ``file:line_number``."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_reader("TextLineReaderV2", name or "TextLineReaderV2",
                                 skip_header_lines=int(skip_header_lines or 0)))


class TFRecordReader(ReaderBase):
    """Records of TFRecord files; keys are ``file:offset`` (the record's offset, uncompressed).
    ``options``: a TFRecordOptions, or the compression type ('', 'ZLIB', 'GZIP')."""

    def __init__(self, name=None, options=None):
        compression_type = TFRecordOptions.get_compression_type_string(options)
        super().__init__(_reader("TFRecordReaderV2", name or "TFRecordReaderV2", compression_type=compression_type))


class WholeFileReader(ReaderBase):
    """One record per file: key the file name, value its contents."""

    def __init__(self, name=None):
        super().__init__(_reader("WholeFileReaderV2", name or "WholeFileReaderV2"))


class IdentityReader(ReaderBase):
    """One record per work unit: key and value are the work unit itself."""

    def __init__(self, name=None):
        super().__init__(_reader("IdentityReaderV2", name or "IdentityReaderV2"))


class FixedLengthRecordReader(ReaderBase):
    """Records of ``record_bytes`` bytes (every ``hop_bytes``) between a header and a footer; keys ``file:i``."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None, encoding=None):
        if encoding not in (None, "", "GZIP", "ZLIB"):
            raise ValueError(f"encoding must be None, 'GZIP' or 'ZLIB', got {encoding!r}")
        super().__init__(_reader("FixedLengthRecordReaderV2", name or "FixedLengthRecordReaderV2",
                                 record_bytes=int(record_bytes), header_bytes=int(header_bytes or 0),
                                 footer_bytes=int(footer_bytes or 0), hop_bytes=int(hop_bytes or 0),
                                 encoding=encoding or ""))
