"""Static shapes: known or unknown rank, each dimension known or unknown (TF1's TensorShape)."""


class Dimension:
    """One dimension; ``value`` is an int or None. Behaves like its int where known."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            try:
                value = int(value.__index__())
            except AttributeError:
                raise TypeError(f"dimension must be an int or None, got {value!r}") from None
            if value < 0:
                raise ValueError(f"dimension must be >= 0, got {value}")
        self._value = value

    @property
    def value(self):
        return self._value

    def __int__(self):
        if self._value is None:
            raise ValueError("unknown dimension has no int value")
        return self._value

    __index__ = __int__

    def __repr__(self):
        return f"Dimension({self._value})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __eq__(self, other):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value != other.value

    def __hash__(self):
        return hash(self._value)

    def _arith(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return as_dimension(other) - self

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __lt__(self, other):
        return None if self._value is None or as_dimension(other).value is None else self._value < as_dimension(other).value

    def __gt__(self, other):
        return None if self._value is None or as_dimension(other).value is None else self._value > as_dimension(other).value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def merge_with(self, other):
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"dimensions {self} and {other} are not compatible")
        return Dimension(self._value if self._value is not None else other.value)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim):
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """A possibly partial shape. ``dims`` is None for unknown rank."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            try:
                dims = list(dims)
            except TypeError:
                dims = [dims]  # a scalar int means a rank-1 shape, as in TF
            self._dims = tuple(None if dimension_value(d) is None else int(dimension_value(d)) for d in dims)
            if any(d is not None and d < 0 for d in self._dims):
                raise ValueError(f"shape {list(dims)} has a negative dimension; use None for unknown")

    @property
    def dims(self):
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __len__(self):
        if self._dims is None:
            raise ValueError("cannot take the length of a shape of unknown rank")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("cannot iterate over a shape of unknown rank")
        return iter(Dimension(d) for d in self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return TensorShape(None)
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on a shape of unknown rank")
        return list(self._dims)

    def as_tuple(self):
        """The dims as a tuple of int/None, or None for unknown rank."""
        return self._dims

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def admits(self, array_shape):
        """``is_compatible_with`` for a concrete shape (a tuple of ints, as an array's ``.shape``), building no
        TensorShape: the checks made on every run (feeds, TensorArray writes) use it."""
        dims = self._dims
        if dims is None:
            return True
        if len(dims) != len(array_shape):
            return False
        for d, n in zip(dims, array_shape):
            if d is not None and d != n:
                return False
        return True

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        self.assert_is_compatible_with(other)
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other):
        """The most specific shape both shapes are compatible with (for loop invariants)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank):
        if self._dims is None:
            return TensorShape([None] * rank)
        if len(self._dims) != rank:
            raise ValueError(f"shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"shape {self} must have rank at least {rank}")
        return self

    def assert_has_rank(self, rank):
        self.with_rank(rank)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"shape {self} is not fully defined")

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __reduce__(self):
        return TensorShape, (self._dims,)


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    return TensorShape(None if rank is None else [None] * rank)


def scalar():
    return TensorShape([])
