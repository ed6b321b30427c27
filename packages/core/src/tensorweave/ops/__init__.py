"""Op families: each module keeps its op definitions, shape functions, gradients and Python wrappers."""
