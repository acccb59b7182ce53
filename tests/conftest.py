"""Helpers shared by the test modules (pytest puts this directory on sys.path, so a
module imports them with ``from conftest import time_limit``), the isolation of the
thread's gmpy2 precision between tests (:func:`_module_precision`), and the check that no
test leaves an ``MPVI_`` environment variable changed (:func:`_mpvi_environment`)."""
import os
import signal
from contextlib import contextmanager

import gmpy2
import pytest

_PRECISION = {}
"""The thread's gmpy2 context each test module left at its import (a copy), by path."""


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """Import each test module from gmpy2's default context and keep the context its
    module-level code left (a context created at the top of the module sets the bare
    precision of its tests): what the module would see if it were the only one."""
    module = isinstance(collector, pytest.Module)
    if module:
        caller = gmpy2.get_context()
        gmpy2.set_context(gmpy2.context())
    try:
        return (yield)
    finally:
        if module:
            _PRECISION[str(collector.path)] = gmpy2.get_context().copy()
            gmpy2.set_context(caller)


@pytest.fixture(autouse=True)
def _module_precision(request):
    """Start every test from the gmpy2 context its module left at import, whatever ran
    before in this process (another test's context would otherwise set the precision of
    this test's bare arithmetic: the order of tests, the files a worker of ``pytest -n``
    got, would change its numbers), and put the caller's back after it."""
    caller = gmpy2.get_context()
    saved = _PRECISION.get(str(request.node.path))
    gmpy2.set_context(saved.copy() if saved is not None else gmpy2.context())
    try:
        yield
    finally:
        gmpy2.set_context(caller)


@pytest.fixture(autouse=True)
def _mpvi_environment():
    """Fail a test that leaves an ``MPVI_`` environment variable other than it found it
    (``monkeypatch.setenv`` is undone before this check).  A leaked
    ``MPVI_COMPILE_AFTER=0`` (a benchmark's ``main`` run in-process set it) made every
    later test of that worker compile each kernel at its first call: the property test of
    tests/test_properties.py took 190 s instead of 25 whenever xdist gave it that worker."""
    before = {k: v for k, v in os.environ.items() if k.startswith("MPVI_")}
    yield
    after = {k: v for k, v in os.environ.items() if k.startswith("MPVI_")}
    if after != before:
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        for k in changed:                       # put it back: one failure, not a cascade
            if k in before:
                os.environ[k] = before[k]
            else:
                os.environ.pop(k, None)
        pytest.fail("the test left the environment changed: "
                    + ", ".join(f"{k}={after.get(k)!r} (was {before.get(k)!r})" for k in changed),
                    pytrace=False)


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
