"""Issue 48, items 2 and 3: a system in one line (mpvi.Lagrangian), the order of a method
family chosen by ``order=``, drift and energy drift of a solution, steps chosen from a
tolerance, and the newcomer's script of docs/guide/library.md run as printed."""
import re
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

import mpvi
from mpvi.ground.expressions import ExpressionError

ROOT = Path(__file__).resolve().parent.parent

x, y, vx, vy, k = sp.symbols("x y vx vy k")
HH = (vx**2 + vy**2) / 2 - (x**2 + y**2) / 2 - x**2 * y + y**3 / 3     # Henon-Heiles


# ----- 1. mpvi.Lagrangian ------------------------------------------------------------------

def test_lagrangian_in_one_line_is_from_lagrangian_at_64_digits():
    S = mpvi.Lagrangian(HH, [x, y], [vx, vy])
    assert isinstance(S, mpvi.LagrangianSystem)
    assert S.ctx.dps == 64 and isinstance(S.ctx, mpvi.GMPContext)
    assert S.name == "L(x, y)" and S.coord_names == ["x", "y"]
    ref = mpvi.LagrangianSystem.from_lagrangian("HH", [x, y], [vx, vy], HH, {}, S.ctx)
    assert S.signature == ref.signature
    q, v = S.ctx.vector(["1/10", "0"]), S.ctx.vector(["0", "1/5"])
    assert list(S.acceleration(None, q, v)) == list(ref.acceleration(None, q, v))


def test_lagrangian_params_ctx_name_and_time():
    t = mpvi.TIME
    ctx = mpvi.MPContext(30)
    S = mpvi.Lagrangian(vx**2 / 2 - k * x**2 / 2 + x * sp.cos(t), x, vx, params={k: "3/2"},
                        ctx=ctx, name="driven")
    assert S.ctx is ctx and S.name == "driven" and S.time_dependent
    assert S.param_values == (ctx.num("3/2"),)


@pytest.mark.parametrize("args, error, words", [
    (([x], [vx], ), ExpressionError, "not an expression"),
    ((sp.Matrix([vx**2]), [x], [vx]), TypeError, "one sympy expression"),
    ((sp.Eq(vx, 1), [x], [vx]), TypeError, "one sympy expression"),
    ((lambda t: t, [x], [vx]), ExpressionError, "not an expression"),
    ((vx**2 / 2, [x], ["vx"]), ValueError, "not a sympy Symbol"),
    ((vx**2 / 2, [x], [vx + 1]), ValueError, "not a sympy Symbol"),
    ((vx**2 / 2, [x], vx + 1), TypeError, "list of sympy Symbols"),
    ((vx**2 / 2, [x], [vx, vy]), ValueError, "2 velocity symbols for 1 coordinates"),
    ((vx**2 / 2, [x, y], [vx]), ValueError, "1 velocity symbols for 2 coordinates"),
    ((sp.Float("0.1") * vx**2, [x], [vx]), mpvi.PrecisionError, "float literal"),
    ((vx**2 / 2 - y, [x], [vx]), ValueError, "'y'"),
])
def test_lagrangian_bad_input_is_a_named_error(args, error, words):
    if args[0] == [x]:
        args = ([x], [x], [vx])
    with pytest.raises(error, match=re.escape(words)):
        mpvi.Lagrangian(*args)


def test_lagrangian_params_must_be_a_mapping():
    with pytest.raises(TypeError, match="params must be a mapping"):
        mpvi.Lagrangian(vx**2 / 2 - k * x**2, [x], [vx], params=[(k, 1)])
