"""swath's version, one place for the package (``swath.__version__``) and the stores that
record which swath wrote them."""

__version__ = "0.1.0"
