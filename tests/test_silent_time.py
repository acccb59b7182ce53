"""Issue 47, silent class "time that does not advance": a step below the resolution of the
time at t0 is refused before the first step, whatever the run saves or looks for (every
node, saveat, events, dense output), forward or backward; a step above it runs.

Each case failed on main before issue 47: the run returned its times all equal to t0.
"""
import pytest
import sympy as sp

import mpvi
from mpvi import LagrangianSystem, Problem, solve

RESOLUTION = "below the resolution of the time"


def pendulum(ctx):
    q = sp.Symbol("q")
    return LagrangianSystem("pend", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)


@pytest.mark.parametrize("method", ["rk4", "simpson", "gbs", "midpoint"])
@pytest.mark.parametrize("t0, h", [("1e40", "1"), ("1e20", "1e-20"), ("-1e20", "-1e-20"),
                                   ("1e33", "1/2")])
def test_a_step_below_the_resolution_of_t0_is_refused(method, t0, h):
    ctx = mpvi.GMPContext(32)
    with pytest.raises(ValueError, match=RESOLUTION):
        solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0=t0), method, h=h, n=5)


@pytest.mark.parametrize("extra", [
    {"saveat": 2}, {"saveat": ["1e40"]},
    {"events": [mpvi.Event(lambda t, q, v: q[0])]},
    {"callback": lambda t, q, y: None}])
def test_saveat_events_and_callbacks_do_not_bypass_it(extra):
    ctx = mpvi.GMPContext(32)
    with pytest.raises(ValueError, match=RESOLUTION):
        solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e40"), "rk4", h="1", n=5, **extra)


def test_dense_output_does_not_bypass_it():
    ctx = mpvi.GMPContext(32)
    with pytest.raises(ValueError, match=RESOLUTION):
        solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e20"), "simpson", h="1e-20", n=5)


def test_the_message_names_the_remedy():
    ctx = mpvi.GMPContext(32)
    with pytest.raises(ValueError) as info:
        solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e40"), "rk4", h="1", n=5)
    text = str(info.value)
    assert "time origin" in text and "larger h" in text and "more digits" in text
    assert "\n" not in text


def test_more_digits_resolve_it_and_the_times_advance():
    """The same run with digits enough for t0 + h: strictly increasing times, each the
    node t0 + j h to the context's precision."""
    ctx = mpvi.GMPContext(60)
    sol = solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e40"), "rk4", h="1", n=5)
    t = list(sol.t)
    assert all(b > a for a, b in zip(t, t[1:]))
    assert t[-1] - t[0] == 5


def test_a_step_above_the_resolution_runs():
    """t0 = 1e20, h = 1e-10 at 32 digits: the resolution is about 1e-12, h is resolved."""
    ctx = mpvi.GMPContext(32)
    sol = solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e20"), "rk4", h="1e-10", n=5)
    t = list(sol.t)
    assert all(b > a for a, b in zip(t, t[1:]))


def test_a_ball_context_resolves_the_time_at_its_working_precision():
    """ArbContext(32) works at 142 bits (106 + its guard bits): t0 = 1e40 with h = 1 is
    resolved there, and each time is the exact node t0 + j (python-flint's own repr, at its
    default 53 bits, shows them as [1e40 +/- 1e21]; they are exact balls).  At 1e50 the
    step is below the resolution of the time and refused as in the other contexts."""
    from flint import arb

    ctx = mpvi.ArbContext(32)
    sol = solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e40"), "rk4", h="1", n=5)
    for j, t in enumerate(sol.t):
        assert t.rad() == 0 and t.mid() == arb(10 ** 40 + j)
    with pytest.raises(ValueError, match=RESOLUTION):
        solve(Problem(pendulum(ctx), ["1/2"], v0=[0], t0="1e50"), "rk4", h="1", n=5)
