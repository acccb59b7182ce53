"""The command-line options shared by ``mpvi run`` and a script run on its own
(``python reproductions/<paper>/<id>.py``): the number context and digits, the results
directory, ``--check-digits``, ``--certify``, the cache; and the one-line error message.
Below :mod:`mpvi.repro.run` (whose :func:`mpvi.repro.run.script_main` uses them) and
:mod:`mpvi.repro.cli`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpvi.ground import io
from mpvi.numbers.context import MAX_DPS
from mpvi.repro import cache as _cache
from mpvi.repro import digits as _digits
from mpvi.repro.declare import DEFAULT_CONTEXT

def open_cache(args):
    """The cache of ``--cache DIR`` / ``--no-cache`` (default :func:`mpvi.repro.cache.default_directory`):
    None with ``--no-cache``.  A directory that exists but cannot be written is opened
    read-only, one that cannot be created gives None (no cache); either is reported in one
    line naming the directory and the OS error, and neither stops the run."""
    if args.no_cache:
        return None
    directory = Path(args.cache or _cache.default_directory())
    try:
        return _cache.DiskCache(io.check_writable(directory, "cache directory"))
    except OSError as exc:
        if directory.is_dir():
            _cache.warn(f"{exc}; studies are read from it, new results are not stored")
            return _cache.DiskCache(directory, writable=False)
        _cache.warn(f"{exc}; running without a cache")
        return None


def add_note(exc, note):
    """Add ``note`` to ``exc`` as ``BaseException.add_note`` does (Python 3.11+); on Python
    3.10, which has no ``add_note``, the same ``__notes__`` list, which :func:`one_line`
    reads."""
    if sys.version_info >= (3, 11):
        exc.add_note(note)
    else:
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]


def one_line(exc):
    """An exception's message and its notes (``add_note``) on one line."""
    text = " ".join([str(exc), *getattr(exc, "__notes__", [])])
    return " ".join(text.split()) or "(no message)"


def add_run_options(ap):
    ap.add_argument("--dps", type=digits, default=64,
                    help=f"significant digits of the gmp and mp contexts (default 64, at "
                         f"least {MIN_DPS}; ignored by fp)")
    ap.add_argument("--context", choices=["gmp", "mp", "fp"], default=DEFAULT_CONTEXT,
                    help="number context: gmp (gmpy2 numbers and generated kernels, --dps "
                         "digits; the default), mp (the mpmath reference, --dps digits) or fp "
                         "(float64).  gmp and mp outputs agree to 1e-40 relative (numbers "
                         "below 1e-50 to 1e-50 absolute): benchmarks/compare_outputs.py")
    ap.add_argument("--quick", action="store_true",
                    help="smaller parameter set (fewer steps) for a fast check; written to "
                         "quick-figures/ unless --results is given")
    add_results_option(ap, "output directory (default: figures/ of the source checkout, "
                           "quick-figures/ with --quick); checked writable before computing")
    ap.add_argument("--check-digits", action="store_true",
                    help=f"also run with {_digits.CHECK_EXTRA} more digits and record, per "
                         f"output column and per compared value, how many digits the two "
                         f"runs agree on (provenance entry digits_check; shown by mpvi diff "
                         f"and mpvi report); about doubles the run time; gmp and mp only")
    ap.add_argument("--certify", action="store_true",
                    help="also prove the digits of every column and compared value the "
                         "reproduction can certify (Arb ball arithmetic: mpvi.certify and "
                         "the enclosed exact references; provenance entry certified, shown "
                         "by mpvi diff); the others are listed with why not; gmp and mp only")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--cache", type=Path, default=None, metavar="DIR",
                       help="cache directory of the shared studies (default: .mpvi-cache/ "
                            "of the source checkout, else ~/.cache/mpvi); one that cannot "
                            "be written is only read, one that cannot be created is not "
                            "used (with a warning)")
    group.add_argument("--no-cache", action="store_true",
                       help="compute every study, neither reading nor writing the cache")


def add_results_option(ap, help, alias=True):
    """``--results DIR``: the one name of the results directory in every command (where
    ``mpvi run`` writes, where ``diff``, ``list`` and ``report`` read); ``alias``: also
    accept ``--out DIR``, its former name for ``run`` and ``diff``, with a notice."""
    ap.add_argument("--results", type=Path, default=None, metavar="DIR", help=help)
    if alias:
        ap.add_argument("--out", type=Path, dest="results", action=DeprecatedAlias,
                        help=argparse.SUPPRESS)


class DeprecatedAlias(argparse.Action):
    """An option's former name: sets the same destination, with a one-line notice on
    stderr naming the option to use."""

    def __call__(self, parser, namespace, values, option_string=None):
        new = "--" + self.dest.replace("_", "-")
        print(f"{parser.prog}: {option_string} is deprecated, use {new} (the same option)",
              file=sys.stderr, flush=True)
        setattr(namespace, self.dest, values)


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


MIN_DPS = 10
"""The fewest digits ``--dps`` accepts.  The published values have 3-4 digits and the
convergence orders come from differences of errors, so fewer digits give meaningless
outputs (``--dps 1`` wrote ``8.e-2``); float64 is ``--context fp``."""


def digits(text):
    """``--dps``: an integer from :data:`MIN_DPS` to :data:`mpvi.numbers.context.MAX_DPS`."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of digits, got {text!r}") from None
    if v < MIN_DPS:
        raise argparse.ArgumentTypeError(f"expected at least {MIN_DPS} digits, got {v} (for "
                                         f"float64 use --context fp)")
    if v > MAX_DPS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_DPS} digits, got {v}")
    return v
