"""reproductions/mutze/mutze_systems.py: Mutze's direct midpoint method on the top2025 systems.

Checked at reduced size: the orders on the Lagrange top against the exact nutation (2 for
Mutze g = 0, 4 for Simpson), the reversibility of the Newton-solved g-family on both
systems (and its loss with the truncated iteration), the divergence guard (the one-iteration
variant blows up on the top at h = t_bar/20; mpmath never overflows, so without the guard
the run would not end; a failed Newton step keeps the nodes before it), the energy-growth
measures on synthetic data, and the outputs.
"""
import io

from mpvi.numbers.context import MPContext
from mpvi.repro.run import Run
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

from mpvi_papers.top2025._top2025_top import LoopingTop
from mpvi_papers.mutze.mutze_systems import (PARAMS, REPRODUCTION, energy_growth, guarded_solve,
                                         reversibility_defect)

CTX = MPContext(64)


def small_run(**over):
    params = dict(PARAMS, **over)
    return Run(CTX, params, True, stream=io.StringIO())


def test_g_family_is_reversible_on_both_systems_and_the_iteration_is_not():
    prob, lt = nonlinear_double_pendulum(CTX), LoopingTop(CTX)
    tiny = CTX.num(10) ** (4 - CTX.dps)
    for system, q0, p0, h in ((prob.system, prob.q0, prob.p0, CTX.num("0.02")),
                              (lt.system, lt.top.q0, lt.top.p0, lt.tbar / 40)):
        for key in ("mutze", "implicit_midpoint", "midpoint", "simpson"):
            assert reversibility_defect(system, key, q0, p0, h, CTX) < tiny, key
        assert reversibility_defect(system, "mutze_iter1", q0, p0, h, CTX) > CTX.num(10) ** -8


def test_divergence_guard_stops_the_explicit_iteration_on_the_top():
    lt = LoopingTop(CTX)
    run = small_run(check_every=8)
    with CTX.active():
        h = lt.tbar / 20
    tr = guarded_solve(run, lt.top, "mutze_iter1", h, 40)
    # the iteration explodes doubly exponentially: within 8 steps of the last check theta
    # passes 0, where the Euler angles are singular (sin(theta) of det M changes sign:
    # mpvi.model.singular), so the step fails before the next energy check
    assert tr.diverged is not None
    assert "step failed: IntegrationError" in tr.diverged[0]
    assert "sin(theta) (from the denominator sin(theta)**2 in det M) changed sign" in tr.diverged[0]
    # the nodes up to the last check that passed: a multiple of 8 steps, where it failed
    assert (len(tr.t) - 1) % 8 == 0 and tr.t[-1] == tr.diverged[1]
    assert max(abs(e) for e in tr.e) <= 1
    # the Newton-solved method runs through
    tr = guarded_solve(run, lt.top, "mutze", lt.tbar / 20, 40)
    assert tr.diverged is None and len(tr.t) == 41
    # saveat: every 10th node and the last; the energy errors are those of the full run
    every = guarded_solve(run, lt.top, "mutze", lt.tbar / 20, 40, saveat=10)
    assert len(every.t) == 5 and all(a == b for a, b in zip(every.e, tr.e[::10]))


def test_a_failed_step_keeps_the_nodes_up_to_the_last_check():
    """A NewtonError in the 11th step (injected through the callback, which solve calls
    after every step): the guard reports it at the last check that passed (node 8 with
    checks every 4 steps) and keeps the nodes 0..8 -- the same nodes as the run up to
    there, computed again."""
    from mpvi import NewtonError
    lt = LoopingTop(CTX)
    run = small_run(check_every=4)
    h = lt.tbar / 40
    real = run.solve

    def failing(problem, method, callback=None, **options):
        steps = []

        def cb(t, q, y):
            steps.append(t)
            if len(steps) == 11:
                raise NewtonError("injected", residual=1, iterations=50).at(10, t)
            return callback(t, q, y)
        return real(problem, method, callback=cb, **options)
    run.solve = failing
    tr = guarded_solve(run, lt.top, "simpson", h, 40)
    reason, t = tr.diverged
    assert reason.startswith("step failed: NewtonError: Newton failed (step 10") and t == 8 * h
    assert len(tr.t) == 9 and tr.t[-1] == 8 * h
    ref = real(lt.top, "simpson", h=h, n=8)
    assert all(a == b for a, b in zip(tr.q.ravel(), ref.q.ravel()))
    assert all(a == b for a, b in zip(tr.p.ravel(), ref.p.ravel()))


def test_energy_growth_measures():
    h, period = CTX.num(1) / 10, CTX.one
    t = [j * h for j in range(2001)]
    drift = [x / 1000 for x in t]
    ex, dec, per100, mx = energy_growth(CTX, h, drift, period, 10)
    assert abs(ex - 1) < CTX.num("1e-2") and abs(dec - 10) < CTX.num("1e-2")
    assert abs(per100 - CTX.num("0.1")) < CTX.num(10) ** -50 and mx == drift[-1]
    bounded = [CTX.sin(2 * CTX.pi * x) / 1000 for x in t]
    ex, dec, per100, _ = energy_growth(CTX, h, bounded, period, 10)
    assert abs(ex) < CTX.num("1e-2") and abs(dec - 1) < CTX.num("1e-2")
    assert abs(per100) < CTX.num("1e-4")


def test_reduced_study_orders_and_outputs():
    run = small_run(methods=["simpson", "mutze"], pendulum_T="1/2", pendulum_N=[20, 40, 80],
                    gbs_N=10, gbs_levels=10, top_N=[80, 160, 320], pendulum_energy_T="4",
                    top_energy=[{"N": 40, "periods": 3}], energy_points=50, min_periods=1)
    out = REPRODUCTION.compute(run)
    v = {k: CTX.num(x) for k, x in out.values.items() if "diverged" not in k}
    assert v["double_pendulum reference halving difference"] < CTX.num(10) ** -15
    # measured in the full run: top mutze finest-3 order 2.16, Simpson 4.02
    assert abs(v["top mutze order theta"] - 2) < CTX.num("0.3")
    assert abs(v["top simpson order theta"] - 4) < CTX.num("0.2")
    assert abs(v["double_pendulum mutze order q"] - 2) < CTX.num("0.15")
    assert abs(v["double_pendulum simpson order q"] - 4) < CTX.num("0.3")
    # Simpson conserves the cyclic momenta exactly (variational, Noether); Mutze does not
    assert v["top h=t_bar/40 simpson max rel p_phi error"] < CTX.num(10) ** -55
    assert v["top h=t_bar/40 mutze max rel p_phi error"] > CTX.num(10) ** -6
    assert v["top h=t_bar/40 mutze energy max"] > v["top h=t_bar/40 simpson energy max"]
    assert set(out.tables) == {"", "energy", "cost"}
    en = out.tables["energy"]
    assert set(en["system"]) == {"double_pendulum", "top"} and len(en) > 100
    fig = REPRODUCTION.plot(out, run.params)
    assert len(fig.axes) == 4
    import matplotlib.pyplot as plt
    plt.close(fig)
