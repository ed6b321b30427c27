"""Python operators on tensors (+ - * / // % ** @, comparisons, indexing)."""

__all__ = []
