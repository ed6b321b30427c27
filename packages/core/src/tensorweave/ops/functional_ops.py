"""scan, map_fn, foldl and foldr, built on while_loop."""

__all__ = []
