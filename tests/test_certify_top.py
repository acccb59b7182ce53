"""Issue 39: top2025 Fig. 11 and Tables 4-5 certified (the looping top's error norms and
orders on Arb balls), the growth series of the certified long runs (proven digits against
time, provenance ``certified.growth``) and the width control of a chaotic run
(:func:`mpvi.repro.certified.certify_controlled`).  Seconds: small parameter sets; the
full sets are run by hand (``mpvi run top2025_fig11 --certify``)."""
import dataclasses
import math
from fractions import Fraction

import pytest

from mpvi import get_context, solve
from mpvi.repro.declare import get_reproduction
from mpvi.repro.records import PROVENANCE, read_provenance, shape_problem
from mpvi.repro.run import execute

METHODS = ["midpoint", "rk4", "simpson"]


def _arb(text):
    from flint import arb
    return arb(text)


def test_the_top_enclosures_contain_a_200_digit_rerun_of_the_same_computation():
    """The enclosures of e_theta, e_H and the momenta's errors of one period at h =
    t_bar/20 hold the same runs redone at 200 digits from the 64-digit run's binary data
    (parameters, theta0 = pi/3, 9.2 and h read exactly), with the exact nutation of mpvi's
    own Weierstrass P at 200 digits (not Arb's) -- 130 digits beyond the balls' radii."""
    from mpvi.numbers.arbref import arb_precision, exact_rational
    from mpvi.systems.lagrange_top import make_top
    from mpvi_papers.top2025._top2025_top import LoopingTop, certified_top_errors
    c64, c200 = get_context("gmp", 64), get_context("gmp", 200)
    N = 20
    with c64.active():
        lt = LoopingTop(c64)
        h64 = solve(lt.top, "rk4", h=lt.tbar / N, n=1).h
    P = lt.top.params
    with arb_precision(220):
        step, balls = certified_top_errors(c64, N, 1, METHODS)
        assert step == exact_rational(h64, "h")
        with c200.active():
            twin = make_top(c200, *(c200.lift(P[k]) for k in ("m_top", "I", "I3", "ell", "g")),
                            [c200.lift(x) for x in lt.top.q0], [c200.lift(x) for x in lt.top.v0])
            nutation = twin.nutation()
            h = c200.lift(h64)
            S = twin.system
            H0 = S.hamiltonian(twin.q0, twin.p0)
            for m in METHODS:
                sol = solve(twin, m, h=h, n=N)
                e = {"theta": max(abs((q[1] - nutation.theta(t)) / nutation.theta(t))
                                  for t, q in zip(sol.t, sol.q)),
                     "H": max(abs((S.hamiltonian(q, p) - H0) / H0) for q, p in zip(sol.q, sol.p)),
                     "p_phi": max(abs((p[0] - twin.p0[0]) / twin.p0[0]) for p in sol.p),
                     "p_psi": max(abs((p[2] - twin.p0[2]) / twin.p0[2]) for p in sol.p)}
                for k, x in e.items():       # (the *_run balls are of the 64-digit run)
                    assert balls[m][k].contains(_arb(c200.to_str(x, 200))), (m, k, balls[m][k])
                for k in ("theta", "H"):
                    assert balls[m][k].rad() < balls[m][k].mid() / _arb("1e55"), (m, k)


@pytest.fixture(scope="module")
def fig11(tmp_path_factory):
    """Fig. 11 on three steps with --check-digits and --certify: (reproduction, record)."""
    out = tmp_path_factory.mktemp("fig11")
    rep = dataclasses.replace(get_reproduction("top2025_fig11"),
                              quick={"N": [20, 28, 40], "fit_from_N": 28})
    execute(rep, quick=True, out_dir=out, check_digits=True, certify=True,
            stream=open("/dev/null", "w"))
    return rep, read_provenance(rep, out)


def test_fig11_every_error_and_order_is_proven_to_40_digits_where_the_check_estimates_50(fig11):
    _, record = fig11
    cert, check = record["certified"], record["digits_check"]
    pairs = [("top2025_fig11.csv", "", "error"),
             ("top2025_fig11_orders.csv", "orders", "order_all_h"),
             ("top2025_fig11_orders.csv", "orders", "order_N_ge_28")]
    for csv, table, column in pairs:
        estimate = check["tables"][csv][column]["min"]
        proven = cert["columns"][table][column]
        assert estimate >= 50 and proven["min"] >= 40, (column, estimate, proven)
    assert set(cert["values"]) == set(record["values"])          # every compared value
    for key, v in cert["values"].items():
        assert v["digits"] >= 40, (key, v)
    assert set(cert["not_certified"]) == {"method", "variable", "N", "h_tbar",
                                          "orders.method", "orders.variable"}


def test_fig11_orders_are_enclosures_of_the_printed_least_squares_slope(fig11):
    """The proven orders hold the printed ones to their proven digits, and the printed
    orders are those of the paper's methods (4, 2, 4 up to the large-h range)."""
    _, record = fig11
    for m, expected in (("midpoint", 2), ("rk4", 4), ("simpson", 4)):
        ball = _arb(record["certified"]["values"][f"{m} H order"]["enclosure"])
        assert abs(ball - expected) < 1, (m, ball)


@pytest.fixture(scope="module")
def table5(tmp_path_factory):
    """Table 5 on two spans and two steps, certified: (reproduction, record)."""
    out = tmp_path_factory.mktemp("tab05")
    rep = dataclasses.replace(get_reproduction("top2025_tab05"),
                              quick={"T_tbar": [1, 3], "N_per_period": [10, 20]})
    execute(rep, quick=True, out_dir=out, certify=True, stream=open("/dev/null", "w"))
    return rep, read_provenance(rep, out)


def test_table5_is_certified_with_the_growth_series_of_its_longest_runs(table5):
    _, record = table5
    cert = record["certified"]
    assert cert["columns"][""]["error"]["min"] >= 40
    assert cert["columns"][""]["ls_order"]["min"] >= 40
    # RK4 keeps p_phi, p_psi bit for bit: its recorded drifts are exact zeros, said so
    zeros = {k for k in record["values"] if k.split()[1] == "rk4" and " rel p_p" in k}
    assert zeros and set(cert["values"]) == set(record["values"]) - zeros
    assert all("exactly 0" in cert["not_certified"][k] for k in zeros)
    # the other momenta's drifts are the runs' round-off, enclosed as such
    drifts = [k for k in cert["values"] if " rel p_p" in k]
    assert drifts and all(cert["values"][k]["digits"] >= 60 for k in drifts)
    assert set(cert["growth"]) == {f"T=3 t_bar {m} h=t_bar/{N}" for m in METHODS
                                   for N in (10, 20)}
    for label, g in cert["growth"].items():
        N = int(label.rsplit("/", 1)[1])
        # every node, node 0 too: its momenta are M(q0) q'0 rounded in the run, on balls
        # in the certificate (not the same exact number)
        assert len(g["t"]) == len(g["digits"]) == 3 * N + 1
        assert g["dps"] == 64 and min(g["digits"]) >= 40
        assert g["t"] == sorted(g["t"]) and g["t"][-1] == pytest.approx(
            3 * float(record["tbar_s"]), rel=1e-12)


def test_table2_records_the_growth_of_its_longest_span_runs(tmp_path):
    """axioms2024 Table 2 on T = 1, 2 t_bar: the T = 2 runs' proven digits against time
    (10 and 20 meshes per t_bar: 20 and 40 steps, node 0 exact: left out), in the
    record that read_provenance checks."""
    rep = dataclasses.replace(get_reproduction("axioms2024_tab02"),
                              quick={"T_tbar": [1, 2], "meshes_per_tbar": [10, 20]})
    execute(rep, quick=True, out_dir=tmp_path, certify=True, stream=open("/dev/null", "w"))
    growth = read_provenance(rep, tmp_path)["certified"]["growth"]
    assert set(growth) == {f"T=2 {m} N={N}" for m in ("newmark", "rk4", "simpson")
                           for N in (20, 40)}
    for label, g in growth.items():
        N = int(label.rsplit("=", 1)[1])
        assert len(g["t"]) == len(g["digits"]) == N and g["t"][-1] == pytest.approx(2)
        assert min(g["digits"]) >= 40 and g["dps"] == 64


def test_the_double_pendulum_of_fig2_records_its_growth_and_the_width_control_said(tmp_path):
    """top2025 Fig. 2 (quick references; the methods' runs are the full set's: h = 0.1 s
    over 10 s): the three runs certified at the run's 64 digits (the target, 5/8 of them,
    is met: no precision raised), their growth series; the deviations proven against the
    certified RK4 reference (h = 1/1000 s), the references' own comparisons declared not
    certified, with why."""
    rep = get_reproduction("top2025_fig02")
    execute(rep, quick=True, out_dir=tmp_path, certify=True, stream=open("/dev/null", "w"))
    record = read_provenance(rep, tmp_path)
    cert = record["certified"]
    assert set(cert["growth"]) == {f"{m} h=0.1 s" for m in METHODS}
    for m in METHODS:
        g = cert["growth"][f"{m} h=0.1 s"]
        assert len(g["t"]) == 100 and g["t"][-1] == pytest.approx(10) and min(g["digits"]) >= 40
        assert f"{m}: certified at the run's 64 digits" in cert["statement"]
        assert "target 40" in g["note"]
    assert cert["columns"]["deviation"]["deviation"]["min"] >= 5
    refs = {k for k in record["values"] if k.startswith("reference")}
    assert refs and set(cert["values"]) == set(record["values"]) - refs
    assert all("certified RK4 reference" in cert["not_certified"][k] for k in refs)
    assert all(v["digits"] >= 5 for v in cert["values"].values())


def test_a_growth_series_is_a_thinned_lower_envelope_of_the_proven_digits():
    """At most GROWTH_POINTS points, each the fewest digits of its group, exact states
    left out."""
    from mpvi import certify
    from mpvi.repro.certified import GROWTH_POINTS, growth_series
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    ctx = get_context("gmp", 30)
    with ctx.active():        # given p0 = 0: the initial state is exact (infinite digits)
        sol = solve(nonlinear_double_pendulum(ctx), "rk4", h=ctx.num("0.02"), n=450)
    cert = certify(sol)
    g = growth_series(cert, "a note")
    assert cert.min_digits[0] == math.inf
    digits = cert.min_digits[1:]
    assert all(math.isfinite(d) for d in digits) and len(digits) == 450 and len(g["t"]) <= GROWTH_POINTS
    assert min(g["digits"]) == round(min(digits), 2)
    size = -(-len(digits) // GROWTH_POINTS)
    assert g["digits"] == [round(min(digits[i:i + size]), 2)
                           for i in range(0, len(digits), size)]
    assert g["dps"] == 30 and g["note"] == "a note"


def test_a_growth_entry_of_the_wrong_shape_is_refused_by_the_provenance_check():
    from mpvi.repro.records import _CERTIFIED
    block = {"dps": 64, "wall_time_s": 1.0, "statement": "s", "columns": {}, "values": {},
             "not_certified": {}}
    good = dict(block, growth={"a": {"t": [0.5, 1], "digits": [63.2, 60], "dps": 64,
                                     "note": "n"}})
    assert shape_problem(good, _CERTIFIED) is None
    assert shape_problem(block, _CERTIFIED) is None                # optional
    bad = dict(block, growth={"a": {"t": ["0.5"], "digits": [63.2], "dps": 64, "note": "n"}})
    assert shape_problem(bad, _CERTIFIED) is not None
    assert PROVENANCE["certified?"] is _CERTIFIED


# ----- width control --------------------------------------------------------------------------

def _chaotic(n):
    """The double pendulum released from (2, 2.5) rad (chaotic: the run's round-off grows
    about 12 digits in 3 s), RK4 at h = 0.02 s, n steps, in a context of d digits."""
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum

    def solve_at(d):
        ctx = get_context("gmp", d)
        with ctx.active():
            return solve(nonlinear_double_pendulum(ctx, q0=("2", "2.5")), "rk4",
                         h=ctx.num("0.02"), n=n)
    return solve_at


def test_a_chaotic_run_is_not_a_wrong_step_and_width_control_raises_its_precision():
    """At 16 digits the chaotic run's computed states leave their enclosures by far more
    than the linear round-off allowance (its rounding grows like exp(lambda t)); each such
    step, judged alone from the run's own state before it, is right: certify completes and
    its proven digits fall below 12, so width control solves it again at 32 digits."""
    from mpvi import certify
    from mpvi.repro.certified import certify_controlled
    solve_at = _chaotic(150)
    cert = certify(solve_at(16))
    assert cert.complete and min(cert.min_digits) < 12 <= cert.min_digits[0]
    found = certify_controlled(solve_at, 16, 12, attempts=1)
    assert found.met and found.dps == 32 and found.span == 151
    assert found.certificate.complete and min(found.certificate.min_digits) >= 12
    assert found.tried[0][0] == 16 and "the proven digits fell below 12" in found.tried[0][2]
    assert found.statement.startswith("working precision raised to 32 digits")


def test_width_control_says_the_span_certified_when_no_precision_tried_suffices():
    """At 32 digits the chaotic run's proven digits fall below 28 near t = 2.9 s: without
    a further attempt the span proven to 28 digits is stated, and every point in it has
    28 digits, the next one fewer."""
    from mpvi.repro.certified import certify_controlled
    found = certify_controlled(_chaotic(150), 32, 28, attempts=0)
    digits = found.certificate.min_digits
    assert not found.met and 0 < found.span < len(digits)
    assert min(digits[:found.span]) >= 28 > digits[found.span]
    assert f"the first {found.span} saved points" in found.statement
    again = certify_controlled(_chaotic(150), 32, 28, attempts=1)
    assert again.met and again.dps == 64 and min(again.certificate.min_digits) >= 28


def test_width_control_raises_the_precision_of_a_run_whose_proof_failed(monkeypatch):
    """A certificate that ends at a failed step (here: the real certificate of the 16-digit
    run cut at step 40, as a Krawczyk failure would end it) makes the run be solved again
    at 32 digits; without a further attempt, the 40 points before it are the span."""
    import mpvi
    from mpvi.repro.certified import certify_controlled
    real = mpvi.certify

    def failing_at_16(sol, **options):
        cert = real(sol, **options)
        if sol.ctx.dps == 16:
            cert.failed_step, cert.why = 40, "the ball is too wide (test)"
            for name in ("t", "q", "y", "digits", "widths"):
                setattr(cert, name, getattr(cert, name)[:40])
        return cert
    monkeypatch.setattr(mpvi.repro.certified, "certify", failing_at_16)   # the name it calls
    solve_at = _chaotic(60)
    found = certify_controlled(solve_at, 16, 10, attempts=1)
    assert found.met and found.dps == 32
    assert "at 16 digits step 40 was not proven (the ball is too wide (test))" in found.statement
    cut = certify_controlled(solve_at, 16, 10, attempts=0)
    assert not cut.met and cut.span == 40 and "the first 40 saved points" in cut.statement


def test_width_control_refuses_bad_arguments():
    from mpvi.repro.certified import certify_controlled
    for kw in ({"attempts": -1}, {"factor": 1}):
        with pytest.raises(ValueError, match="certify_controlled"):
            certify_controlled(_chaotic(2), 16, 10, **kw)


# ----- the shared pieces ----------------------------------------------------------------------

def test_least_squares_order_encloses_the_exact_slope_and_refuses_a_zero_error():
    """errors = 3 h^p exactly (as balls) give the slope p; an error ball containing 0
    has no logarithm."""
    from flint import arb

    from mpvi.numbers.arbref import arb_precision
    from mpvi.repro.certified import least_squares_order
    with arb_precision(60):
        hs = [Fraction(1, 10), Fraction(1, 20), Fraction(1, 40)]
        errs = [3 * (arb(h.numerator) / h.denominator) ** 4 for h in hs]
        order = least_squares_order(hs, errs)
        assert order.contains(4) and order.rad() < arb("1e-50")
        with pytest.raises(ArithmeticError, match="not proven positive"):
            least_squares_order(hs, errs[:2] + [arb(0, 1)])
        with pytest.raises(ValueError):
            least_squares_order(hs[:1], errs[:1])


def test_relative_error_refuses_an_exact_value_not_proven_nonzero():
    from flint import arb

    from mpvi.repro.certified import ball_max, ball_norm, relative_error
    assert relative_error(arb(3), arb(2), "x").contains(arb(1) / 2)
    with pytest.raises(ArithmeticError, match="x: the exact value"):
        relative_error(arb(3), arb(0, 1), "x")
    assert ball_norm([arb(3), arb(4)]).contains(5)
    assert ball_norm([arb(0, 1)]).contains(0)
    assert ball_max([arb(-7), arb(2)]).contains(7)


def test_a_certificate_at_more_digits_than_the_run_reads_the_runs_parameters_exactly():
    """The top's parameters are numbers of the run's 64-digit context: a certificate at
    100 digits reads them exactly (plain with_context refuses them: PrecisionError) and
    encloses the same discrete trajectory, in balls some 30 digits narrower."""
    from mpvi import certify
    from mpvi.systems.lagrange_top import table3_top
    ctx = get_context("gmp", 64)
    with ctx.active():
        sol = solve(table3_top(ctx), "midpoint", h="1/100", n=6)
    at64, at100 = certify(sol), certify(sol, dps=100)
    assert at64.complete and at100.complete
    assert at100.widths[-1] < at64.widths[-1] * 1e-30
    for a, b in zip(at64.q[-1].tolist() + at64.y[-1].tolist(),
                    at100.q[-1].tolist() + at100.y[-1].tolist()):
        assert a.overlaps(b) and a.rad() > b.rad()


def test_a_wrong_step_is_refused_judged_from_its_node_and_from_the_run_solved_again():
    """A state moved by 1e-30 at node 12 of the chaotic run at 64 digits: judged from the
    run's node 11, the step is wrong (WrongStepError names step 11, with the distance from
    its own step); saved only every 4th node, the run is solved again from its saved node
    8 (each step judged on balls) and the moved state is refused against it."""
    from mpvi import certify
    from mpvi.proof.certify import WrongStepError
    solve_at = _chaotic(20)
    for saveat, says in ((None, "from the step taken from the run's own node 11"),
                         (4, "from the run solved again from its saved node 8")):
        sol = solve_at(64)
        if saveat is not None:
            ctx = sol.ctx
            with ctx.active():
                sol = solve(sol.problem, "rk4", h=sol.h, n=20, saveat=saveat)
        i = 12 if saveat is None else 3
        with sol.ctx.active():
            sol.q[i] = sol.q[i] + sol.ctx.num("1e-30")
        with pytest.raises(WrongStepError, match=says) as err:
            certify(sol)
        assert err.value.step == 11
