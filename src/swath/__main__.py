"""``python -m swath``: the same as the ``swath`` command."""

from swath.cli import main

if __name__ == "__main__":
    main(prog_name="swath")
