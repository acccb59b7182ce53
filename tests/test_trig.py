"""sin and cos of the compiled modules (``mpvi/compiled/csrc/mpvi_trig.h``): Arb's ball
where it decides the correctly rounded value, else MPFR -- MPFR's bits either way."""
import ctypes
import random
from fractions import Fraction
from pathlib import Path

import gmpy2
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend, codegen

needs_toolchain = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")
needs_arb = pytest.mark.skipif(
    "-DMPVI_ARB_TRIG=1" not in cbackend.toolchain().get("defines", ()),
    reason="the modules are built without Arb's sin and cos here (python-flint's libflint "
           "not usable)")

_PROGRAM = r"""
#include <mpfr.h>
#include "mpvi_trig.h"
static int started = 0;
/* 1 if mpvi_sin_cos, mpvi_sin and mpvi_cos of x (hexadecimal, exact) give MPFR's bits;
   counts: the calls Arb decided, those MPFR computed, the load-time check's verdict */
int check(const char *text, unsigned long long *counts) {
    if (!started) { mpvi_trig_init(); started = 1; }
    mpfr_t x, s[3], c[3];
    mpfr_init2(x, PREC);
    for (int i = 0; i < 3; i++) { mpfr_init2(s[i], PREC); mpfr_init2(c[i], PREC); }
    int ok = mpfr_set_str(x, text, 16, MPFR_RNDN) == 0;
    mpfr_sin_cos(s[0], c[0], x, MPFR_RNDN);
    mpvi_sin_cos(s[1], c[1], x, MPFR_RNDN);
    mpvi_sin(s[2], x, MPFR_RNDN);
    mpvi_cos(c[2], x, MPFR_RNDN);
    for (int i = 1; i < 3; i++)
        ok = ok && ((mpfr_nan_p(s[0]) && mpfr_nan_p(s[i])) || (mpfr_equal_p(s[0], s[i])
                    && mpfr_signbit(s[0]) == mpfr_signbit(s[i])))
                && ((mpfr_nan_p(c[0]) && mpfr_nan_p(c[i])) || mpfr_equal_p(c[0], c[i]));
    counts[0] = mpvi_trig_arb; counts[1] = mpvi_trig_mpfr;
#ifdef MPVI_ARB_TRIG
    counts[2] = (unsigned long long)mpvi_trig_ok;
#else
    counts[2] = 0;
#endif
    mpfr_clear(x);
    for (int i = 0; i < 3; i++) { mpfr_clear(s[i]); mpfr_clear(c[i]); }
    return ok;
}
"""


def _library(tmp_path: Path, prec: int, *defines: str):
    """The functions of ``mpvi_trig.h`` at ``prec`` bits in a shared library built with the
    modules' toolchain and ``defines``, loaded by ctypes: check(x, counts)."""
    c = tmp_path / "trig.c"
    c.write_text(_PROGRAM)
    out = tmp_path / "trig.so"
    cbackend.compile_c(cbackend.toolchain(), c, out,
                       ("-O1", "-shared", "-fPIC", "-std=c99", f"-DPREC={prec}", *defines))
    lib = ctypes.CDLL(str(out))
    lib.check.restype = ctypes.c_int
    lib.check.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_ulonglong)]
    counts = (ctypes.c_ulonglong * 3)()

    def check(x):
        return lib.check(x.encode(), counts) == 1, tuple(counts)
    return check


TYPICAL = 200
"""The first arguments of :func:`_arguments`: angles of a kernel, 2^-8 <= |x| < 2^8."""


def _arguments(prec: int, rng: random.Random) -> list[str]:
    """Exact hexadecimal arguments of ``prec`` bits: :data:`TYPICAL` random ones of 2^-8 <=
    |x| < 2^8, then random ones from 2^-70 to 2^30 (both signs), the roundings of k pi/2
    (sin or cos about 2^-prec: too little relative accuracy in a ball), tiny, huge, zero,
    infinities and nan."""
    out = []
    with gmpy2.context(precision=prec):
        pi = gmpy2.const_pi()
        for i in range(TYPICAL + 100):
            m = gmpy2.mpfr(rng.getrandbits(prec)) / gmpy2.mpfr(2) ** prec
            e = rng.randint(-7, 8) if i < TYPICAL else rng.randint(-70, 30)
            out.append(gmpy2.mul_2exp(m, e) * rng.choice((1, -1)))
        out += [pi * k / 2 for k in (1, 2, 3, 4, 7, 100, 1001)]
        out += [gmpy2.mpfr(2) ** -80, -gmpy2.mpfr(2) ** -63, gmpy2.mpfr(2) ** 25 + 1,
                gmpy2.mpfr(0), -gmpy2.mpfr(0), gmpy2.inf(), -gmpy2.inf(), gmpy2.nan(),
                gmpy2.mpfr(1), gmpy2.mpfr("0.5")]
    return [format(x, "a") if gmpy2.is_finite(x) else str(x) for x in out]


@needs_toolchain
@pytest.mark.parametrize("prec", [53, 113, 216, 300, 1000])
def test_sin_and_cos_are_mpfrs_bits_and_arb_decides_most(tmp_path, prec):
    """At 53 to 1000 bits, on random arguments of every size, the roundings of k pi/2 and
    the special values, mpvi_sin_cos, mpvi_sin and mpvi_cos give mpfr_sin_cos's bits; with
    Arb linked, Arb decided most calls and MPFR took the rest (the roundings of k pi/2,
    the tiny and huge arguments, the non-finite ones)."""
    check = _library(tmp_path, prec)
    args = _arguments(prec, random.Random(prec))
    for i, x in enumerate(args):
        ok, counts = check(x)
        assert ok, (prec, x)
        if i == TYPICAL - 1:
            typical = counts
    arb, by_mpfr, verdict = counts
    assert arb + by_mpfr == 3 * len(args)
    if "-DMPVI_ARB_TRIG=1" in cbackend.toolchain().get("defines", ()):
        assert verdict == 1 and typical[0] >= 0.99 * 3 * TYPICAL, typical
        assert by_mpfr - typical[1] >= 3 * 17           # k pi/2, tiny, huge, 0, inf, nan
    else:
        assert arb == 0


@needs_arb
def test_a_ball_too_wide_to_decide_is_left_to_mpfr(tmp_path):
    """With Arb's guard bits cut to 4 and 6 (``MPVI_TRIG_GUARD``), Ziv's test rejects many
    balls: those calls go to MPFR, and every result is still MPFR's bits -- the test accepts
    only balls that decide the rounding."""
    args = _arguments(216, random.Random(7))
    for guard in (4, 6):
        (tmp_path / f"g{guard}").mkdir()
        check = _library(tmp_path / f"g{guard}", 216, f"-DMPVI_TRIG_GUARD={guard}")
        for x in args:
            ok, counts = check(x)
            assert ok, (guard, x)
        arb, by_mpfr, verdict = counts
        assert verdict == 1 and arb > 3 * 50 and by_mpfr > 3 * 50, (guard, counts)


@needs_arb
def test_a_module_whose_arb_path_disagrees_keeps_to_mpfr(tmp_path):
    """The load-time check (mpvi_trig_init): an Arb path made wrong by one ulp
    (``MPVI_TRIG_PERTURB``, a test build) fails it, and every call then goes to MPFR."""
    check = _library(tmp_path, 216, "-DMPVI_TRIG_PERTURB=1")
    for x in _arguments(216, random.Random(3))[:40]:
        ok, counts = check(x)
        assert ok, x
    assert counts[0] == 0 and counts[2] == 0


@needs_toolchain
def test_compiled_kernels_take_arbs_sin_and_cos_and_keep_the_python_bits(monkeypatch, tmp_path):
    """A compiled kernel of sin, cos and their products gives the Python kernel's bits at
    64 and 150 digits, and its module counts the calls Arb decided (``trig_counts``)."""
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path / "kernels"))
    monkeypatch.setattr(cbackend, "_MODULES", {})
    x, y = sp.symbols("x y")
    exprs = [sp.sin(x) * sp.cos(y), sp.cos(x) + sp.sin(x * y), sp.sin(y) ** 2]
    for dps in (64, 150):
        ctx = mpvi.GMPContext(dps)
        python = codegen.generate([[x, y]], exprs, ctx, compiled=False)
        compiled = codegen.generate([[x, y]], exprs, ctx, compiled=True)
        rng = random.Random(dps)
        with ctx.active():
            for _ in range(50):
                v = [ctx.num(Fraction(rng.randint(-4 * 10 ** 30, 4 * 10 ** 30), 10 ** 29))
                     for _ in range(2)]
                assert [a == b and a.precision == b.precision
                        for a, b in zip(python(v), compiled(v))] == [True] * 3
    modules = list(cbackend._MODULES.values())
    counts = [m.trig_counts() for m in modules if hasattr(m, "trig_counts")]
    assert counts and all(a + b > 0 for a, b in counts)
    if "-DMPVI_ARB_TRIG=1" in cbackend.toolchain().get("defines", ()):
        assert all(a > b for a, b in counts)


def test_mpvi_arb_trig_0_builds_without_arb(monkeypatch):
    """``MPVI_ARB_TRIG=0``: the toolchain links no libflint and defines nothing (every sin
    and cos MPFR's), and its modules have another cache key."""
    monkeypatch.setenv(cbackend.ENV_TRIG, "0")
    tc = cbackend._find_toolchain()
    if "error" in tc:
        pytest.skip(tc["error"])
    assert tc["defines"] == [] and not any("flint" in p for p in tc["link"])
    monkeypatch.delenv(cbackend.ENV_TRIG)
    with_arb = cbackend._find_toolchain()
    if with_arb["defines"]:
        assert cbackend._file_name("m", "x", tc, "r") != cbackend._file_name("m", "x", with_arb, "r")
