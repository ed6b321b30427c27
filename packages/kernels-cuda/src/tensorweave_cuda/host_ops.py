"""Ops the CPU package covers that have no GPU kernel on purpose, with the reason: the placer keeps them on the
host and the partitioner copies their values to and from the GPU. The coverage test holds every other CPU op
to having a GPU kernel."""

_QUEUES = "a queue holds host tensors in Python structures (TF keeps queues on the CPU as well)"
_IO = "files, readers, checkpoints and strings are host I/O"
_LISTS = "holds a Python list of tensors and formats or checks values on the host"
_RANDOM = ("draws from the node's seeded numpy stream, so a seeded graph gives the same numbers whichever device "
           "consumes them; the values are copied to the GPU")

HOST_OPS = {
    **dict.fromkeys(["FIFOQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2", "RandomShuffleQueueV2", "QueueCloseV2",
                     "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueDequeueV2", "QueueEnqueueManyV2",
                     "QueueEnqueueV2", "QueueIsClosedV2", "QueueSizeV2"], _QUEUES),
    **dict.fromkeys(["ConditionalAccumulator", "SparseConditionalAccumulator", "AccumulatorApplyGradient",
                     "AccumulatorTakeGradient", "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
                     "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient"],
                    "a gradient accumulator holds host tensors and waiting takes in Python structures, as a queue"),
    **dict.fromkeys(["FixedLengthRecordReaderV2", "IdentityReaderV2", "TextLineReaderV2", "TFRecordReaderV2",
                     "WholeFileReaderV2",
                     "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderReadUpToV2",
                     "ReaderReadV2", "ReaderResetV2", "MergeV2Checkpoints", "RestoreV2", "SaveV2", "ReadFile",
                     "WriteFile", "ShardedFilename", "StringJoin", "StaticRegexFullMatch"], _IO),
    **dict.fromkeys(["ParseExample", "ParseSingleExample", "ParseSingleSequenceExample", "DecodeRaw", "DecodeCSV"],
                    "decodes serialized protos, bytes and CSV text (host strings) with protobuf and Python; the "
                    "numbers it makes are copied to the GPU (TF parses on the CPU as well)"),
    **dict.fromkeys(["Assert", "Print", "PrintV2", "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2",
                     "TensorArrayV3", "TensorArrayCloseV3", "TensorArrayConcatV3", "TensorArrayGatherV3",
                     "TensorArrayGradV3", "TensorArrayReadV3", "TensorArrayScatterV3", "TensorArraySizeV3",
                     "TensorArraySplitV3", "TensorArrayWriteV3"], _LISTS),
    **dict.fromkeys(["RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal", "RandomGamma",
                     "RandomPoisson", "RandomPoissonV2", "RandomShuffle", "Multinomial"], _RANDOM),
    **dict.fromkeys(["UniformCandidateSampler", "LogUniformCandidateSampler", "ComputeAccidentalHits"],
                    "candidate sampling draws and matches ids on the host (CPU-only in TF as well)"),
    **dict.fromkeys(["TensorDataset", "TensorSliceDataset", "RangeDataset", "GeneratorDataset", "TextLineDataset",
                     "FixedLengthRecordDatasetV2", "TFRecordDataset", "ZipDataset", "ConcatenateDataset",
                     "RepeatDataset", "TakeDataset", "SkipDataset", "CacheDataset", "ShuffleDataset",
                     "ShuffleAndRepeatDataset", "PrefetchDataset", "BatchDatasetV2", "PaddedBatchDatasetV2",
                     "UnbatchDataset", "MapDataset", "ParallelMapDataset", "FilterDataset", "FlatMapDataset",
                     "InterleaveDataset", "ParallelInterleaveDatasetV2", "MapAndBatchDataset", "IteratorV2",
                     "OneShotIterator", "MakeIterator", "IteratorGetNext", "IteratorToStringHandle",
                     "IteratorFromStringHandleV2"],
                    "a tf.data pipeline is host code (Python iterators, files, background threads; TF runs it on the "
                    "CPU as well); the elements IteratorGetNext hands out are copied to the GPU that consumes them"),
    "MatchingFiles": _IO,
    **dict.fromkeys(["DecodeJpeg", "DecodePng", "DecodeGif", "DecodeBmp", "DecodeImage", "EncodeJpeg", "EncodePng"],
                    "image codecs run in host libraries (libjpeg-turbo, zlib) on encoded strings; the decoded "
                    "pixels are copied to the GPU"),
    **dict.fromkeys(["Cholesky", "MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "MatrixSolve",
                     "MatrixTriangularSolve", "MatrixSolveLs", "Svd", "SelfAdjointEigV2", "Lu"],
                    "the batched decompositions and solves run on the host's LAPACK (numpy.linalg), which serves "
                    "the small matrices models use them for; cuSOLVER kernels are not written yet"),
    **dict.fromkeys(["Lgamma", "Digamma", "Polygamma", "Erf", "Erfc"],
                    "the special functions come from scipy.special on the host; cupyx.scipy.special kernels are "
                    "not written yet"),
    **dict.fromkeys(["SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd", "UnsortedSegmentMax",
                     "UnsortedSegmentMin", "UnsortedSegmentProd"],
                    "these segment reductions use numpy's ufunc.at on the host; only the segment sums have GPU "
                    "kernels (atomics) so far"),
    **dict.fromkeys(["CTCLoss", "CTCGreedyDecoder", "CTCBeamSearchDecoder"],
                    "CTC's forward-backward recursion and the greedy decoder loop over time steps and examples in "
                    "Python on the host (TF's CPU kernels are sequential as well; TF's GPU CTC needs cuDNN)"),
    "LinSpace": "a short sequence computed once from host scalars (usually folded while building); copied over",
    "_FusedElementwise": ("made by the elementwise-fusion pass only for device types that have a fused kernel; "
                          "GPU ops run unfused"),
    **dict.fromkeys(["PyFunc", "PyFuncStateless"],
                    "calls a Python function on host numpy arrays while holding the GIL (CPU-only in TF as well)"),
    **dict.fromkeys(["SparseToDense", "SparseTensorDenseMatMul", "SparseTensorDenseAdd", "SparseAdd", "SparseAddGrad",
                     "SparseReduceSum", "SparseReduceSumSparse", "SparseSoftmax", "SparseConcat", "SparseReshape",
                     "SparseReorder", "SparseFillEmptyRows", "SparseFillEmptyRowsGrad"],
                    "sparse-tensor kernels sort and merge index rows with numpy's set routines on the host; their "
                    "dense results are copied to the GPU that consumes them"),
    "StringSplit": _IO,
}
"""op type -> why it stays on the host."""
