"""The instruments of the compiled step's cost (mpvi/compiled/cbackend.py, benchmarks/step_speed.py
--floor) and the leaner operations: an operation-counting build counts every MPFR call
of a kernel exactly, x * 2^k is an exact scaling with the Python kernel's bits, and the
benchmark prints the compiled step against its MPFR floor and Kepler's step compiled."""
import json
import subprocess
import sys
from pathlib import Path

import gmpy2
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.compiled import codegen

pytestmark = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
G64 = mpvi.GMPContext(64)


def same(a, b):
    if a != a or b != b:
        return a != a and b != b
    return a == b and a.precision == b.precision and gmpy2.is_signed(a) == gmpy2.is_signed(b)


def test_a_counting_build_counts_every_mpfr_call(monkeypatch, tmp_path):
    """x*y + x/3 - 2 sin(y): one mul, one mul by the hoisted 1/3, one add, a mul by 2
    (scaled exactly), one sub and one sin per call; copies apart; a normal build counts
    nothing."""
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path))
    monkeypatch.setattr(cbackend, "_MODULES", {})
    x, y = sp.symbols("x y")
    exprs = [x * y + x / 3 - 2 * sp.sin(y)]
    monkeypatch.setenv(cbackend.ENV_COUNT, "1")
    f = codegen.generate([[x, y]], exprs, G64, compiled=True)
    with G64.active():
        cbackend.operation_counts(reset=True)            # the setup's copies of the constants
        for _ in range(3):
            f([G64.num("0.5"), G64.num("1.25")])
    counts = {k: v for k, v in cbackend.operation_counts(reset=True).items() if v}
    assert counts == {"mpfr_mul": 6, "mpfr_add": 3, "mpfr_sub": 3, "mpfr_mul_2si": 3,
                      "mpvi_sin": 3, "mpfr_set": 3}        # set: the result's new mpfr
    assert cbackend.operation_counts() == dict.fromkeys(cbackend.COUNTED_OPERATIONS, 0)
    monkeypatch.delenv(cbackend.ENV_COUNT)
    monkeypatch.setattr(cbackend, "_MODULES", {})
    g = codegen.generate([[x, y]], exprs, G64, compiled=True)
    assert g is not f and cbackend.operation_counts() == {}


def test_scaling_by_a_power_of_two_is_exact_and_bit_identical():
    """x * 2, x * -4, 8 * x and x / 2, x / -16 (x times the hoisted constants 1/2, -1/16)
    compile to mpfr_mul_2si (and a negation) -- not mpfr_mul_si nor mpfr_mul of the
    constant -- and give the Python kernel's bits, signed zeros, infinities, nan and
    arguments wider than the context included."""
    x = sp.Symbol("x")
    exprs = [x * 2, x * -4, 8 * x, x / 2, x / -16, x * 6, x / 3]
    source, table = codegen.generate_source([[x]], exprs, G64)
    exact = {k: v.as_integer_ratio() for k, v in table.items()}
    csource = cbackend.translate("m", source, G64.prec, sorted(table), values=exact)
    assert csource.count("mpfr_mul_2si(t[") == 5 and csource.count("mpfr_neg(t[") == 2
    assert csource.count("mpfr_mul_si(t[") == 1 and csource.count("mpfr_mul(t[") == 1
    python = codegen.generate([[x]], exprs, G64, compiled=False)
    compiled = codegen.generate([[x]], exprs, G64, compiled=True)
    assert type(compiled).__name__ == "builtin_function_or_method"
    wide = mpvi.GMPContext(300).num("1/3")
    with G64.active():
        for v in [G64.num(t) for t in ("0.7", "-0", "0", "inf", "-inf", "nan", "-1e-300")] + [wide]:
            assert all(same(a, b) for a, b in zip(python([v]), compiled([v]))), str(v)


def test_step_speed_floor_reports_the_ratio_and_the_kepler_step():
    """--json --floor: the Simpson step of the top counted (every Newton iteration's
    operations: sin_cos, mul, add ...) and timed against its floor, and the Kepler step
    compiled, bit-identical, the same Newton iterations."""
    done = subprocess.run([sys.executable, str(BENCH / "step_speed.py"), "--json", "--floor",
                           "--steps", "3", "--repeats", "1"], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    for r in (report, report["kepler"]):
        ops = r["operations_per_step"]
        assert ops["mpfr_mul"] > 100 and ops["mpfr_add"] > 0 and ops["mpfr_div"] > 0
        assert r["floor_ms"] > 0 and r["compiled_over_floor"] > 0
        assert r["floor_periodic_ms"] > 0 and set(r["floor_ns"]) == set(ops)
        assert r["bit_identical"] is True
        its = r["newton_iterations"]
        assert its["fast"] == its["compiled"]
    assert report["operations_per_step"]["mpvi_sin_cos"] > 0      # the top's angles
    assert report["kepler"]["method"] == "simpson (Kepler)"
    assert "mpvi_sin_cos" not in report["kepler"]["operations_per_step"]
