"""Shared studies (mpvi.repro.studies): exact step counts, the lossless disk cache, studies read
from the cache giving byte-identical outputs with the original wall time and Newton
statistics, and the layering (the library never imports the reproductions, and the
framework knows no paper's system).  The study exercised is one of a reproduction
package (reproductions/axioms2024/_axioms2024.py), as every study is."""
import dataclasses
import json
import pickle
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from mpvi import MPContext, fp
from mpvi.repro.cache import CacheError, DiskCache, decode, encode
from mpvi.repro.packages import reproduction_packages
from mpvi.repro.declare import all_reproductions
from mpvi.repro.run import execute
from mpvi.repro.studies import Study, steps

from mpvi_papers.axioms2024._axioms2024 import linear_pendulum_convergence

ROOT = Path(__file__).resolve().parents[1]
REPS = all_reproductions()


def test_steps_is_exact_and_refuses_fractional_counts_and_floats():
    assert steps("10", "0.1") == 100 and steps("1000", "0.025") == 40000
    assert steps("0.01", "1e-5") == 1000 and steps(1, "1/640") == 640
    assert steps(Fraction(1, 10), Fraction(1, 1000)) == 100          # a stride between grids
    with pytest.raises(ValueError, match="not a whole number of steps"):
        steps("1", "0.3")
    with pytest.raises(ValueError, match="positive"):
        steps("1", "0")
    with pytest.raises(TypeError, match="float"):
        steps(1, 0.1)


@pytest.mark.parametrize("ctx", [MPContext(64), MPContext(31), fp], ids=["mp64", "mp31", "fp"])
def test_cache_encoding_is_lossless(ctx):
    third = ctx.one / 3
    x = {"a": [third, ctx.pi, -ctx.exp(ctx.num(-700)) if ctx.is_mp else ctx.num("-1e-300")],
         "arr": np.array([[third, ctx.sqrt(ctx.num(2))], [ctx.zero, ctx.num("1e300")]],
                         dtype=ctx.dtype),
         "n": 7, "s": "1/80", "none": None}
    back = decode(ctx, json.loads(json.dumps(encode(ctx, x))))
    assert back["n"] == 7 and back["s"] == "1/80" and back["none"] is None
    assert back["arr"].shape == (2, 2)
    for u, v in zip(list(x["a"]) + list(x["arr"].ravel()), back["a"] + list(back["arr"].ravel())):
        assert u == v and ctx.to_str(u, ctx.repr_digits) == ctx.to_str(v, ctx.repr_digits)


def test_a_number_with_more_bits_than_the_context_is_refused():
    ctx = MPContext(30)
    with ctx.workdps(60):
        extra = ctx.one / 3                   # carries 60 digits in a 30-digit context
    with pytest.raises(CacheError, match="does not read back"):
        encode(ctx, [extra], "test")
    with pytest.raises(CacheError, match="cannot store a complex"):
        encode(fp, {"z": complex(1, 2)})


SMALL = {"T_tbar": "1", "N": [10, 20], "methods": ["newmark", "simpson"]}


def test_a_study_is_stored_once_and_read_back_identically(tmp_path):
    ctx, cache = MPContext(30), DiskCache(tmp_path)
    first = linear_pendulum_convergence(SMALL, ctx, cache=cache)
    assert not first.from_cache and Path(first.cache_file).exists()
    again = linear_pendulum_convergence(SMALL, MPContext(30), cache=cache)
    assert again.from_cache and again.cache_file == first.cache_file
    assert (again.wall_time_s, again.computed_utc) == (first.wall_time_s, first.computed_utc)
    assert [ctx.to_str(r["error"], 40) for r in again.value] == \
           [ctx.to_str(r["error"], 40) for r in first.value]
    assert again.value == first.value
    # another context, other parameters: other entries
    assert not linear_pendulum_convergence(SMALL, MPContext(31), cache=cache).from_cache
    assert not linear_pendulum_convergence(dict(SMALL, N=[10, 30]), ctx, cache=cache).from_cache
    # a damaged entry is recomputed and replaced
    Path(first.cache_file).write_text("{half")
    redo = linear_pendulum_convergence(SMALL, ctx, cache=cache)
    assert not redo.from_cache and redo.value == first.value
    assert linear_pendulum_convergence(SMALL, ctx, cache=cache).from_cache


def test_a_study_without_cache_and_a_study_function_of_parameters_only(tmp_path):
    calls = []

    def compute(rec, params):
        calls.append(params)
        return {"x": rec.ctx.num(params["x"]) / 3}

    s = Study("third", compute)
    ctx = MPContext(20)
    a = s({"x": "1"}, ctx)
    b = s({"x": "1"}, ctx)
    assert a.value == b.value and len(calls) == 2 and a.cache_file is None
    s({"x": "1"}, ctx, cache=DiskCache(tmp_path))
    assert s({"x": "1"}, ctx, cache=DiskCache(tmp_path)).from_cache and len(calls) == 3


def test_a_study_pickles_by_reference_and_computes_its_entry_in_any_process():
    """What a parallel run sends to a worker process: the study (by module and name), its
    parameters and the context's name and digits; what comes back is the cache entry."""
    clone = pickle.loads(pickle.dumps(linear_pendulum_convergence))
    assert clone is linear_pendulum_convergence
    local = Study("local", lambda rec, p: 1)
    with pytest.raises(Exception, match="local"):
        pickle.loads(pickle.dumps(local))           # not defined at a module's top level
    ctx = MPContext(30)
    entry = linear_pendulum_convergence.compute_entry(SMALL, ctx)
    assert set(entry) == {"computed_utc", "wall_time_s", "newton", "value"}
    back = linear_pendulum_convergence.result(ctx, json.loads(json.dumps(entry)), False, None)
    assert back.value == linear_pendulum_convergence(SMALL, ctx).value


def test_a_task_cache_serves_prefetched_entries_then_the_disk_and_keeps_new_ones(tmp_path):
    """The cache of a reproduction computed in a worker: entries of its parallel tasks,
    then a cache directory it may read (never write), then its own computations, kept for
    the parent process to store."""
    from mpvi.repro.cache import TaskCache, key
    ctx, disk = MPContext(30), DiskCache(tmp_path)
    other = dict(SMALL, N=[10])
    on_disk = linear_pendulum_convergence(other, ctx, cache=disk)
    ident = linear_pendulum_convergence.identity(SMALL, ctx)
    entry = dict(linear_pendulum_convergence.compute_entry(SMALL, ctx), git_commit="abc")
    tc = TaskCache({key(ident): (entry, False, "/somewhere/x.json")}, disk)
    r = linear_pendulum_convergence(SMALL, ctx, cache=tc)
    assert (r.from_cache, r.cache_file, r.git_commit) == (False, "/somewhere/x.json", "abc")
    r = linear_pendulum_convergence(other, ctx, cache=tc)
    assert r.from_cache and r.cache_file == on_disk.cache_file and tc.new == {}
    files = sorted(tmp_path.iterdir())
    new = dict(SMALL, N=[20])
    r = linear_pendulum_convergence(new, ctx, cache=tc)
    assert not r.from_cache and sorted(tmp_path.iterdir()) == files     # nothing written
    ((new_ident, new_entry),) = tc.new.values()
    assert new_ident == linear_pendulum_convergence.identity(new, ctx)
    assert r.cache_file == str(disk.path(new_ident))                     # where it will go
    assert linear_pendulum_convergence.result(ctx, new_entry, False, None).value == r.value


def _small(rid, **params):
    rep = REPS[rid]
    return dataclasses.replace(rep, params=dict(rep.params, **params), quick={})


def _csvs(paths):
    stem = paths["csv"].stem
    return {p.name: p.read_bytes() for p in sorted(paths["dir"].glob(f"{stem}*.csv"))}


def test_a_cache_hit_gives_byte_identical_csvs_and_records_the_original_computation(tmp_path):
    """Table 5 after Table 4 (tiny long runs): the runs come from the cache, the CSVs are
    the same bytes as without a cache, and the provenance records from_cache, the wall
    time of the original computation and the pooled Newton statistics."""
    tab4 = _small("top2025_tab04", T_tbar=[1, 2], N_per_period=[10, 20])
    tab5 = _small("top2025_tab05", T_tbar=[1, 2], N_per_period=[10, 20])
    cache, null = DiskCache(tmp_path / "cache"), open("/dev/null", "w")
    p4 = execute(tab4, "mp", 40, False, tmp_path / "a", stream=null, cache=cache)
    p5 = execute(tab5, "mp", 40, False, tmp_path / "a", stream=null, cache=cache)
    fresh = execute(tab5, "mp", 40, False, tmp_path / "b", stream=null)
    r4, r5, rf = (json.loads(p["json"].read_text()) for p in (p4, p5, fresh))
    assert _csvs(p5) == _csvs(fresh) and _csvs(p5)
    assert r5["values"] == rf["values"]
    assert r4["from_cache"] is False and rf["from_cache"] is False
    assert r5["from_cache"] is True and len(r5["studies"]) == 2 * 3 * 2   # T x method x N
    assert all(s["from_cache"] for s in r5["studies"])
    assert not any(s["from_cache"] for s in r4["studies"])
    assert [s["wall_time_s"] for s in r5["studies"]] == [s["wall_time_s"] for s in r4["studies"]]
    assert r5["cached_wall_time_s"] == pytest.approx(sum(s["wall_time_s"] for s in r4["studies"]),
                                                     abs=1e-2)
    for key in ("cache_file", "computed_utc", "computed_at_commit"):
        assert [s[key] for s in r5["studies"]] == [s[key] for s in r4["studies"]]
    assert r5["newton"] == r4["newton"] == rf["newton"]
    assert r5["newton"]["simpson"]["steps"] == (10 + 20) * (1 + 2)


def test_figs_2_and_3_are_the_same_bytes_whichever_runs_first(tmp_path):
    """The pendulum references (a short set) computed by Fig. 3 and read from the cache by
    Fig. 2 give Fig. 2's CSVs byte for byte as computed without the cache."""
    small = {"T": "1", "h": "0.1", "methods": ["simpson"], "gbs_H": "0.1", "gbs_levels": 4,
             "rk4_ref_h": "0.01", "plot_dt": "0.05"}
    fig2, fig3 = _small("top2025_fig02", **small), _small("top2025_fig03", **small)
    cache, null = DiskCache(tmp_path / "cache"), open("/dev/null", "w")
    execute(fig3, "mp", 40, False, tmp_path / "a", stream=null, cache=cache)
    cached = execute(fig2, "mp", 40, False, tmp_path / "a", stream=null, cache=cache)
    fresh = execute(fig2, "mp", 40, False, tmp_path / "b", stream=null)
    assert json.loads(cached["json"].read_text())["from_cache"] is True
    assert len(_csvs(cached)) == 2 and _csvs(cached) == _csvs(fresh)


def test_no_module_of_the_library_imports_the_reproductions():
    pattern = re.compile(r"^\s*(import\s+(reproductions|mpvi_papers)|"
                         r"from\s+(reproductions|mpvi_papers)[\s.])|"
                         r"import_module\(\s*['\"](reproductions|mpvi_papers)", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "mpvi").rglob("*.py")
                 if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_study_framework_imports_no_system():
    """mpvi.repro.studies is the framework only: the studies of a paper's systems live in
    its reproduction package."""
    pattern = re.compile(r"^\s*(from\s+(\.\.|mpvi\.)systems[\s.]|import\s+mpvi\.systems)", re.M)
    text = (ROOT / "mpvi" / "repro" / "studies.py").read_text(encoding="utf-8")
    assert pattern.search("from ..systems.lagrange_top import table3_top")     # the pattern works
    assert not pattern.search(text)


def test_reproductions_are_found_through_the_entry_point():
    (pkg,) = [p for p in reproduction_packages() if p.name == "mpvi-papers"]
    assert pkg.module == "mpvi_papers"
    assert (pkg.root / "ERRATA.md").exists()                   # the index of the papers' errata
    papers = {f.name: f for f in pkg.folders()[1:]}
    assert set(papers) >= {f"mpvi-papers/{p}" for p in ("axioms2024", "bea", "hermite", "mutze",
                                                         "top2025")}
    hermite = papers["mpvi-papers/hermite"]
    assert hermite.discrepancies.exists() and hermite.errata.exists()
    assert sorted(hermite.published.glob("*.csv"))
    assert {"axioms2024_fig02", "top2025_tab05"} <= set(REPS)


def test_a_study_outside_mpvi_is_keyed_on_the_code_next_to_it(tmp_path):
    """A study defined in a reproduction package is recomputed when any module of that
    package changes, not only when mpvi changes."""
    from mpvi.repro.cache import identity
    a, b = tmp_path / "a", tmp_path / "b"
    for d, helper in ((a, "X = 1\n"), (b, "X = 2\n")):
        d.mkdir()
        (d / "study.py").write_text("def compute(rec, p):\n    return X\n")
        (d / "helpers.py").write_text(helper)
    ctx = MPContext(20)
    ka, kb = (identity("s", {"n": 1}, ctx, d / "study.py") for d in (a, b))
    assert ka["module_source"] != kb["module_source"]
    assert ka == identity("s", {"n": 1}, ctx, a / "study.py")
