"""The engine: turns a job into a Dask graph and runs it on a client (see DESIGN.md);
its progress reports: :mod:`swath.progress`."""
