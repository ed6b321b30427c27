"""TensorFlow's framework protos: DataType, TensorShapeProto, TensorProto, AttrValue, NodeDef, GraphDef,
StepStats and RunMetadata. Fields no reader here needs (function libraries, cost graphs, resource handles)
are left out: the wire format skips them."""

from tensorweave.protos import builder

ENUMS = {
    "DataType": ["DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING",
                 "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
                 "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT",
                 "DT_UINT32", "DT_UINT64"],
}

MESSAGES = {
    "TensorShapeProto": [("dim", 2, "TensorShapeProto.Dim", "repeated"), ("unknown_rank", 3, "bool")],
    "TensorShapeProto.Dim": [("size", 1, "int64"), ("name", 2, "string")],
    "TensorProto": [
        ("dtype", 1, "DataType"), ("tensor_shape", 2, "TensorShapeProto"), ("version_number", 3, "int32"),
        ("tensor_content", 4, "bytes"), ("half_val", 13, "int32", "repeated"), ("float_val", 5, "float", "repeated"),
        ("double_val", 6, "double", "repeated"), ("int_val", 7, "int32", "repeated"),
        ("string_val", 8, "bytes", "repeated"), ("scomplex_val", 9, "float", "repeated"),
        ("int64_val", 10, "int64", "repeated"), ("bool_val", 11, "bool", "repeated"),
        ("dcomplex_val", 12, "double", "repeated"), ("uint32_val", 16, "uint32", "repeated"),
        ("uint64_val", 17, "uint64", "repeated")],
    "VersionDef": [("producer", 1, "int32"), ("min_consumer", 2, "int32"), ("bad_consumers", 3, "int32", "repeated")],
    "NameAttrList": [("name", 1, "string"), ("attr", 2, "map<string,AttrValue>")],
    "AttrValue": [
        ("list", 1, "AttrValue.ListValue", "value"), ("s", 2, "bytes", "value"), ("i", 3, "int64", "value"),
        ("f", 4, "float", "value"), ("b", 5, "bool", "value"), ("type", 6, "DataType", "value"),
        ("shape", 7, "TensorShapeProto", "value"), ("tensor", 8, "TensorProto", "value"),
        ("placeholder", 9, "string", "value"), ("func", 10, "NameAttrList", "value")],
    "AttrValue.ListValue": [
        ("s", 2, "bytes", "repeated"), ("i", 3, "int64", "repeated"), ("f", 4, "float", "repeated"),
        ("b", 5, "bool", "repeated"), ("type", 6, "DataType", "repeated"), ("shape", 7, "TensorShapeProto", "repeated"),
        ("tensor", 8, "TensorProto", "repeated"), ("func", 9, "NameAttrList", "repeated")],
    "NodeDef": [("name", 1, "string"), ("op", 2, "string"), ("input", 3, "string", "repeated"),
                ("device", 4, "string"), ("attr", 5, "map<string,AttrValue>")],
    "GraphDef": [("node", 1, "NodeDef", "repeated"), ("version", 3, "int32"), ("versions", 4, "VersionDef")],
    "AllocationDescription": [
        ("requested_bytes", 1, "int64"), ("allocated_bytes", 2, "int64"), ("allocator_name", 3, "string"),
        ("allocation_id", 4, "int64"), ("has_single_reference", 5, "bool"), ("ptr", 6, "uint64")],
    "TensorDescription": [("dtype", 1, "DataType"), ("shape", 2, "TensorShapeProto"),
                          ("allocation_description", 4, "AllocationDescription")],
    "NodeOutput": [("slot", 1, "int32"), ("tensor_description", 3, "TensorDescription")],
    "NodeExecStats": [
        ("node_name", 1, "string"), ("all_start_micros", 2, "int64"), ("op_start_rel_micros", 3, "int64"),
        ("op_end_rel_micros", 4, "int64"), ("all_end_rel_micros", 5, "int64"), ("output", 7, "NodeOutput", "repeated"),
        ("timeline_label", 8, "string"), ("scheduled_micros", 9, "int64"), ("thread_id", 10, "uint32"),
        ("all_start_nanos", 13, "int64"), ("op_start_rel_nanos", 14, "int64"), ("op_end_rel_nanos", 15, "int64"),
        ("all_end_rel_nanos", 16, "int64"), ("scheduled_nanos", 17, "int64")],
    "DeviceStepStats": [("device", 1, "string"), ("node_stats", 2, "NodeExecStats", "repeated"),
                        ("thread_names", 3, "map<uint32,string>")],
    "StepStats": [("dev_stats", 1, "DeviceStepStats", "repeated")],
    "RunMetadata": [("step_stats", 1, "StepStats"), ("partition_graphs", 3, "GraphDef", "repeated")],
}

FILE = builder.build("tensorweave/protos/framework.proto", MESSAGES, ENUMS)

TensorShapeProto = builder.message_class("TensorShapeProto")
TensorProto = builder.message_class("TensorProto")
VersionDef = builder.message_class("VersionDef")
NameAttrList = builder.message_class("NameAttrList")
AttrValue = builder.message_class("AttrValue")
NodeDef = builder.message_class("NodeDef")
GraphDef = builder.message_class("GraphDef")
NodeExecStats = builder.message_class("NodeExecStats")
DeviceStepStats = builder.message_class("DeviceStepStats")
StepStats = builder.message_class("StepStats")
RunMetadata = builder.message_class("RunMetadata")
DATA_TYPES = builder.enum_values("DataType")

__all__ = ["AttrValue", "DATA_TYPES", "DeviceStepStats", "GraphDef", "NameAttrList", "NodeDef", "NodeExecStats",
           "RunMetadata", "StepStats", "TensorProto", "TensorShapeProto", "VersionDef"]
