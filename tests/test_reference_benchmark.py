"""benchmarks/reference.py (issue 49 item 1) on cheap settings: every posed problem is what
its docstring says and passes exactly into a wider context, the error is relative per
block, the path without heyoka.py, and (with heyoka.py) one row at 30 digits compares
equal accuracies."""
import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import mpvi

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "reference.py"


@pytest.fixture(scope="module")
def ref():
    sys.path.insert(0, str(PATH.parent))
    spec = importlib.util.spec_from_file_location("reference", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["double_pendulum", "kepler_e0.5", "kepler_e0.9",
                                  "henon_heiles", "outer_solar_system"])
def test_every_posed_problem_widens_exactly(ref, name):
    ctx, wide = mpvi.GMPContext(30), mpvi.GMPContext(60)
    posed = ref.SYSTEMS[name](ctx)
    twin = posed.widened(wide)
    assert twin.ctx is wide and twin.system.dof == posed.system.dof
    for a, b in zip(posed.q0 + posed.v0 + list(posed.params.values()),
                    twin.q0 + twin.v0 + list(twin.params.values())):
        assert Fraction(*a.as_integer_ratio()) == Fraction(*b.as_integer_ratio())
        assert b.precision == wide.prec


def test_the_problems_are_the_documented_ones(ref):
    ctx = mpvi.GMPContext(30)
    with ctx.active():
        for e in ("0.5", "0.9"):
            k = ref.SYSTEMS[f"kepler_e{e}"](ctx)
            x, y = k.q0
            vx, vy = k.v0
            energy = (vx ** 2 + vy ** 2) / 2 - 1 / ctx.sqrt(x ** 2 + y ** 2)
            assert abs(energy + ctx.num(1) / 2) < ctx.num(10) ** -27      # a = 1
            assert abs((x * vy) ** 2 - (1 - ctx.num(e) ** 2)) < ctx.num(10) ** -27
        hh = ref.SYSTEMS["henon_heiles"](ctx)
        assert hh.system.dof == 2 and hh.T == 100
        sun = ref.SYSTEMS["outer_solar_system"](ctx)
        assert sun.system.dof == 18 and len(sun.system.param_values) == 7


def test_the_error_is_relative_per_block(ref):
    ctx, wide = mpvi.GMPContext(30), mpvi.GMPContext(60)
    truth = ([[wide.num(100), wide.num(1)]], [[wide.num("0.001"), wide.num(0)]])
    got = ([[ctx.num(100), ctx.num(1) + ctx.num("1e-10")]],
           [[ctx.num("0.001") + ctx.num("1e-13"), ctx.zero]])
    err = ref.error(ctx, got, truth)
    # q: 1e-10 / 100 = 1e-12; v: 1e-13 / 1e-3 = 1e-10, the larger
    assert abs(err - ctx.num("1e-10")) < ctx.num("1e-20")


def test_without_heyoka_it_says_how_to_install_it(ref, monkeypatch, capsys):
    monkeypatch.setattr(ref, "heyoka", None)
    assert ref.main(["--systems", "kepler_e0.5", "--dps", "30"]) == 2
    assert "pip install heyoka" in capsys.readouterr().err


def test_one_row_at_30_digits_compares_equal_accuracies(ref):
    pytest.importorskip("heyoka")
    row = ref.compare("henon_heiles", 30, 1, 4)
    assert row["ratio"] is not None and row["ratio"] > 0
    assert row["mpvi_error"] <= row["target"] and row["heyoka_error"] <= row["target"]
    assert ref.line(row).startswith("ratio mpvi/heyoka henon_heiles 30: ")
