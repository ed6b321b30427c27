"""TensorFlow's checkpoint protos (tensorflow/core/protobuf/tensor_bundle.proto and
framework/tensor_slice.proto): the header and the per-tensor entries of a tensor bundle's ``.index`` table.

An entry says where a tensor's bytes are (shard, offset, size, masked CRC32C), or, for a variable saved in
partitions, which slices were saved (each slice then has an entry of its own under a key derived from the
name and the slice)."""

from tensorweave.protos import builder, framework

ENUMS = {"BundleHeaderProto.Endianness": ["LITTLE", "BIG"]}

MESSAGES = {
    "TensorSliceProto": [("extent", 1, "TensorSliceProto.Extent", "repeated")],
    "TensorSliceProto.Extent": [("start", 1, "int64"), ("length", 2, "int64", "has_length")],
    "BundleHeaderProto": [("num_shards", 1, "int32"), ("endianness", 2, "BundleHeaderProto.Endianness"),
                          ("version", 3, "VersionDef")],
    "BundleEntryProto": [
        ("dtype", 1, "DataType"), ("shape", 2, "TensorShapeProto"), ("shard_id", 3, "int32"), ("offset", 4, "int64"),
        ("size", 5, "int64"), ("crc32c", 6, "fixed32"), ("slices", 7, "TensorSliceProto", "repeated")],
}

FILE = builder.build("tensorweave/protos/tensor_bundle.proto", MESSAGES, ENUMS, dependencies=[framework.FILE.name])

TensorSliceProto = builder.message_class("TensorSliceProto")
BundleHeaderProto = builder.message_class("BundleHeaderProto")
BundleEntryProto = builder.message_class("BundleEntryProto")

__all__ = ["BundleEntryProto", "BundleHeaderProto", "TensorSliceProto"]
