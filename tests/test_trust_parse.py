"""Nothing read from a file or given as a string runs as code (issue 35, item 1).

Every text that becomes a sympy expression -- a formula of a results directory's JSON or
of a published CSV (``mpvi diff``, ``mpvi list``, ``mpvi report``), an observable, a
potential, mass matrix or Lagrangian given as a string, a method parameter given as
text, a modified Hamiltonian in the study cache -- is read by the closed grammar of
:mod:`mpvi.ground.expressions`.  Each payload below creates a marker file when it is run as
Python (as ``sympy.sympify`` did); the marker must never appear, and the outcome must be a
named error or a mismatch, never a match.
"""
import json
from fractions import Fraction
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mpvi
from conftest import time_limit
from mpvi.ground.expressions import ExpressionError, parse_expression

ROOT = Path(__file__).resolve().parents[1]
A11 = "(7*z**4 - 192*z**2 + 420)/(2*(z**4 + 9*z**2 + 210))"
"""hermite_stability's reproduced A11 of the one-step variational method (a ``match``)."""


def payloads(marker, value):
    """Texts that create ``marker`` (or call a function outside the grammar) and are
    ``value`` when run as Python with sympy's names, as sympify runs them."""
    m = str(marker)
    return [
        f"__import__('os').system('touch {m}')*0+({value})",
        f"(lambda: __import__('os').system('touch {m}'))()*0+({value})",
        f"getattr(__import__('os'), 'system')('touch {m}')*0+({value})",
        f"exec(\"open('{m}', 'w').close()\") or ({value})",
        f"open('{m}', 'w').close() or ({value})",
        f"eval(\"__import__('os').system('touch {m}')\")*0+({value})",
        f"vars(().__class__.__base__)['__subclasshook__'] and open('{m}', 'w').close() or "
        f"({value})",
        f"Symbol('q')*0+({value})",
        f"Function('f')(z)*0+({value})",
        f"Lambda(z, z)(z)*0+({value})",
    ]


PAYLOAD_IDS = ["import", "lambda", "getattr", "exec", "open", "eval", "attributes",
               "Symbol", "Function", "Lambda"]


@pytest.fixture
def hermite_copy(tmp_path):
    """A copy of the committed figures/hermite/ in ``tmp_path``."""
    shutil.copytree(ROOT / "figures" / "hermite", tmp_path / "hermite")
    return tmp_path


def _plant(results, value):
    """Replace the reproduced A11 of hermite_stability's JSON in ``results`` by ``value``,
    and stamp the record anew: an attacker can recompute a digest (it guards against
    corruption and careless edits, test_trust_files.py), so the parser is what must hold."""
    from mpvi.repro.records import stamp_record
    path = results / "hermite" / "hermite_stability.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["values"]["hermite_variational A11"] == A11
    record["values"]["hermite_variational A11"] = value
    path.write_text(json.dumps(stamp_record(record), indent=2), encoding="utf-8")


def _a11_rows(results):
    """The diff row of A11 (None if the results are refused with a named error)."""
    from mpvi.repro.published import PublishedDataError, diff
    from mpvi.repro.records import OutputError
    try:
        rows = diff(["hermite_stability"], results)
    except (PublishedDataError, OutputError):
        return None
    return next(r for r in rows if r.value.key == "hermite_variational A11")


def test_the_unchanged_copy_matches(hermite_copy):
    """The fixture itself: the committed A11 matches (so a mismatch below is the payload's)."""
    assert _a11_rows(hermite_copy).status == "match"


@pytest.mark.parametrize("index", range(len(PAYLOAD_IDS)), ids=PAYLOAD_IDS)
def test_a_payload_in_a_provenance_json_never_runs_and_never_matches(hermite_copy, index):
    marker = hermite_copy / "pwned"
    _plant(hermite_copy, payloads(marker, A11)[index])
    row = _a11_rows(hermite_copy)
    assert not marker.exists()
    assert row is None or row.status == "MISMATCH"
    if row is not None:
        assert "not a formula" in row.reason


def test_mpvi_diff_on_a_planted_json_runs_nothing(hermite_copy):
    marker = hermite_copy / "pwned"
    _plant(hermite_copy, payloads(marker, A11)[0])
    run = subprocess.run([sys.executable, "-m", "mpvi.repro.cli", "diff", "hermite_stability",
                          "--out", str(hermite_copy)], capture_output=True, text=True,
                         timeout=300)
    assert not marker.exists()
    line = next(x for x in run.stdout.splitlines() if x.startswith("hermite_variational A11"))
    assert "MISMATCH" in line and run.returncode != 0


def test_the_report_of_a_planted_results_directory_runs_nothing(hermite_copy):
    """mpvi report --results DIR: the diff it shows reads the JSON by the grammar, and the
    planted text is a cell of escaped text, not a formula."""
    from mpvi.repro.report import cell, collect
    from mpvi.repro.declare import all_reproductions
    marker = hermite_copy / "pwned"
    text = payloads(marker, A11)[0]
    _plant(hermite_copy, text)
    reps = {"hermite_stability": all_reproductions()["hermite_stability"]}
    papers, _ = collect(hermite_copy, reps)
    assert not marker.exists()
    row = next(r for r in papers[0].items[0].rows if r.value.key == "hermite_variational A11")
    assert row.status == "MISMATCH"
    c = cell(text, symbolic=True)
    assert c.kind == "text" and not marker.exists()


@pytest.mark.parametrize("index", range(len(PAYLOAD_IDS)), ids=PAYLOAD_IDS)
def test_a_payload_in_a_published_csv_is_a_named_error(tmp_path, index):
    from mpvi.repro.published import COLUMNS, PublishedDataError, load_published
    marker = tmp_path / "pwned"
    printed = payloads(marker, "(7*z**4-192*z**2+420)/(2*z**4+18*z**2+420)")[index]
    path = tmp_path / "hermite_x.csv"
    quoted = '"' + printed.replace('"', '""') + '"'
    path.write_text(",".join(COLUMNS) + "\n"
                    f"hermite_stability,hermite_variational A11,A11,{quoted},symbolic,,here\n",
                    encoding="utf-8")
    with pytest.raises(PublishedDataError, match=r"^hermite_x\.csv, line 2: .* is not a "
                                                   r"formula mpvi can read"):
        load_published(path)
    assert not marker.exists()


def _oscillator(potential="k*q**2/2", mass=((1,),)):
    q, k = sp.symbols("q k")
    return mpvi.LagrangianSystem("osc", [q], [list(r) for r in mass], potential, {k: "1"},
                                 mpvi.GMPContext(30))


def test_a_string_observable_is_read_by_the_grammar(tmp_path):
    S = _oscillator()
    sol = mpvi.solve(mpvi.Problem(S, ["1"], p0=["0"]), "simpson", h="1/10", n=2)
    marker = tmp_path / "pwned"
    for text in payloads(marker, "q**2"):
        with pytest.raises(ExpressionError, match="^observable: "):
            sol.observable(text)
    with pytest.raises(ExpressionError, match="unknown name 'w'"):
        sol.observable("w*q")
    assert not marker.exists()
    # the names are the system's own symbols: text and sympy give the same values
    q, v0, k = S.coords[0], S.velocity_symbols[0], S.param_symbols[0]
    energy = v0 ** 2 / 2 + k * q ** 2 / 2
    assert (sol.observable("_v0^2/2 + k*q**2/2 + 0*t") == sol.observable(energy)).all()


def test_a_string_potential_mass_or_lagrangian_is_read_by_the_grammar(tmp_path):
    marker = tmp_path / "pwned"
    for text in payloads(marker, "q**2/2"):
        with pytest.raises(ExpressionError, match="^osc: potential: "):
            _oscillator(potential=text)
        with pytest.raises(ExpressionError, match="^osc: mass matrix: "):
            _oscillator(mass=((text,),))
        with pytest.raises(ExpressionError, match="^osc: Lagrangian: "):
            q, v = sp.symbols("q v")
            mpvi.LagrangianSystem.from_lagrangian("osc", [q], [v], text, {}, mpvi.GMPContext(30))
    assert not marker.exists()
    q, k = sp.symbols("q k")
    S = _oscillator(potential="k*q^2/2 - cos(q)/10", mass=(("1 + 0.5",),))
    assert S.potential_expr == k * q ** 2 / 2 - sp.cos(q) / 10           # 1/10 exactly
    assert S.mass_expr == sp.Matrix([[sp.Rational(3, 2)]])


def test_a_method_parameter_or_stability_bound_given_as_text_is_read_by_the_grammar(tmp_path):
    from mpvi.drive.solve import _stability_number
    marker = tmp_path / "pwned"
    S = _oscillator()
    for text in payloads(marker, "3/5"):
        with pytest.raises(ExpressionError, match="mutze parameter g"):
            mpvi.modified_equation("mutze", S, 2, g=text)
        method = types.SimpleNamespace(name="m", stability_bound_for=lambda text=text: text)
        with pytest.raises(ExpressionError, match="^m: stability bound: "):
            _stability_number(method, {}, mpvi.GMPContext(30))
    assert not marker.exists()
    assert mpvi.modified_equation("mutze", S, 2, g="0.6").model is not None


def test_study_cache_texts_are_read_by_the_grammar(tmp_path):
    from mpvi_papers.bea import _bea, bea_oscillator
    from mpvi_papers.mutze import _mutze_series
    marker = tmp_path / "pwned"

    def ring(generators, terms=((([0], "1/1"),),), q=("q",)):
        return {"q": list(q), "p": ["p0"], "generators": list(generators),
                "terms": [[[list(m), c] for m, c in t] for t in terms]}
    for text in payloads(marker, "p0**2/2 - cos(q)"):
        with pytest.raises(ExpressionError):
            _bea.parsed_terms(ring([text]))
        with pytest.raises(ExpressionError):
            bea_oscillator._read(text, "trace")
        with pytest.raises(ExpressionError):
            _mutze_series.parse_nabla("dt L", text)
    with pytest.raises(ExpressionError):                 # the old srepr form is code
        _bea.parsed_terms(ring([sp.srepr(sp.cos(sp.Symbol("q")))]))
    with pytest.raises(ExpressionError):
        _bea.parsed_terms(ring(["p0"], q=["__import__"]))
    assert not marker.exists()
    # the monomials are data, checked before use: exponents ints >= 0, one per generator,
    # coefficients "n/d" in lowest terms
    for bad in [([-1], "1/1"), ([1, 0], "1/1"), ([True], "1/1"), ([1.0], "1/1"),
                ([1], "2/4"), ([1], "1e3/1"), ([1], "1/0"), ([1], 3), ([1], "__import__")]:
        with pytest.raises(ValueError, match="monomial of term 0"):
            _bea.parsed_terms(ring(["cos(q)"], [[bad]]))
    q, p, gens, terms = _bea.parsed_terms(ring(["cos(q)", "p0"], [[([2, 0], "-3/7")]]))
    assert gens == [sp.cos(q[0]), p[0]] and terms == [[((2, 0), Fraction(-3, 7))]]


def test_modified_hamiltonian_terms_read_back_identical():
    """The study cache keeps H~ as the ring holds it: its generators as text of the grammar
    (read back identical, ``==``) and its terms as monomials; written back as sympy, every
    term of the pendulum's H~ through h^8 (midpoint) and h^6 (4-point Lobatto) is the
    function :attr:`ModifiedHamiltonian.terms` gives (equal at a rational point, exactly,
    and their difference simplifies to zero)."""
    from mpvi_papers.bea import _bea
    S = _bea.pendulum(mpvi.GMPContext(30))
    rec = types.SimpleNamespace(ctx=S.ctx, progress=lambda message: None)
    for method, order in (("midpoint", 8), ("lobatto", 6)):
        mh = mpvi.modified_hamiltonian(method, S, order, **_bea.METHODS[method][2])
        value = _bea.modified_hamiltonian_terms.compute(
            rec, {"method": method, "order": order})
        q, p, gens, terms = _bea.parsed_terms(json.loads(json.dumps(value)))
        assert q == list(mh.q) and p == list(mh.p) and len(terms) == len(mh.terms)
        assert any(g.has(sp.cos) for g in gens)
        point = {q[0]: sp.Rational(3, 7), p[0]: sp.Rational(-5, 4)}
        for term, expected in zip(terms, mh.terms):
            written = sp.Add(*[sp.Rational(c.numerator, c.denominator)
                               * sp.Mul(*[g ** e for g, e in zip(gens, m)]) for m, c in term])
            assert sp.simplify(written - expected) == 0
            assert abs(sp.N((written - expected).subs(point), 50)) < 1e-45


def test_numbers_are_exact_and_caret_is_a_power():
    x = sp.Symbol("x")
    assert parse_expression("0.1") == sp.Rational(1, 10)
    assert parse_expression("2.5e-3") == sp.Rational(1, 400)
    assert parse_expression("-1.25E+2") == -125 and parse_expression(".5") == sp.Rational(1, 2)
    assert parse_expression("0.1000000000000000000000000000001") == \
        sp.Rational(10 ** 30 + 1, 10 ** 31)
    assert parse_expression("x^2 - 2^3^2", {"x": x}) == x ** 2 - 512
    assert parse_expression("-x**2 + 2**-1", {"x": x}) == -x ** 2 + sp.Rational(1, 2)
    a, b, c = sp.symbols("a b c")
    assert parse_expression("a/b/c", free_symbols=True) == a / (b * c)
    # display mode: as written, a decimal keeps its digits
    shown = parse_expression("0.25*x - x", {"x": x}, evaluate=False)
    assert shown.is_Add and len(shown.args) == 2 and sp.Float("0.25") in shown.args[0].args


def test_a_long_flat_sum_parses_fast_without_recursion():
    names = {f"x{k}": sp.Symbol(f"x{k}") for k in range(20000)}
    text = " + ".join(names)
    start = time.perf_counter()
    expr = parse_expression(text, names)
    assert time.perf_counter() - start < 1.0
    assert expr == sp.Add(*names.values())
    x, y = sp.symbols("x y")
    long = " - ".join(["x*y", "2*x", "y/3"] * 70000)                 # 210 000 terms, 1.3 MB
    assert parse_expression(long, {"x": x, "y": y}) == -69998 * x * y - 140000 * x - 70000 * y / 3
    assert parse_expression("*".join(["x"] * 1000), {"x": x}) == x ** 1000


@pytest.mark.parametrize("text, cause", [
    ("(" * 1000 + "x" + ")" * 1000, "nested more than 100"),
    ("-" * 100000 + "(" * 150 + "1" + ")" * 150, "nested more than 100"),
    ("2**" * 1000 + "2", "nested more than 100"),
    ("2**10**10", "exponent 10000000000 is larger"),
    ("10**10**10", "exponent 10000000000 is larger"),
    ("(10**999)**999", "more than 20000 bits"),
    ("x**(10**999/3)", r"exponent 1000000000\.\.\.\(1002 characters\) is larger"),
    ("factorial(10**9)", "factorial of 1000000000"),
    ("gamma(10**6 + 1/2)", "gamma of 2000001/2"),
    ("Sum(x, (x, 0, 10**9))", "Sum of 1000000001 terms"),
    ("1" * 5000, "more than 1000 digits"),
    ("1e999999", "more than 1000 digits"),
    ("1e-99999999999999999999", "exponent of 20 digits"),
])
def test_limits_refuse_quickly_with_the_named_error(text, cause):
    start = time.perf_counter()
    with pytest.raises(ExpressionError, match="^the test's text: .*" + cause):
        parse_expression(text, free_symbols=True, what="the test's text")
    assert time.perf_counter() - start < 1.0


def test_the_length_limit_is_the_callers():
    with pytest.raises(ExpressionError, match="^formula: 12 characters, more than the 11 read$"):
        parse_expression("x + y + z**2", free_symbols=True, what="formula", max_length=11)
    assert parse_expression("x + y + z**2", free_symbols=True, max_length=12).is_Add


@pytest.mark.parametrize("text, cause", [
    ("x.real", "unexpected character '.'"), ("x[0]", "unexpected '\\['"),
    ("f(x=1)", "unexpected character '='"), ("sin(*x)", "unexpected '\\*'"),
    ("'x'", "unexpected character"), ("lambda x: x", "unexpected character ':'"),
    ("x + lambda", "'lambda' is a Python keyword"), ("None", "'None' is a Python keyword"),
    ("[x for x in y]", "unexpected 'for'"), ("__class__", "'__class__' has '__'"),
    ("eval(x)", "'eval' is not a function of the grammar"), ("x y", "unexpected 'y'"),
    ("2x", "unexpected 'x'"), ("sin", "'sin' is a function: call it"), ("", "empty"),
    ("(1, 2)", "a tuple is not an expression"), ("x + [1]", "a list is not a value"),
    ("Sum(x, (x, y, 3))", "limits of Sum must be"), ("sin(x, y)", "sin\\(...\\) is not valid"),
    ("0x1f", "unexpected 'x1f'"), ("1_000", "unexpected '_000'"), ("3j", "unexpected 'j'"),
    ("x\u00b2", "unexpected character"), ("\u0661 + 1", "unexpected character"),
])
def test_only_the_grammar_is_read(text, cause):
    with pytest.raises(ExpressionError, match=cause):
        parse_expression(text, free_symbols=True)


def test_names_are_the_callers_and_the_message_says_which():
    q = sp.Symbol("q", real=True)
    assert parse_expression("q + pi", {"q": q}) == q + sp.pi          # the caller's symbol
    with pytest.raises(ExpressionError, match=r"^potential: unknown name 'r' \(known: E, I, "
                                               r"oo, pi, q\) at character 5 of 'q \+ r'$"):
        parse_expression("q + r", {"q": q}, what="potential")
    assert parse_expression("E", {"E": q}) == q                         # names before constants
    with pytest.raises(ExpressionError) as info:
        parse_expression("q +", {"q": q}, what="observable")
    again = pickle.loads(pickle.dumps(info.value))                      # from a worker process
    assert (again.what, again.reason, str(again)) == ("observable", info.value.reason,
                                                       str(info.value))


_TOKENS = ["x", "y", "z", "0", "1", "2", "9", "0.5", "1e3", "+", "-", "*", "/", "**", "^",
           "(", ")", "[", "]", ",", ".", " ", "'", '"', ":", "=", "_", "__", "sin", "sqrt",
           "factorial", "binomial", "Sum", "Matrix", "pi", "oo", "I", "E", "lambda", "os",
           "__import__", "system", "exec", "open", "getattr", "Symbol", "Function", "Lambda"]


@settings(max_examples=400, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=40),
                 st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join)))
def test_any_text_is_an_expression_or_the_named_error(text):
    """Arbitrary text, and text made of the grammar's tokens and of Python's: a sympy
    expression or an ExpressionError with a one-line message, nothing else, within a
    second, and nothing written (run in an empty working directory)."""
    with tempfile.TemporaryDirectory() as empty:
        here = os.getcwd()
        os.chdir(empty)
        try:
            for options in ({"free_symbols": True}, {"free_symbols": True, "evaluate": False},
                            {"names": {"x": sp.Symbol("x")}}):
                try:
                    with time_limit(10):
                        start = time.perf_counter()
                        result = parse_expression(text, **options)
                        assert time.perf_counter() - start < 1.0, text
                except ExpressionError as exc:
                    assert str(exc).startswith("expression: ") and "\n" not in str(exc)
                else:
                    assert isinstance(result, sp.Basic), (text, result)
            assert os.listdir(empty) == []
        finally:
            os.chdir(here)
