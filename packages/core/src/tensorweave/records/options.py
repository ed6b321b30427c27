"""``tf.io.TFRecordOptions`` and ``TFRecordCompressionType``: how a TFRecord file is compressed, and zlib's
settings when writing it (None: TensorFlow's defaults)."""

from tensorweave.records.compression import compression_type_string


class TFRecordCompressionType:
    """The compression types by number: NONE, ZLIB, GZIP."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """Options for writing (and the compression for reading) TFRecord files."""

    compression_type_map = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP"}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        compression_type_string(compression_type)  # refuses an unknown type now, not at the first write
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """'' | 'ZLIB' | 'GZIP' for options given as None, a TFRecordOptions, a type name or a type number."""
        if isinstance(options, TFRecordOptions):
            return compression_type_string(options.compression_type)
        return compression_type_string(options or None)

    def writer_arguments(self):
        """The keyword arguments of ``tensorweave.records.RecordWriter`` these options stand for."""
        return {"compression_type": compression_type_string(self.compression_type),
                "compression_level": self.compression_level, "window_bits": self.window_bits,
                "mem_level": self.mem_level, "compression_strategy": self.compression_strategy}

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def as_options(options):
    """``options`` (None, a type name or number, or TFRecordOptions) as TFRecordOptions."""
    return options if isinstance(options, TFRecordOptions) else TFRecordOptions(options or None)
