"""A cache that cannot lie (mpvi.repro.cache): an entry that was changed, truncated, or
written in an older format is reported in one line naming its file and recomputed, never
used; a cache directory that cannot be written (from the start or from the middle of a
run, serially or with --jobs 2) is only read, with one warning, and every computed result
still reaches --out."""
import errno
import io
import json
import os
import re
import tempfile
from pathlib import Path

import pandas as pd
import pytest

import mpvi.numbers.context
from conftest import replace_in_framework
from mpvi.ground import io as mpvi_io
from mpvi.repro import cache as _cache
from mpvi.repro.cache import DiskCache
from mpvi.repro.cli import main
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import execute
from mpvi.repro.studies import Task, study

CONTEXT = ["--context", "mp", "--dps", "30"]


# ----- a tiny study and two reproductions that use it ---------------------------------------
# At the top level of this module: worker processes of --jobs 2 find them by module and name.

@study("test_cache_integrity_errors")
def errors(rec, params):
    """Shaped like a convergence sweep: per method, a list of errors and a step count."""
    x = rec.ctx.num(params["x"])
    return {"rk4": {"errors": [x / 3, x / 7], "steps": 4},
            "simpson": {"errors": [x / 11, x / 13], "steps": 8}}


def _xs(rid):
    return {"cached_a": ["1", "2"], "cached_b": ["3"]}[rid]


def _compute(run, rid):
    rows = []
    for x in _xs(rid):
        value = run.study(errors, {"x": x})
        for method in ("rk4", "simpson"):
            for e in value[method]["errors"]:
                rows.append({"x": x, "method": method, "steps": value[method]["steps"],
                             "error": run.ctx.to_str(e)})
    return Output(tables={"": pd.DataFrame(rows)})


def _compute_a(run):
    return _compute(run, "cached_a")


def _compute_b(run):
    return _compute(run, "cached_b")


def _plot(out, params):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    return fig


def _fake(rid, compute):
    return Reproduction(id=rid, paper="fake_cache", item="Fig. 0", title="t",
                        params={}, compute=compute, plot=_plot, module=__name__,
                        tasks=lambda p: [Task(errors, {"x": x}) for x in _xs(rid)])


CACHED_A = _fake("cached_a", _compute_a)
CACHED_B = _fake("cached_b", _compute_b)
REPS = {r.id: r for r in (CACHED_A, CACHED_B)}


# ----- helpers -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """{id: CSV bytes} of a run without a cache."""
    out = tmp_path_factory.mktemp("clean")
    return {rid: execute(rep, "mp", 30, False, out, stream=io.StringIO())["csv"].read_bytes()
            for rid, rep in REPS.items()}


@pytest.fixture
def reps(monkeypatch):
    replace_in_framework(monkeypatch, "all_reproductions", lambda: REPS)


def run(capsys, out, cache, *ids, jobs=None):
    """``mpvi run ids`` in this process: (exit status, warning lines, {id: CSV bytes or
    None}, {id: provenance JSON})."""
    argv = ["run", *(ids or REPS), "--out", str(out), "--cache", str(cache), *CONTEXT]
    status = main(argv + (["--jobs", str(jobs)] if jobs else []))
    warnings = [x for x in capsys.readouterr().err.splitlines() if x.startswith("mpvi: ")]
    d = Path(out) / "fake_cache"
    csvs = {rid: (d / f"{rid}.csv").read_bytes() if (d / f"{rid}.csv").exists() else None
            for rid in REPS}
    recs = {rid: json.loads((d / f"{rid}.json").read_text()) for rid in REPS
            if (d / f"{rid}.json").exists()}
    return status, warnings, csvs, recs


def entry_file(cache, x):
    """The cache file of ``errors({"x": x})``."""
    for path in Path(cache).glob("*.json"):
        if json.loads(path.read_text())["identity"]["parameters"] == {"x": x}:
            return path
    raise AssertionError(f"no cache entry for x={x}")


def from_cache(rec):
    return [s["from_cache"] for s in rec["studies"]]


def changed_digit(e):
    s = e["value"]["rk4"]["errors"][0]["$num"]            # "3.33...e-1" -> "3.43...e-1"
    e["value"]["rk4"]["errors"][0]["$num"] = s[:2] + str((int(s[2]) + 1) % 10) + s[3:]


def half_string(e):
    e["value"]["rk4"]["errors"][0] = "0.5"


def nan(e):
    e["value"]["rk4"]["errors"][0] = {"$num": "nan"}


def removed_key(e):
    del e["value"]["rk4"]


def wrong_type(e):
    e["value"]["rk4"]["errors"] = "0.5 0.25"


def old_format(e):
    """The entry as cache format 1 wrote it: no format field, no digest."""
    del e["format"], e["digest"]
    e["identity"]["format"] = 1


DIGEST = "its content does not match its digest (it was changed after it was written)"
DAMAGES = {
    "a changed digit": (changed_digit, DIGEST),
    "0.5 for a number": (half_string, DIGEST),
    "nan": (nan, DIGEST),
    "a removed key": (removed_key, DIGEST),
    "a list replaced by a string": (wrong_type, DIGEST),
    "an old format": (old_format, "no cache format (this mpvi reads format 2)"),
}


def damage(path, change):
    entry = json.loads(path.read_text())
    change(entry)
    path.write_text(json.dumps(entry, indent=2))


# ----- bad entries ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", DAMAGES)
def test_a_changed_entry_is_reported_recomputed_and_replaced(name, reps, clean, tmp_path, capsys):
    change, what = DAMAGES[name]
    cache = tmp_path / "cache"
    assert run(capsys, tmp_path / "a", cache, "cached_a")[:2] == (0, [])
    path = entry_file(cache, "1")
    damage(path, change)
    status, warnings, csvs, recs = run(capsys, tmp_path / "b", cache, "cached_a")
    assert status == 0
    assert warnings == [f"mpvi: cache entry {path}: {what}; recomputing"]
    assert csvs["cached_a"] == clean["cached_a"]
    assert from_cache(recs["cached_a"]) == [False, True]
    # the entry was replaced: read back, no warning
    status, warnings, csvs, recs = run(capsys, tmp_path / "c", cache, "cached_a")
    assert (status, warnings, from_cache(recs["cached_a"])) == (0, [], [True, True])
    assert csvs["cached_a"] == clean["cached_a"]


def test_a_changed_entry_is_recomputed_in_a_parallel_run(reps, clean, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert run(capsys, tmp_path / "a", cache)[:2] == (0, [])
    path = entry_file(cache, "2")
    damage(path, changed_digit)
    status, warnings, csvs, recs = run(capsys, tmp_path / "b", cache, jobs=2)
    assert (status, warnings) == (0, [f"mpvi: cache entry {path}: {DIGEST}; recomputing"])
    assert csvs == clean and from_cache(recs["cached_a"]) == [True, False]
    assert _cache.check_entry(path.read_text(), json.loads(path.read_text())["identity"])


@pytest.mark.parametrize("text, what", [
    (lambda t: t[:len(t) // 2], "not valid JSON ("),
    (lambda t: "[1, 2]", "not a JSON object but a list; recomputing"),
    (lambda t: "", "not valid JSON (Expecting value: line 1 column 1 (char 0)); recomputing"),
])
def test_a_truncated_or_invalid_file_is_reported_and_recomputed(text, what, reps, clean,
                                                                 tmp_path, capsys):
    cache = tmp_path / "cache"
    run(capsys, tmp_path / "a", cache, "cached_a")
    path = entry_file(cache, "1")
    path.write_text(text(path.read_text()))
    status, warnings, csvs, _ = run(capsys, tmp_path / "b", cache, "cached_a")
    assert status == 0 and csvs["cached_a"] == clean["cached_a"]
    assert len(warnings) == 1 and warnings[0].startswith(f"mpvi: cache entry {path}: ")
    assert what in warnings[0] and warnings[0].endswith("; recomputing")
    assert entry_file(cache, "1") == path                      # replaced by a good entry


def redigest(path, change):
    """``change`` the entry of ``path`` and give it the digest of its new content (as if the
    code had written it so)."""
    entry = json.loads(path.read_text())
    change(entry)
    entry["digest"] = _cache.digest(entry)
    path.write_text(json.dumps(entry))


def test_a_digested_value_that_does_not_decode_is_reported_and_recomputed(reps, clean, tmp_path,
                                                                          capsys):
    cache = tmp_path / "cache"
    run(capsys, tmp_path / "a", cache, "cached_a")
    path = entry_file(cache, "1")
    redigest(path, lambda e: e["value"]["simpson"]["errors"].__setitem__(1, {"$num": "x1"}))
    status, warnings, csvs, _ = run(capsys, tmp_path / "b", cache, "cached_a")
    assert (status, csvs["cached_a"]) == (0, clean["cached_a"])
    assert warnings == [f"mpvi: cache entry {path}: value['simpson']['errors'][1]: 'x1' is not "
                        f"a number of context mp30; recomputing"]


def test_code_failing_on_a_digested_cached_value_names_the_cache(reps, tmp_path, capsys):
    """A digested entry is what the code wrote: if the code that uses it fails, the error
    says which cached results it used and how to recompute them."""
    cache = tmp_path / "cache"
    run(capsys, tmp_path / "a", cache, "cached_a")
    path = entry_file(cache, "2")
    redigest(path, removed_key)
    status = main(["run", "cached_a", "--out", str(tmp_path / "b"), "--cache", str(cache),
                   *CONTEXT])
    lines = capsys.readouterr().err.splitlines()
    assert status == 1
    assert (f"cached_a: error: KeyError: 'rk4' (cached_a used 2 study result(s) read from the "
            f"cache, e.g. {entry_file(cache, '1')}; --no-cache recomputes them)") in lines


def test_decode_refuses_malformed_numbers_and_arrays():
    ctx = mpvi.numbers.context.get_context("mp", 30)
    assert _cache.decode(ctx, {"a": [{"$num": "0.5"}]}) == {"a": [ctx.num("0.5")]}
    for bad, where in [({"$num": 5}, "value"), ({"$array": "1 2"}, "value"),
                       ({"a": {"$num": "0.5", "b": 1}}, "value['a']"),
                       ([{"$array": [{"$num": "?"}]}], "value[0][0]")]:
        with pytest.raises(_cache.CacheError, match=rf"^{re.escape(where)}: "):
            _cache.decode(ctx, bad)


# ----- a cache that cannot be written ------------------------------------------------------

@pytest.fixture
def lock(monkeypatch):
    """``lock(directory)`` makes a directory read-only (chmod; as root, who writes anyway,
    mpvi's temporary files there are refused with EACCES instead, as a read-only directory
    refuses them).  Unlocked afterwards."""
    locked = set()
    real_mkstemp = tempfile.mkstemp
    real_create = mpvi_io.create_file

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).resolve() in locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    def create_file(directory, *args, **kwargs):        # the temporaries of atomic writes
        if Path(directory).resolve() in locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(directory))
        return real_create(directory, *args, **kwargs)

    def lock_(directory):
        directory.chmod(0o555)
        locked.add(Path(directory).resolve())

    if os.geteuid() == 0:
        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
        monkeypatch.setattr(mpvi_io, "create_file", create_file)
    yield lock_
    for d in locked:
        d.chmod(0o755)


def test_a_read_only_cache_is_read_not_written(reps, clean, lock, tmp_path, capsys):
    cache = tmp_path / "cache"
    run(capsys, tmp_path / "a", cache, "cached_a")
    before = sorted(cache.iterdir())
    lock(cache)
    status, warnings, csvs, recs = run(capsys, tmp_path / "b", cache)
    assert status == 0 and csvs == clean
    assert len(warnings) == 1
    assert warnings[0].startswith(f"mpvi: cannot write to the cache directory {cache}: ")
    assert "Permission denied" in warnings[0]
    assert warnings[0].endswith("; studies are read from it, new results are not stored")
    assert from_cache(recs["cached_a"]) == [True, True]                  # read
    assert from_cache(recs["cached_b"]) == [False]                       # computed...
    assert recs["cached_b"]["studies"][0]["cache_file"] is None
    assert sorted(cache.iterdir()) == before                             # ...not stored


def test_a_cache_directory_that_cannot_be_created_is_not_used(reps, clean, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory\n")
    status, warnings, csvs, recs = run(capsys, tmp_path / "out", blocker / "sub")
    assert status == 0 and csvs == clean
    assert len(warnings) == 1
    assert warnings[0].startswith(f"mpvi: cannot write to the cache directory {blocker / 'sub'}: ")
    assert "Not a directory" in warnings[0] and warnings[0].endswith("; running without a cache")
    assert recs["cached_b"]["studies"][0]["cache_file"] is None


@pytest.mark.parametrize("jobs", [None, 2])
def test_a_cache_that_becomes_read_only_mid_run_loses_no_result(jobs, reps, clean, lock,
                                                                monkeypatch, tmp_path, capsys):
    """The cache is locked after its first entry is stored: the other two studies are
    computed, their results written to --out, and the failure reported once."""
    cache = tmp_path / "cache"
    real_store = DiskCache.store

    def store(self, ident, entry):
        path = real_store(self, ident, entry)
        lock(self.directory)
        return path

    monkeypatch.setattr(DiskCache, "store", store)
    status, warnings, csvs, recs = run(capsys, tmp_path / "out", cache, jobs=jobs)
    assert status == 0 and csvs == clean
    assert len(warnings) == 1
    assert warnings[0].startswith(f"mpvi: cannot write to the cache directory {cache} "
                                  f"(PermissionError: [Errno 13] Permission denied")
    assert warnings[0].endswith("): new study results are not stored in it in this run")
    assert len(list(cache.glob("*.json"))) == 1
    files = [s["cache_file"] for r in recs.values() for s in r["studies"]]
    assert len(files) == 3 and sum(f is not None and Path(f).exists() for f in files) == 1
