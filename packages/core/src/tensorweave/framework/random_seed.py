"""Graph- and op-level random seeds, as TF1 combines them."""

__all__ = []
