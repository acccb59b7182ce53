"""Property-based fuzzing of every reader of files mpvi wrote (issue 35, acceptance 2).

Real files -- a solution saved from a small solve, a committed provenance JSON with its
CSV and PNG, a published CSV and the discrepancies file, a study cache entry -- are mutated
by byte flips, truncation, insertion and deletion, and at the JSON level (a value replaced
by a huge, negative or non-finite number, a string, a deep nesting, null; a key removed or
added), with the digest left as it was or recomputed over the mutated content (so that
the checks behind the digest are reached too).  Every outcome is a verified read -- equal
to the original when the mutation changed nothing the file means -- or the reader's one
named error; never another exception, never a hang.
"""
import hashlib
import json
import shutil

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mpvi
from conftest import time_limit
from mpvi import LagrangianSystem, Problem, SolutionFileError, load_solution, solve
from mpvi.repro.cache import DiskCache
from mpvi.repro.published import PublishedDataError, diff, load_known, load_published
from mpvi.repro.report import compute_time
from mpvi.repro.packages import reproduction_packages
from mpvi.repro.declare import all_reproductions, default_out_dir
from mpvi.repro.records import read_provenance, OutputError
from mpvi.repro.studies import study

FUZZ = settings(max_examples=120, deadline=2000, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
CTX = mpvi.GMPContext(30)
Q = sp.Symbol("q")


# ----- mutations -----------------------------------------------------------------------------

def sha256_digest(record, prefix="sha256:"):
    body = {k: v for k, v in record.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return prefix + hashlib.sha256(text.encode("ascii")).hexdigest()


@st.composite
def byte_mutations(draw, data):
    """``data`` with one byte flipped, truncated, a run of bytes inserted or deleted."""
    kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
    i = draw(st.integers(0, len(data) - 1))
    if kind == "flip":
        return data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
    if kind == "truncate":
        return data[:i]
    if kind == "insert":
        return data[:i] + draw(st.binary(min_size=1, max_size=8)) + data[i:]
    return data[:i] + data[i + draw(st.integers(1, 8)):]


DEEP = "\x00deep\x00"
"""A placeholder replaced by a deep nesting in the text (json.dumps would recurse)."""

REPLACEMENTS = st.one_of(
    st.sampled_from([10 ** 400, -1, -10 ** 18, 0, 2 ** 63, 1e308, float("nan"), float("inf"),
                     True, None, "", "nan", "-inf", "1/0", "1e999999999", "0x1p3", "1" * 5000,
                     [], {}, [[[]]], DEEP]),
    st.integers(), st.floats(), st.text(max_size=20),
    st.lists(st.integers(-3, 3), max_size=3))


@st.composite
def json_mutations(draw, record, restamp_prefix):
    """(text, record or None): ``record`` with a value somewhere replaced, a key removed or
    added, serialized; the digest recomputed (with ``restamp_prefix``) half of the time.
    The record is None when the text holds a nesting only the text can hold."""
    rec = json.loads(json.dumps(record))
    parent, key = None, None
    node = rec
    for _ in range(draw(st.integers(1, 6))):             # descend to a random place
        if isinstance(node, dict) and node:
            parent, key = node, draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            parent, key = node, draw(st.integers(0, len(node) - 1))
        else:
            break
        node = parent[key]
    op = draw(st.sampled_from(["replace", "remove", "add"]))
    if op == "remove" and isinstance(parent, dict):
        del parent[key]
    elif op == "add" and isinstance(parent, dict):
        parent[draw(st.text(min_size=1, max_size=8))] = draw(REPLACEMENTS)
    elif parent is not None:
        parent[key] = draw(REPLACEMENTS)
    if draw(st.booleans()):
        rec["digest"] = sha256_digest(rec, restamp_prefix)
    text = json.dumps(rec)
    if DEEP in text:
        depth = draw(st.sampled_from([20, 40, 2000, 100_000]))
        return text.replace(json.dumps(DEEP), "[" * depth + "]" * depth), None
    return text, rec


def same_meaning(text, record):
    """Whether ``text`` is JSON that means exactly ``record`` (a no-op mutation)."""
    try:
        return json.loads(text) == record
    except (ValueError, RecursionError):
        return False


# ----- saved solutions ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(the solution, the bytes of its file, its record, a scratch file) of a pendulum
    solve with every node saved and its dense-output data."""
    S = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, CTX)
    sol = solve(Problem(S, ["1/2"], v0=[0]), "simpson", h="1/20", n=12)
    d = tmp_path_factory.mktemp("fuzz-solution")
    data = sol.save(d / "sol.json").read_bytes()
    return sol, data, json.loads(data), d / "mutated.json"


def equal_solutions(a, b):
    return (a.h == b.h and a.steps == b.steps and a.t.shape == b.t.shape
            and all((getattr(a, k) == getattr(b, k)).all() for k in ("t", "q", "p", "v"))
            and a.stats == b.stats and a.params == b.params)


def check_solution_read(path, text, original, sol):
    path.write_bytes(text)
    try:
        with time_limit(10):
            back = load_solution(path)
    except SolutionFileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}: ")
        assert not same_meaning(text, original), f"a no-op mutation was refused: {exc}"
        return None
    if same_meaning(text, original):
        assert equal_solutions(back, sol)
    repr(back)
    return back


@FUZZ
@given(st.data())
def test_a_mutated_saved_solution_is_the_original_or_one_named_error(saved, data):
    sol, original, record, path = saved
    text = data.draw(byte_mutations(original))
    back = check_solution_read(path, text, record, sol)
    if back is not None:               # a byte-level change that passed the digest
        assert same_meaning(text, record)


@FUZZ
@given(st.data())
def test_a_saved_solution_mutated_in_its_json_is_consistent_or_one_named_error(saved, data):
    sol, original, record, path = saved
    text, _ = data.draw(json_mutations(record, "sha256:"))
    check_solution_read(path, text.encode("utf-8"), record, sol)


# ----- provenance JSONs -----------------------------------------------------------------------

RID = "axioms2024_fig08"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """(reproduction, results directory holding a copy of RID's committed outputs, the
    JSON's bytes, its record, {file name: bytes})."""
    rep = all_reproductions()[RID]
    results = tmp_path_factory.mktemp("fuzz-outputs")
    (results / rep.paper).mkdir()
    figures = default_out_dir(False) / rep.paper
    record = json.loads((figures / f"{RID}.json").read_text())
    files = {n: (figures / n).read_bytes() for n in record["files"]}
    for name in [*files, f"{RID}.json"]:
        shutil.copy(figures / name, results / rep.paper / name)
    return rep, results, (figures / f"{RID}.json").read_bytes(), record, files


def check_provenance_read(outputs, text, restore=None):
    rep, results, original, record, files = outputs
    jpath = results / rep.paper / f"{RID}.json"
    jpath.write_bytes(text)
    try:
        with time_limit(10):
            back = read_provenance(rep, results)
            if back is not None:       # what diff, list and report do with it
                diff([RID], results, records={RID: back})
                compute_time([back])
    except OutputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{RID}: ")
        assert str(exc).endswith(f"rerun `mpvi run {RID}`") or "cannot read" in str(exc)
        assert restore is not None or not same_meaning(text, record), str(exc)
        return None
    except PublishedDataError as exc:  # a record (with a recomputed digest) of no such key
        assert "computes no value" in str(exc)
        return None
    finally:
        jpath.write_bytes(original)
        if restore:
            (results / rep.paper / restore).write_bytes(files[restore])
    if same_meaning(text, record):
        assert back == record
    return back


@FUZZ
@given(st.data())
def test_a_mutated_provenance_json_is_the_original_or_one_line(outputs, data):
    rep, results, original, record, files = outputs
    text = data.draw(byte_mutations(original))
    back = check_provenance_read(outputs, text)
    if back is not None:
        assert same_meaning(text, record)


@FUZZ
@given(st.data())
def test_a_provenance_json_mutated_in_its_values_is_never_read_unless_restamped(outputs, data):
    rep, results, original, record, files = outputs
    text, mutated = data.draw(json_mutations(record, "sha256:"))
    back = check_provenance_read(outputs, text.encode("utf-8"))
    if back is not None and mutated is not None and mutated != record:
        assert mutated["digest"] == sha256_digest(mutated)     # only a recomputed digest


@settings(FUZZ, max_examples=40)
@given(st.data())
def test_a_mutated_output_file_makes_the_outputs_invalid(outputs, data):
    rep, results, original, record, files = outputs
    name = data.draw(st.sampled_from(sorted(files)))
    mutated = data.draw(byte_mutations(files[name]))
    (results / rep.paper / name).write_bytes(mutated)
    back = check_provenance_read(outputs, original, restore=name)
    assert (back is not None) == (mutated == files[name])


# ----- published data ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """(a scratch directory, the bytes of a published CSV without formulas, of the
    discrepancies file and of ERRATA.md)."""
    pkg = reproduction_packages()[0]
    axioms = pkg.root / "axioms2024"                 # the paper folder
    d = tmp_path_factory.mktemp("fuzz-published")
    return (d, (axioms / "published" / "axioms2024_tab02.csv").read_bytes(),
            (axioms / "discrepancies.csv").read_bytes(), (axioms / "ERRATA.md").read_bytes())


@FUZZ
@given(st.data())
def test_a_mutated_published_csv_is_read_or_one_named_error(published, data):
    d, csv_bytes, known_bytes, errata = published
    path = d / "axioms2024_tab02.csv"
    text = data.draw(byte_mutations(csv_bytes))
    path.write_bytes(text)
    try:
        with time_limit(10):
            values = load_published(path)
    except PublishedDataError as exc:
        assert str(exc).startswith((f"{path}", "axioms2024_tab02.csv, line"))
        assert text != csv_bytes
        return
    if text == csv_bytes:
        assert len(values) == len(load_published(path))
    assert not any(has_control(f) for v in values for f in vars(v).values())   # no NUL, no \x1b
    for v in values:                   # every value read compares without a traceback
        try:
            v.check("0.5")
        except ValueError:
            pass


@settings(FUZZ, max_examples=60)
@given(st.data())
def test_a_mutated_discrepancies_file_is_read_or_one_named_error(published, data):
    d, csv_bytes, known_bytes, errata = published
    (d / "ERRATA.md").write_bytes(errata)
    path = d / "discrepancies.csv"
    text = data.draw(byte_mutations(known_bytes))
    path.write_bytes(text)
    try:
        with time_limit(10):
            known = load_known(path, d / "ERRATA.md")
    except PublishedDataError as exc:
        assert str(exc).startswith((f"{path}", "discrepancies.csv, line"))
        assert text != known_bytes
        return
    assert not any(has_control(f) for row in known.values() for f in row.values())


def has_control(field):
    """Whether a field read from a data file holds a control character (NUL, ESC, ...)
    other than a tab or a line end (within quotes): which no data file holds."""
    return any(ord(c) < 32 and c not in "\t\n\r" or c == "\x7f" for c in field)


# ----- the study cache ------------------------------------------------------------------------

@study("test_trust_fuzz_orbit")
def orbit(rec, params):
    """A value shaped like the studies': numbers, arrays, lists and ints."""
    ctx = rec.ctx
    x = ctx.num(params["x"])
    return {"errors": [x / 3, x / 7], "steps": 4, "state": ctx.vector([x, x * x])}


@pytest.fixture(scope="module")
def entry(tmp_path_factory):
    """(cache, the entry's path, its bytes, its record, the true value)."""
    cache = DiskCache(tmp_path_factory.mktemp("fuzz-cache"))
    ctx = mpvi.MPContext(30)
    value = orbit({"x": "2"}, ctx, cache=cache).value
    path = cache.path(orbit.identity({"x": "2"}, ctx))
    return cache, path, path.read_bytes(), json.loads(path.read_bytes()), value


def check_cache_read(entry, text, capsys):
    cache, path, original, record, value = entry
    path.write_bytes(text)
    try:
        with time_limit(10):
            result = orbit({"x": "2"}, mpvi.MPContext(30), cache=cache)
    finally:
        path.write_bytes(original)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    bad = [x for x in err.splitlines() if x.startswith("mpvi: cache entry ")]
    assert len(bad) <= 1 and all(x.endswith("; recomputing") for x in bad)
    assert result.from_cache == (not bad)
    assert not (bad and same_meaning(text, record)), bad
    return result


def same_value(a, b):
    return (a["errors"] == b["errors"] and a["steps"] == b["steps"]
            and (a["state"] == b["state"]).all())


@settings(FUZZ, suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_mutated_cache_entry_is_used_intact_or_recomputed(entry, capsys, data):
    cache, path, original, record, value = entry
    text = data.draw(byte_mutations(original))
    result = check_cache_read(entry, text, capsys)
    assert same_value(result.value, value)


@settings(FUZZ, suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_cache_entry_mutated_in_its_json_is_recomputed_unless_redigested(entry, capsys, data):
    cache, path, original, record, value = entry
    text, mutated = data.draw(json_mutations(record, ""))
    result = check_cache_read(entry, text.encode("utf-8"), capsys)
    if result.from_cache and mutated is not None and mutated != record:
        assert mutated["digest"] == sha256_digest(mutated, "")
    elif not result.from_cache:
        assert same_value(result.value, value)
