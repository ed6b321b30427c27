"""Variable initializers."""

__all__ = []
