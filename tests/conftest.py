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
