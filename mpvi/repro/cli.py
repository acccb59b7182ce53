"""The ``mpvi`` command: list, run, diff, verify and report the reproductions.

Outputs are read through :func:`mpvi.repro.records.read_provenance`: an id whose provenance
JSON is unreadable or of the wrong shape, or whose files do not match the digests it
records (an interrupted run), is one line ``mpvi: <id>: ...; rerun `mpvi run <id>```
and exit status 2 -- ``diff`` and ``report`` compare and show nothing then, ``list``
lists it as INVALID.  Malformed published data is one line per problem, exit status 2.
A closed stdout (``mpvi diff | head -1``) ends the command quietly with the status of a
Unix tool killed by SIGPIPE, :data:`BROKEN_PIPE`.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import decimal
import difflib
import io as _io
import json
import os
import random
import shutil
import signal
import sys
import threading
import textwrap
import time
from pathlib import Path

import gmpy2
import mpmath
import numpy as np

from mpvi import __version__
from mpvi.compiled import cbackend
from mpvi.ground.io import DirectoryError, check_writable
from mpvi.repro.declare import (Refused, all_reproductions, default_out_dir, output_paths,
                                project_path, unknown_id)
from mpvi.repro.options import (add_results_option, add_run_options, one_line, open_cache,
                                positive_int)
from mpvi.repro.packages import PluginError
from mpvi.repro.parallel import ExecutorError, make_executor, run_parallel
from mpvi.repro.progress import ProgressBar, StepStream
from mpvi.repro.published import (RECORD_FIELDS, STATUSES, PublishedDataError, certified_line,
                                  count_line, describe_outputs, diff, format_certified,
                                  format_diff, records, rule, short_number)
from mpvi.repro.records import OutputError, carried_note, read_provenance, read_records
from mpvi.repro.report import ReportError, compute_time, count_statuses, write_report
from mpvi.repro.run import execute, verify_results
from mpvi.repro.runtimes import Runtimes
from mpvi.repro.terminal import HelpFormatter, WrappedStream, fit_table, terminal_width, wrap

BROKEN_PIPE = 141
"""Exit status when the reader of stdout has gone: 128 + SIGPIPE, as the shell reports a
Unix tool killed by SIGPIPE (``set -o pipefail`` then sees it)."""

RUN_EPILOG = """\
Outputs go to figures/ (full runs) or quick-figures/ (--quick) at the root of the source
checkout unless --results is given; the directory is created and checked writable before
any computation.  Studies (the references of Figs. 2-3, the long runs of Tables 4-5,
convergence sweeps) are cached on disk, keyed by their parameters, the context and the
mpvi version and a fingerprint of its source: a second reproduction using the same
study, or a rerun, reads it back (--cache DIR, --no-cache).  The JSON provenance records
from_cache and the wall time of the original computation.  An entry that fails its
checks (format, identity, SHA-256 digest of its content, a value that decodes) is
reported on one line and recomputed; a cache directory that cannot be written is only
read, one that cannot be created is not used (one line each).

Parallel runs: --jobs N computes on N worker processes of this machine, --scheduler
ADDRESS on a Dask cluster (tcp://host:8786; "local" starts one here with --jobs workers,
default one per CPU; needs the dask extra: pip install -e '.[dask]').  The independent
runs the reproductions declare (step sizes, spans, methods) are computed first, the
head of the longest chain (a run and the costliest reproduction waiting for it) first,
then each reproduction's tables and plot; one line per finished
unit with --verbose.  The files are the same bytes as those of a serial run.  Ctrl-C
(exit status 130) or SIGTERM (143) stops the workers too, and they die with a killed
mpvi run; a scheduler address where nothing listens fails at once (exit status 2); a
scheduler that goes away during the run, or a cluster left without workers for 20 s,
stops it in one line (exit status 1), keeping what finished.

Output on stderr: a start line and one line per finished reproduction (and a progress
bar on a terminal); --verbose (-v) also every task and the progress lines of each
computation, --quiet (-q) only errors, refusals and the summary.

Each id either runs, is refused, or fails; the run always goes on with the next id:
  <id>: refused in <context>: <reason>
      the reproduction declared, before computing, that it cannot run in that
      number context
  <id>: error: <Type>: <message>
      any other error, on one line

Refusals and failures are listed again at the end.  Exit status: 0 if every id ran,
1 if any id failed, 3 if none failed but some were refused (nothing was computed for
them), 2 for a bad option, an unwritable --results, or malformed published data."""


MAX_JOBS_PER_CPU = 4
"""``--jobs`` accepts at most this many workers per CPU of this machine (a pool of forked
workers starts them all at once; more than one per CPU only adds waiting)."""


def job_count(text):
    """``--jobs``: a positive integer of at most :data:`MAX_JOBS_PER_CPU` per CPU."""
    n = positive_int(text)
    limit = MAX_JOBS_PER_CPU * (os.cpu_count() or 1)
    if n > limit:
        raise argparse.ArgumentTypeError(f"expected at most {limit} ({MAX_JOBS_PER_CPU} per "
                                         f"CPU of this machine), got {n}")
    return n


def papers_of(reps):
    """Paper name -> the ids of its reproductions (in the order of ``reps``), from the
    declared reproductions."""
    papers = {}
    for r in reps.values():
        papers.setdefault(r.paper, []).append(r.id)
    return papers


def _ids(args, reps, parser):
    """The ids the words of the command line select: ``--all``, or each word an id or a
    paper (every reproduction of it, :func:`papers_of`), without repeats.  An unknown
    word is one line with the closest id or paper, exit status 2."""
    if args.all and args.ids:
        parser.error("give reproduction ids or --all, not both")
    if not args.all and not args.ids:
        parser.error("give at least one reproduction id or paper, or --all (see `mpvi list`)")
    if args.all:
        return list(reps)
    papers = papers_of(reps)
    unknown = [w for w in args.ids if w not in reps and w not in papers]
    if unknown:
        print("\n".join(f"{parser.prog}: {unknown_id(w, reps, papers)}" for w in unknown),
              file=sys.stderr)                # one line each, whatever the width (a grep)
        sys.exit(2)
    return list(dict.fromkeys(rid for w in args.ids
                              for rid in ([w] if w in reps else papers[w])))


def cmd_list(args, reps, parser):
    """One row per reproduction.  An id whose outputs cannot be used
    (:func:`mpvi.repro.records.read_provenance`) has the status INVALID, and its one-line
    reason follows on stderr; the exit status is then 2."""
    results = _results_dir(args)
    runtimes = Runtimes()
    records, invalid = {}, []
    for r in reps.values():
        try:
            records[r.id] = read_provenance(r, results)
        except OutputError as exc:
            invalid.append(str(exc))
    rows = {}
    for row in diff(list(records), results, records=records):
        rows.setdefault(row.value.id, []).append(row)
    table = [("id", "paper", "item", "status", "last run", "measured run time", "title")]
    for r in reps.values():
        record = records.get(r.id)
        if r.id not in records:
            status, last = f"INVALID outputs: rerun `mpvi run {r.id}`", "-"
        elif record is None:
            status, last = "not run", "-"
        else:
            counts = count_statuses(rows.get(r.id, []))
            status = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no printed values"
            if record["quick"]:
                status += " (quick)"
            last = f"{compute_time([record]):.1f} s, {record['created_utc'][:10]}"
        table.append((r.id, r.paper, r.item, status, last, runtimes.describe(r), r.title))
    width = terminal_width()
    print(wrap(f"results: {results}", width), file=sys.stderr)
    # the ids whole, the titles cut, cells of at least 7 columns ("not run" on one line)
    print(fit_table(table, width, truncate={len(table[0]) - 1}, keep={0}, min_cell=7))
    for line in invalid + runtimes.problems:    # one line each, as every command's errors
        print(f"mpvi: {line}", file=sys.stderr)
    return 2 if invalid else 0


def _results_dir(args, required=False):
    """The results directory of ``list`` and ``report``: ``--results``, else figures/ or
    quick-figures/.  Checked (:func:`_check_results`) when given or ``required``."""
    if args.results is not None:
        return _check_results(args.results, "--results", args.quick)
    results = default_out_dir(args.quick)
    if required:
        _check_results(results, "the default" + (" of --quick" if args.quick else ""),
                       args.quick)
    return results


def _check_results(path, origin, quick):
    """``path`` if it is a directory, else :class:`mpvi.ground.io.DirectoryError` in one line
    naming it and ``origin`` (exit status 2): nothing was run there."""
    if Path(path).is_dir():
        return path
    what = "is not a directory" if os.path.lexists(path) else "does not exist"
    raise DirectoryError(f"the results directory {path} ({origin}) {what}: run `mpvi run "
                         f"--all{' --quick' if quick else ''} --results {path}` (or some ids) "
                         f"first")


def cmd_run(args, reps, parser):
    ids = _ids(args, reps, parser)
    if args.jobs is not None and args.scheduler not in (None, "local"):
        parser.error("--jobs sets the worker processes of this machine (a pool, or "
                     "--scheduler local); a Dask scheduler at an address has its own workers")
    if args.check_digits and args.context == "fp":
        parser.error("--check-digits needs a context whose precision can be raised (gmp or "
                     "mp), not fp")
    if args.certify and args.context == "fp":
        parser.error("--certify needs a multiprecision context (gmp or mp), not fp")
    cbackend.compile_after()                 # a bad MPVI_COMPILE_AFTER: one line, exit 2
    out = args.results or default_out_dir(args.quick)
    check_writable(out, "output directory")
    cache = open_cache(args)
    t0 = time.perf_counter()
    if args.scheduler is not None or (args.jobs or 1) > 1:
        try:
            with _sigterm_raises():
                ran, refused, failed = _run_in_parallel(args, reps, ids, out, cache)
        except ExecutorError as exc:
            print(f"mpvi: {exc}", file=sys.stderr)
            return 2
    else:
        ran, refused, failed = _run_serially(args, reps, ids, out, cache)
    print(f"ran {len(ran)} of {len(ids)} reproduction(s) in {time.perf_counter() - t0:.1f} s "
          f"-> {out}", file=sys.stderr)
    if refused:
        print(f"refused in {args.context}: {', '.join(refused)}", file=sys.stderr)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else (3 if refused else 0)


class Terminated(BaseException):
    """SIGTERM during a parallel run (:func:`_sigterm_raises`): a BaseException, as
    KeyboardInterrupt, so that it reaches :func:`_run_in_parallel`, which stops the
    workers, and then :func:`main` (exit status 128 + SIGTERM)."""


@contextlib.contextmanager
def _sigterm_raises():
    """In this block SIGTERM raises :class:`Terminated` in the main thread (elsewhere a
    signal handler cannot be set); a second SIGTERM kills at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_in_parallel(args, reps, ids, out, cache):
    """The ids on the executor of --jobs / --scheduler (ExecutorError if it cannot be
    started), closed afterwards: at once after an error, Ctrl-C or SIGTERM (its pending
    units cancelled, its workers stopped).  (ran, refused, failed)."""
    executor = make_executor(args.jobs, args.scheduler)
    try:
        level = _verbosity(args)
        with ProgressBar(None, "mpvi run", enabled=None if level else False) as bar:
            result = run_parallel(
                reps, ids, executor, args.context, args.dps, args.quick, out, cache,
                check_digits=args.check_digits, certify=args.certify, verbosity=level,
                on_progress=lambda done, total, label, **estimate: bar.update(
                    done, total, label, **estimate))
    except BaseException:
        executor.close(cancel=True)
        raise
    executor.close()
    return result


QUIET, DEFAULT, VERBOSE = 0, 1, 2
"""What ``mpvi run`` prints on stderr: errors and the summary (``--quiet``); also a start
line and a line per finished reproduction (the default; on a terminal with a live
progress bar); also every task and progress line of the computations (``--verbose``)."""


def _verbosity(args):
    return QUIET if args.quiet else VERBOSE if args.verbose else DEFAULT


def _run_serially(args, reps, ids, out, cache):
    """Each id in turn in this process (the lines of :data:`VERBOSE`, and a progress bar
    on a terminal); (ran, refused, failed)."""
    level = _verbosity(args)
    ran, refused, failed = [], [], []
    computed_by = {}                     # cache file -> the id whose run computed that study
    if level == DEFAULT:
        print(f"mpvi run: {len(ids)} reproduction(s) in {args.context}"
              f"{'' if args.context == 'fp' else str(args.dps)}"
              f"{' (quick)' if args.quick else ''} -> {out}", file=sys.stderr, flush=True)
    expected = expected_seconds(reps, ids, args)
    with ProgressBar(len(ids), "mpvi run", enabled=None if level else False) as bar:
        for k, rid in enumerate(ids, 1):
            if level == VERBOSE:
                print(f"[{k}/{len(ids)}] {rid}", file=sys.stderr, flush=True)
            bar.update(k - 1, label=rid, **_estimate(expected, k - 1))
            t0 = time.perf_counter()
            try:
                paths = execute(reps[rid], args.context, args.dps, args.quick, out,
                                cache=cache, check_digits=args.check_digits,
                                certify=args.certify,
                                stream=None if level == VERBOSE else StepStream(bar, f"{rid}: "))
                ran.append(rid)
                shared = shared_note(paths["studies"], computed_by, rid)
                if level == DEFAULT:
                    print(f"{rid}: "
                          + (f"done -> {paths['dir']}, {shared}" if shared else
                             f"done in {time.perf_counter() - t0:.1f} s -> {paths['dir']}")
                          + carried_note(paths['digits_check'], paths['certified']),
                          file=sys.stderr, flush=True)
            except Refused as exc:
                print(exc, file=sys.stderr, flush=True)
                refused.append(rid)
            except Exception as exc:            # one line per failing id, then the next id
                print(f"{rid}: error: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr,
                      flush=True)
                failed.append(rid)
            bar.update(k, label=rid, **_estimate(expected, k))
    return ran, refused, failed


def expected_seconds(reps, ids, args):
    """The recorded run time of each id (:class:`mpvi.repro.runtimes.Runtimes`: what it
    cost alone, full or ``--quick``), doubled with ``--check-digits`` (a second run with
    more digits); None where none is recorded."""
    runtimes = Runtimes()
    factor = 2 if args.check_digits else 1
    return [None if s is None else factor * s
            for s in (runtimes.seconds(reps[rid], args.quick) for rid in ids)]


def _estimate(expected, done):
    """The estimate of a serial run's progress bar after ``done`` ids: the recorded
    seconds of the one starting (``running``) and of those after it (``remaining``);
    unknown if any of them has none."""
    left = expected[done:]
    if any(s is None for s in left):
        return {"remaining": None, "running": None}
    return {"remaining": sum(left[1:]), "running": left[0] if left else 0.0}


def shared_note(studies, computed_by, rid):
    """Where the studies of a finished run of ``rid`` were computed, when not all in it:
    ``from the shared studies computed with top2025_tab04`` (an id earlier in this
    run), ``... read from the cache``; None if it computed them all.  ``studies``: its
    provenance entries (:class:`mpvi.repro.studies.StudyResult`); ``computed_by`` (cache
    file -> id) learns the ones it computed."""
    for s in studies:
        if not s["from_cache"] and s.get("cache_file"):
            computed_by[s["cache_file"]] = rid
    elsewhere = [s for s in studies if s["from_cache"]]
    if not elsewhere:
        return None
    ids = sorted({computed_by[s["cache_file"]] for s in elsewhere
                  if s.get("cache_file") in computed_by})
    cached = sum(s.get("cache_file") not in computed_by for s in elsewhere)
    parts = ([f"computed with {', '.join(ids)}"] if ids else []) + \
        ([f"{cached} read from the cache" if ids else "read from the cache"] if cached else [])
    n = len(elsewhere)
    return (f"from the shared stud{'y' if n == 1 else 'ies'} "
            f"({n} of {len(studies)}) " + " and ".join(parts))


def cmd_diff(args, reps, parser):
    """Text: a heading and a table per reproduction (:func:`mpvi.repro.published.format_diff`)
    at the width of the terminal (``COLUMNS``; 80 off a terminal), no line wider, and
    last the counts (:func:`mpvi.repro.published.count_line`).  With ``--certify``, the
    per-paper counts of what the recorded enclosures prove instead of the tables
    (:func:`mpvi.repro.published.format_certified`), the counts of the statuses, and last
    the line of all papers (:func:`mpvi.repro.published.certified_line`); the exit status
    is the same."""
    ids = _ids(args, reps, parser)
    if args.summary and (args.certify or args.format != "text"):
        parser.error("--summary is a view of the text table, not of --certify or --format "
                     f"{args.format} (--failures selects records there too)")
    if args.results:
        out, origin = args.results, "--results"
    elif args.quick:
        out, origin = default_out_dir(True), "quick results, --quick"
    else:
        out, origin = default_out_dir(False), "full results, the default; --quick for quick-figures/"
    _check_results(out, origin, args.quick)
    text = args.format == "text"
    width = terminal_width()
    summary = sys.stdout if text else sys.stderr

    def say(line):
        """A line of text, wrapped at the width (a long path is broken anywhere)."""
        print(wrap(line, width), file=summary)

    say(f"mpvi diff: {out} ({origin}); outputs found: {describe_outputs(ids, out)}")
    records = read_records([reps[rid] for rid in ids], out)
    rows = diff(ids, out, records=records)
    shown = [r for r in rows if r.status not in SETTLED] if args.failures else rows
    if not text:
        _write_records(shown, reps, args.format)
    elif not rows:
        print(wrap("no published values for: " + ", ".join(ids) + " (their papers print none)",
                   width))
        return 0
    elif args.certify:
        print(format_certified(shown, reps, width, set(ids) == set(reps)))
        print()
    else:
        _print_diff(rows, shown, reps, width, records, args.summary)
    skipped = sum(r.status == "skipped" for r in rows)
    if skipped:
        say(f"{skipped} value(s) skipped by --quick runs: run those reproductions without "
            f"--quick to check them")
    if not args.certify:
        say(digits_summary(rows, records))
    say(count_line(rows, set(ids) == set(reps)))
    failed = any(r.status in ("MISMATCH", "MISSING") for r in rows)
    if args.certify:
        if failed:
            say("(`mpvi diff` without --certify lists the values that are MISMATCH or "
                "MISSING)")
        say(certified_line(rows, set(ids) == set(reps)))
    return 1 if failed else 0


SETTLED = ("match", "known")
"""The statuses ``mpvi diff --failures`` leaves out: the value matches, or its discrepancy
is a known one, explained in the paper's errata."""

UNEXPLAINED = ("MISMATCH", "MISSING")
"""The statuses ``mpvi diff --summary`` shows below its counts: a discrepancy no erratum
explains, a value the outputs do not have."""


def _print_diff(rows, shown, reps, width, records, summary):
    """The text of ``mpvi diff``: the tables of the ``shown`` rows (all, or those of
    ``--failures``), after the counts per paper with ``summary`` (:func:`summary_table`),
    which then shows only the rows of :data:`UNEXPLAINED` status."""
    if summary:
        print(summary_table(rows, reps, width))
        shown = [r for r in shown if r.status in UNEXPLAINED]
    if shown:
        print(format_diff(shown, reps, width, stale_checks(records)))
    elif not summary:
        print(wrap("no value that is not a match or a known discrepancy", width))
    print()


def summary_table(rows, reps, width):
    """``mpvi diff --summary``: a line per paper with how many of its compared values
    (the rows of :func:`mpvi.repro.published.diff`) have each status and how many are
    proven (``mpvi run --certify``), and a last line of the total, at most ``width``
    columns wide."""
    papers = {}
    for r in rows:
        rep = reps.get(r.value.id)
        papers.setdefault(rep.paper if rep is not None else r.value.id, []).append(r)
    table = [("paper", "values", "match", "known", "mismatch", "missing", "skipped",
              "proven")]
    for paper, group in [*papers.items(), ("total", rows)]:
        counts = [sum(r.status == s for r in group) for s in STATUSES]
        table.append((paper, str(len(group)), *map(str, counts),
                      str(sum(r.proof is not None for r in group))))
    return fit_table(table, width, right=set(range(1, len(table[0]))))


def stale_checks(records):
    """``{id: reason}`` of the records (id -> provenance record or None) whose
    ``digits_check`` is stale: kept from an earlier run whose outputs differ
    (:func:`mpvi.repro.records.carry_digits_check`)."""
    return {rid: r["digits_check"].get("reason", "")
            for rid, r in records.items()
            if r is not None and r.get("digits_check", {}).get("stale")}


def digits_summary(rows, records):
    """One line for ``mpvi diff``: how many of the runs in ``records`` (id -> provenance
    record or None) checked their digits (``mpvi run --check-digits``; a stale check, of
    outputs that changed since, is counted apart), the fewest correct digits among the
    compared values that have any and differ between the two runs, how many are exact
    (equal in both: an integer, a count), those that have none (round-off: the two runs agree
    on no digit, e.g. the error of an exactly conserved quantity at the precision floor,
    whose rule compares only its magnitude) and the same for the output columns.  Nothing
    is said of compared values if none was checked."""
    ran = {rid: r for rid, r in records.items() if r is not None}
    stale = stale_checks(records)
    checked = {rid: r["digits_check"] for rid, r in ran.items()
               if "digits_check" in r and rid not in stale}
    if not checked:
        return ("correct digits: not measured (`mpvi run --check-digits` reruns with more "
                "digits and records how many agree)" +
                (f"; {len(stale)} check(s) stale" if stale else ""))
    parts = [f"correct digits measured for {len(checked)} of {len(ran)} run(s)"
             + (f" ({len(stale)} more stale: the outputs changed since; rerun with "
                f"--check-digits)" if stale else "")]
    compared = [r for r in rows if r.digits is not None and r.value.id in checked]
    exact = [r for r in compared
             if checked[r.value.id]["values"][r.value.key].get("identical")]
    some = [r for r in compared if r.digits > 0 and r not in exact]
    if some:
        worst = min(some, key=lambda r: r.digits)
        parts.append(f"compared values: at least {worst.digits} ({worst.value.id} "
                     f"{worst.value.key})" + (f", {len(exact)} more exact (equal in both "
                                              f"runs)" if exact else ""))
    elif exact:
        parts.append(f"compared values: {len(exact)} exact (equal in both runs)")
    none = [r for r in compared if r.digits == 0 and r not in exact]
    if none:
        r = none[0]
        parts.append(f"{len(none)} compared value(s) are round-off, with no correct digit "
                     f"(e.g. {r.value.id} {r.value.key} = {_magnitude(r.reproduced)}, rule "
                     f"{_rule(r.value)})")
    columns = [(c["min"], f"{rid}: {name} column {col!r}, row {c['row'] + 1}")
               for rid, check in checked.items() for name, cols in check["tables"].items()
               for col, c in cols.items() if not c["identical"]]
    if columns:
        fewest = min((c for c in columns if c[0] > 0), default=None, key=lambda c: c[0])
        if fewest is not None:
            parts.append(f"output columns: at least {fewest[0]} ({fewest[1]})")
        zero = [c for c in columns if c[0] == 0]
        if zero:
            parts.append(f"{len(zero)} of {len(columns)} output columns hold round-off "
                         f"(e.g. {zero[0][1]})")
    problems = sum(len(c["problems"]) for c in checked.values())
    if problems:
        parts.append(f"{problems} output(s) differ in shape between the two runs (see "
                     f"digits_check.problems in the JSON)")
    return "; ".join(parts)


def _magnitude(text):
    return short_number(text) if text is not None else "-"


def _rule(value):
    return rule(value)


def _write_records(rows, reps, fmt):
    """``mpvi diff --format json|csv``: one record per compared value on stdout."""
    recs = records(rows, reps)
    if fmt == "json":
        json.dump(recs, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=RECORD_FIELDS, lineterminator="\n")
    writer.writeheader()
    for r in recs:
        writer.writerow({**r, "errata": " ".join(r["errata"]),
                         "rel_diff": "" if r["rel_diff"] is None else repr(r["rel_diff"]),
                         "correct_digits": "" if r["correct_digits"] is None
                         else r["correct_digits"]})


VERIFY_DESCRIPTION = """\
Prove the certified blocks of the results again.  `mpvi diff --certify` trusts what a
record says: it checks the record's SHA-256 digest (which catches an edited or damaged
file, not someone who edits a value and computes the digest again) and that each
recorded value lies in its recorded enclosure, and then reads what the enclosures prove
of the printed digits.  `mpvi verify` trusts none of it: for each id it reads the inputs
its record names (context, digits, parameters, --quick or not), runs the reproduction
again and its certified computation (Arb balls; no study is read from the cache), and
checks that every recorded enclosure contains the recomputed one, that no value, column
or growth series claims more proven digits than recomputed, and that the recomputed
outputs are byte for byte those recorded.  It costs what `mpvi run <id> --certify` costs
(progress on stderr)."""

VERIFY_EPILOG = """\
Output: one line per failing claim on stdout, naming the id and the value, column or
series (FAILED <id>: value 'T=1 newmark p N=10': the recorded enclosure ... does not
contain the recomputed ...), then a summary on stderr.  Ids without a certified block
are skipped (with --all) or reported (named).
Exit status: 0 every claim holds, 1 a claim fails (or an id could not be recomputed),
2 a bad option, a results directory that does not exist, or a record that is unreadable
or does not match its digest (as for mpvi diff), 3 none failed but some were refused
(the context cannot run here)."""


def cmd_verify(args, reps, parser):
    """``mpvi verify``: :func:`mpvi.repro.run.verify_results` -- the failures on stdout, a
    line per id (and the progress of its computation) and a summary on stderr."""
    ids = _ids(args, reps, parser)
    if args.results:
        out, origin = args.results, "--results"
    else:
        out = default_out_dir(args.quick)
        origin = "quick results, --quick" if args.quick else "full results, the default"
    _check_results(out, origin, args.quick)
    quiet = args.quiet
    t0 = time.perf_counter()
    started = {}
    err = WrappedStream(sys.stderr, terminal_width())     # its lines at the terminal's width

    def report(event, k, n, rid, detail):
        if event == "start":
            started[rid] = time.perf_counter()
            if not quiet:
                print(f"[{k}/{n}] {rid}: computing again and certifying ...", file=err,
                      flush=True)
        elif event == "refused":
            print(detail, file=err, flush=True)
        else:
            for line in detail:
                print(f"FAILED {line}", flush=True)
            if not quiet:
                verdict = f"{len(detail)} claim(s) FAILED" if detail else "every claim holds"
                print(f"[{k}/{n}] {rid}: {verdict} ({time.perf_counter() - started[rid]:.1f} s)",
                      file=err, flush=True)

    if not quiet:
        print(f"mpvi verify: {out} ({origin})", file=err, flush=True)
    result = verify_results(out, ids, stream=_io.StringIO() if quiet else err, report=report)
    if not args.all:
        for rid in result.skipped:
            print(f"mpvi verify: {rid}: no certified value or column there: nothing to "
                  f"verify (`mpvi run {rid} --certify` records them, where it has a certify "
                  f"hook)", file=err)
    failed = sorted({line.split(":", 1)[0] for line in result.failures})
    done = len(ids) - len(result.skipped) - len(result.refused)
    print(f"verified {done - len(failed)} of {done} certified record(s) in "
          f"{time.perf_counter() - t0:.1f} s ({result.checked} claim(s) hold)"
          + (f"; FAILED: {', '.join(failed)}" if failed else "")
          + (f"; refused: {', '.join(result.refused)}" if result.refused else "")
          + (f"; {len(result.skipped)} id(s) without certified claims" if result.skipped
             else ""), file=err, flush=True)
    return 1 if failed else (3 if result.refused else 0)


def cmd_report(args, reps, parser):
    results = _results_dir(args, required=True)
    if not any(os.path.lexists(output_paths(r, results)["json"]) for r in reps.values()):
        print(f"mpvi: no outputs of `mpvi run` in the results directory {results}: nothing to "
              f"report", file=sys.stderr)
        return 2
    out = args.out or project_path("quick-report" if args.quick else "report")
    width = terminal_width()
    err = WrappedStream(sys.stderr, width)
    try:
        index, papers = write_report(results, out, reps, stream=err)
    except ReportError as exc:
        print(f"mpvi: {exc}", file=sys.stderr)         # one line, as every command's errors
        return 2
    finally:
        err.flush()
    print(index)                     # the path on stdout, whole: a script reads it
    return 0


def build_parser():
    ap = ToolParser(
        prog="mpvi", formatter_class=HelpFormatter,
        description="Reproduce the figures and tables of the mpvi papers at 64 digits "
                    "(or any precision) and diff every published number.",
        epilog="Examples: mpvi list | mpvi run axioms2024_tab02 | mpvi run --all --quick | "
               "mpvi diff --all --quick | mpvi diff --all | mpvi verify axioms2024_tab02 | "
               "mpvi report.  Outputs whose "
               "files do not match their provenance JSON (an interrupted run) or whose JSON "
               "is malformed are reported in one line each (exit status 2); exit status "
               f"{BROKEN_PIPE} if stdout is closed early (| head).")
    ap.add_argument("--version", action="version", version=f"mpvi {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="{list,run,diff,verify,report}",
                            parser_class=_SubParser)
    sub.required = True
    p_list = sub.add_parser(
        "list", help="list every reproduction: paper, item, status of its published values "
                     "its last run (from figures/, or quick-figures/ with --quick) and the "
                     "run time measured by benchmarks/runtimes.py (alone, without a cache: "
                     "full, and quick)")
    _add_results_options(p_list)
    p_list.set_defaults(func=cmd_list, parser=p_list)
    p_run = sub.add_parser("run", help="run reproductions, writing CSV + PNG + provenance JSON",
                           epilog=RUN_EPILOG, formatter_class=HelpFormatter)
    p_run.add_argument("ids", nargs="*", metavar="ID|PAPER",
                       help="reproduction ids, or papers (every reproduction of the paper: "
                            "axioms2024 runs them all); see `mpvi list`")
    p_run.add_argument("--all", action="store_true", help="run every reproduction")
    add_run_options(p_run)
    p_run.add_argument("--jobs", type=job_count, default=None, metavar="N",
                       help="compute on N worker processes of this machine (default: serially, "
                            "in this process; at most 4 per CPU); with --scheduler local, the "
                            "number of Dask workers")
    p_run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="compute on a Dask cluster: the address of its scheduler "
                            "(tcp://host:8786), or 'local' to start one on this machine; "
                            "needs the dask extra (pip install -e '.[dask]')")
    chatter = p_run.add_mutually_exclusive_group()
    chatter.add_argument("-v", "--verbose", action="store_true",
                         help="print every task as it finishes and the progress lines of "
                              "each computation (default: a start line and one line per "
                              "finished reproduction, with a progress bar on a terminal)")
    chatter.add_argument("-q", "--quiet", action="store_true",
                         help="print only errors, refusals and the summary")
    p_run.set_defaults(func=cmd_run, parser=p_run)
    _add_diff_parser(sub)
    p_verify = sub.add_parser(
        "verify", help="prove the certified blocks of `mpvi run --certify` again from their "
                       "recorded inputs; exit 1 naming each value whose recorded enclosure "
                       "does not contain the recomputed one",
        description=VERIFY_DESCRIPTION, epilog=VERIFY_EPILOG,
        formatter_class=HelpFormatter)
    p_verify.add_argument("ids", nargs="*", metavar="ID|PAPER",
                          help="reproduction ids, or papers (see `mpvi list`)")
    p_verify.add_argument("--all", action="store_true",
                          help="every reproduction whose record has a certified block")
    _add_results_options(p_verify)
    p_verify.add_argument("-q", "--quiet", action="store_true",
                          help="print only the failures and the summary (default: a line "
                               "per id and the progress of each computation on stderr)")
    p_verify.set_defaults(func=cmd_verify, parser=p_verify)
    p_report = sub.add_parser(
        "report", help="write a static HTML report of the results (open its index.html in a "
                       "browser): every figure with its caption, parameters, published and "
                       "reproduced values, errata and provenance",
        description="Write a self-contained HTML report (no server, no network: open "
                    "index.html from disk) of the outputs of `mpvi run`: an overview with "
                    "one row per paper, one page per paper with every figure or table, and "
                    "the errata.  It shows the statuses of `mpvi diff`.")
    _add_results_options(p_report)
    p_report.add_argument("--out", type=Path, default=None, metavar="DIR",
                          help="report directory (default: report/ of the source checkout, "
                               "quick-report/ with --quick); replaced as a whole, and refused "
                               "if it exists and holds anything but an earlier report")
    p_report.set_defaults(func=cmd_report, parser=p_report)
    return ap


def _add_diff_parser(sub):
    """The parser of ``mpvi diff`` (:func:`cmd_diff`)."""
    p_diff = sub.add_parser("diff", help="compare published numbers with reproduced ones; "
                                         "exit 1 on any MISMATCH or MISSING value "
                                         "(values a --quick run skipped are listed, not "
                                         "failed), 2 on outputs that do not match their "
                                         "provenance or malformed published data")
    p_diff.add_argument("ids", nargs="*", metavar="ID|PAPER",
                        help="reproduction ids, or papers (every reproduction of the paper)")
    p_diff.add_argument("--all", action="store_true", help="every reproduction")
    p_diff.add_argument("--quick", action="store_true",
                        help="compare the outputs of --quick runs (quick-figures/) instead of "
                             "the full results (figures/)")
    add_results_option(p_diff, "where the reproductions wrote their files (`mpvi run "
                               "--results`; overrides the default figures/ or, with --quick, "
                               "quick-figures/)")
    p_diff.add_argument("--format", choices=["text", "json", "csv"], default="text",
                        help="text: an aligned table for reading (default); json: a list with "
                             "one record per compared value; csv: the same records as rows.  "
                             "The records have the fields " + ", ".join(RECORD_FIELDS) +
                             "; numbers are the exact strings.  With json or csv, stdout has "
                             "only the records (the summary goes to stderr)")
    p_diff.add_argument("--certify", action="store_true",
                        help="instead of the table of values: per paper, how many published "
                             "values the enclosures recorded by `mpvi run --certify` prove "
                             "matched or misprinted, and why the others are not certifiable "
                             "(it reads the records, it proves nothing itself); the last "
                             "line counts all papers")
    p_diff.add_argument("--summary", action="store_true",
                        help="one line per paper with the counts of its values (match, known, "
                             "mismatch, missing, skipped, proven), then only the values that "
                             "are a mismatch or missing; the same exit status")
    p_diff.add_argument("--failures", action="store_true",
                        help="show only the values that are not a match or a known "
                             "discrepancy (text, json and csv); the same exit status")
    p_diff.set_defaults(func=cmd_diff, parser=p_diff)


class ToolParser(argparse.ArgumentParser):
    """The parser of ``mpvi``: an option that no parser knows is reported by the
    subcommand it was given to, with that subcommand's usage and the closest option
    (``unknown option --quik for `mpvi run`; did you mean --quick?``), exit status 2; an
    unknown command is one line with the closest command (``unknown command 'rn'; did you
    mean 'run'?``), exit status 2."""

    def parse_args(self, args=None, namespace=None):
        argv = sys.argv[1:] if args is None else list(args)
        self._check_command(argv)
        args, extras = self.parse_known_args(argv, namespace)
        if extras:
            sub = getattr(args, "parser", None) or self
            sub.error(unknown_argument(extras[0], sub))
        return args

    def _check_command(self, argv):
        """Exit with one line if the first word of ``argv`` that is not an option (the
        top-level options take no value) is not a command."""
        commands = [name for action in self._actions
                    if isinstance(action, argparse._SubParsersAction)
                    for name in action.choices]
        word = next((a for a in argv if not a.startswith("-")), None)
        if word is None or word in commands or not commands:
            return
        close = difflib.get_close_matches(word, commands, n=1)
        hint = (f"did you mean {close[0]!r}?" if close else
                f"the commands are {', '.join(commands)} (`{self.prog} --help`)")
        self.exit(2, f"{self.prog}: unknown command {word!r}; {hint}\n")     # one line


class _SubParser(argparse.ArgumentParser):
    """The parser of a subcommand: its ``--help`` within 80 columns (:class:`HelpFormatter`)."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)


def unknown_argument(word, parser):
    """The message for ``word``, an argument ``parser`` does not take: the closest of its
    options (:mod:`difflib`) for a mistyped option."""
    where = f"`{parser.prog}`"
    if not word.startswith("-") or word == "-":
        return f"unexpected argument {word!r} for {where}"
    name = word.split("=", 1)[0]
    options = [o for o in parser._option_string_actions if o.startswith("--")]
    close = difflib.get_close_matches(name, options, n=1)
    hint = f"did you mean {close[0]}?" if close else f"see `{parser.prog} --help`"
    return f"unknown option {name} for {where}; {hint}"


def _add_results_options(p):
    p.add_argument("--quick", action="store_true",
                   help="read the outputs of --quick runs (quick-figures/) instead of the "
                        "full results (figures/)")
    add_results_option(p, "where the reproductions wrote their files (`mpvi run --results`; "
                          "overrides figures/ or quick-figures/)", alias=False)


@contextlib.contextmanager
def callers_state():
    """Leave the process-wide state of an in-process caller as it was: the thread's gmpy2
    context (the object, its precision and rounding: a run creates its context, which
    raises the bare precision), python-flint's and mpmath's global precision, decimal's
    context (a failed conversion of ``diff`` set its InvalidOperation flag) and the state
    of the ``random`` and ``numpy.random`` generators (which a run's study or figure may
    draw from)."""
    context = gmpy2.get_context()
    gmp = (context.precision, context.round)
    mp = mpmath.mp.prec
    flint = sys.modules.get("flint")
    flint = None if flint is None else flint.ctx.prec
    rand, nprand = random.getstate(), np.random.get_state()
    try:
        with decimal.localcontext():         # any change to decimal's context stays inside
            yield
    finally:
        gmpy2.set_context(context)
        context.precision, context.round = gmp
        mpmath.mp.prec = mp
        module = sys.modules.get("flint")      # imported inside: its default is 53 bits
        if module is not None and module.ctx.prec != (53 if flint is None else flint):
            module.ctx.prec = 53 if flint is None else flint
        random.setstate(rand)
        np.random.set_state(nprand)


def main(argv=None):
    """The ``mpvi`` command: ``main(["run", ...])`` in-process returns its exit status and
    leaves the caller's process-wide state as it was (:func:`callers_state`)."""
    with callers_state():
        return _main(argv)


def _main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args, all_reproductions(), args.parser)
        sys.stdout.flush()                   # a closed pipe fails here, not at exit
        return status
    except BrokenPipeError:
        _discard_stdout()
        return BROKEN_PIPE
    except PublishedDataError as exc:        # one line per problem
        for line in str(exc).splitlines():
            print(f"mpvi: malformed data: {line}", file=sys.stderr)
        return 2
    except OutputError as exc:
        for line in str(exc).splitlines():
            print(f"mpvi: {line}", file=sys.stderr)
        return 2
    except (DirectoryError, PluginError) as exc:
        print(f"mpvi: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mpvi: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("mpvi: terminated (SIGTERM)", file=sys.stderr)
        return 128 + signal.SIGTERM
    except (ValueError, TypeError, ArithmeticError, OSError) as exc:
        print(f"mpvi: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


def _discard_stdout():
    """Point stdout at the null device: its reader has gone (``mpvi diff | head -1``), and
    the interpreter's flush at exit must not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
