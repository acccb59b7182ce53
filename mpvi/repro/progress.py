"""A progress bar for long command-line runs (rich), shown only on a terminal.

When the stream is not a terminal (a pipe, a file, CI) the bar does nothing and the
run's progress lines are all there is; on a terminal those lines scroll above the bar.
"""
from __future__ import annotations

import sys


class ProgressBar:
    """``with ProgressBar(total, "mpvi run") as bar: ... bar.update(done, label=...)``.

    ``enabled`` defaults to whether ``stream`` (stderr) is a terminal.  While the bar is
    shown, rich redirects ``sys.stdout`` and ``sys.stderr`` so that lines printed by the
    run appear above it."""

    def __init__(self, total, description, stream=None, enabled=None):
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) if enabled is None else enabled
        self.total, self.description = total, description
        self._progress = self._task = None

    def __enter__(self):
        if self.enabled:
            # rich (terminal tables) loaded lazily: heavy, and only for a table on a terminal
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)
            self._progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TextColumn("{task.fields[label]}"),
                console=Console(file=self.stream, force_terminal=True),
                redirect_stdout=True, redirect_stderr=True)
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total, label="")
        return self

    def update(self, completed, total=None, label=""):
        """``completed`` of ``total`` units done (``total`` may change as the run learns
        it); ``label``: what is running or just finished."""
        if self._progress is not None:
            self._progress.update(self._task, completed=completed, label=label,
                                  **({"total": total} if total is not None else {}))

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False
