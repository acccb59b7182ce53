"""``python -m mpvi``: the ``mpvi`` command (:func:`mpvi.repro.cli.main`).

Not part of the library: ``import mpvi`` never loads this module, so the library does not
import the reproduction framework (tests/test_layers.py, tests/test_layering.py)."""
import sys

from mpvi.repro.cli import main

if __name__ == "__main__":
    sys.exit(main())
