"""TF1's error classes (``tf.errors.*``), each carrying the op it concerns."""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """Base class of runtime errors; ``node_def``/``op`` name where it happened."""

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message="", error_code=None):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (type(self), (self.node_def, None, self.message))


def _make(name, code, doc):
    cls = type(name, (OpError,), {"error_code": code, "__doc__": doc})
    cls.__module__ = __name__
    return cls


CancelledError = _make("CancelledError", CANCELLED, "A step or operation was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An error with no better class.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT, "An argument was invalid.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline passed.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "Something requested was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "Not permitted.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED, "Out of a resource (memory, quota).")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state to run it (e.g. an uninitialized variable).")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted (a peer failed, a conflict).")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE, "Iterated past the valid range (e.g. a closed, drained queue).")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "The operation is not supported here.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant broke.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "A service or peer is unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "Missing credentials.")

_CODE_TO_CLASS = {cls.error_code: cls for cls in OpError.__subclasses__()}


def exception_type_from_error_code(code):
    return _CODE_TO_CLASS[code]


def error_code_from_exception_type(cls):
    return cls.error_code
