"""Numpy kernels, one module per op family."""
