"""Running a reproduction: compute, plot, write (:func:`execute`), and prove its
certified digits again (:func:`verify_results`).

:func:`execute` is :func:`render` (compute and plot: the files as bytes, the values and
provenance entries as JSON data) followed by :func:`mpvi.repro.records.write_outputs`; a
parallel run (:mod:`mpvi.repro.parallel`) calls :func:`render` in a worker process and
:func:`mpvi.repro.records.write_outputs` in the parent, so its files are the same bytes as
those of a serial run.  Each script also runs on its own (:func:`script_main`):
``python reproductions/axioms2024/axioms2024_fig02.py --help``.
"""
from __future__ import annotations

import argparse
import io as _io
import sys
import time
from pathlib import Path

from flint import arb

from mpvi.drive.verification import Verification
from mpvi.ground import io
from mpvi.numbers.arbref import arb_precision
from mpvi.numbers.context import get_context
from mpvi.repro import digits as _digits
from mpvi.repro.declare import (DEFAULT_CONTEXT, NOT_DECLARED, Refused, all_reproductions,
                                default_out_dir, output_paths, unknown_id)
from mpvi.repro.options import add_note, add_run_options, one_line, open_cache
from mpvi.repro.records import (Rendered, carried_note, json_data, old_tables,
                                output_differences, read_records, record_context,
                                recorded_parameters, shown, write_outputs)
from mpvi.repro.runtimes import Runtimes
from mpvi.repro.studies import Recorder

class Run(Recorder):
    """Handed to ``compute``: the context, the parameters, progress lines,
    :meth:`solve` (Newton statistics pooled into the provenance) and :meth:`study`
    (a study of :mod:`mpvi.repro.studies`, through the cache if one is given).  ``kept``:
    what ``compute`` hands to the reproduction's ``certify`` hook, which gets this run
    (e.g. the solutions it certifies, rather than solving them again)."""

    def __init__(self, ctx, params, quick, stream=None, cache=None):
        super().__init__(ctx, stream=stream)
        self.params = params
        self.quick = quick
        self.cache = cache
        self.studies = []
        self.kept = {}
        self._t0 = time.perf_counter()

    def progress(self, message):
        print(f"  [{time.perf_counter() - self._t0:7.1f} s] {message}", file=self.stream, flush=True)

    def study(self, study, params):
        """``study(params, ctx)`` through this run's cache; its Newton statistics are pooled
        into this run's and its provenance (wall time of the original computation,
        ``from_cache``) recorded.  Returns the study's value."""
        result = study(params, self.ctx, cache=self.cache, progress=self.progress,
                       stream=self.stream)
        self.newton.extend(result.newton)
        self.studies.append(result.provenance())
        return result.value

    def newton_summary(self):
        """Per scheme: Newton solves (= steps), mean and max iterations per step, and the
        largest final residual norm over all steps of this reproduction."""
        pool = {}
        for scheme, s in self.newton:
            p = pool.setdefault(scheme, {"solves": 0, "iterations": 0, "max_iterations": 0,
                                         "max_residual": 0.0})
            p["solves"] += s["solves"]
            p["iterations"] += s["total_iterations"]
            p["max_iterations"] = max(p["max_iterations"], s["max_iterations"])
            p["max_residual"] = max(p["max_residual"], s["max_residual"])
        return {m: {"steps": s["solves"], "mean_iterations_per_step": s["iterations"] / s["solves"],
                    "max_iterations": s["max_iterations"], "max_final_residual": s["max_residual"],
                    "context_eps": float(self.ctx.eps)}
                for m, s in pool.items()}


def _compute(rep, ctx, params, quick, stream, cache, label=""):
    """``rep.compute`` in ``ctx``: (its :class:`Run`, its :class:`Output`, wall time)."""
    run = Run(ctx, params, quick, stream, cache)
    run.progress(f"{rep.id}: {rep.item} of {rep.paper} in context {ctx.name}"
                 f"{' (quick)' if quick else ''}{label}")
    t0 = time.perf_counter()
    try:
        with ctx.active():        # the script's own arithmetic at the context's precision
            out = rep.compute(run)
    except Exception as exc:                 # name the cache if compute used values from it
        cached = [s["cache_file"] for s in run.studies if s["from_cache"]]
        if cached:
            add_note(exc, f"({rep.id} used {len(cached)} study result(s) read from the "
                          f"cache, e.g. {cached[0]}; --no-cache recomputes them)")
        raise
    return run, out, time.perf_counter() - t0


def _csv_files(rep, out):
    return {(f"{rep.id}.csv" if name == "" else f"{rep.id}_{name}.csv"):
            df.to_csv(index=False).encode("utf-8") for name, df in out.tables.items()}


def check_context(ctx):
    """The context of ``--check-digits`` for a run in ``ctx``: the same kind with
    :data:`mpvi.repro.digits.CHECK_EXTRA` more digits.  ValueError for float64, whose
    precision is fixed.  The systems the checking run builds find the models of the first
    run (:mod:`mpvi.model.derivation`) and their printed code: no sympy derivation and no code
    generation is done again, only the numbers are read at the new precision."""
    if not ctx.is_mp:
        raise ValueError(f"--check-digits needs a context whose precision can be raised "
                         f"(gmp or mp), not {ctx.name}")
    return type(ctx)(ctx.dps + _digits.CHECK_EXTRA)


def certified_block(rep, run, out):
    """The provenance entry ``certified`` of a run with ``--certify``: ``rep.certify(run,
    out)`` (the reproduction's certified computation) summarised, or, for a reproduction
    without one, no column certified and ``not_certified["*"]`` = why.

    ``rep.certify`` returns ``{"statement": what is proven, "columns": {table: {column:
    [proven digits per row]}}, "values": {key: (proven digits, enclosure)}, "not_certified":
    {column or key: why}, "growth": {label: {"t": [times], "digits": [proven digits], "dps":
    int, "note": str}}}`` ("growth" optional: the proven digits of the state against time
    of each certified long run, at most :data:`mpvi.repro.certified.GROWTH_POINTS` points,
    :func:`mpvi.repro.certified.growth_series`); here each certified column becomes
    ``{"min", "median"}`` of its rows' digits, and every column of ``out``'s tables and
    every compared value that is neither certified nor declared not certifiable is listed
    in ``not_certified`` as not declared.  Proven digits are whole digits, rounded down."""
    t0 = time.perf_counter()
    block = {"dps": run.ctx.dps, "statement": "", "columns": {}, "values": {},
             "not_certified": {}}
    if rep.certify is None:
        block["not_certified"]["*"] = rep.not_certifiable
        block["wall_time_s"] = 0.0
        return block
    found = rep.certify(run, out)
    block["statement"] = found["statement"]
    block["not_certified"] = dict(found.get("not_certified", {}))
    for table, columns in found.get("columns", {}).items():
        for column, per_row in columns.items():
            rows = sorted(int(d) for d in per_row)
            block["columns"].setdefault(table, {})[column] = {
                "min": rows[0], "median": rows[(len(rows) - 1) // 2]}
    block["values"] = {k: {"digits": int(d), "enclosure": str(e)}
                       for k, (d, e) in found.get("values", {}).items()}
    if found.get("growth"):
        block["growth"] = {label: {"t": [float(t) for t in g["t"]],
                                   "digits": [float(d) for d in g["digits"]],
                                   "dps": int(g["dps"]), "note": str(g["note"])}
                           for label, g in found["growth"].items()}
    for table, df in out.tables.items():
        for column in df.columns:
            name = column if table == "" else f"{table}.{column}"
            if (column not in block["columns"].get(table, {})
                    and name not in block["not_certified"]):
                block["not_certified"][name] = NOT_DECLARED
    for key in out.values:
        if key not in block["values"] and key not in block["not_certified"]:
            block["not_certified"][key] = NOT_DECLARED
    block["wall_time_s"] = round(time.perf_counter() - t0, 3)
    return block


def verify_record(rep, record, stream=None, out_dir=None):
    """Prove the ``certified`` block of ``rep``'s provenance ``record`` again from its
    recorded inputs (context, digits, parameters, quick): ``compute`` and the
    reproduction's certify hook are run again (:func:`certified_block`, no study read
    from a cache), and every recorded claim must hold of the recomputation.  Returns the
    failures, one line each naming the value (empty: every claim holds):

    - a recorded value enclosure that does not contain the recomputed enclosure (Arb's
      ``contains``, both read at a precision that holds every digit written), or more
      proven digits recorded than recomputed, or a value no longer certified;
    - a certified column whose recorded fewest or median proven digits exceed the
      recomputed ones (columns record digits, not balls), or one no longer certified;
    - a growth series claiming more digits than recomputed at some time;
    - outputs (CSV files, compared values) that are not those recorded: the proven digits
      are of the recorded numbers, which the inputs no longer give (columns and values the
      reproduction declares unchecked, a wall time, are compared only if ``out_dir``, the
      results directory holding the recorded files, is not given).

    A record without a ``certified`` block has nothing to verify: ValueError."""
    old = record.get("certified")
    if old is None:
        raise ValueError(f"{rep.id}: its record has no certified block (run `mpvi run "
                         f"{rep.id} --certify`)")
    ctx = record_context(record)
    reason = rep.refusal(ctx)
    if reason:
        raise Refused(rep.id, ctx.name, reason)
    params = recorded_parameters(rep, record)
    run, out, _ = _compute(rep, ctx, params, record["quick"], stream, None,
                           ", verifying its certified block")
    with ctx.active():
        new = json_data(certified_block(rep, run, out))
    rendered = Rendered(rep.id, _csv_files(rep, out), json_data(out.values), {}, 0.0,
                        dict(out.unchecked))
    old_files = {} if out_dir is None else old_tables(record, output_paths(rep, out_dir)["dir"],
                                                      rendered)
    failures = [f"{rep.id}: {d}" for d in output_differences(record, rendered, ctx, params,
                                                        record["quick"], "recorded", old_files)]
    if old["dps"] != new["dps"]:
        failures.append(f"{rep.id}: certified at {old['dps']} digits, recomputed at "
                        f"{new['dps']}")

    def lost(what, key, table=None):
        why = new["not_certified"].get(key if table in (None, "") else f"{table}.{key}")
        failures.append(f"{rep.id}: {what} {key!r}: not certified by the recomputation"
                        + (f" ({why})" if why else ""))

    for key, entry in old["values"].items():
        got = new["values"].get(key)
        if got is None:
            lost("value", key)
            continue
        with arb_precision(len(entry["enclosure"]) + len(got["enclosure"]) + 20):
            try:
                recorded, recomputed = arb(entry["enclosure"]), arb(got["enclosure"])
            except ValueError:
                failures.append(f"{rep.id}: value {key!r}: its recorded enclosure "
                                f"{shown(entry['enclosure'])} is not a ball")
                continue
            if not (recorded.is_finite() and recorded.contains(recomputed)):
                failures.append(f"{rep.id}: value {key!r}: the recorded enclosure "
                                f"{entry['enclosure']} does not contain the recomputed "
                                f"{got['enclosure']}")
        if entry["digits"] > got["digits"]:
            failures.append(f"{rep.id}: value {key!r}: {entry['digits']} proven digits "
                            f"recorded, {got['digits']} recomputed")
    for table, columns in old["columns"].items():
        for column, c in columns.items():
            got = new["columns"].get(table, {}).get(column)
            name = column if table == "" else f"{table}.{column}"
            if got is None:
                lost("column", column, table)
            elif c["min"] > got["min"] or c["median"] > got["median"]:
                failures.append(f"{rep.id}: column {name!r}: {c['min']} (median "
                                f"{c['median']}) proven digits recorded, {got['min']} "
                                f"(median {got['median']}) recomputed")
    for label, g in old.get("growth", {}).items():
        got = new.get("growth", {}).get(label)
        if got is None or got["t"] != g["t"]:
            failures.append(f"{rep.id}: growth {label!r}: not recomputed at the recorded "
                            f"times")
        elif any(a > b for a, b in zip(g["digits"], got["digits"])):
            k = next(i for i, (a, b) in enumerate(zip(g["digits"], got["digits"])) if a > b)
            failures.append(f"{rep.id}: growth {label!r}: {g['digits'][k]} proven digits "
                            f"recorded at t = {g['t'][k]}, {got['digits'][k]} recomputed")
    return failures


def _claims(record):
    """How many claims the certified block of a provenance ``record`` makes (its values,
    columns and growth series; 0 without a block: a reproduction without a certify hook
    records none, and has nothing to verify)."""
    block = record.get("certified")
    if block is None:
        return 0
    return (len(block["values"]) + sum(len(c) for c in block["columns"].values())
            + len(block.get("growth", {})))


def verify_results(out_dir, ids=None, stream=None, report=None):
    """:func:`verify_record` for each reproduction ``ids`` (default every installed one)
    whose record in ``out_dir`` has a certified block that claims anything: a
    :class:`mpvi.Verification` (the claims proven again, the failures, the ids refused in
    their context, the ids without such a block).  ``report(event, k, n, rid, detail)`` is called as each id starts
    (``"start"``) and ends (``"done"`` with its failures, ``"refused"`` with why).  Raises
    :class:`OutputError` for records that are unreadable or do not match their digests,
    KeyError for an unknown id.  This is ``mpvi.verify(directory)`` (the entry point
    ``mpvi.verifiers:results``) and ``mpvi verify``."""
    reps = all_reproductions()
    chosen = list(reps) if ids is None else list(ids)
    for rid in chosen:
        if rid not in reps:
            raise KeyError(unknown_id(rid, reps))
    records = read_records([reps[rid] for rid in chosen], out_dir)
    todo = [rid for rid in chosen if records[rid] is not None and _claims(records[rid])]
    result = Verification(skipped=[rid for rid in chosen if rid not in todo])
    for k, rid in enumerate(todo, 1):
        if report is not None:
            report("start", k, len(todo), rid, None)
        try:
            failures = verify_record(reps[rid], records[rid], stream, out_dir)
        except Refused as exc:
            result.refused[rid] = str(exc)
            if report is not None:
                report("refused", k, len(todo), rid, str(exc))
            continue
        except Exception as exc:             # one line per id, then the next id
            failures = [f"{rid}: cannot be recomputed: {type(exc).__name__}: {one_line(exc)}"]
        result.checked += _claims(records[rid]) if not failures else 0
        result.failures.extend(failures)
        if report is not None:
            report("done", k, len(todo), rid, failures)
    return result


def render(rep, ctx, params, quick, stream=None, cache=None, check_digits=False,
           certify=False):
    """Compute and plot ``rep`` with ``params`` in ``ctx``: a :class:`Rendered`.  Studies go
    through ``cache`` (a :class:`mpvi.repro.cache.DiskCache`, a :class:`mpvi.repro.cache.TaskCache`
    or None); progress lines go to ``stream`` (stderr).  With ``check_digits``, ``compute``
    runs a second time in :func:`check_context` and the agreement of the two runs
    (:func:`mpvi.repro.digits.agreement`) becomes the provenance entry ``digits_check``;
    with ``certify``, the reproduction's certified computation becomes the entry
    ``certified`` (:func:`certified_block`; a later run without ``--certify`` keeps it
    only if its outputs are byte-identical, :func:`carry_certified`)."""
    # matplotlib loaded lazily: heavy (0.3 s), and only a figure needs it
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run, out, wall = _compute(rep, ctx, params, quick, stream, cache)
    files = _csv_files(rep, out)
    check = None
    if check_digits:
        cctx = check_context(ctx)
        _, cout, cwall = _compute(rep, cctx, params, quick, stream, cache,
                                  f", checking the digits of the {ctx.dps}-digit run")
        check = _digits.agreement(files, json_data(out.values), _csv_files(rep, cout),
                                  json_data(cout.values), ctx.dps, cctx.dps, cwall,
                                  out.unchecked)
        run.progress(f"{rep.id}: {_digits.summary(check)}")
    certified = None
    if certify:
        with ctx.active():
            certified = certified_block(rep, run, out)
        run.progress(f"{rep.id}: certified in {certified['wall_time_s']:.1f} s")
    with ctx.active():
        fig = rep.plot(out, params)
    png = _io.BytesIO()
    fig.savefig(png, dpi=120, format="png", bbox_inches="tight")
    plt.close(fig)
    files[f"{rep.id}.png"] = png.getvalue()
    extra = dict(out.extra)
    if run.newton:
        extra["newton"] = run.newton_summary()
    extra["from_cache"] = any(s["from_cache"] for s in run.studies)
    if check is not None:
        extra["digits_check"] = check
    if certified is not None:
        extra["certified"] = certified
    if run.studies:
        extra["studies"] = run.studies
        cached = [s["wall_time_s"] for s in run.studies if s["from_cache"]]
        if cached:
            extra["cached_wall_time_s"] = round(sum(cached), 3)
    return Rendered(rep.id, files, json_data(out.values), json_data(extra), wall,
                    dict(out.unchecked))


CERTIFY_NEEDS_MP = ("--certify needs a multiprecision context (gmp or mp): float64 runs are "
                    "not certified")
"""Why a float64 run refuses ``--certify`` (:func:`execute`, and every id of a parallel
run, :func:`mpvi.repro.parallel.run_parallel`)."""


def execute(rep, context=DEFAULT_CONTEXT, dps=64, quick=False, out_dir=None, stream=None,
            cache=None, check_digits=False, certify=False):
    """Run one reproduction and write its files atomically; returns the paths
    (:func:`output_paths`) and, under ``digits_check``, the check kept from the previous
    run or None (:func:`carry_digits_check`).

    ``out_dir`` defaults to :func:`default_out_dir`; ``cache`` is a
    :class:`mpvi.repro.cache.DiskCache` for the studies, or None (compute them);
    ``check_digits``: also run it with more digits and record how many agree (:func:`render`);
    ``certify``: also record the proven digits (:func:`certified_block`; mp contexts only).
    Raises :class:`Refused` before any computation if the reproduction cannot run in the
    context (or the digits cannot be checked in it), and ``OSError`` if the output
    directory is not writable."""
    t0 = time.perf_counter()
    ctx = get_context(context, dps)
    reason = rep.refusal(ctx)
    if not reason and check_digits:
        reason = rep.refusal(check_context(ctx))
    if not reason and certify and not ctx.is_mp:
        reason = CERTIFY_NEEDS_MP

    if reason:
        raise Refused(rep.id, ctx.name, reason)
    paths = output_paths(rep, out_dir or default_out_dir(quick))
    io.check_writable(paths["dir"], "output directory")
    params = rep.parameters(quick)
    rendered = render(rep, ctx, params, quick, stream, cache, check_digits, certify)
    written = write_outputs(rep, rendered, ctx, params, quick, out_dir or default_out_dir(quick))
    print(f"  [{time.perf_counter() - t0:7.1f} s] {rep.id}: done in {rendered.wall_time_s:.1f} s "
          f"-> {paths['csv'].parent}"
          f"{carried_note(written['digits_check'], written['certified'])}",
          file=stream if stream is not None else sys.stderr, flush=True)
    return written


def script_path(rep):
    """Where ``rep``'s script is, for its ``--help``: relative to the source checkout
    (``reproductions/<paper>/<id>.py``) when it is in one, else its file name."""
    module = sys.modules.get(rep.module or "__main__")
    path = Path(getattr(module, "__file__", None) or f"{rep.id}.py").resolve()
    root = io.project_root()
    return path.relative_to(root) if root and path.is_relative_to(root) else Path(path.name)


def script_main(rep, argv=None):
    """Command line of a single reproduction script (exit status 0, 1 on an error, 2 on a
    bad option or an unwritable --out, 3 if it refuses the context)."""
    ap = argparse.ArgumentParser(
        prog=f"python {script_path(rep)}",
        description=f"{rep.item} of {rep.paper}: {rep.title}. Writes <out>/{rep.paper}/{rep.id}"
                    ".csv, .png and .json (provenance). Run time measured alone with "
                    f"--no-cache: {Runtimes().describe(rep)}.",
        epilog="Exit status: 0 done, 1 error, 2 bad option or unwritable --results, "
               "3 refused (the reproduction cannot run in the requested context).")
    add_run_options(ap)
    args = ap.parse_args(argv)
    out = args.results or default_out_dir(args.quick)
    try:
        io.check_writable(out, "output directory")
    except OSError as exc:
        print(f"{ap.prog}: {exc}", file=sys.stderr)
        return 2
    if args.check_digits and args.context == "fp":
        ap.error("--check-digits needs a context whose precision can be raised (gmp or mp), "
                 "not fp")
    if args.certify and args.context == "fp":
        ap.error("--certify needs a multiprecision context (gmp or mp), not fp")
    cache = open_cache(args)
    try:
        execute(rep, args.context, args.dps, args.quick, out, cache=cache,
                check_digits=args.check_digits, certify=args.certify)
    except Refused as exc:
        print(exc, file=sys.stderr)
        return 3
    except Exception as exc:                 # one line, not a traceback
        print(f"{rep.id}: error: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 1
    return 0
