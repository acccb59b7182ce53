"""Text that fits the terminal: the width of ``mpvi``'s output, lines wrapped at it, tables
whose cells wrap or end in an ellipsis, and help text within :data:`HELP_COLUMNS`.

The width is the terminal's (``COLUMNS`` first, then the terminal's size, 80 off a
terminal: :func:`shutil.get_terminal_size`), never less than :data:`MIN_COLUMNS`.
Every line ``mpvi`` prints goes through :func:`wrap`, :func:`fit_table` or a
:class:`WrappedStream`, so that no line is wider.
"""
from __future__ import annotations

import argparse
import shutil
import textwrap

MIN_COLUMNS = 40
"""The narrowest width laid out for: a narrower terminal gets lines of this width."""

HELP_COLUMNS = 80
"""``--help`` text is at most this wide (narrower on a narrower terminal)."""

ELLIPSIS = "\u2026"


def terminal_width():
    """The width of the terminal (``COLUMNS``, else the terminal's size, else 80), at
    least :data:`MIN_COLUMNS`."""
    return max(MIN_COLUMNS, shutil.get_terminal_size().columns)


def wrap(text, width, indent="  "):
    """``text`` (one or more lines) with every line broken at words to at most ``width``
    columns, continuation lines indented by ``indent``; a word longer than a line (a
    path) is broken anywhere."""
    out = []
    for line in text.splitlines() or [""]:
        lead = line[:len(line) - len(line.lstrip())]
        out += textwrap.wrap(line, width, subsequent_indent=lead + indent,
                             break_on_hyphens=False) or [""]
    return "\n".join(out)


def cut(text, width):
    """``text`` if it has at most ``width`` characters, else its first ones and an
    ellipsis, ``width`` in all."""
    return text if len(text) <= width else text[:max(0, width - 1)] + ELLIPSIS


def fit_table(rows, width, right=(), truncate=(), keep=(), min_cell=8):
    """Rows of strings as aligned text columns (one space apart, the last column not
    padded) of at most ``width`` columns.

    When the natural widths do not fit, the columns in ``truncate`` are narrowed first
    to twice ``min_cell`` (their cells end in an ellipsis), then the widest of the
    others, one column at a time, down to ``min_cell`` or their longest word (their
    cells wrap at words onto further lines of their row), and last the columns in
    ``truncate`` down to ``min_cell``; the columns in ``keep`` are never narrowed.  Columns in ``right`` are
    right-justified.  A table that fits is the same text as without a width; a line
    that still does not fit (too many columns for the width) ends in an ellipsis.

    Parameters
    ----------
    rows : list of sequences of str
        The header first, then the rows; all of the same length.
    width : int
        The most columns a line may have.
    right, truncate, keep : collections of int
        Column indices: right-justified; cut with an ellipsis rather than wrapped (and
        narrowed first); never narrowed.
    min_cell : int
        The narrowest a column is made (or its longest word, if longer: words are not
        broken).

    Returns
    -------
    str
        The lines, joined by newlines; none longer than ``width``.
    """
    n = len(rows[0])
    widths = [max(len(row[k]) for row in rows) for k in range(n)]
    def cut_columns(least):
        for k in truncate:
            widths[k] = max(min(widths[k], least), widths[k] - (sum(widths) + n - 1 - width))

    cut_columns(2 * min_cell)                   # first to twice the narrowest,
    floor = [min(widths[k], max([min_cell] + [len(w) for row in rows for w in row[k].split()]))
             for k in range(n)]                 # a word is not broken
    narrow = [i for i in range(n) if i not in keep and i not in truncate]
    while sum(widths) + n - 1 > width:
        left = [i for i in narrow if widths[i] > floor[i]]
        if not left:
            break
        k = max(left, key=lambda i: (widths[i], i))
        second = max((widths[i] for i in left if i != k), default=0)
        target = max(floor[k], widths[k] - (sum(widths) + n - 1 - width), second)
        widths[k] = target if target < widths[k] else widths[k] - 1
    cut_columns(min_cell)                       # then, if the others are at their floor, on
    lines = []
    for row in rows:
        cells = [[cut(c, w)] if k in truncate or len(c) <= w else
                 textwrap.wrap(c, w, break_on_hyphens=False) or [""]
                 for k, (c, w) in enumerate(zip(row, widths))]
        for i in range(max(map(len, cells))):
            parts = [(c[i] if i < len(c) else "") for c in cells]
            text = " ".join(p.rjust(w) if k in right else p.ljust(w)
                            for k, (p, w) in enumerate(zip(parts[:-1], widths)))
            lines.append(cut((text + " " + parts[-1]).rstrip(), width))
    return "\n".join(lines)


class WrappedStream:
    """A text stream that writes whole lines to ``stream``, each wrapped at ``width``
    (:func:`wrap`): for the lines a computation prints (progress, summaries)."""

    def __init__(self, stream, width):
        self.stream, self.width, self._pending = stream, width, ""

    def write(self, text):
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self.stream.write(wrap(line, self.width) + "\n")
        return len(text)

    def flush(self):
        if self._pending:
            self.stream.write(wrap(self._pending, self.width))
            self._pending = ""
        self.stream.flush()

    def isatty(self):
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())


class HelpFormatter(argparse.HelpFormatter):
    """``--help`` at most :data:`HELP_COLUMNS` wide (or the terminal's width, if
    narrower).  The description and epilog keep their paragraphs (blank lines) and the
    lines of an indented block (a table of messages), wrapped at the width; other
    paragraphs are filled."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:
            width = min(HELP_COLUMNS, terminal_width()) - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text, width, indent):
        paragraphs = []
        for para in text.split("\n\n"):
            out, prose = [], []
            for line in para.splitlines() + [" "]:
                if not line.startswith(" "):
                    prose.append(line)
                    continue
                if prose:                                # the lines of prose so far: filled
                    out.append(textwrap.fill(" ".join(" ".join(prose).split()), width,
                                             initial_indent=indent, subsequent_indent=indent,
                                             break_on_hyphens=False))
                    prose = []
                if line.strip():                         # an indented line: kept, wrapped
                    out.append(wrap(indent + line, width + len(indent)))
            paragraphs.append("\n".join(out))
        return "\n\n".join(paragraphs)
