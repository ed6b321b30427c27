"""The protocol buffers the dashboard reads and writes (Event, Summary, HistogramProto, TensorProto, GraphDef,
RunMetadata...): the core's (``tensorweave.protos``), which ``tf.Summary`` and ``tf.Event`` are too."""

from tensorweave.protos.framework import (  # noqa: F401
    DATA_TYPES, AttrValue, DeviceStepStats, GraphDef, NameAttrList, NodeDef, NodeExecStats, RunMetadata, StepStats,
    TensorProto, TensorShapeProto, VersionDef,
)
from tensorweave.protos.summary import (  # noqa: F401
    Event, HistogramProto, LogMessage, SessionLog, SourceMetadata, Summary, SummaryDescription, SummaryMetadata,
    TaggedRunMetadata,
)

__all__ = ["AttrValue", "DATA_TYPES", "DeviceStepStats", "Event", "GraphDef", "HistogramProto", "LogMessage",
           "NameAttrList", "NodeDef", "NodeExecStats", "RunMetadata", "SessionLog", "SourceMetadata", "StepStats",
           "Summary", "SummaryDescription", "SummaryMetadata", "TaggedRunMetadata", "TensorProto", "TensorShapeProto",
           "VersionDef"]
