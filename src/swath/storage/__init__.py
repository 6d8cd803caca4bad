"""Zarr store layouts: databases, results, boundary buffers, traceback bytes."""
