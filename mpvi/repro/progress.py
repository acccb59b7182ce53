"""A progress bar for long command-line runs (rich), shown only on a terminal.

When the stream is not a terminal (a pipe, a file, CI) the bar does nothing and the
run's progress lines are all there is; on a terminal those lines scroll above the bar.

The bar counts the units done of a total known from the plan, shows the elapsed time and
an estimate of the time left (ETA), and the step the running unit last reported
(:meth:`ProgressBar.step`).  The estimate is what the caller says is left when it
updates the bar (the recorded run times of what is still to run,
:mod:`mpvi.repro.runtimes`): ``remaining`` seconds of work not started and ``running``
seconds of the work under way, which counts down with the time since the update (never
below zero: a unit slower than measured holds the ETA at the rest).  The bar fills
with elapsed / (elapsed + ETA), so that it moves inside one long unit too; without an
estimate it fills with the units done and the ETA reads ``?``.
"""
from __future__ import annotations

import sys
import time


def eta(remaining, running, since):
    """The seconds left: ``remaining`` plus what is left of ``running`` after ``since``
    seconds (at least 0), or None if ``remaining`` is None."""
    if remaining is None:
        return None
    return remaining + max(0.0, (running or 0.0) - since)


def format_eta(seconds):
    """'ETA 0:42', 'ETA 1:02:03', or 'ETA ?' (None)."""
    if seconds is None:
        return "ETA ?"
    s = int(seconds + 0.5)
    h, m = divmod(s // 60, 60)
    return f"ETA {h}:{m:02d}:{s % 60:02d}" if h else f"ETA {m}:{s % 60:02d}"


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
        self._estimate = (None, None, time.perf_counter())   # remaining, running, when

    def __enter__(self):
        if self.enabled:
            # rich (terminal tables) loaded lazily: heavy, and only for a table on a terminal
            from rich.console import Console
            from rich.progress_bar import ProgressBar as Bar
            from rich.table import Column
            from rich.text import Text
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)
            bar = self

            class TimeBar(BarColumn):
                def render(self, task):
                    return Bar(total=1.0, completed=bar.fraction(task), width=self.bar_width,
                               pulse=False, animation_time=task.get_time())

            class Eta(TextColumn):
                def render(self, task):
                    return Text(format_eta(bar.seconds_left()))

            self._progress = Progress(
                TextColumn("[bold]{task.description}"), TimeBar(bar_width=24),
                MofNCompleteColumn(), TimeElapsedColumn(), Eta(""),
                TextColumn("{task.fields[label]}",          # one line: cut by _fit
                           table_column=Column(no_wrap=True, overflow="ellipsis")),
                console=Console(file=self.stream, force_terminal=True),
                redirect_stdout=True, redirect_stderr=True)
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total, label="")
        return self

    def seconds_left(self):
        """The ETA in seconds now (module docstring), or None if unknown."""
        remaining, running, when = self._estimate
        return eta(remaining, running, time.perf_counter() - when)

    def fraction(self, task):
        """How full the bar is: elapsed / (elapsed + ETA), else the units done."""
        left = self.seconds_left()
        elapsed = task.elapsed or 0.0
        if left is not None and elapsed + left > 0:
            return elapsed / (elapsed + left)
        return task.completed / task.total if task.total else 0.0

    def update(self, completed, total=None, label="", remaining=None, running=None):
        """``completed`` of ``total`` units done (``total`` may change as the run learns
        it); ``label``: what is running or just finished; ``remaining`` and ``running``:
        the seconds of work not started and under way (module docstring; None:
        unknown)."""
        self._estimate = (remaining, running, time.perf_counter())
        if self._progress is not None:
            self._progress.update(self._task, completed=completed, label=self._fit(label),
                                  **({"total": total} if total is not None else {}))

    def step(self, label):
        """The running unit reports a step: shown as the label, the counts unchanged."""
        if self._progress is not None:
            self._progress.update(self._task, label=self._fit(label))

    LABEL_AFTER = 62
    """The columns the bar takes before its label (the description, the bar, the counts,
    the elapsed time and the ETA): the label is cut to the rest of the line."""

    def _fit(self, label):
        room = max(8, self._progress.console.width - self.LABEL_AFTER)
        return label if len(label) <= room else label[:room - 1] + "\u2026"

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False


class StepStream:
    """The progress lines of a computation, as a text stream: each whole line is handed
    to ``bar.step`` (without its leading time stamp ``[   1.2 s]``) and otherwise
    dropped -- the default output of ``mpvi run``, where the lines themselves are shown
    only with ``--verbose``."""

    def __init__(self, bar, prefix=""):
        self.bar, self.prefix, self._pending = bar, prefix, ""

    def write(self, text):
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in filter(str.strip, lines):
            line = line.strip()
            if line.startswith("[") and "] " in line:
                line = line.split("] ", 1)[1]
            self.bar.step(line if line.startswith(self.prefix) else self.prefix + line)
        return len(text)

    def flush(self):
        pass
