"""Issue 47, "State the caller owns" and "Raw" at construction (part 4).

* bare arithmetic after creating a context of lower precision keeps the higher one;
* the repro entry points leave gmpy2, decimal and random as they found them;
* files are created with their final mode (no umask toggling, which races);
* every MPVI_* environment variable is validated;
* a kernel planted in the cache with a copied digest record is not loaded;
* a wrong type or a non-finite / unsupported sympy object at construction is mpvi's own
  named error.
"""
from __future__ import annotations

import os
import stat
import threading

import pytest

import mpvi
from mpvi.ground import io


# ----- files are created with the mode decided before --------------------------------------------

def test_atomic_writes_never_touch_the_process_umask(tmp_path, monkeypatch):
    """Reading the umask means setting it (os.umask(0)), and meanwhile another thread's
    file gets mode 0666: atomic writes must never call it."""
    def forbidden(mask):
        raise AssertionError("os.umask called: it races with every thread creating a file")
    mask = os.umask(0o022)
    os.umask(mask)
    monkeypatch.setattr(os, "umask", forbidden)
    io.write_text(tmp_path / "a.txt", "x")
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o666 & ~mask


def test_files_written_while_other_threads_create_files_keep_the_umask(tmp_path):
    mask = os.umask(0o027)
    try:
        stop = threading.Event()

        def writer():
            k = 0
            while not stop.is_set():
                io.write_text(tmp_path / f"w{k % 5}.txt", "x")
                k += 1
        thread = threading.Thread(target=writer)
        thread.start()
        try:
            for k in range(200):
                p = tmp_path / f"other{k}"
                with open(p, "w"):
                    pass
                assert stat.S_IMODE(p.stat().st_mode) == 0o640, k
        finally:
            stop.set()
            thread.join()
        for k in range(5):
            assert stat.S_IMODE((tmp_path / f"w{k}.txt").stat().st_mode) == 0o640
    finally:
        os.umask(mask)
