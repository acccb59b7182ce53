"""Every file mpvi reads back is verified (issue 35 items 8, 3, 10, 11): a saved solution,
a provenance JSON, a study cache entry, a published CSV.  A damaged, truncated, edited or
crafted file is one named error (or a bad cache entry, recomputed), never a wrong number,
never a "match", never a raw traceback, never a hang; a report never copies what a
symbolic link points to."""
import gzip
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sympy as sp

import mpvi
import mpvi.drive.solution
from conftest import time_limit
from mpvi import LagrangianSystem, Problem, SolutionFileError, load_solution, solve
from mpvi.repro import cache as _cache
from mpvi.repro.cache import DiskCache
from mpvi.repro.cli import main
from mpvi.repro.published import PublishedDataError, load_known, load_published
from mpvi.repro.report import write_report
from mpvi.repro.declare import all_reproductions, default_out_dir
from mpvi.repro.records import read_provenance, OutputError
from mpvi.repro.studies import study

CTX = mpvi.GMPContext(64)
Q = sp.Symbol("q")
FIGURES = default_out_dir(False)


def digest(record):
    """The digest of a record's content, computed here from its definition (SHA-256 of the
    canonical JSON of every field but ``digest``), independently of mpvi."""
    body = {k: v for k, v in record.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def restamped(record):
    """``record`` with the digest of its (changed) content: as if mpvi had written it so,
    which leaves only the other checks to find what is wrong."""
    return {**{k: v for k, v in record.items() if k != "digest"}, "digest": digest(record)}


# ----- saved solutions ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pendulum():
    """(system, solution, the saved record) of a pendulum from q = 1/2 at rest, Simpson,
    h = 1/80, 80 steps (q(1/4) = 0.48508...)."""
    S = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, CTX)
    sol = solve(Problem(S, ["1/2"], v0=[0]), "simpson", h="1/80", n=80)
    return S, sol


@pytest.fixture
def saved(pendulum, tmp_path):
    """The saved record of the pendulum solution (JSON data) and a function writing a
    record to a file and loading it."""
    S, sol = pendulum
    path = sol.save(tmp_path / "pendulum.json")
    record = json.loads(path.read_text())

    def load(rec, stamp=True):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(restamped(rec) if stamp else rec))
        return load_solution(bad, system=S)
    return record, load


@pytest.fixture
def saved_trial(pendulum, tmp_path):
    """As ``saved``, of a run whose dense output is its own trial function (the cubic of the
    order-2 Hermite variational integrator is of the method's order, so it is kept; Simpson's
    quadratic gives way to Hermite interpolation of the nodes, see mpvi.engines.dense)."""
    S, _ = pendulum
    sol = solve(Problem(S, ["1/2"], v0=[0]), "hermite_variational", h="1/80", n=80)
    record = json.loads(sol.save(tmp_path / "trial.json").read_text())
    assert record["dense"]["kind"] == "trial"

    def load(rec):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(restamped(rec)))
        return load_solution(bad, system=S)
    return record, load


def _changed(record, key, index, value):
    rec = json.loads(json.dumps(record))
    target = rec[key]
    for i in index[:-1]:
        target = target[i]
    target[index[-1]] = value
    return rec


def test_a_saved_solution_carries_the_digest_of_its_whole_content(saved):
    record, load = saved
    assert record["version"] == 3 and record["digest"] == digest(record)
    assert mpvi.drive.solution.FORMAT_VERSION == 3


def test_one_changed_digit_is_refused_by_the_digest(saved, pendulum):
    record, load = saved
    x = record["q"][20][0]
    mantissa, _, exponent = x.partition("e")
    changed = mantissa[:-1] + ("1" if mantissa[-1] != "1" else "2") + "e" + exponent
    rec = _changed(record, "q", [20, 0], changed)
    with pytest.raises(SolutionFileError, match=r"bad\.json: its content does not match its "
                                                r"SHA-256 digest"):
        load(rec, stamp=False)


def test_a_64_digit_file_relabelled_as_1_digit_is_refused(saved):
    """dps 1 read every number to one digit."""
    record, load = saved
    rec = dict(record, context={"kind": "gmp", "dps": 1})
    with pytest.raises(SolutionFileError, match="more digits than a 1-digit context writes"):
        load(rec)


def test_a_precision_of_10_to_the_8_digits_is_refused_at_once(saved):
    """dps 10**8 took the machine's memory and time; it is refused before any number."""
    record, load = saved
    rec = dict(record, context={"kind": "mp", "dps": 10 ** 8})
    t0 = time.perf_counter()
    with time_limit(10), pytest.raises(SolutionFileError, match=r"context digits 100000000 "
                                                                r"\(from 1 to 1000000\)"):
        load(rec)
    assert time.perf_counter() - t0 < 1


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1/0", "0x10", "1e5000000000", ""])
def test_a_state_that_is_not_a_finite_decimal_is_refused(saved, value):
    record, load = saved
    with pytest.raises(SolutionFileError, match=r"q\[3\]\[0\] should be a finite decimal "
                                                r"number of the context"):
        load(_changed(record, "q", [3, 0], value))


def test_times_that_are_not_monotone_are_refused(saved):
    record, load = saved
    rec = json.loads(json.dumps(record))
    rec["t"][3], rec["t"][4] = rec["t"][4], rec["t"][3]
    with pytest.raises(SolutionFileError, match=r"t is not strictly monotone in the direction "
                                                r"of h"):
        load(rec)


def test_a_wrong_step_is_refused_so_that_dense_output_cannot_be_wrong(saved, pendulum):
    """A wrong h made sol(1/4) return 48508 instead of 0.48508."""
    S, sol = pendulum
    record, load = saved
    with CTX.active():
        assert abs(sol(CTX.num("1/4")).q[0] - CTX.num("0.48508")) < CTX.num("1e-5")
    with pytest.raises(SolutionFileError, match=r"t\[1\] = .* is not the node t0 \+ 1 h"):
        load(dict(record, h="2.5e-2"))


@pytest.mark.parametrize("steps, planned, message", [
    (-3, 80, "steps should be an integer from 0 to 80, not -3"),
    (81, 80, "steps should be an integer from 0 to 80, not 81"),
    (79, 80, "t has 81 times; every node saved after 79 steps makes 80"),
    (True, 80, "steps should be an integer from 0 to 80, not true"),
    ("80", 80, 'steps should be an integer from 0 to 80, not "80"'),
])
def test_steps_out_of_bounds_are_refused(saved, steps, planned, message):
    record, load = saved
    with pytest.raises(SolutionFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(dict(record, steps=steps, steps_planned=planned))


def test_shapes_that_do_not_agree_are_refused(saved, saved_trial):
    record, load = saved
    rec = json.loads(json.dumps(record))
    rec["p"] = rec["p"][:-1]
    with pytest.raises(SolutionFileError, match="p should be a list of 81 rows"):
        load(rec)
    rec = json.loads(json.dumps(record))
    rec["system"]["coordinates"], rec["system"]["velocities"] = ["q", "r"], ["v0", "v1"]
    with pytest.raises(SolutionFileError, match=r"q\[0\] should be a list of 2 numbers"):
        load(rec)
    rec = json.loads(json.dumps(record))
    rec["internal"]["shape"][0] = 79
    with pytest.raises(SolutionFileError, match="internal.shape should be"):
        load(rec)
    record, load = saved_trial
    rec = json.loads(json.dumps(record))
    rec["dense"]["coefficients"] = rec["dense"]["coefficients"][:-1]
    with pytest.raises(SolutionFileError, match="dense.coefficients should be a list of 80 steps"):
        load(rec)


def test_an_event_outside_the_run_is_refused(saved):
    record, load = saved
    event = {"index": 0, "name": "e", "t": "5.0", "q": record["q"][0], "p": record["p"][0],
             "v": record["v"][0], "direction": 1}
    with pytest.raises(SolutionFileError, match=r"events\[0\].t = 5.0* is outside the run"):
        load(dict(record, events=[event]))


def test_a_zero_denominator_in_the_trial_basis_is_a_named_error(saved_trial):
    """Fraction("1/0") raised a raw ZeroDivisionError."""
    record, load = saved_trial
    rec = json.loads(json.dumps(record))
    rec["dense"]["trial"]["polynomials"][0][0] = "1/0"
    with pytest.raises(SolutionFileError, match="should be a list of fractions p/q"):
        load(rec)


def test_an_unknown_method_or_parameter_is_refused(saved):
    record, load = saved
    with pytest.raises(SolutionFileError, match="'shooting' is not a registered method"):
        load(dict(record, method="shooting"))
    with pytest.raises(SolutionFileError, match="that method 'simpson' does not have"):
        load(dict(record, params={"__class__": 1}))


def test_a_truncated_file_is_refused(saved, pendulum, tmp_path):
    S, sol = pendulum
    path = sol.save(tmp_path / "t.json")
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 1, 1):
        path.write_bytes(data[:cut])
        with pytest.raises(SolutionFileError, match="t.json: not a readable saved solution: "
                                                    "it is not valid JSON"):
            load_solution(path)
    gz = sol.save(tmp_path / "t.json.gz")
    gz.write_bytes(gz.read_bytes()[:-20])
    with pytest.raises(SolutionFileError, match="not a readable gzip file"):
        load_solution(gz)


def test_deep_nesting_is_a_named_error_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.json"
    for depth in (100_000, 500):
        path.write_text("[" * depth + "]" * depth)
        with pytest.raises(SolutionFileError, match="nested more than 12 deep"):
            load_solution(path)


def test_a_gzip_bomb_is_refused(pendulum, tmp_path, monkeypatch):
    S, sol = pendulum
    path = sol.save(tmp_path / "s.json.gz")
    limit = 20_000
    assert path.stat().st_size < limit < len(gzip.decompress(path.read_bytes()))
    monkeypatch.setattr(mpvi.drive.solution, "MAX_FILE_BYTES", limit)
    with pytest.raises(SolutionFileError, match=f"decompresses to more than {limit} bytes"):
        load_solution(path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    with time_limit(10), pytest.raises(SolutionFileError, match="is a FIFO, not a regular file"):
        load_solution(fifo)


def test_a_version_1_file_is_read_with_a_warning_and_still_checked(saved, pendulum, tmp_path):
    S, sol = pendulum
    record, load = saved
    old = {k: v for k, v in record.items() if k not in ("digest", "certificate", "posed")}
    old["version"] = 1                         # a version 1 file has neither of the last two
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(old))
    with pytest.warns(UserWarning, match="format version 1, which carries no digest"):
        back = load_solution(path)
    assert (back.q == sol.q).all() and (back.t == sol.t).all()
    path.write_text(json.dumps(dict(old, h="2.5e-2")))
    with pytest.raises(SolutionFileError, match="is not the node t0"):
        load_solution(path)


def test_evaluating_at_no_time_or_a_malformed_time_is_a_clear_error(pendulum):
    S, sol = pendulum
    with pytest.raises(ValueError, match="an empty sequence of times"):
        sol([])
    with pytest.raises(ValueError, match="cannot read a number from 'abc'"):
        sol("abc")
    with pytest.raises(ValueError, match="is not a finite number"):
        sol(CTX.num("nan"))
    with pytest.raises(TypeError, match="time t"):
        sol(None)


# ----- provenance JSONs ---------------------------------------------------------------------

RID = "axioms2024_tab02"
KNOWN = "T=10 newmark p N=400"          # printed 0.782 for 0.0782: a known discrepancy ([E4])


@pytest.fixture
def results(tmp_path):
    """A copy of the committed outputs of RID (JSON, CSV, PNG) in a results directory."""
    d = tmp_path / "results" / "axioms2024"
    d.mkdir(parents=True)
    for path in (FIGURES / "axioms2024").glob(f"{RID}.*"):
        shutil.copy(path, d / path.name)
    return tmp_path / "results"


def _one_error_line(capsys):
    err = capsys.readouterr()
    assert "Traceback" not in err.err and " match" not in err.out.replace("0 match", "")
    lines = [x for x in err.err.splitlines() if x.startswith("mpvi: ")]
    assert len(lines) == 1, err.err
    return lines[0]


def test_the_committed_provenance_records_carry_valid_digests():
    reps = all_reproductions()
    records = [read_provenance(rep, FIGURES) for rep in reps.values()]
    assert all(r is not None and r["digest"] == digest(r) for r in records)


def test_a_changed_value_is_never_a_match(results, capsys, tmp_path):
    """Editing a known discrepancy into the printed value made `mpvi diff` say "match"."""
    jpath = results / "axioms2024" / f"{RID}.json"
    record = json.loads(jpath.read_text())
    assert main(["diff", RID, "--out", str(results)]) == 0
    assert f"{KNOWN}" in capsys.readouterr().out
    record["values"][KNOWN] = "0.782"
    jpath.write_text(json.dumps(record, indent=2))
    for argv in (["diff", RID, "--out", str(results)], ["list", "--results", str(results)],
                 ["report", "--results", str(results), "--out", str(tmp_path / "r")]):
        assert main(argv) == 2, argv
        line = _one_error_line(capsys)
        assert line == (f"mpvi: {RID}: {jpath} does not match its digest: it was changed after "
                        f"mpvi wrote it, and its values cannot be trusted; rerun `mpvi run {RID}`")
    assert not (tmp_path / "r").exists()


def test_a_record_without_a_digest_is_invalid(results, capsys):
    jpath = results / "axioms2024" / f"{RID}.json"
    record = json.loads(jpath.read_text())
    del record["digest"]
    jpath.write_text(json.dumps(record))
    assert main(["diff", RID, "--out", str(results)]) == 2
    assert "carries no digest of its content" in _one_error_line(capsys)


def test_a_number_no_float_holds_is_one_line_in_list(results, capsys):
    """10**400 as a wall time raised a raw OverflowError where `mpvi list` adds times."""
    jpath = results / "axioms2024" / f"{RID}.json"
    jpath.write_text(json.dumps(restamped(dict(json.loads(jpath.read_text()),
                                               wall_time_s=10 ** 400))))
    assert main(["list", "--results", str(results)]) == 2
    assert "record.wall_time_s should be a number, not 1000" in _one_error_line(capsys)


def test_deeply_nested_provenance_is_one_line(results, capsys):
    (results / "axioms2024" / f"{RID}.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["diff", RID, "--out", str(results)]) == 2
    assert "is not valid JSON: nested more than 16 deep; rerun" in _one_error_line(capsys)


def _mpvi(*argv):
    """``mpvi argv`` in a process of its own, killed after a minute (a hang in open() of a
    FIFO cannot be interrupted reliably in this process): (exit status, stderr lines)."""
    code = f"import sys; from mpvi.repro.cli import main; sys.exit(main({list(argv)!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stderr.splitlines()


def test_a_fifo_in_place_of_an_output_is_one_line_not_a_hang(results):
    d = results / "axioms2024"
    (d / f"{RID}.csv").unlink()
    os.mkfifo(d / f"{RID}.csv")                 # a file the JSON lists
    status, err = _mpvi("diff", RID, "--out", str(results))
    assert status == 2 and [x for x in err if x.startswith("mpvi: ")] == [
        f"mpvi: {RID}: {d / RID}.csv, listed by its provenance {d / RID}.json, is a FIFO, not "
        f"a regular file; rerun `mpvi run {RID}`"]
    (d / f"{RID}.json").unlink()
    os.mkfifo(d / f"{RID}.json")                # the JSON itself
    status, err = _mpvi("list", "--results", str(results))
    assert status == 2 and [x for x in err if x.startswith("mpvi: ")] == [
        f"mpvi: {RID}: {d / RID}.json is a FIFO, not a regular file; rerun `mpvi run {RID}`"]


@pytest.fixture
def secret(tmp_path):
    """A file of the user's outside the results, readable by the user only."""
    path = tmp_path / "outside" / "secret.csv"
    path.parent.mkdir()
    path.write_text("password,token\nhunter2,s3cr3t-t0ken\n")
    path.chmod(0o600)
    return path


def _report_files(out):
    return [p for p in out.rglob("*") if p.is_file()]


def test_the_report_copies_no_symlink_target(results, secret, tmp_path, capsys):
    """A JSON without `files` made the report copy the CSV beside it, following a symbolic
    link to any file of the user's."""
    d = results / "axioms2024"
    jpath = d / f"{RID}.json"
    record = json.loads(jpath.read_text())
    del record["files"]
    jpath.write_text(json.dumps(restamped(record)))
    (d / f"{RID}.csv").unlink()
    (d / f"{RID}.csv").symlink_to(secret)
    (d / f"{RID}_extra.csv").symlink_to(secret)
    out = tmp_path / "report"
    write_report(results, out)
    err = capsys.readouterr().err
    for name in (f"{RID}.csv", f"{RID}_extra.csv"):
        assert (f"mpvi: report: {d / name} is a symbolic link, not a regular file: not shown "
                f"or copied") in err.splitlines()
    assert (out / "files" / "axioms2024" / f"{RID}.png").exists()
    assert not any("s3cr3t" in p.read_text(errors="replace") for p in _report_files(out))
    assert not any(p.name.endswith(".csv") for p in _report_files(out))


def test_a_listed_output_that_is_a_symlink_makes_the_outputs_invalid(results, secret, capsys,
                                                                     tmp_path):
    d = results / "axioms2024"
    secret.write_bytes((d / f"{RID}.csv").read_bytes())       # the digest would match
    (d / f"{RID}.csv").unlink()
    (d / f"{RID}.csv").symlink_to(secret)
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "r")]) == 2
    assert "is a symbolic link, not a regular file; rerun" in _one_error_line(capsys)
    assert not (tmp_path / "r").exists()


def test_a_paper_directory_linked_from_outside_is_not_copied(results, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(results / "axioms2024", elsewhere)
    (results / "axioms2024").symlink_to(elsewhere, target_is_directory=True)
    out = tmp_path / "report"
    write_report(results, out)
    assert "is outside the results directory" in capsys.readouterr().err
    assert not (out / "files" / "axioms2024").exists()


# ----- the study cache ------------------------------------------------------------------------

@study("test_trust_files_square")
def square(rec, params):
    x = rec.ctx.num(params["x"])
    return {"square": x * x}


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_a_cache_entry_that_is_not_a_regular_file_is_recomputed(kind, tmp_path, capsys, secret):
    cache = DiskCache(tmp_path / "cache")
    cache.directory.mkdir()
    ctx = mpvi.MPContext(30)
    path = cache.path(square.identity({"x": "3"}, ctx))
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        secret.write_text(json.dumps({"format": _cache.FORMAT}))
        path.symlink_to(secret)
    else:
        path.mkdir()
    with time_limit(20):
        result = square({"x": "3"}, ctx, cache=cache)
    assert result.value == {"square": 9} and not result.from_cache
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("mpvi: ")]
    what = {"fifo": "a FIFO", "symlink": "a symbolic link", "directory": "a directory"}[kind]
    assert lines[0] == f"mpvi: cache entry {path}: it is {what}, not a regular file; recomputing"
    if kind == "directory":
        assert lines[1:] == [f"mpvi: cache entry {path} is a directory: the new result is not "
                             f"stored"]
        return
    assert len(lines) == 1 and stat.S_ISREG(os.lstat(path).st_mode)    # replaced
    if kind == "symlink":                                                # the target untouched
        assert secret.read_text() == json.dumps({"format": _cache.FORMAT})
    again = square({"x": "3"}, ctx, cache=cache)
    assert again.from_cache and again.value == {"square": 9}


@pytest.mark.parametrize("change, what", [
    (lambda e: e.update(newton=[["simpson", {"solves": "many"}]]), "newton[0] is not"),
    (lambda e: e.update(wall_time_s=-1), "wall_time_s is not a non-negative number"),
    (lambda e: e.update(wall_time_s=10 ** 400), "wall_time_s is not a non-negative number"),
    (lambda e: e.update(value={"square": {"$num": "1" * 500}}), "a number of 500 characters"),
])
def test_a_digested_entry_with_bad_fields_is_recomputed(change, what, tmp_path, capsys):
    cache = DiskCache(tmp_path / "cache")
    ctx = mpvi.MPContext(30)
    square({"x": "3"}, ctx, cache=cache)
    path = cache.path(square.identity({"x": "3"}, ctx))
    entry = json.loads(path.read_text())
    change(entry)
    entry["digest"] = _cache.digest(entry)
    path.write_text(json.dumps(entry))
    capsys.readouterr()
    result = square({"x": "3"}, ctx, cache=cache)
    assert result.value == {"square": 9} and not result.from_cache
    err = capsys.readouterr().err
    assert f"mpvi: cache entry {path}: " in err and what in err and "Traceback" not in err


def test_a_deeply_nested_cache_entry_is_a_bad_entry(tmp_path, capsys):
    cache = DiskCache(tmp_path / "cache")
    cache.directory.mkdir()
    ctx = mpvi.MPContext(30)
    path = cache.path(square.identity({"x": "3"}, ctx))
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert square({"x": "3"}, ctx, cache=cache).value == {"square": 9}
    assert "nested more than 32 deep; recomputing" in capsys.readouterr().err


# ----- published data -------------------------------------------------------------------------

HEADER = "id,key,quantity,printed,compare,tolerance,source\n"


@pytest.mark.parametrize("body, message", [
    (HEADER + "a,k,q,1.5,digit,,s\nb,k,q\x00,2,digit,,s\n", r"p.csv, line 3: control "
                                                             r"character '\\x00'"),
    (HEADER + "a,k,q," + "1" * 200_000 + ",digit,,s\n", "p.csv, line 2: field larger than "
                                                         "field limit"),
    (HEADER + "a,k,q,1e99999,digit,,s\n", r"p.csv, line 2: '1e99999' is beyond 1e\+-1000"),
])
def test_a_malformed_published_csv_names_file_and_line(tmp_path, body, message):
    path = tmp_path / "p.csv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(PublishedDataError, match=message):
        load_published(path)


def test_a_fifo_of_published_data_is_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "discrepancies.csv")
    (tmp_path / "ERRATA.md").write_text("[E1]\n")
    with time_limit(10), pytest.raises(PublishedDataError, match="is a FIFO, not a regular file"):
        load_known(tmp_path / "discrepancies.csv", tmp_path / "ERRATA.md")


def test_a_reproduced_value_beyond_the_decimal_range_is_a_mismatch_with_its_reason(
        results, capsys):
    jpath = results / "axioms2024" / f"{RID}.json"
    record = json.loads(jpath.read_text())
    key = "T=1 newmark p N=10"                 # printed 0.0751: a match
    record["values"][key] = "1e999999999"
    jpath.write_text(json.dumps(restamped(record)))
    assert main(["diff", RID, "--out", str(results)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    row = next(x for x in captured.out.splitlines() if x.startswith(key))
    words = " ".join(captured.out.split())          # the note under the table, unwrapped
    assert "MISMATCH" in row and f"{key}: the reproduced value '1e999999999' cannot be " \
        "compared (Overflow)" in words
