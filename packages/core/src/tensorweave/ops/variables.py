"""tf.Variable and the variable collections and initializers."""

__all__ = []
