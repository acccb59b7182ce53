"""reproductions/mutze_systems.py: Mutze's direct midpoint method on the top2025 systems.

Checked at reduced size: the orders on the Lagrange top against the exact nutation (2 for
Mutze g = 0, 4 for Simpson), the reversibility of the Newton-solved g-family on both
systems (and its loss with the truncated iteration), the divergence guard (the one-iteration
variant blows up on the top at h = t_bar/20; mpmath never overflows, so without the guard
the run would not end), the energy-growth measures on synthetic data, and the outputs.
"""
import io


from mpvi.context import MPContext
from mpvi.repro import Run
from mpvi.studies import LoopingTop
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

from reproductions.mutze_systems import (PARAMS, REPRODUCTION, energy_growth,
                                         integrate_method, reversibility_defect)

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
    run = small_run(chunk=8)
    tr = integrate_method(run, lt.system, "mutze_iter1", lt.top.q0, lt.top.p0, lt.tbar / 20, 40)
    assert tr.diverged is not None and "energy" in tr.diverged[0]
    assert len(tr.t) < 41 and max(abs(e) for e in tr.e) <= 1
    # the Newton-solved method runs through
    tr = integrate_method(run, lt.system, "mutze", lt.top.q0, lt.top.p0, lt.tbar / 20, 40)
    assert tr.diverged is None and len(tr.t) == 41


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
