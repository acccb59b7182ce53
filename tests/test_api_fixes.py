"""Two front-door fixes of issue 38, item 4.

* ``force=`` takes the force's components as well as a callable: a sequence (or an n x 1
  matrix) of sympy expressions, numbers or texts in t, the coordinates, the parameters
  and -- for ``from_lagrangian``, whose velocity symbols are the user's -- the
  velocities; text goes through mpvi.ground.expressions' closed grammar.  Anything else (a
  single expression, a number) is a TypeError that names the parameter, what was given
  and the forms expected, not Python's "'list' object is not callable".
* ``Problem.replace(t0=T)`` without t1 moves the whole span (t1 keeps its distance and
  direction from t0), so ``replace(t0=t1)`` continues a problem instead of refusing.
"""
from __future__ import annotations

import pytest
import sympy as sp

import mpvi
from mpvi.ground.expressions import ExpressionError

CTX = mpvi.GMPContext(64)
q, v, a, w, c = sp.symbols("q v a w c")
PARAMS = {a: "1/2", w: "3/2", c: "1/10"}


def oscillator(force):
    """x'' + x = a cos(w t) + F from the constructor (L = v^2/2 - q^2/2)."""
    return mpvi.LagrangianSystem("forced", [q], [[1]], q**2 / 2, PARAMS, CTX, force=force)


def damped(force):
    """The same oscillator from its Lagrangian, with the user's velocity symbol v."""
    return mpvi.LagrangianSystem.from_lagrangian("damped", [q], [v], v**2 / 2 - q**2 / 2,
                                                 PARAMS, CTX, force=force)


def final_state(system, n=20):
    sol = mpvi.solve(mpvi.Problem(system, ["1/3"], v0=["1/5"], t1=2), "simpson",
                     h=f"2/{n}")
    return list(sol.q[-1]) + list(sol.y[-1])      # q and the method's p or v


# ----- force: the components instead of a callable ----------------------------------------------

@pytest.mark.parametrize("given", [["a*cos(w*t)"], [a * sp.cos(w * mpvi.TIME)],
                                   ("a*cos(w*t)",), sp.Matrix([a * sp.cos(w * mpvi.TIME)])],
                         ids=["text", "sympy", "tuple", "matrix"])
def test_a_time_dependent_force_given_as_its_components_is_the_callables(given):
    by_callable = oscillator(lambda t, x, u: sp.Matrix([a * sp.cos(w * t)]))
    by_components = oscillator(given)
    assert by_components.force_expr == by_callable.force_expr
    assert by_components.time_dependent == by_callable.time_dependent
    assert final_state(by_components) == final_state(by_callable)


@pytest.mark.parametrize("given", [["-c*v + a*cos(w*t)"], [-c * v + a * sp.cos(w * mpvi.TIME)]],
                         ids=["text", "sympy"])
def test_from_lagrangian_takes_components_in_the_users_velocities(given):
    by_callable = damped(lambda t, x, u: sp.Matrix([-c * u[0] + a * sp.cos(w * t)]))
    by_components = damped(given)
    assert by_components.force_expr == by_callable.force_expr
    assert final_state(by_components) == final_state(by_callable)
    t0, q0, v0 = CTX.number(0, "t"), CTX.vector(["1/3"]), CTX.vector(["1/5"])
    assert by_components.force(t0, q0, v0)[0] == CTX.number("1/2", "a") - CTX.number(
        "1/50", "c v")


@pytest.mark.parametrize("given, shown", [
    ("a*cos(w*t)", "str 'a*cos(w*t)'"),
    (a * sp.cos(w * mpvi.TIME), "cos"),
    (q, "Symbol q"),
])
def test_a_single_expression_is_refused_with_the_form_to_give(given, shown):
    with pytest.raises(TypeError) as info:
        oscillator(given)
    message = str(info.value)
    assert message.startswith("forced: force must be a callable force(t, q, v)")
    assert "or a sequence of 1 expression(s) in t, q, a, w, c" in message
    assert shown in message and message.endswith("(a single expression: give it as [expr])")
    assert "\n" not in message


def test_a_number_or_an_object_is_refused_naming_it():
    with pytest.raises(TypeError, match=r"^forced: force must be a callable .* got int 3$"):
        oscillator(3)
    with pytest.raises(TypeError, match=r"got dict \{'x': 1\}$"):
        oscillator({"x": 1})


def test_velocities_are_named_only_where_the_user_named_them():
    """The constructor's velocity symbols are internal: a component in a symbol ``v`` is
    an unknown symbol there, with the way out (a callable); from_lagrangian reads it."""
    with pytest.raises(ValueError, match=r"symbols \['v'\] are not among t, q, a, w, c; a "
                                         r"force that depends on the velocities is a callable"):
        oscillator([-c * v])
    with pytest.raises(ExpressionError, match="unknown name 'v'"):
        oscillator(["-c*v"])
    assert damped(["-c*v"]).force_expr == sp.Matrix([-c * v])


def test_components_of_the_wrong_number_or_text_outside_the_grammar_are_refused():
    with pytest.raises(ValueError, match=r"force must be an 1x1 column, got \(2, 1\)"):
        oscillator(["a", "w"])
    with pytest.raises(ExpressionError):
        oscillator(["__import__('os').getcwd()"])


# ----- Problem.replace(t0=...) moves the span ----------------------------------------------------

def problem(t0=0, t1=10):
    return mpvi.Problem(oscillator(["a*cos(w*t)"]), ["1/3"], v0=["1/5"], t0=t0, t1=t1)


def test_replacing_t0_alone_moves_the_span():
    pb = problem()
    later = pb.replace(t0=10)                       # the old code kept t1 = 10: refused
    assert (later.t0, later.t1) == (10, 20)
    assert pb.replace(t0=25).t1 == 35               # the old code made [25, 10]: backwards
    assert pb.replace(t0="-1/2").t1 == CTX.number("19/2", "t1")
    back = problem(t0=5, t1=1).replace(t0=2)        # a backward span stays backward
    assert (back.t0, back.t1) == (2, -2)


def test_giving_t1_as_well_sets_both_ends_and_no_t1_stays_none():
    both = problem().replace(t0=2, t1=3)
    assert (both.t0, both.t1) == (2, 3)
    assert problem(t1=None).replace(t0=4).t1 is None
    with pytest.raises(ValueError, match="the final time t1 must be finite and differ from t0"):
        problem().replace(t0=2, t1=2)


def test_replace_t0_continues_a_problem_where_it_ended():
    """Two runs of 20 steps, the second from the end of the first by ``replace(t0=...)``
    without t1, are one run of 40 (the forcing depends on t: the moved span is right)."""
    pb = problem(t1=1)
    first = mpvi.solve(pb, "simpson", h="1/20")
    end = {"p0" if first.state == "qp" else "v0": first.y[-1]}
    second = mpvi.solve(pb.replace(t0=first.t[-1], q0=first.q[-1], **end), "simpson",
                        h="1/20")
    whole = mpvi.solve(pb.replace(t1=2), "simpson", h="1/20")
    assert second.steps == first.steps == 20 and second.t[-1] == whole.t[-1] == 2
    gap = CTX.norm_inf(second.q[-1] - whole.q[-1]) + CTX.norm_inf(second.y[-1] - whole.y[-1])
    assert gap <= 100 * CTX.eps
