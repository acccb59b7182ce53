"""The ``mpvi`` command: list, run and diff the reproductions."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import __version__

RUN_EPILOG = """\
Outputs go to figures/ (full runs) or quick-figures/ (--quick) at the root of the source
checkout unless --out is given; the directory is created and checked writable before any
computation.  Studies (the references of Figs. 2-3, the long runs of Tables 4-5,
convergence sweeps) are cached on disk, keyed by their parameters, the context and the
mpvi version and a fingerprint of its source: a second reproduction using the same
study, or a rerun, reads it back (--cache DIR, --no-cache).  The JSON provenance records
from_cache and the wall time of the original computation.

Parallel runs: --jobs N computes on N worker processes of this machine, --scheduler
ADDRESS on a Dask cluster (tcp://host:8786; "local" starts one here with --jobs workers,
default one per CPU; needs the dask extra: pip install -e '.[dask]').  The independent
runs the reproductions declare (step sizes, spans, methods) are computed first, the
most expensive first, then each reproduction's tables and plot; one line per finished
unit.  The files are the same bytes as those of a serial run.

Each id either runs, is refused, or fails; the run always goes on with the next id:
  <id>: refused in <context>: <reason>   the reproduction declared, before computing,
                                         that it cannot run in that number context
  <id>: error: <Type>: <message>         any other error, on one line
Refusals and failures are listed again at the end.  Exit status: 0 if every id ran,
1 if any id failed, 3 if none failed but some were refused (nothing was computed for
them), 2 for a bad option, an unwritable --out or --cache, or malformed published data."""


def _ids(args, reps, parser):
    if args.all and args.ids:
        parser.error("give reproduction ids or --all, not both")
    if not args.all and not args.ids:
        parser.error("give at least one reproduction id, or --all (see `mpvi list`)")
    ids = list(reps) if args.all else args.ids
    unknown = [i for i in ids if i not in reps]
    if unknown:
        parser.error(f"unknown reproduction id(s): {', '.join(unknown)}; "
                     f"known ids: {', '.join(reps)}")
    return ids


def cmd_list(args, reps, parser):
    print(f"{'id':<24} {'paper':<11} {'item':<9} {'runtime (64 digits)':<22} title")
    for r in reps.values():
        print(f"{r.id:<24} {r.paper:<11} {r.item:<9} {r.runtime:<22} {r.title}")
    return 0


def cmd_run(args, reps, parser):
    from .io import check_writable
    from .repro import default_out_dir, open_cache
    ids = _ids(args, reps, parser)
    if args.jobs is not None and args.scheduler not in (None, "local"):
        parser.error("--jobs sets the worker processes of this machine (a pool, or "
                     "--scheduler local); a Dask scheduler at an address has its own workers")
    out = args.out or default_out_dir(args.quick)
    check_writable(out, "output directory")
    cache = open_cache(args)
    t0 = time.perf_counter()
    if args.scheduler is not None or (args.jobs or 1) > 1:
        from .parallel import ExecutorError, make_executor, run_parallel
        try:
            executor = make_executor(args.jobs, args.scheduler)
        except ExecutorError as exc:
            print(f"mpvi: {exc}", file=sys.stderr)
            return 2
        try:
            ran, refused, failed = run_parallel(reps, ids, executor, args.context, args.dps,
                                                args.quick, out, cache)
        except BaseException:
            executor.close(cancel=True)
            raise
        executor.close()
    else:
        ran, refused, failed = _run_serially(args, reps, ids, out, cache)
    print(f"ran {len(ran)} of {len(ids)} reproduction(s) in {time.perf_counter() - t0:.1f} s "
          f"-> {out}", file=sys.stderr)
    if refused:
        print(f"refused in {args.context}: {', '.join(refused)}", file=sys.stderr)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else (3 if refused else 0)


def _run_serially(args, reps, ids, out, cache):
    """Each id in turn in this process (progress lines as they come); (ran, refused,
    failed)."""
    from .repro import Refused, execute, one_line
    ran, refused, failed = [], [], []
    for k, rid in enumerate(ids, 1):
        print(f"[{k}/{len(ids)}] {rid}", file=sys.stderr, flush=True)
        try:
            execute(reps[rid], args.context, args.dps, args.quick, out, cache=cache)
            ran.append(rid)
        except Refused as exc:
            print(exc, file=sys.stderr, flush=True)
            refused.append(rid)
        except Exception as exc:            # one line per failing id, then the next id
            print(f"{rid}: error: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr,
                  flush=True)
            failed.append(rid)
    return ran, refused, failed


def cmd_diff(args, reps, parser):
    from .published import describe_outputs, diff, format_rows
    from .repro import default_out_dir
    ids = _ids(args, reps, parser)
    if args.out:
        out, origin = args.out, "--out"
    elif args.quick:
        out, origin = default_out_dir(True), "quick results, --quick"
    else:
        out, origin = default_out_dir(False), "full results, the default; --quick for quick-figures/"
    print(f"mpvi diff: {out} ({origin}); outputs found: {describe_outputs(ids, out)}")
    rows = diff(ids, out)
    if not rows:
        print("no published values for: " + ", ".join(ids))
        return 0
    print(format_rows(rows))
    counts = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    print("\n" + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    if counts.get("skipped"):
        print(f"{counts['skipped']} value(s) skipped by --quick runs: run those reproductions "
              "without --quick to check them")
    bad = counts.get("MISMATCH", 0) + counts.get("MISSING", 0)
    return 1 if bad else 0


def build_parser():
    from .repro import add_run_options, positive_int
    ap = argparse.ArgumentParser(
        prog="mpvi",
        description="Reproduce the figures and tables of the mpvi papers at 64 digits "
                    "(or any precision) and diff every published number.",
        epilog="Examples: mpvi list | mpvi run axioms2024_tab02 | mpvi run --all --quick | "
               "mpvi diff --all --quick | mpvi diff --all")
    ap.add_argument("--version", action="version", version=f"mpvi {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="{list,run,diff}")
    sub.required = True
    p_list = sub.add_parser("list", help="list every reproduction with its paper, item and runtime")
    p_list.set_defaults(func=cmd_list, parser=p_list)
    p_run = sub.add_parser("run", help="run reproductions, writing CSV + PNG + provenance JSON",
                           epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p_run.add_argument("ids", nargs="*", help="reproduction ids (see `mpvi list`)")
    p_run.add_argument("--all", action="store_true", help="run every reproduction")
    add_run_options(p_run)
    p_run.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                       help="compute on N worker processes of this machine (default: serially, "
                            "in this process); with --scheduler local, the number of Dask "
                            "workers")
    p_run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="compute on a Dask cluster: the address of its scheduler "
                            "(tcp://host:8786), or 'local' to start one on this machine; "
                            "needs the dask extra (pip install -e '.[dask]')")
    p_run.set_defaults(func=cmd_run, parser=p_run)
    p_diff = sub.add_parser("diff", help="compare published numbers with reproduced ones; "
                                         "exit 1 on any MISMATCH or MISSING value "
                                         "(values a --quick run skipped are listed, not failed)")
    p_diff.add_argument("ids", nargs="*", help="reproduction ids")
    p_diff.add_argument("--all", action="store_true", help="every reproduction")
    p_diff.add_argument("--quick", action="store_true",
                        help="compare the outputs of --quick runs (quick-figures/) instead of "
                             "the full results (figures/)")
    p_diff.add_argument("--out", type=Path, default=None,
                        help="where the reproductions wrote their files (overrides the "
                             "default figures/ or, with --quick, quick-figures/)")
    p_diff.set_defaults(func=cmd_diff, parser=p_diff)
    return ap


def main(argv=None):
    from .io import DirectoryError
    from .published import PublishedDataError
    from .repro import PluginError, all_reproductions
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args, all_reproductions(), args.parser)
    except PublishedDataError as exc:
        print(f"mpvi: malformed data: {exc}", file=sys.stderr)
        return 2
    except (DirectoryError, PluginError) as exc:
        print(f"mpvi: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mpvi: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, ArithmeticError, OSError) as exc:
        print(f"mpvi: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
