"""The protocol buffers TensorBoard reads (Event, Summary, HistogramProto, TensorProto, GraphDef,
RunMetadata...), built as descriptors at import so no protoc step is needed.

Names, field numbers and types are TensorFlow's (package ``tensorflow``), so the bytes are what
TensorBoard, tensorboardX and TensorFlow write and read. They live in a private descriptor pool, so
they never clash with another library's copy of the same protos. Fields TensorBoard does not need
(function libraries, cost graphs, resource handles) are left out: the wire format skips them.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_SCALARS = {
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
    "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "uint64": descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
}

_ENUMS = {
    "DataType": ["DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING",
                 "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
                 "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT",
                 "DT_UINT32", "DT_UINT64"],
    "DataClass": ["DATA_CLASS_UNKNOWN", "DATA_CLASS_SCALAR", "DATA_CLASS_TENSOR", "DATA_CLASS_BLOB_SEQUENCE"],
    "LogMessage.Level": {"UNKNOWN": 0, "DEBUGGING": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50},
    "SessionLog.SessionStatus": ["STATUS_UNSPECIFIED", "START", "STOP", "CHECKPOINT"],
}

# message -> [(field, number, type[, "repeated" | oneof name])]; "map<K,V>" types become map entries.
_MESSAGES = {
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
    "HistogramProto": [
        ("min", 1, "double"), ("max", 2, "double"), ("num", 3, "double"), ("sum", 4, "double"),
        ("sum_squares", 5, "double"), ("bucket_limit", 6, "double", "repeated"), ("bucket", 7, "double", "repeated")],
    "SummaryDescription": [("type_hint", 1, "string")],
    "SummaryMetadata": [("plugin_data", 1, "SummaryMetadata.PluginData"), ("display_name", 2, "string"),
                        ("summary_description", 3, "string"), ("data_class", 4, "DataClass")],
    "SummaryMetadata.PluginData": [("plugin_name", 1, "string"), ("content", 2, "bytes")],
    "Summary": [("value", 1, "Summary.Value", "repeated")],
    "Summary.Image": [("height", 1, "int32"), ("width", 2, "int32"), ("colorspace", 3, "int32"),
                      ("encoded_image_string", 4, "bytes")],
    "Summary.Audio": [("sample_rate", 1, "float"), ("num_channels", 2, "int64"), ("length_frames", 3, "int64"),
                      ("encoded_audio_string", 4, "bytes"), ("content_type", 5, "string")],
    "Summary.Value": [
        ("node_name", 7, "string"), ("tag", 1, "string"), ("metadata", 9, "SummaryMetadata"),
        ("simple_value", 2, "float", "value"), ("obsolete_old_style_histogram", 3, "bytes", "value"),
        ("image", 4, "Summary.Image", "value"), ("histo", 5, "HistogramProto", "value"),
        ("audio", 6, "Summary.Audio", "value"), ("tensor", 8, "TensorProto", "value")],
    "LogMessage": [("level", 1, "LogMessage.Level"), ("message", 2, "string")],
    "SessionLog": [("status", 1, "SessionLog.SessionStatus"), ("checkpoint_path", 2, "string"), ("msg", 3, "string")],
    "TaggedRunMetadata": [("tag", 1, "string"), ("run_metadata", 2, "bytes")],
    "SourceMetadata": [("writer", 1, "string")],
    "Event": [
        ("wall_time", 1, "double"), ("step", 2, "int64"), ("file_version", 3, "string", "what"),
        ("graph_def", 4, "bytes", "what"), ("summary", 5, "Summary", "what"), ("log_message", 6, "LogMessage", "what"),
        ("session_log", 7, "SessionLog", "what"), ("tagged_run_metadata", 8, "TaggedRunMetadata", "what"),
        ("meta_graph_def", 9, "bytes", "what"), ("source_metadata", 10, "SourceMetadata")],
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

PACKAGE = "tensorflow"


def _add_field(msg, name, number, type_name, extra, nested_prefix):
    fd = descriptor_pb2.FieldDescriptorProto
    field = msg.field.add(name=name, number=number, label=fd.LABEL_OPTIONAL)
    if type_name.startswith("map<"):
        key, value = type_name[4:-1].split(",")
        entry = msg.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        _add_field(entry, "key", 1, key, None, None)
        _add_field(entry, "value", 2, value, None, None)
        field.label, field.type = fd.LABEL_REPEATED, fd.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{nested_prefix}.{entry.name}"
        return
    if type_name in _SCALARS:
        field.type = _SCALARS[type_name]
    else:
        field.type = fd.TYPE_ENUM if type_name in _ENUMS else fd.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{type_name}"
    if extra == "repeated":
        field.label = fd.LABEL_REPEATED
    elif extra is not None:
        names = [o.name for o in msg.oneof_decl]
        if extra not in names:
            msg.oneof_decl.add(name=extra)
            names.append(extra)
        field.oneof_index = names.index(extra)


def _build_file():
    file_proto = descriptor_pb2.FileDescriptorProto(name="tensorweave_board/tensorboard.proto", package=PACKAGE,
                                                    syntax="proto3")
    messages = {}
    for full_name in _MESSAGES:
        outer, _, inner = full_name.rpartition(".")
        parent = messages[outer].nested_type if outer else file_proto.message_type
        messages[full_name] = parent.add(name=inner)
    for full_name, values in _ENUMS.items():
        outer, _, inner = full_name.rpartition(".")
        parent = messages[outer].enum_type if outer else file_proto.enum_type
        enum = parent.add(name=inner)
        for label, number in (values.items() if isinstance(values, dict) else zip(values, range(len(values)))):
            enum.value.add(name=label, number=number)
    for full_name, fields in _MESSAGES.items():
        for name, number, type_name, *extra in fields:
            _add_field(messages[full_name], name, number, type_name, extra[0] if extra else None, full_name)
    return file_proto


POOL = descriptor_pool.DescriptorPool()
_FILE = POOL.Add(_build_file())


def _message_class(full_name):
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(f"{PACKAGE}.{full_name}"))


Event = _message_class("Event")
Summary = _message_class("Summary")
SummaryMetadata = _message_class("SummaryMetadata")
SummaryDescription = _message_class("SummaryDescription")
HistogramProto = _message_class("HistogramProto")
TensorProto = _message_class("TensorProto")
TensorShapeProto = _message_class("TensorShapeProto")
LogMessage = _message_class("LogMessage")
SessionLog = _message_class("SessionLog")
TaggedRunMetadata = _message_class("TaggedRunMetadata")
SourceMetadata = _message_class("SourceMetadata")
GraphDef = _message_class("GraphDef")
NodeDef = _message_class("NodeDef")
AttrValue = _message_class("AttrValue")
NameAttrList = _message_class("NameAttrList")
VersionDef = _message_class("VersionDef")
RunMetadata = _message_class("RunMetadata")
StepStats = _message_class("StepStats")
DeviceStepStats = _message_class("DeviceStepStats")
NodeExecStats = _message_class("NodeExecStats")

DataType = POOL.FindEnumTypeByName(f"{PACKAGE}.DataType")
DATA_TYPES = {v.name: v.number for v in DataType.values}

__all__ = ["AttrValue", "DATA_TYPES", "DeviceStepStats", "Event", "GraphDef", "HistogramProto", "LogMessage",
           "NameAttrList", "NodeDef", "NodeExecStats", "RunMetadata", "SessionLog", "SourceMetadata", "StepStats",
           "Summary", "SummaryDescription", "SummaryMetadata", "TaggedRunMetadata", "TensorProto", "TensorShapeProto",
           "VersionDef"]
