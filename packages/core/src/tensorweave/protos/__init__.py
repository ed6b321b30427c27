"""TensorFlow's protocol buffers (Event, Summary, TensorProto, GraphDef, Example, ...), built from field tables
at import, so no protoc step is needed: ``builder`` is the mechanism, each other module one family of messages.

Names, field numbers and types are TensorFlow's (package ``tensorflow``), so the bytes are what TensorFlow,
TensorBoard and tensorboardX write and read. The classes live in a private descriptor pool, so they never clash
with another library's copy of the same protos. These modules import only protobuf and the standard library.
"""
