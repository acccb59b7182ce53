"""Helpers shared by the test modules (pytest puts this directory on sys.path, so a
module imports them with ``from conftest import time_limit``)."""
import signal
from contextlib import contextmanager


@contextmanager
def time_limit(seconds):
    """Fail with TimeoutError (instead of hanging the suite) if the block runs longer than
    ``seconds``.  A SIGALRM: it interrupts Python code between two operations of gmpy2 or
    mpmath, not inside one."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s (a hang)")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def replace_in_framework(monkeypatch, name, value):
    """Replace the function ``name`` of the reproduction framework (e.g.
    ``all_reproductions`` of :mod:`mpvi.repro.declare`, ``reproduction_packages`` of
    :mod:`mpvi.repro.packages`) by ``value`` in the module that defines it and in every
    module of mpvi/repro/ that imported it (each binds the name at its top)."""
    import sys
    import mpvi.repro.cli  # noqa: F401  (every module of the framework loaded)
    modules = [m for n, m in sorted(sys.modules.items()) if n.startswith("mpvi.repro")]
    original = {getattr(m, name) for m in modules if callable(getattr(m, name, None))}
    assert len(original) == 1, f"{name}: not one function of the framework"
    for module in modules:
        if getattr(module, name, None) in original:
            monkeypatch.setattr(module, name, value)
