"""Builds protocol buffer classes from field tables: one ``build`` call per .proto file, no protoc step.

A table maps a message's full name (``"Summary.Value"`` for a nested one) to its fields, each
``(name, number, type[, "repeated" | oneof name])``; a type is a scalar ("float", "bytes", ...), a message or
enum of this file or of a file built before, or ``"map<K,V>"``. Repeated scalars are packed (proto3), as
TensorFlow's are.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "tensorflow"
POOL = descriptor_pool.DescriptorPool()

_FIELD = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "double": _FIELD.TYPE_DOUBLE, "float": _FIELD.TYPE_FLOAT, "int64": _FIELD.TYPE_INT64,
    "uint64": _FIELD.TYPE_UINT64, "int32": _FIELD.TYPE_INT32, "uint32": _FIELD.TYPE_UINT32,
    "bool": _FIELD.TYPE_BOOL, "string": _FIELD.TYPE_STRING, "bytes": _FIELD.TYPE_BYTES,
    "fixed32": _FIELD.TYPE_FIXED32,
}


def _is_enum(type_name, local_enums):
    if type_name in local_enums:
        return True
    try:
        POOL.FindEnumTypeByName(f"{PACKAGE}.{type_name}")
    except KeyError:
        return False
    return True


def _add_field(msg, name, number, type_name, extra, scope, enums):
    field = msg.field.add(name=name, number=number, label=_FIELD.LABEL_OPTIONAL)
    if type_name.startswith("map<"):
        key, value = type_name[4:-1].split(",")
        entry = msg.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        _add_field(entry, "key", 1, key, None, None, enums)
        _add_field(entry, "value", 2, value, None, None, enums)
        field.label, field.type = _FIELD.LABEL_REPEATED, _FIELD.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{scope}.{entry.name}"
        return
    if type_name in _SCALARS:
        field.type = _SCALARS[type_name]
    else:
        field.type = _FIELD.TYPE_ENUM if _is_enum(type_name, enums) else _FIELD.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{type_name}"
    if extra == "repeated":
        field.label = _FIELD.LABEL_REPEATED
    elif extra is not None:
        names = [o.name for o in msg.oneof_decl]
        if extra not in names:
            msg.oneof_decl.add(name=extra)
            names.append(extra)
        field.oneof_index = names.index(extra)


def build(file_name, messages, enums=None, dependencies=()):
    """Adds the file ``file_name`` (its ``messages`` and ``enums`` tables; ``dependencies``: the files built
    before whose types it uses) to the pool. An enum's values are a list (numbered from 0) or a dict."""
    enums = enums or {}
    file_proto = descriptor_pb2.FileDescriptorProto(name=file_name, package=PACKAGE, syntax="proto3",
                                                    dependency=list(dependencies))
    built = {}
    for full_name in messages:
        outer, _, inner = full_name.rpartition(".")
        parent = built[outer].nested_type if outer else file_proto.message_type
        built[full_name] = parent.add(name=inner)
    for full_name, values in enums.items():
        outer, _, inner = full_name.rpartition(".")
        parent = built[outer].enum_type if outer else file_proto.enum_type
        enum = parent.add(name=inner)
        for label, number in (values.items() if isinstance(values, dict) else zip(values, range(len(values)))):
            enum.value.add(name=label, number=number)
    for full_name, fields in messages.items():
        for name, number, type_name, *extra in fields:
            _add_field(built[full_name], name, number, type_name, extra[0] if extra else None, full_name, enums)
    POOL.Add(file_proto)
    return POOL.FindFileByName(file_name)


def message_class(full_name):
    """The class of message ``full_name`` (e.g. ``"Summary"``) of a file already built."""
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(f"{PACKAGE}.{full_name}"))


def enum_values(full_name):
    """{label: number} of enum ``full_name`` (e.g. ``"DataType"``)."""
    return {v.name: v.number for v in POOL.FindEnumTypeByName(f"{PACKAGE}.{full_name}").values}
