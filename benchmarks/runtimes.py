"""Measure the run times of the reproductions and record them in the runtimes.json of each
paper folder (reproductions/<paper>/runtimes.json).

    python benchmarks/runtimes.py                 # both: the full run, then the quick one
    python benchmarks/runtimes.py --kind quick    # only the quick run (about a minute)
    python benchmarks/runtimes.py --from figures --kind full   # record an existing run

Runs ``mpvi run --all --jobs N --no-cache`` (``--quick`` for the quick half) into a
temporary directory as a separate process, times the command as a whole, and records
for every reproduction the seconds its provenance states (its own computation plus the
studies it used: what ``mpvi run <id> --no-cache`` costs alone) and the whole command's
wall time.  ``mpvi list``, each script's ``--help`` and the reproduction catalogue show
these times (:mod:`mpvi.repro.runtimes`); a parallel run uses them to start the longest
reproduction first.  With ``--from DIR`` the outputs of an earlier run are read instead
(the command's wall time is then unknown and recorded as 0).

Measure on an idle machine: the times are absolute, not ratios.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mpvi.ground.io import git_commit
from mpvi.repro.report import compute_time
from mpvi.repro.packages import all_folders, folder_of, reproduction_packages
from mpvi.repro.declare import all_reproductions
from mpvi.repro.records import read_provenance
from mpvi.repro.runtimes import KINDS, format_seconds, record_runtimes


def measured_times(reps, out_dir):
    """``{id: {"seconds", "compute_s"}}`` from the provenance of the outputs in ``out_dir``
    (:func:`mpvi.repro.records.read_provenance`: only verified outputs; a forged or damaged
    JSON stops the recording): the cost alone (:func:`mpvi.repro.report.compute_time`)
    and the reproduction's own computation.  Ids without outputs are left out."""
    times = {}
    for rep in reps:
        record = read_provenance(rep, out_dir)
        if record is not None:
            times[rep.id] = {"seconds": round(compute_time([record]), 3),
                             "compute_s": round(float(record["wall_time_s"]), 3)}
    return times


def measure(kind, jobs, out):
    """Run every reproduction (``kind``) into ``out``; the wall time of the command."""
    args = ["run", "--all", "--jobs", str(jobs), "--no-cache", "--results", str(out)] \
        + (["--quick"] if kind == "quick" else [])
    cmd = [sys.executable, "-c", "import sys; from mpvi.repro.cli import main; "
                                 "sys.exit(main(sys.argv[1:]))"] + args
    print("measuring: mpvi " + " ".join(args), file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"runtimes: `mpvi {' '.join(args)}` failed (exit status "
                         f"{done.returncode}); nothing recorded")
    return wall, f"mpvi run --all --jobs {jobs} --no-cache" + (" --quick" if kind == "quick" else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--kind", choices=KINDS + ("both",), default="both",
                    help="which parameter sets to measure (default: both)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="worker processes of the measured run (default 2, as README command 1)")
    ap.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="keep the measured run's outputs in DIR/full and DIR/quick (default: a "
                         "temporary directory, deleted), e.g. to compare them with "
                         "benchmarks/compare_outputs.py")
    ap.add_argument("--from", dest="source", type=Path, default=None, metavar="DIR",
                    help="record the outputs of an earlier run in DIR instead of running "
                         "(needs --kind full or quick)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.source is not None and args.kind == "both":
        ap.error("--from DIR records one run: give --kind full or --kind quick")
    reps = all_reproductions()
    packages = reproduction_packages()
    commit = git_commit()                # before the first runtimes.json is rewritten
    for kind in (KINDS if args.kind == "both" else (args.kind,)):
        with tempfile.TemporaryDirectory(prefix="mpvi-runtimes-") as tmp:
            if args.source is None:
                out = args.out / kind if args.out is not None else Path(tmp)
                wall, command = measure(kind, args.jobs, out)
            else:
                out, wall = args.source, 0.0
                command = f"mpvi run --all --results {out}" + (" --quick" if kind == "quick" else "")
            times = measured_times(reps.values(), out)
        missing = sorted(set(reps) - set(times))
        if missing:
            raise SystemExit(f"runtimes: no outputs of {', '.join(missing)} in {out}; "
                             f"nothing recorded")
        for folder in all_folders(packages):
            own = {rid: t for rid, t in times.items() if folder_of(reps[rid], packages) == folder}
            if own:
                record_runtimes(folder, kind, own, command, wall, args.jobs, commit)
                print(f"{kind}: {len(own)} reproductions of {folder.name} recorded in "
                      f"{os.path.relpath(folder.runtimes)}")
        total = sum(t["seconds"] for t in times.values())
        print(f"{kind}: the command took {format_seconds(wall)}; the reproductions alone "
              f"would take {format_seconds(total)} one after another")
        for rid, t in sorted(times.items(), key=lambda kv: -kv[1]["seconds"])[:5]:
            print(f"  {rid:<26} {format_seconds(t['seconds'])}")


if __name__ == "__main__":
    main()
