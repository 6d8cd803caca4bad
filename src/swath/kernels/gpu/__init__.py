"""GPU kernels (CuPy, CUDA C sources beside this file).

Importing this package never needs a GPU; the kernels compile on first use.
"""
