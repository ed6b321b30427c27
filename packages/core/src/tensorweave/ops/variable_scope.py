"""get_variable and variable_scope."""

__all__ = []
