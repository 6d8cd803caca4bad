"""``python -m swath``: the same as the ``swath`` command."""

from swath.cli import run

if __name__ == "__main__":
    run()
