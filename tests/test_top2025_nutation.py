"""The exact nutation of the top2025 long runs (reproductions/top2025/_top2025_top.py):
evaluated once per phase on equispaced nodes, it equals the direct evaluation at every node
to the context's precision, with the drift of the rounded nodes from periodicity corrected
to first order."""
import numpy as np

import mpvi
from mpvi_papers.top2025._top2025_top import LoopingTop


def test_the_nutation_at_equispaced_nodes_is_evaluated_once_per_phase(monkeypatch):
    ctx = mpvi.get_context("mp", 64)
    lt = LoopingTop(ctx)
    N, periods = 10, 5
    h = lt.tbar / N
    times = [j * h for j in range(N * periods + 1)]      # the driver's nodes, 0 + j h
    direct = np.array([lt.nutation.theta(t) for t in times], dtype=object)
    calls = []
    theta = lt.nutation.theta
    monkeypatch.setattr(lt.nutation, "theta", lambda t: calls.append(t) or theta(t))
    phased = lt.theta_exact(times)
    assert len(calls) == N                                 # one per phase, not 51
    # the direct value at t = k t_bar + s rounds its argument t (+ t0 + w3) by about
    # eps t: a relative error up to eps (k + 1) t_bar |theta'| / theta, which the phased
    # value, evaluated at s, does not have
    rate = max(abs(lt.nutation.theta_dot(t) / lt.nutation.theta(t)) for t in times[:N])
    for j, (a, b) in enumerate(zip(phased, direct)):
        assert abs(a - b) / abs(b) <= 4 * (j // N + 1) * ctx.eps * lt.tbar * rate, j
    # nodes that are not 0 + j h with h = t_bar / N: every node evaluated
    calls.clear()
    lt.theta_exact([t + h / 3 for t in times])
    assert len(calls) == len(times)


def test_the_first_order_drift_correction_is_theta_prime():
    """theta(s + d) = theta(s) + theta'(s) d + O(d^2): at d = 1e-30 the correction is
    right to 1e-60 relative (d^2), and without it the error would be d theta'."""
    ctx = mpvi.get_context("mp", 64)
    lt = LoopingTop(ctx)
    nut, d = lt.nutation, ctx.num("1e-30")
    for s in (lt.tbar / 7, lt.tbar / 3, 2 * lt.tbar / 3):
        exact = nut.theta(s + d)
        first = nut.theta(s) + nut.theta_dot(s) * d
        assert abs(first - exact) / abs(exact) < ctx.num("1e-58")
        assert abs(nut.theta(s) - exact) / abs(exact) > ctx.num("1e-32")
