"""TensorFlow's graph-export protos (core/framework/op_def.proto, variable.proto, core/protobuf/meta_graph.proto,
saver.proto, saved_model.proto, queue_runner.proto): what a ``.meta`` file and a SavedModel's ``saved_model.pb``
hold.

``OpDef`` is here because a MetaGraphDef carries the ops its graph uses (``stripped_op_list``), with the attr
defaults a graph written with ``strip_default_attrs`` leaves out. ``Any`` payloads (``any_info``, ``AnyList``)
and object graphs of TF 2 SavedModels are left out: the wire format skips them."""

from tensorweave.protos import builder, framework

ENUMS = {"SaverDef.CheckpointFormatVersion": ["LEGACY", "V1", "V2"]}

MESSAGES = {
    "OpDef": [
        ("name", 1, "string"), ("input_arg", 2, "OpDef.ArgDef", "repeated"),
        ("output_arg", 3, "OpDef.ArgDef", "repeated"), ("control_output", 20, "string", "repeated"),
        ("attr", 4, "OpDef.AttrDef", "repeated"), ("summary", 5, "string"), ("description", 6, "string"),
        ("is_commutative", 18, "bool"), ("is_aggregate", 16, "bool"), ("is_stateful", 17, "bool"),
        ("allows_uninitialized_input", 19, "bool")],
    "OpDef.ArgDef": [
        ("name", 1, "string"), ("description", 2, "string"), ("type", 3, "DataType"), ("type_attr", 4, "string"),
        ("number_attr", 5, "string"), ("type_list_attr", 6, "string"), ("is_ref", 16, "bool")],
    "OpDef.AttrDef": [
        ("name", 1, "string"), ("type", 2, "string"), ("default_value", 3, "AttrValue"),
        ("description", 4, "string"), ("has_minimum", 5, "bool"), ("minimum", 6, "int64"),
        ("allowed_values", 7, "AttrValue")],
    "OpList": [("op", 1, "OpDef", "repeated")],
    "SaverDef": [
        ("filename_tensor_name", 1, "string"), ("save_tensor_name", 2, "string"), ("restore_op_name", 3, "string"),
        ("max_to_keep", 4, "int32"), ("sharded", 5, "bool"), ("keep_checkpoint_every_n_hours", 6, "float"),
        ("version", 7, "SaverDef.CheckpointFormatVersion")],
    "CollectionDef": [
        ("node_list", 1, "CollectionDef.NodeList", "kind"), ("bytes_list", 2, "CollectionDef.BytesList", "kind"),
        ("int64_list", 3, "CollectionDef.Int64List", "kind"), ("float_list", 4, "CollectionDef.FloatList", "kind")],
    "CollectionDef.NodeList": [("value", 1, "string", "repeated")],
    "CollectionDef.BytesList": [("value", 1, "bytes", "repeated")],
    "CollectionDef.Int64List": [("value", 1, "int64", "repeated")],
    "CollectionDef.FloatList": [("value", 1, "float", "repeated")],
    "TensorInfo": [
        ("name", 1, "string", "encoding"), ("coo_sparse", 4, "TensorInfo.CooSparse", "encoding"),
        ("dtype", 2, "DataType"), ("tensor_shape", 3, "TensorShapeProto")],
    "TensorInfo.CooSparse": [
        ("values_tensor_name", 1, "string"), ("indices_tensor_name", 2, "string"),
        ("dense_shape_tensor_name", 3, "string")],
    "SignatureDef": [
        ("inputs", 1, "map<string,TensorInfo>"), ("outputs", 2, "map<string,TensorInfo>"),
        ("method_name", 3, "string"), ("defaults", 4, "map<string,TensorProto>")],
    "AssetFileDef": [("tensor_info", 1, "TensorInfo"), ("filename", 2, "string")],
    "MetaGraphDef": [
        ("meta_info_def", 1, "MetaGraphDef.MetaInfoDef"), ("graph_def", 2, "GraphDef"), ("saver_def", 3, "SaverDef"),
        ("collection_def", 4, "map<string,CollectionDef>"), ("signature_def", 5, "map<string,SignatureDef>"),
        ("asset_file_def", 6, "AssetFileDef", "repeated")],
    "MetaGraphDef.MetaInfoDef": [
        ("meta_graph_version", 1, "string"), ("stripped_op_list", 2, "OpList"), ("tags", 4, "string", "repeated"),
        ("tensorflow_version", 5, "string"), ("tensorflow_git_version", 6, "string"),
        ("stripped_default_attrs", 7, "bool"), ("function_aliases", 8, "map<string,string>")],
    "SaveSliceInfoDef": [("full_name", 1, "string"), ("full_shape", 2, "int64", "repeated"),
                         ("var_offset", 3, "int64", "repeated"), ("var_shape", 4, "int64", "repeated")],
    "VariableDef": [
        ("variable_name", 1, "string"), ("initial_value_name", 6, "string"), ("initializer_name", 2, "string"),
        ("snapshot_name", 3, "string"), ("save_slice_info_def", 4, "SaveSliceInfoDef"), ("is_resource", 5, "bool"),
        ("trainable", 7, "bool"), ("synchronization", 8, "int32"), ("aggregation", 9, "int32")],
    "QueueRunnerDef": [
        ("queue_name", 1, "string"), ("enqueue_op_name", 2, "string", "repeated"), ("close_op_name", 3, "string"),
        ("cancel_op_name", 4, "string"), ("queue_closed_exception_types", 5, "int32", "repeated")],
    "SavedModel": [("saved_model_schema_version", 1, "int64"), ("meta_graphs", 2, "MetaGraphDef", "repeated")],
}

FILE = builder.build("tensorweave/protos/meta_graph.proto", MESSAGES, ENUMS, dependencies=[framework.FILE.name])

OpDef = builder.message_class("OpDef")
OpList = builder.message_class("OpList")
SaverDef = builder.message_class("SaverDef")
CollectionDef = builder.message_class("CollectionDef")
TensorInfo = builder.message_class("TensorInfo")
SignatureDef = builder.message_class("SignatureDef")
AssetFileDef = builder.message_class("AssetFileDef")
MetaGraphDef = builder.message_class("MetaGraphDef")
SavedModel = builder.message_class("SavedModel")
SaveSliceInfoDef = builder.message_class("SaveSliceInfoDef")
VariableDef = builder.message_class("VariableDef")
QueueRunnerDef = builder.message_class("QueueRunnerDef")

__all__ = ["AssetFileDef", "CollectionDef", "MetaGraphDef", "OpDef", "OpList", "QueueRunnerDef", "SaveSliceInfoDef",
           "SavedModel", "SaverDef", "SignatureDef", "TensorInfo", "VariableDef"]
