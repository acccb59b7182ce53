"""Issue 45, items 4 and 5: a proof is never lost (a plain rerun of byte-identical outputs
keeps the certified block, one that changes them drops it in one line), and a proof can be
checked (``mpvi verify`` recomputes every certified block and refuses a narrowed
enclosure whose record digest was recomputed)."""
import dataclasses
import json
import time

import flint

import pytest

from conftest import replace_in_framework
from mpvi.repro.cli import main
from mpvi.repro.declare import get_reproduction
from mpvi.repro.records import read_provenance, stamp_record
from mpvi.repro.run import execute, verify_record

SMALL = {"T_tbar": [1, 10], "meshes_per_tbar": [10, 20]}
"""axioms2024 Table 2 on two spans and two meshes: every method, certified in seconds."""


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    """(reproduction, results directory, record, seconds) of the small Table 2 run with
    --certify."""
    out = tmp_path_factory.mktemp("certified")
    rep = dataclasses.replace(get_reproduction("axioms2024_tab02"), quick=SMALL)
    t0 = time.perf_counter()
    execute(rep, quick=True, out_dir=out, certify=True, stream=open("/dev/null", "w"))
    return rep, out, read_provenance(rep, out), time.perf_counter() - t0


def _json(rep, out):
    return out / rep.paper / f"{rep.id}.json"


def test_a_plain_rerun_of_the_same_outputs_keeps_the_certified_block(certified, capsys):
    from mpvi.repro.published import diff
    rep, out, record, _ = certified
    text = _json(rep, out).read_text()

    def proofs():
        rows = diff([rep.id], out)
        return sorted((r.value.key, r.proof, r.proven) for r in rows), \
            sum(r.proof is not None for r in rows)

    before, proven = proofs()
    assert proven > 0
    try:
        paths = execute(rep, quick=True, out_dir=out, stream=open("/dev/null", "w"))
        assert paths["certified"] == "kept"
        assert proofs() == (before, proven)           # mpvi diff --certify: the same counts
        again = read_provenance(rep, out)
        kept = dict(again["certified"])
        assert kept.pop("certified_utc") == record["created_utc"]
        assert kept.pop("certified_commit") == record["git_commit"]
        assert kept == record["certified"]
        assert "dropped" not in capsys.readouterr().err
    finally:
        _json(rep, out).write_text(text)


def test_a_rerun_that_changes_the_outputs_drops_it_in_one_line(certified, tmp_path, capsys):
    import shutil
    rep, out, record, _ = certified
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    execute(rep, context="gmp", dps=40, quick=True, out_dir=copy,
            stream=open("/dev/null", "w"))
    err = [line for line in capsys.readouterr().err.splitlines() if "certified" in line]
    assert len(err) == 1, err
    cols = sum(len(c) for c in record["certified"]["columns"].values())
    assert (f"dropped its certified block (the proven digits of {cols} column(s) and "
            f"{len(record['certified']['values'])} value(s))") in err[0]
    assert "this run is in gmp40, the certified one in gmp64" in err[0]
    assert f"`mpvi run {rep.id} --quick --certify` certifies again" in err[0]
    assert "certified" not in read_provenance(rep, copy)


def test_verify_holds_for_an_untouched_record_and_names_a_narrowed_enclosure(certified):
    """The acceptance test: one enclosure narrowed 1000x, the record's digest computed
    again (so that `mpvi diff --certify` believes it) -> verify fails naming that value."""
    from flint import arb
    from mpvi.numbers.arbref import arb_precision
    rep, out, record, seconds = certified
    t0 = time.perf_counter()
    assert verify_record(rep, record, stream=open("/dev/null", "w")) == []
    verify_s = time.perf_counter() - t0
    print(f"certified run {seconds:.1f} s, verify {verify_s:.1f} s")
    key = sorted(record["certified"]["values"])[3]
    entry = record["certified"]["values"][key]
    with arb_precision(200):
        ball = arb(entry["enclosure"])
        narrowed = arb(ball.mid(), ball.rad() / 1000).str(100, radius=True)
    assert narrowed != entry["enclosure"]
    edited = json.loads(json.dumps(record))
    edited["certified"]["values"][key]["enclosure"] = narrowed
    failures = verify_record(rep, stamp_record(edited), stream=open("/dev/null", "w"))
    assert len(failures) == 1 and f"value {key!r}" in failures[0], failures
    assert "does not contain the recomputed" in failures[0]


def test_mpvi_verify_exits_1_naming_the_value(certified, tmp_path, capsys, monkeypatch):
    import shutil
    rep, out, record, _ = certified
    reps = {rep.id: rep}
    replace_in_framework(monkeypatch, "all_reproductions", lambda: reps)
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    assert main(["verify", rep.id, "--results", str(copy), "-q"]) == 0
    path = _json(rep, copy)
    edited = json.loads(path.read_text())
    key = sorted(edited["certified"]["values"])[0]
    edited["certified"]["values"][key]["digits"] += 5        # more digits than proven
    path.write_text(json.dumps(stamp_record(edited)))
    capsys.readouterr()
    assert main(["verify", "--all", "--results", str(copy), "-q"]) == 1
    stdout = capsys.readouterr().out
    assert f"FAILED {rep.id}: value {key!r}:" in stdout and "recomputed" in stdout


@pytest.fixture(scope="module")
def pendulum_run():
    import sympy as sp
    import mpvi
    ctx = mpvi.get_context("gmp", 64)
    q = sp.Symbol("q")
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    return ctx, mpvi.solve(mpvi.Problem(system, ["1/2"], p0=[0]), "midpoint", h="1/10", n=20)


def _tampered(sol):
    import copy
    s = copy.copy(sol)
    s.t, s.q = sol.t.copy(), sol.q.copy()
    return s


def test_certify_refuses_a_changed_time(pendulum_run):
    from mpvi.proof.certify import RunMismatchError, certify
    ctx, sol = pendulum_run
    assert certify(sol).complete
    s = _tampered(sol)
    s.t[3] = s.t[3] + ctx.num("1e-40")
    with pytest.raises(RunMismatchError, match=r"t\[3\] = .* is not node 3, t0 \+ 3 h"):
        certify(s)


@pytest.mark.parametrize("steps, planned", [(19, 20), (21, 21), (21, 20)])
def test_certify_refuses_a_changed_step_count(pendulum_run, steps, planned):
    from mpvi.proof.certify import RunMismatchError, certify
    _, sol = pendulum_run
    s = _tampered(sol)
    s.steps, s.steps_planned = steps, planned
    with pytest.raises(RunMismatchError, match="does not match its own run"):
        certify(s)


@pytest.mark.parametrize("node, change", [(5, "1e-40"), (20, "1e-45"), (1, "1e-20")])
def test_certify_refuses_a_changed_state_naming_it(pendulum_run, node, change):
    from mpvi import WrongStepError
    from mpvi.proof.certify import certify
    ctx, sol = pendulum_run
    s = _tampered(sol)
    s.q[node, 0] = s.q[node, 0] * (1 + ctx.num(change))
    with pytest.raises(WrongStepError, match=rf"step {node - 1} \(node {node}\) computed q\[0\]"):
        certify(s)


# ----- a saved solution carries its problem and its certificate (item 4b) -------------------
def _pendulum_with_parameter(ctx):
    import sympy as sp
    import mpvi
    q, g = sp.symbols("q g")
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -g * sp.cos(q),
                                   {g: "9.81"}, ctx)
    return mpvi.Problem(system, ["1/2"], p0=[0])


def _contains_all(outer, inner):
    return all(a.contains(b) for A, B in zip(outer, inner) for a, b in zip(A, B))


def test_a_saved_and_loaded_solution_keeps_its_certificate_and_certifies_again(tmp_path):
    import mpvi
    from mpvi.proof.certify import certify
    ctx = mpvi.get_context("gmp", 64)
    sol = mpvi.solve(_pendulum_with_parameter(ctx), "midpoint", h="1/10", n=20, certify=True)
    path = sol.save(tmp_path / "s.json")
    back = mpvi.load_solution(path)
    cert = back.certificate
    assert cert is not None and cert.complete and cert.nodes == sol.certificate.nodes
    for name in ("t", "q", "y"):     # ball for ball the same midpoint, the radius exact or
        for a, b in zip(getattr(cert, name), getattr(sol.certificate, name)):   # rounded up
            assert all(x.mid() == y.mid() and x.contains(y)
                       and x.rad() <= y.rad() * (1 + flint.arb(2) ** -25)
                       for x, y in zip(*(([a], [b]) if name == "t" else (a, b))))
    assert [list(d) for d in cert.digits] == [list(d) for d in sol.certificate.digits]
    # the problem is rebuilt from the text: the same system, the exact parameter source
    assert back.problem is not None and back.system._params == {
        s: "9.81" for s in back.system.param_symbols}
    again = certify(back)
    assert again.complete and min(again.min_digits) >= 40
    assert _contains_all(cert.q, again.q) and _contains_all(cert.y, again.y)
    assert mpvi.verify(back).ok and mpvi.verify(back).checked > 0
    # the loaded certificate is of the problem as posed (h = 1/10, g = 9.81, q0 = 1/2
    # exactly): it holds a 200-digit rerun of that problem at every node
    ref = mpvi.solve(_pendulum_with_parameter(mpvi.get_context("gmp", 200)), "midpoint",
                     h="1/10", n=20)
    from mpvi.numbers.arbref import arb_precision
    with arb_precision(700):
        for balls, rerun in ((again.q, ref.q), (again.y, ref.p), (cert.q, ref.q)):
            for row, values in zip(balls, rerun):
                for ball, x in zip(row, values):
                    n, d = x.as_integer_ratio()
                    assert ball.contains(flint.arb(flint.fmpq(int(n), int(d))))


@pytest.mark.parametrize("kind", ["linear", "lagrangian"])
def test_other_system_kinds_are_rebuilt_from_their_text(tmp_path, kind):
    import sympy as sp
    import mpvi
    from mpvi.proof.certify import certify
    ctx = mpvi.get_context("gmp", 64)
    if kind == "linear":
        system = mpvi.LinearSystem([[1, 0], [0, 2]], [["3/2", "1/2"], ["1/2", 5]], ctx)
        prob, method = mpvi.Problem(system, [1, 0], p0=[0, "1/3"]), "midpoint"
    else:
        q, v = sp.symbols("q v")
        system = mpvi.LagrangianSystem.from_lagrangian(
            "lag", [q], [v], v ** 2 / 2 + sp.cos(q) * v / 3 - q ** 4 / 4, {}, ctx)
        prob, method = mpvi.Problem(system, ["1/3"], v0=[0]), "gauss"
    sol = mpvi.solve(prob, method, h="1/8", n=20)
    back = mpvi.load_solution(sol.save(tmp_path / "s.json.gz"))
    assert type(back.system) is type(system)
    cert = certify(back)
    assert cert.complete and min(cert.min_digits) >= 40
    assert _contains_all(certify(sol).q, cert.q)


def _edit(path, change):
    from mpvi.ground.io import content_digest
    rec = json.loads(path.read_text())
    change(rec)
    rec.pop("digest")
    rec["digest"] = content_digest(rec)
    path.write_text(json.dumps(rec))


def test_what_is_read_back_is_checked_before_use(tmp_path):
    import mpvi
    from mpvi import SolutionFileError
    ctx = mpvi.get_context("gmp", 64)
    sol = mpvi.solve(_pendulum_with_parameter(ctx), "midpoint", h="1/10", n=20, certify=True)
    path = sol.save(tmp_path / "s.json")
    text = path.read_text()
    cases = [
        (lambda r: r["certificate"].update(method="gauss"), "certificate.method"),
        (lambda r: r["certificate"]["nodes"].pop(), "certificate.nodes"),
        (lambda r: r["certificate"]["t"].__setitem__(3, r["certificate"]["t"][4]),
         r"certificate\[3\]\.t does not hold the node time"),
        (lambda r: r["certificate"]["q"][2][0].__setitem__(0, "1e99999"), "certificate"),
        (lambda r: r["certificate"]["q"][2][0].__setitem__(0, "__import__('os')"),
         "should be a ball"),
        (lambda r: r["problem"].update(q0=["0.25"]), "problem.q0"),
    ]
    for change, message in cases:
        path.write_text(text)
        _edit(path, change)
        with pytest.raises(SolutionFileError, match=message):
            mpvi.load_solution(path)
    # a Lagrangian that is not of the grammar is never run: the solution loads without
    # its problem, and certify says why
    path.write_text(text)
    _edit(path, lambda r: r["system"].update(potential="__import__('os').getcwd()"))
    back = mpvi.load_solution(path)
    assert back.problem is None
    with pytest.raises(TypeError, match="its system's text does not read back"):
        mpvi.certify(back)


def test_verify_names_a_narrowed_enclosure_of_a_certificate(tmp_path):
    import mpvi
    from flint import arb
    ctx = mpvi.get_context("gmp", 64)
    sol = mpvi.solve(_pendulum_with_parameter(ctx), "midpoint", h="1/10", n=20, certify=True)
    cert = sol.certificate
    b = cert.q[7][0]
    cert.q[7][0] = arb(b.mid(), b.rad() / 1000)
    found = mpvi.verify(sol)
    assert not found.ok
    assert len(found.failures) == 1 and found.failures[0].startswith("node 7: q[0]:")


def test_mpvi_verify_of_a_results_directory_is_that_of_the_command(certified, monkeypatch):
    import mpvi
    rep, out, record, _ = certified
    replace_in_framework(monkeypatch, "all_reproductions", lambda: {rep.id: rep})
    found = mpvi.verify(out)
    assert found.ok and found.checked == len(record["certified"]["values"]) + sum(
        len(c) for c in record["certified"]["columns"].values()) + len(
        record["certified"].get("growth", {}))


def test_the_inputs_as_posed_are_saved_and_read_back_exactly(tmp_path):
    """``Solution.posed`` / ``Problem.posed`` (h = 1/10, q0 = pi/6 as written) travel as
    text and are read back by mpvi's parser as the exact values, checked against the run's
    numbers."""
    import sympy as sp
    import mpvi
    from mpvi import SolutionFileError
    ctx = mpvi.get_context("gmp", 64)
    q = sp.Symbol("q")
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    sol = mpvi.solve(mpvi.Problem(system, [sp.pi / 6], p0=["1/3"]), "midpoint", h="1/10", n=5)
    sol.posed = {"h": "1/10", "times": None}
    sol.problem.posed = {"t0": 0, "t1": None, "q0": [sp.pi / 6], "p0": ["1/3"], "v0": None}
    path = sol.save(tmp_path / "s.json")
    rec = json.loads(path.read_text())
    assert rec["posed"] == {"h": "1/10", "times": None, "t0": "0", "t1": None,
                            "q0": ["pi/6"], "p0": ["1/3"], "v0": None}
    back = mpvi.load_solution(path)
    assert back.posed == {"h": "1/10", "times": None}
    assert back.problem.q0[0] == sol.problem.q0[0]
    text = path.read_text()
    for change, message in ((lambda r: r["posed"].update(h="1/9"), "posed.h"),
                            (lambda r: r["posed"].update(q0=["pi/7"]), "problem.q0"),
                            (lambda r: r["posed"].update(q0=["x"]), "posed.q0"),
                            (lambda r: r["posed"].update(q0=["0.5e0*__import__"]), "posed.q0")):
        path.write_text(text)
        _edit(path, change)
        with pytest.raises(SolutionFileError, match=message):
            mpvi.load_solution(path)


def _timed_reproduction(x="1.5"):
    """A reproduction of one computed column and one measured wall time (declared
    unchecked), with a certify hook: cheap, for the rules of a rerun and of verify."""
    import itertools
    import pandas as pd
    from mpvi.repro.declare import Output, Reproduction
    ticks = itertools.count()

    def compute(run):
        return Output(tables={"": pd.DataFrame({"x": [run.params["x"]],
                                                "seconds": [str(next(ticks))]})},
                      values={"x": run.params["x"]},
                      unchecked={"seconds": "a measured wall time"})

    def certify(run, out):
        return {"statement": "x is exact", "columns": {"": {"x": [60]}},
                "values": {"x": (60, f"[{run.params['x']} +/- 0]")},
                "not_certified": {"seconds": "a measured wall time"}}

    def plot(out, params):
        import matplotlib.pyplot as plt
        return plt.figure()

    return Reproduction(id="demo_tab01", paper="demo", item="Table 1", title="t",
                        params={"x": x}, compute=compute, plot=plot, published=False,
                        certify=certify)


def test_a_wall_time_column_does_not_drop_the_block_and_verify_ignores_it(tmp_path, capsys):
    rep = _timed_reproduction()
    null = open("/dev/null", "w")
    execute(rep, out_dir=tmp_path, certify=True, stream=null)
    record = read_provenance(rep, tmp_path)
    assert execute(rep, out_dir=tmp_path, stream=null)["certified"] == "kept"
    again = read_provenance(rep, tmp_path)
    assert again["files"]["demo_tab01.csv"] != record["files"]["demo_tab01.csv"]
    assert again["certified"]["values"] == record["certified"]["values"]
    assert verify_record(rep, again, null, out_dir=tmp_path) == []
    without = verify_record(rep, again, null)           # no recorded files to compare with
    assert len(without) == 1 and "outputs differ from those recorded" in without[0]
    other = dataclasses.replace(rep, params={"x": "2.5"})
    assert execute(other, out_dir=tmp_path, stream=null)["certified"] == "dropped"
    assert "demo_tab01: dropped its certified block" in capsys.readouterr().err
    assert "certified" not in read_provenance(rep, tmp_path)
