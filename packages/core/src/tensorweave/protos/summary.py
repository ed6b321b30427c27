"""TensorFlow's summary and event protos: ``tf.Summary`` (with its Value, Image and Audio), SummaryMetadata,
HistogramProto, and ``tf.Event`` with LogMessage, SessionLog and TaggedRunMetadata: what an event file holds."""

from tensorweave.protos import builder, framework

ENUMS = {
    "DataClass": ["DATA_CLASS_UNKNOWN", "DATA_CLASS_SCALAR", "DATA_CLASS_TENSOR", "DATA_CLASS_BLOB_SEQUENCE"],
    "LogMessage.Level": {"UNKNOWN": 0, "DEBUGGING": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50},
    "SessionLog.SessionStatus": ["STATUS_UNSPECIFIED", "START", "STOP", "CHECKPOINT"],
}

MESSAGES = {
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
}

FILE = builder.build("tensorweave/protos/summary.proto", MESSAGES, ENUMS, dependencies=[framework.FILE.name])

HistogramProto = builder.message_class("HistogramProto")
SummaryDescription = builder.message_class("SummaryDescription")
SummaryMetadata = builder.message_class("SummaryMetadata")
Summary = builder.message_class("Summary")
LogMessage = builder.message_class("LogMessage")
SessionLog = builder.message_class("SessionLog")
TaggedRunMetadata = builder.message_class("TaggedRunMetadata")
SourceMetadata = builder.message_class("SourceMetadata")
Event = builder.message_class("Event")

__all__ = ["Event", "HistogramProto", "LogMessage", "SessionLog", "SourceMetadata", "Summary", "SummaryDescription",
           "SummaryMetadata", "TaggedRunMetadata"]
