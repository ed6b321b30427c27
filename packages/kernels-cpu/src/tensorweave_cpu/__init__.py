"""tensorweave-kernels-cpu: CPU devices and numpy kernels (plus native C++ ones) for the core's ops."""

__version__ = "0.1.0"
