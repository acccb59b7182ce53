"""The chain of coupled pendulums and the N-link pendulum (mpvi/systems/pendulums.py):
their equations against an independent derivation, the angle-addition form against the
form as printed, and the count of trigonometric arguments it saves."""
import random

import pytest
import sympy as sp

import mpvi
from mpvi.analysis.measures import energy
from mpvi.systems import angle_addition, n_link_pendulum, pendulum_chain, trig_arguments

G = mpvi.get_context("gmp", dps=40)


def cartesian_lagrangian(n, m, l, g):
    """L = T - V of n point masses m on rods of length l, from the Cartesian positions
    x_i = l sum_(k<=i) sin q_k, y_i = -l sum_(k<=i) cos q_k (not from the module's formula)."""
    t = sp.Symbol("t")
    qs = [sp.Function(f"q{i}")(t) for i in range(n)]
    x = [l * sum(sp.sin(qs[k]) for k in range(i + 1)) for i in range(n)]
    y = [-l * sum(sp.cos(qs[k]) for k in range(i + 1)) for i in range(n)]
    T = sum(m * (sp.diff(a, t) ** 2 + sp.diff(b, t) ** 2) / 2 for a, b in zip(x, y))
    V = sum(m * g * b for b in y)
    q = sp.symbols(f"q0:{n}")
    v = sp.symbols(f"v0:{n}")
    subs = {sp.diff(qs[i], t): v[i] for i in range(n)}
    subs.update({qs[i]: q[i] for i in range(n)})
    T, V = T.subs(subs), V.subs(subs)
    M = sp.Matrix(n, n, lambda i, j: sp.diff(T, v[i], v[j]))
    return q, M, V


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("expanded", [True, False])
def test_n_link_pendulum_is_the_cartesian_one(n, expanded):
    m, l, g = sp.Rational(3, 2), sp.Rational(7, 10), sp.Rational(981, 100)
    q, M, V = cartesian_lagrangian(n, m, l, g)
    problem = n_link_pendulum(G, n, m="3/2", length="7/10", g="9.81", angle_addition=expanded)
    system = problem.system
    rng = random.Random(n)
    for _ in range(3):
        point = {s: sp.Rational(rng.randint(-300, 300), 100) for s in q}
        ours = {c: point[s] for c, s in zip(system.coords, q)}
        exact = {"m": m, "l": l, "g": g}
        ours.update({s: exact[s.name] for s in system.param_symbols})
        for a, b in zip(M, system.mass_expr):
            assert abs(sp.N(a.subs(point) - b.subs(ours), 50)) < sp.Float("1e-45")
        assert abs(sp.N(V.subs(point) - system.potential_expr.subs(ours), 50)) < sp.Float("1e-45")


def test_angle_addition_lowers_the_count_of_trigonometric_arguments():
    for n in (2, 3, 5, 8):
        pairs = n_link_pendulum(G, n, angle_addition=False).system
        expanded = n_link_pendulum(G, n).system
        before = trig_arguments(list(pairs.mass_expr) + [pairs.potential_expr])
        after = trig_arguments(list(expanded.mass_expr) + [expanded.potential_expr])
        assert len(before) == n + n * (n - 1) // 2 and len(after) == n
    a, b = sp.symbols("a b")
    same = [sp.sin(a) + sp.cos(b)]                   # nothing to expand: unchanged
    assert angle_addition(same) == (same, 2, 2)
    assert angle_addition([sp.cos(a - b), sp.sin(a)])[1:] == (2, 2)   # would not lower it


def test_the_two_forms_agree_to_working_precision_not_bit_for_bit():
    n = 3
    runs = [mpvi.solve(n_link_pendulum(G, n, angle_addition=e), "simpson", h="1/50", n=40)
            for e in (False, True)]
    diff = max(abs(a - b) for a, b in zip(runs[0].q[-1], runs[1].q[-1]))
    assert diff < 1e3 * G.eps
    e = energy(runs[1].problem.system, runs[1])
    assert abs(e[-1] - e[0]) < 1e-5                # Simpson's O(h^4) energy error


def test_pendulum_chain_conserves_energy_and_refuses_bad_sizes():
    problem = pendulum_chain(G, 4, k="1/2")
    sol = mpvi.solve(problem, "simpson", h="1/40", n=80)
    e = energy(problem.system, sol)
    assert abs(e[-1] - e[0]) < 1e-6 and len(problem.q0) == 4
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            pendulum_chain(G, bad)
    with pytest.raises(ValueError, match="3 pendulums need 3 initial values, got 2"):
        n_link_pendulum(G, 3, q0=["0.1", "0.2"])
