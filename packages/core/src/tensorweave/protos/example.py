"""TensorFlow's ``tf.train.Example`` protos (tensorflow/core/example/{feature,example}.proto): an Example maps
feature names to lists of bytes, floats or int64s; a SequenceExample adds lists of such features over time."""

from tensorweave.protos import builder

MESSAGES = {
    "BytesList": [("value", 1, "bytes", "repeated")],
    "FloatList": [("value", 1, "float", "repeated")],
    "Int64List": [("value", 1, "int64", "repeated")],
    "Feature": [("bytes_list", 1, "BytesList", "kind"), ("float_list", 2, "FloatList", "kind"),
                ("int64_list", 3, "Int64List", "kind")],
    "Features": [("feature", 1, "map<string,Feature>")],
    "FeatureList": [("feature", 1, "Feature", "repeated")],
    "FeatureLists": [("feature_list", 1, "map<string,FeatureList>")],
    "Example": [("features", 1, "Features")],
    "SequenceExample": [("context", 1, "Features"), ("feature_lists", 2, "FeatureLists")],
}

FILE = builder.build("tensorweave/protos/example.proto", MESSAGES)

BytesList = builder.message_class("BytesList")
FloatList = builder.message_class("FloatList")
Int64List = builder.message_class("Int64List")
Feature = builder.message_class("Feature")
Features = builder.message_class("Features")
FeatureList = builder.message_class("FeatureList")
FeatureLists = builder.message_class("FeatureLists")
Example = builder.message_class("Example")
SequenceExample = builder.message_class("SequenceExample")

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features", "FloatList", "Int64List",
           "SequenceExample"]
