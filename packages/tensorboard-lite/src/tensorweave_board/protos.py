"""The protocol buffers the dashboard reads and writes (Event, Summary, HistogramProto, TensorProto, GraphDef,
RunMetadata...): the core's (``tensorweave.protos``), which ``tf.Summary`` and ``tf.Event`` are too."""

from tensorweave.extension import framework_protos, summary_protos

_FRAMEWORK = ("DATA_TYPES", "AttrValue", "DeviceStepStats", "GraphDef", "NameAttrList", "NodeDef", "NodeExecStats",
              "RunMetadata", "StepStats", "TensorProto", "TensorShapeProto", "VersionDef")
_SUMMARY = ("Event", "HistogramProto", "LogMessage", "SessionLog", "SourceMetadata", "Summary", "SummaryDescription",
            "SummaryMetadata", "TaggedRunMetadata")
globals().update({name: getattr(framework_protos, name) for name in _FRAMEWORK})
globals().update({name: getattr(summary_protos, name) for name in _SUMMARY})

__all__ = sorted(_FRAMEWORK + _SUMMARY)
