"""Issue 47, part 3: saved solutions, results files and errors that name the cause.

A saved solution edited with its digest recomputed is refused unless it loads with the
very numbers it was saved with: its node times are t0 + k h exactly, it holds the points
its steps make, and its states, p/v, internal data and trial coefficients are what the
method's own step computes from the saved state before (re-stepped on loading).  A
format-1 file (no digest) gets the same checks.  ``load_solution(system=3)``, a context
edited from gmp to mp, an Arb number of an exponent beyond range, a malformed enclosure
in a results file and a Newton iteration that diverges are each mpvi's own error naming
the cause -- never a dependency's traceback.
"""
import copy
import hashlib
import json
import shutil
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mpvi
import mpvi.drive.solution
from mpvi import LagrangianSystem, NewtonError, Problem, SolutionFileError, load_solution, solve
from mpvi.repro.cli import main
from mpvi.repro.declare import default_out_dir

CTX = mpvi.GMPContext(32)
Q = sp.Symbol("q")
PEND = LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, CTX)


def restamped(record):
    """``record`` with the SHA-256 digest of its (changed) content, computed here from its
    definition: as if mpvi had written it so."""
    rec = {k: v for k, v in record.items() if k != "digest"}
    text = json.dumps(rec, sort_keys=True, separators=(",", ":"))
    return {**rec, "digest": "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()}


def exact(sol, name):
    """The numbers of a solution's field as exact fractions (any context)."""
    values = getattr(sol, name)
    if name in ("h", "t0"):
        values = [values]
    return [Fraction(sol.ctx.dump(x)) for x in np.ravel(values)]


def numerically_identical(a, b):
    fields = ["t", "q", "h", "t0"] + (["p", "v"] if a.state != "y" else [])
    same = all(exact(a, k) == exact(b, k) for k in fields)
    if a.internal is not None or b.internal is not None:
        same = same and exact(a, "internal") == exact(b, "internal")
    for ca, cb in zip(a._dense or [], b._dense or []):
        same = same and [Fraction(a.ctx.dump(x)) for x in ca.ravel()] == \
            [Fraction(b.ctx.dump(x)) for x in cb.ravel()]
    return same and a.steps == b.steps and len(a._dense or []) == len(b._dense or [])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{name: (solution, record)} of small pendulum runs: Simpson (every node, internal
    data), the order-2 Hermite variational integrator (its trial coefficients saved), RK4
    with every 3rd node saved."""
    d = tmp_path_factory.mktemp("silent-files")
    out = {}
    for name, method, kw in (("simpson", "simpson", {}),
                             ("hermite", "hermite_variational", {}),
                             ("rk4_saveat", "rk4", {"saveat": 3})):
        sol = solve(Problem(PEND, ["1/2"], v0=[0]), method, h="1/20", n=12, **kw)
        out[name] = (sol, json.loads(sol.save(d / f"{name}.json").read_text()))
    return out


def load_record(rec, path, **kw):
    path.write_text(json.dumps(rec))
    return load_solution(path, **kw)


def _digit(text, back, new):
    """``text`` (a number string) with the digit ``back`` places from the end of its
    mantissa set to ``new``."""
    mantissa, e, exponent = text.partition("e")
    where = [i for i, c in enumerate(mantissa) if c.isdigit()]
    i = where[-1 - back % len(where)]
    return mantissa[:i] + str(new) + mantissa[i + 1:] + e + exponent


# ----- 1. saved solutions: deliberate edits with a recomputed digest ---------------------------

def _set(rec, path, value):
    node = rec
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def _get(rec, path):
    node = rec
    for k in path:
        node = node[k]
    return node


EDITS = [  # (run, path of a number, digit from the end) -- each loaded with changed numbers
    ("simpson", ("q", 5, 0), 12),            # before: a state in the middle of the run
    ("simpson", ("q", 12, 0), 12),           # the last state
    ("simpson", ("p", 3, 0), 12),            # a momentum, the method's own state
    ("simpson", ("v", 3, 0), 12),            # a velocity, the Legendre map of p
    ("simpson", ("internal", "values", 4), 8),
    ("simpson", ("t", 4), 1),                # a node time off t0 + 4 h by 1e-35 (an ulp)
    ("hermite", ("dense", "coefficients", 2, 1, 0), 8),
    ("hermite", ("p", 7, 0), 10),            # the Legendre map of the method's v
    ("rk4_saveat", ("q", 2, 0), 12),         # a state 3 steps after the one before
]


@pytest.mark.parametrize("run,path,back", EDITS)
def test_an_edited_number_with_a_recomputed_digest_is_refused(runs, tmp_path, run, path, back):
    """Each of these edits loaded with the changed number on main (the digest recomputed,
    every other check passed)."""
    sol, record = runs[run]
    rec = copy.deepcopy(record)
    old = _get(rec, path)
    _set(rec, path, _digit(old, back, 7 if _digit(old, back, 0) == old else 0))
    assert _get(rec, path) != old
    with pytest.raises(SolutionFileError, match=r"^" + str(tmp_path) + r"/bad\.json: "
                                                 r"malformed saved solution: .*changed"):
        load_record(restamped(rec), tmp_path / "bad.json")


def test_the_count_of_points_and_the_recorded_steps_must_agree(runs, tmp_path):
    sol, record = runs["rk4_saveat"]
    rec = copy.deepcopy(record)
    for key in ("t", "q", "p", "v"):
        del rec[key][-1]                      # a run of 12 steps saves nodes 0, 3, .., 12
    with pytest.raises(SolutionFileError, match=r"t\[3\] = .* is not the last node"):
        load_record(restamped(rec), tmp_path / "bad.json")
    rec["steps"] = rec["stats"]["steps"] = 9  # a prefix of the run, with nothing that ended it
    with pytest.raises(SolutionFileError, match=r"steps = 9 of 12 planned, but nothing "
                                                r"stopped the run"):
        load_record(restamped(rec), tmp_path / "bad.json")
    rec["stopped"] = "callback at t = 0.45"   # as a callback would have: a consistent file
    back = load_record(restamped(rec), tmp_path / "bad.json")
    assert exact(back, "q") == exact(sol, "q")[:4]
    del rec["t"][1], rec["q"][1], rec["p"][1], rec["v"][1]
    rec["t"][1] = record["t"][1]              # nodes 0, 3, 9: node 6 is missing
    with pytest.raises(SolutionFileError, match=r"t has 3 points; the nodes every 3 steps of "
                                                r"9 steps make 4"):
        load_record(restamped(rec), tmp_path / "bad.json")
    rec = copy.deepcopy(record)
    rec["stats"]["steps"] = 11
    with pytest.raises(SolutionFileError, match=r"stats.steps = 11 is not the run's 12 steps"):
        load_record(restamped(rec), tmp_path / "bad.json")


def test_every_run_of_every_method_loads_back_identical(tmp_path):
    """The checks refuse no file mpvi wrote: each method, every node and every 3rd."""
    for method in sorted(mpvi.METHODS):
        for kw in ({}, {"saveat": 3}):
            try:
                sol = solve(Problem(PEND, ["1/2"], v0=[0]), method, h="1/1000", n=10, **kw)
            except TypeError:                 # a linear-only scheme
                continue
            back = load_solution(sol.save(tmp_path / "s.json"))
            assert numerically_identical(back, sol), (method, kw)


@pytest.mark.parametrize("method", ["rk4", "simpson"])
def test_the_last_node_after_fewer_than_k_steps_is_re_stepped(tmp_path, method):
    """saveat=5 over 12 steps saves nodes 0, 5, 10 and 12: the last stretch is 2 steps."""
    sol = solve(Problem(PEND, ["1/2"], v0=[0]), method, h="1/20", n=12, saveat=5)
    record = json.loads(sol.save(tmp_path / "s.json").read_text())
    assert len(record["t"]) == 4
    assert numerically_identical(load_solution(tmp_path / "s.json"), sol)
    old = record["q"][3][0]
    record["q"][3][0] = _digit(old, 10, 0 if _digit(old, 10, 0) != old else 1)
    with pytest.raises(SolutionFileError, match=r"point 3 .* the states were changed"):
        load_record(restamped(record), tmp_path / "bad.json")


def test_the_last_time_of_a_sparse_run_is_its_last_node_unless_an_event_ended_it(runs,
                                                                                tmp_path):
    """The last saved time of a saveat=k run was only checked to lie inside the run: an
    edit of its last digits, or a ``stopped`` edited to a terminal event that would excuse
    it, loaded."""
    sol, record = runs["rk4_saveat"]
    rec = copy.deepcopy(record)
    rec["t"][-1] = _digit(rec["t"][-1], 1, 0 if _digit(rec["t"][-1], 1, 0) != rec["t"][-1]
                          else 1)
    with pytest.raises(SolutionFileError, match=r"t\[4\] = .* is not the last node t0 \+ 12 h"):
        load_record(restamped(rec), tmp_path / "bad.json")
    rec["stopped"] = "terminal event 0 (e) at t = 0.6"
    with pytest.raises(SolutionFileError, match=r"stopped says .*terminal event.*, but the last "
                                                r"saved point is not that event's"):
        load_record(restamped(rec), tmp_path / "bad.json")


def test_newton_options_of_the_run_are_saved_and_re_step_it(tmp_path):
    sol = solve(Problem(PEND, ["1/2"], v0=[0]), "simpson", h="1/20", n=6,
                newton={"rtol": "1e-20", "max_iter": 30})
    record = json.loads(sol.save(tmp_path / "s.json").read_text())
    assert record["newton"] == {"rtol": CTX.dump(CTX.num("1e-20")), "max_iter": 30}
    back = load_solution(tmp_path / "s.json")
    assert numerically_identical(back, sol)
    assert back._prepare_args["newton"]["max_iter"] == 30


def test_a_long_run_is_re_stepped_at_its_first_last_and_sampled_steps(tmp_path):
    n = mpvi.drive.solution.RESTEP_ALL + 36
    sol = solve(Problem(PEND, ["1/2"], v0=[0]), "rk4", h="1/20", n=n)
    record = json.loads(sol.save(tmp_path / "s.json").read_text())
    assert numerically_identical(load_solution(tmp_path / "s.json"), sol)
    for i in (1, n):                          # the end of the first and of the last step
        rec = copy.deepcopy(record)
        rec["q"][i][0] = _digit(rec["q"][i][0], 10, 0 if rec["q"][i][0][-12] != "0" else 1)
        with pytest.raises(SolutionFileError, match=f"point {i} .* the states were changed"):
            load_record(restamped(rec), tmp_path / "bad.json")


def test_a_format_1_file_with_an_edited_value_is_refused_not_warned(runs, tmp_path):
    """On main it loaded with the changed number and a UserWarning."""
    sol, record = runs["simpson"]
    old = {k: v for k, v in record.items() if k not in ("digest", "certificate", "posed")}
    old["version"] = 1
    with pytest.warns(UserWarning, match="format version 1"):
        assert numerically_identical(load_record(old, tmp_path / "v1.json"), sol)
    old["q"][6][0] = _digit(old["q"][6][0], 12, 0 if old["q"][6][0][-15] != "0" else 1)
    with pytest.raises(SolutionFileError, match=r"point 6 .* the states were changed"):
        load_record(old, tmp_path / "v1.json")


@st.composite
def number_edits(draw, record):
    """``record`` with one of the run's numbers edited -- a digit changed at any place,
    the number replaced by another of the file's, negated or scaled by a power of ten --
    or its context kind or step count changed; the digest recomputed."""
    rec = copy.deepcopy(record)
    field = draw(st.sampled_from(["t", "q", "p", "v", "h", "t0", "internal", "dense",
                                  "context", "steps"]))
    if field == "context":
        rec["context"]["kind"] = draw(st.sampled_from(["mp", "fp"]))
        return restamped(rec)
    if field == "steps":
        rec["steps"] = draw(st.integers(0, rec["steps_planned"]))
        rec["stats"]["steps"] = rec["steps"]
        return restamped(rec)
    if field in ("h", "t0"):
        parent, key = rec, field
    elif field == "internal":
        if rec["internal"] is None:
            return restamped(rec)
        parent = rec["internal"]["values"]
        key = draw(st.integers(0, len(parent) - 1))
    elif field == "dense":
        if rec["dense"]["coefficients"] is None:
            return restamped(rec)
        step = rec["dense"]["coefficients"][draw(st.integers(0, len(
            rec["dense"]["coefficients"]) - 1))]
        parent, key = step[draw(st.integers(0, len(step) - 1))], 0
    elif field == "t":
        parent, key = rec["t"], draw(st.integers(0, len(rec["t"]) - 1))
    else:
        parent, key = rec[field][draw(st.integers(0, len(rec[field]) - 1))], 0
    old = parent[key]
    how = draw(st.sampled_from(["digit", "other", "negate", "scale"]))
    if how == "digit":
        new = _digit(old, draw(st.integers(0, 40)), draw(st.integers(0, 9)))
    elif how == "other":
        new = draw(st.sampled_from(sorted({x for row in record["q"] for x in row}
                                          | set(record["t"]))))
    elif how == "negate":
        new = old[1:] if old.startswith("-") else "-" + old
    else:
        mantissa, _, exponent = old.partition("e")
        new = f"{mantissa}e{int(exponent or 0) + draw(st.sampled_from([-1, 1]))}"
    parent[key] = new
    return restamped(rec)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_random_edits_with_a_recomputed_digest_are_refused_or_load_identical(runs, tmp_path,
                                                                              data):
    """The acceptance property of issue 47: an edited saved solution whose digest was
    recomputed is refused (one named error) or loads numerically identical."""
    name = data.draw(st.sampled_from(sorted(runs)))
    sol, record = runs[name]
    rec = data.draw(number_edits(record))
    path = tmp_path / "edited.json"
    try:
        back = load_record(rec, path)
    except SolutionFileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}: ")
        return
    changed = [(k, rec[k], record.get(k)) for k in rec if k != "digest" and rec[k] != record.get(k)]
    assert numerically_identical(back, sol), f"loaded with changed numbers: {name} {changed}"


# ----- 2. and 3. the system given, the context edited ---------------------------------------------

def test_a_system_that_is_not_one_is_a_named_type_error(runs, tmp_path):
    """AttributeError: 'int' object has no attribute 'ctx' on main."""
    sol, record = runs["simpson"]
    with pytest.raises(TypeError, match=r"load_solution: system should be the "
                                        r"LagrangianSystem or FirstOrderSystem .* not int"):
        load_record(record, tmp_path / "s.json", system=3)


def test_a_context_edited_from_gmp_to_mp_loads_identical_or_is_refused_by_name(runs, tmp_path):
    """A TypeError (from sin()) or a bare ValueError on main."""
    sol, record = runs["simpson"]
    rec = copy.deepcopy(record)
    rec["context"]["kind"] = "mp"
    rec = restamped(rec)
    try:
        back = load_record(rec, tmp_path / "mp.json")
    except SolutionFileError:
        pass
    else:
        assert numerically_identical(back, sol)
        back.observable(sp.sin(Q))            # sin of the loaded numbers, in their context
    with pytest.raises(ValueError, match=r"the system 'pendulum' is in a context of kind "
                                         r"'gmp', the saved solution in one of kind 'mp'"):
        load_record(rec, tmp_path / "mp.json", system=PEND)


# ----- 4. numbers of an exponent beyond range, enclosures in results files ---------------------

@pytest.mark.parametrize("text", ["1e" + "9" * 30, "-2.5e-" + "9" * 25])
def test_an_arb_number_of_an_exponent_out_of_range_is_a_named_value_error(text):
    """decimal.InvalidOperation on main."""
    with pytest.raises(ValueError, match=r"its exponent is out of range"):
        mpvi.ArbContext(32).num(text)


RID = "axioms2024_fig08"


@pytest.mark.parametrize("enclosure", ["oops", "[1.5 +/- oops]", "[1.5 +/- ]", "1.5.5", ""])
def test_a_malformed_enclosure_in_a_results_file_names_file_and_field(tmp_path, capsys,
                                                                     enclosure):
    """"ValueError: invalid string for arb()" naming neither file nor field on main."""
    d = tmp_path / "results" / "axioms2024"
    d.mkdir(parents=True)
    for p in (default_out_dir(False) / "axioms2024").glob(f"{RID}.*"):
        shutil.copy(p, d / p.name)
    jpath = d / f"{RID}.json"
    record = json.loads(jpath.read_text())
    key = "newmark q order"
    record["certified"]["values"][key]["enclosure"] = enclosure
    jpath.write_text(json.dumps(restamped(record)))
    for argv in (["diff", RID, "--results", str(tmp_path / "results")],
                 ["list", "--results", str(tmp_path / "results")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "invalid string for arb" not in err
        line = next(x for x in err.splitlines() if x.startswith("mpvi: "))
        assert line.startswith(f"mpvi: {RID}: {jpath} is not a valid provenance record: "
                               f"record.certified.values[\"{key}\"].enclosure should be a "
                               f"ball"), line


# ----- 5. a Newton iteration that diverges names its likely cause -------------------------------

def test_a_diverging_newton_iteration_names_the_step_as_the_likely_cause():
    """"last update 3.630e+15 after 50 iterations" with no cause on main."""
    with pytest.raises(NewtonError) as info:
        solve(Problem(PEND, ["3"], v0=[0]), "midpoint", h="2", n=20)
    text = str(info.value)
    assert "likely cause: the Newton updates grow" in text
    assert "the step h is too large for the local dynamics" in text
    assert text.endswith("take a smaller h") and "\n" not in text


def test_a_newton_iteration_that_does_not_contract_names_the_step():
    quartic = LagrangianSystem("quartic", [Q], sp.Matrix([[1]]), -Q ** 4, {}, CTX)
    with pytest.raises(NewtonError, match=r"likely cause: the Newton updates do not contract "
                                          r"\(first .*, last .*\): the iteration diverges"):
        solve(Problem(quartic, ["1"], v0=[0]), "midpoint", h="1/2", n=4)


def test_too_few_iterations_for_a_contracting_newton_ask_for_more():
    with pytest.raises(NewtonError, match=r"likely cause: the Newton updates shrink .* raise "
                                          r"max_iter or rtol"):
        solve(Problem(PEND, ["1/2"], v0=[0]), "simpson", h="1/10", n=3,
              newton={"max_iter": 1})         # one after the start in doubles
