"""Mutze's small step action principle as truncated power series in tau (U. Mutze, "A
Simple Variational Integrator for General Holonomic Mechanical Systems", Sec. 5 and the
Appendix), re-derived independently of the paper's FORM program.

The objects (eqs. 37, 39, 46, 53, 60-68)
-----------------------------------------
On the parabolic path q(t + h) = x + v h + a h^2/2, h in [0, 2 tau] (eq. 18), with the
integrand (eqs. 58, 66)

    K = L(t+h, q, q') + (h/2)(h - 2 tau) a.F(t+h, q, q'),    q' = v + a h,

the action is S(t, x, v, a, tau) = int_0^{2 tau} K dh (eqs. 39, 46, 53, 67), the
midpoint derivative is D_tau = 3/(2 tau^3) (tau grad_v - grad_a) (eq. 37), and with an
arbitrary vector e (eq. 61)

    LHS  = e.(D_tau S)(t, x, v, a, tau)                                     (eq. 68)
    RHS  = -e.G(t + tau, x + v tau + a tau^2 g, v + a tau, a)               (eq. 65)
    DIFF = LHS - RHS,

G = ([(d_t + v.grad_x + a.grad_v) grad_v - grad_x] L - F)(t, x, v) (eqs. 10-11).  The
theorem (eq. 60) says DIFF = O(tau^2) for every g, and for the harmonic oscillator the
tau^2 term vanishes iff g = 3/5.

Representation: words (valid for any number n of degrees of freedom)
-------------------------------------------------------------------
Every term of these expansions is a number times a partial derivative of L, of a.F or of
e.F at the base point (t, x, v), contracted with the constant vectors v, a, e.  Because
partial derivatives commute, such a term is fixed by a :class:`Word`: the number of
d_t, how many x-slots are contracted with v, a and e, how many v-slots with a and e, and
the function (``L``, ``aF`` = a.F or ``eF`` = e.F).  These are exactly the monomials of
the paper's FORM output in normal order (Dt, vDx, aDx, eDx, aDv, eDv), e.g.

    Word('L', nt=1, xv=1, va=1, ve=1)  ==  Dt*vDx*aDv*eDv*L
                                       ==  d_t (v.grad_x)(a.grad_v)(e.grad_v) L.

For generic L, F and n >= 2 distinct words are linearly independent functions of
(v, a, e), so word-by-word equality is equality in every dimension: the engine is not
restricted to one degree of freedom, and e.g. ``-a.grad_x grad_v L + grad_x a.grad_v L``
of eq. (70), which cancels for n = 1, is kept as two words.

The expansion (eqs. 62-64, 67) is Taylor's formula at the base point, with the contracting
vectors held fixed:

    f(t + dt, x + dx, v + dv) = sum dt^i/i! (dx.grad_x)^j/j! (dv.grad_v)^k/k! f(t, x, v),

dt = s, dx = v s + z a s^2, dv = a s (s = h, z = 1/2 for S; s = tau, z = g for RHS); an
explicit v in the expanded function (the v.grad_x of G) is shifted to v + a s as well
(the argument v of G(t', x', v', a) is v' = v + a tau).  Then h^k -> (2 tau)^(k+1)/(k+1)
(eq. 67).  D_tau acts by the chain rule, as a derivation on words:

    e.grad_v : the base point v -> one more e in a v-slot, and each explicit v in an
               x-slot -> e (product rule);
    e.grad_a : each a in an x- or v-slot -> e, and a.F -> e.F.

Nothing of FORM's commutation relations (iii) is used; the agreement with the printed
FORM output is a check, not an input.

One degree of freedom
---------------------
:meth:`Expansion.one_d` projects onto n = 1, e = 1: a word becomes v^j a^k times a
*derivative symbol* ``L_<letters>`` or ``F_<letters>`` with the derivative letters in the
fixed order t, x, v (``L``, ``L_t``, ``L_xv``, ``F_tvv``, ...), all taken at (t, x, v).
:func:`to_concrete` substitutes a concrete L(t, x, v), F(t, x, v) (in the module's symbols
:data:`T`, :data:`X`, :data:`V`); :func:`evaluate_words` does the same for n degrees of
freedom (directional derivatives of a concrete L(t, x, v), F(t, x, v)).

Printed notations
-----------------
:func:`parse_form` reads the FORM output of the Appendix (normal-ordered words such as
``- 9/5*Dt*Dt*aDv*eDv*L + 1/5*Dt*eDv*aF``); :func:`parse_nabla` reads a hand
transliteration of the paper's grad-notation (eqs. 69, 70 and the remaining terms of the
proof) in a small string syntax (see there).  Both give ``{Word: coefficient}``.

Independent numerical check
---------------------------
:class:`DirectCheck` computes LHS by Gauss-Legendre quadrature of the exact integrand of
D_tau S (no series) and RHS from G directly, at the precision of a number context
(:mod:`mpvi.numbers.context`), for any n; it shares no code with the series engine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb, factorial

import sympy as sp

from mpvi.ground.expressions import as_expression

__all__ = [
    "TAU",
    "A",
    "DirectCheck",
    "Expansion",
    "G",
    "NablaTerm",
    "T",
    "V",
    "Word",
    "X",
    "action",
    "compare_words",
    "diff",
    "evaluate_words",
    "form_word",
    "gauss_legendre_rule",
    "guiding_force_words",
    "nabla_words",
    "lhs",
    "one_d",
    "one_d_symbol",
    "parse_form",
    "parse_form_terms",
    "parse_nabla",
    "restrict_T_minus_V",
    "rhs",
    "to_concrete",
    "words_to_sympy",
]

FUNCTIONS = ("L", "aF", "eF")
"""The functions the words act on: L, a.F and e.F (FORM's ``L``, ``aF``, ``eF``)."""

OPERATORS = ("Dt", "vDx", "aDx", "eDx", "aDv", "eDv")
"""FORM's differential operators in its normal order (the paper's list (i) without eDa,
which never survives: eDa*aF = eF, eDa*L = 0).  ``pDq`` = p.grad_q."""

_FIELDS = ("nt", "xv", "xa", "xe", "va", "ve")   # one per operator, same order

T, X, V, A, G, TAU = sp.symbols("t x v a g tau")
"""Symbols of the 1-D expressions: time t, position x, velocity v (argument and
contracting vector), acceleration parameter a, the free parameter g of eq. (60), tau."""


@dataclass(frozen=True, order=True)
class Word:
    """d_t^nt (v.grad_x)^xv (a.grad_x)^xa (e.grad_x)^xe (a.grad_v)^va (e.grad_v)^ve fn,
    evaluated at (t, x, v); ``fn`` is ``'L'``, ``'aF'`` (= a.F) or ``'eF'`` (= e.F).
    The contracting vectors are constants: the word is FORM's normal-ordered monomial
    Dt^nt vDx^xv aDx^xa eDx^xe aDv^va eDv^ve fn."""

    fn: str
    nt: int = 0
    xv: int = 0
    xa: int = 0
    xe: int = 0
    va: int = 0
    ve: int = 0

    def __post_init__(self):
        if self.fn not in FUNCTIONS:
            raise ValueError(f"Word: function must be one of {FUNCTIONS}, got {self.fn!r}")
        for f in _FIELDS:
            n = getattr(self, f)
            if not isinstance(n, int) or n < 0:
                raise ValueError(f"Word: {f} must be a non-negative integer, got {n!r}")

    def replace(self, **changes):
        d = {f: getattr(self, f) for f in ("fn",) + _FIELDS}
        d.update(changes)
        return Word(**d)

    @property
    def counts(self):
        return tuple(getattr(self, f) for f in _FIELDS)

    @property
    def order(self):
        """Total number of derivatives."""
        return sum(self.counts)

    @property
    def nx(self):
        return self.xv + self.xa + self.xe

    @property
    def nv(self):
        return self.va + self.ve

    @property
    def e_degree(self):
        """How often e occurs (LHS, RHS, DIFF are linear in e: 1; S: 0)."""
        return self.xe + self.ve + (self.fn == "eF")

    def form(self):
        """The FORM spelling, e.g. ``Dt*vDx*aDv*eDv*L``."""
        return "*".join([op for op, n in zip(OPERATORS, self.counts) for _ in range(n)]
                        + [self.fn])

    def form_key(self):
        """Sort key of FORM's printed order: the operator sequence compared
        lexicographically in the order :data:`OPERATORS`, the function lowest."""
        ops = [i for i, n in enumerate(self.counts) for _ in range(n)]
        return tuple(ops) + (-1, FUNCTIONS.index(self.fn))

    def name(self):
        """A sympy-parseable symbol name: the FORM spelling with ``*`` -> ``_``
        (``Dt_vDx_aDv_eDv_L``)."""
        return self.form().replace("*", "_")

    def nabla(self):
        """The paper's grad-notation, e.g. ``d_t v.grad_x a.grad_v e.grad_v L``."""
        parts = []
        for label, n in (("d_t", self.nt), ("v.grad_x", self.xv), ("a.grad_x", self.xa),
                         ("e.grad_x", self.xe), ("a.grad_v", self.va), ("e.grad_v", self.ve)):
            if n:
                parts.append(label + (f"^{n}" if n > 1 else ""))
        parts.append({"L": "L", "aF": "a.F", "eF": "e.F"}[self.fn])
        return " ".join(parts)

    def one_d(self):
        """The n = 1, e = 1 projection: v^xv a^(xa + va [+1 for a.F]) * derivative symbol."""
        base = "L" if self.fn == "L" else "F"
        sym = one_d_symbol(base, self.nt, self.nx, self.nv)
        return V ** self.xv * A ** (self.xa + self.va + (self.fn == "aF")) * sym


@cache
def one_d_symbol(fn, nt=0, nx=0, nv=0):
    """The derivative symbol d_t^nt d_x^nx d_v^nv fn at (t, x, v) for n = 1: ``L``,
    ``L_t``, ``L_xv``, ``F_tvv`` (letters in the order t, x, v)."""
    if fn not in ("L", "F"):
        raise ValueError(f"one_d_symbol: fn must be 'L' or 'F', got {fn!r}")
    letters = "t" * nt + "x" * nx + "v" * nv
    return sp.Symbol(fn + ("_" + letters if letters else ""))


_ONE_D_NAME = re.compile(r"^([LF])(?:_(t*)(x*)(v*))?$")


def _parse_one_d_symbol(sym):
    m = _ONE_D_NAME.match(sym.name)
    if not m:
        return None
    return m.group(1), len(m.group(2) or ""), len(m.group(3) or ""), len(m.group(4) or "")


# ----- exact polynomial arithmetic on words ------------------------------------------
# A "series" is a dict {(Word, eh, et, eg): Fraction}: the coefficient of
# h^eh tau^et g^eg Word.  Pure-Python Fractions: exact and fast.

def _add(acc, key, c):
    if c:
        v = acc.get(key, 0) + c
        if v:
            acc[key] = v
        else:
            acc.pop(key, None)


def _combine(*pairs):
    """sum of c * series over (c, series) pairs."""
    out = {}
    for c, s in pairs:
        for k, v in s.items():
            _add(out, k, c * v)
    return out


def _shift(series, var, z, order):
    """Apply [T f](t, x, v, a) = f(t + s, x + v s + z a s^2, v + a s, a) (eqs. 62-64)
    term by term, keeping total degree in (h, tau) <= ``order``; ``var`` is 'h' or
    'tau' (the shift s), ``z`` a Fraction or the string 'g'.  Explicit v's in x-slots
    are shifted to v + a s too (binomial expansion)."""
    out = {}
    for (w, eh, et, eg), c in series.items():
        room = order - eh - et
        if room < 0:
            continue
        for i in range(room + 1):
            for k in range(room - i + 1):
                for p in range(room - i - k + 1):
                    for q in range((room - i - k - p) // 2 + 1):
                        for r in range(min(w.xv, room - i - k - p - 2 * q) + 1):
                            deg = i + k + p + 2 * q + r
                            coef = c * Fraction(comb(w.xv, r), factorial(i) * factorial(k)
                                                * factorial(p) * factorial(q))
                            neg = eg
                            if z == "g":
                                neg += q
                            else:
                                coef *= Fraction(z) ** q
                            nw = w.replace(nt=w.nt + i, xv=w.xv - r + p, xa=w.xa + r + q,
                                           va=w.va + k)
                            if var == "h":
                                key = (nw, eh + deg, et, neg)
                            else:
                                key = (nw, eh, et + deg, neg)
                            _add(out, key, coef)
    return out


def _integrate_h(series):
    """h^k -> (2 tau)^(k+1)/(k+1): int_0^{2 tau} dh (eq. 67)."""
    out = {}
    for (w, eh, et, eg), c in series.items():
        _add(out, (w, 0, et + eh + 1, eg), c * Fraction(2 ** (eh + 1), eh + 1))
    return out


def _grad_v(series):
    """e.grad_v with the chain rule: the base point and the explicit v's in x-slots."""
    out = {}
    for (w, eh, et, eg), c in series.items():
        _add(out, (w.replace(ve=w.ve + 1), eh, et, eg), c)
        if w.xv:
            _add(out, (w.replace(xv=w.xv - 1, xe=w.xe + 1), eh, et, eg), c * w.xv)
    return out


def _grad_a(series):
    """e.grad_a: a in x- and v-slots, and a.F -> e.F (the words do not depend on a
    otherwise: FORM's eDa*L = 0, eDa*aF = eF)."""
    out = {}
    for (w, eh, et, eg), c in series.items():
        if w.xa:
            _add(out, (w.replace(xa=w.xa - 1, xe=w.xe + 1), eh, et, eg), c * w.xa)
        if w.va:
            _add(out, (w.replace(va=w.va - 1, ve=w.ve + 1), eh, et, eg), c * w.va)
        if w.fn == "aF":
            _add(out, (w.replace(fn="eF"), eh, et, eg), c)
    return out


def _times_tau(series, k, c=1):
    return {(w, eh, et + k, eg): v * c for (w, eh, et, eg), v in series.items()}


def guiding_force_words():
    """e.G(t, x, v, a) = [(d_t + v.grad_x + a.grad_v) e.grad_v - e.grad_x] L - e.F
    (eqs. 10-11) as ``{Word: Fraction}``."""
    return {Word("L", nt=1, ve=1): Fraction(1), Word("L", xv=1, ve=1): Fraction(1),
            Word("L", va=1, ve=1): Fraction(1), Word("L", xe=1): Fraction(-1),
            Word("eF"): Fraction(-1)}


# ----- expansions ----------------------------------------------------------------------

@dataclass(frozen=True)
class Expansion:
    """A power series in tau, exact through tau^``order``: ``terms`` maps
    (Word, power of tau, power of g) to a Fraction."""

    name: str
    order: int
    terms: dict

    def powers(self):
        return sorted({et for (_, et, _) in self.terms})

    def _check(self, k):
        if k > self.order:
            raise ValueError(f"{self.name}: the tau^{k} coefficient is not known (the "
                             f"expansion is exact through tau^{self.order}; ask for a "
                             f"higher order)")

    def words(self, k):
        """The tau^k coefficient as ``{Word: sympy polynomial in g}``, in FORM's printed
        order (:meth:`Word.form_key`)."""
        self._check(k)
        out = {}
        for (w, et, eg), c in self.terms.items():
            if et == k:
                out[w] = out.get(w, 0) + sp.Rational(c.numerator, c.denominator) * G ** eg
        return {w: sp.expand(c) for w, c in sorted(out.items(), key=lambda kv: kv[0].form_key())
                if sp.expand(c) != 0}

    def term_count(self, k):
        """Number of (word, power of g) monomials in the tau^k coefficient: the number of
        terms FORM prints (it prints ``aDx*eF`` and ``aDx*eF*g`` separately)."""
        self._check(k)
        return sum(1 for (_, et, _), c in self.terms.items() if et == k and c)

    def coefficient(self, k):
        """The tau^k coefficient for n = 1, e = 1: a sympy expression in v, a, g and the
        derivative symbols ``L_...``, ``F_...`` (see :func:`one_d_symbol`)."""
        return one_d(self.words(k))

    def sympy(self, k):
        """The tau^k coefficient in word form as a sympy expression: each word is the
        symbol :meth:`Word.name` (``Dt_vDx_aDv_eDv_L``) -- valid for every n."""
        return words_to_sympy(self.words(k))

    def series(self):
        """The whole expansion, n = 1, as a sympy polynomial in tau (through ``order``)."""
        return sp.expand(sum(self.coefficient(k) * TAU ** k for k in self.powers()
                             if k <= self.order))


def one_d(words):
    """``{Word: coefficient}`` -> the n = 1, e = 1 sympy expression."""
    return sp.expand(sum((c * w.one_d() for w, c in words.items()), sp.Integer(0)))


def words_to_sympy(words):
    """``{Word: coefficient}`` -> sum of coefficient * Symbol(Word.name())."""
    return sp.expand(sum((c * sp.Symbol(w.name()) for w, c in words.items()), sp.Integer(0)))


def _as_expansion(name, series, order):
    terms = {}
    for (w, eh, et, eg), c in series.items():
        if eh:
            raise AssertionError(f"{name}: h survived the integration ({w.form()})")
        if et < 0:
            raise AssertionError(f"{name}: negative power tau^{et} of {w.form()} did not "
                                 "cancel")
        if et <= order:
            terms[(w, et, eg)] = terms.get((w, et, eg), 0) + c
    return Expansion(name, order, {k: v for k, v in terms.items() if v})


@cache
def _action_series(order):
    """S through tau^order (eq. 67) as a raw series; Taylor to total degree order - 1."""
    K = {(Word("L"), 0, 0, 0): Fraction(1),                 # L
         (Word("aF"), 2, 0, 0): Fraction(1, 2),             # (h/2)(h - 2 tau) a.F
         (Word("aF"), 1, 1, 0): Fraction(-1)}
    return _integrate_h(_shift(K, "h", Fraction(1, 2), order - 1))


def action(order):
    """S(t, x, v, a, tau) = int_0^{2 tau} K dh (eqs. 39, 46, 53, 67), exact through
    tau^order (order >= 1)."""
    _check_order(order, 1, "action")
    return _as_expansion("S", _action_series(order), order)


@cache
def _lhs_series(order):
    S = _action_series(order + 3)
    # 3/(2 tau^3) (tau e.grad_v - e.grad_a) S  (eqs. 37, 68)
    return _combine((Fraction(3, 2), _times_tau(_grad_v(S), -2)),
                    (Fraction(-3, 2), _times_tau(_grad_a(S), -3)))


def lhs(order):
    """LHS = e.(D_tau S) (eq. 68), exact through tau^order (order >= 0): needs S through
    tau^(order + 3)."""
    _check_order(order, 0, "lhs")
    return _as_expansion("LHS", _lhs_series(order), order)


@cache
def _rhs_series(order):
    Gs = {(w, 0, 0, 0): c for w, c in guiding_force_words().items()}
    return _combine((Fraction(-1), _shift(Gs, "tau", "g", order)))


def rhs(order):
    """RHS = -e.G(t + tau, x + v tau + a tau^2 g, v + a tau, a) (eqs. 60, 65), exact
    through tau^order, symbolic g."""
    _check_order(order, 0, "rhs")
    return _as_expansion("RHS", _rhs_series(order), order)


def diff(order):
    """DIFF = LHS - RHS (eq. 61), exact through tau^order, symbolic g."""
    _check_order(order, 0, "diff")
    return _as_expansion("DIFF", _combine((1, _lhs_series(order)), (-1, _rhs_series(order))),
                         order)


def _check_order(order, least, what):
    if isinstance(order, bool) or not isinstance(order, int) or order < least:
        raise ValueError(f"{what}: order must be an integer >= {least}, got {order!r}")


def restrict_T_minus_V(words):
    """The words that survive for L = T(v) - V(x), F = 0 (the last part of the proof of
    eq. 60): L-words without d_t whose derivatives are all in x or all in v."""
    return {w: c for w, c in words.items()
            if w.fn == "L" and w.nt == 0 and (w.nx == 0 or w.nv == 0)}


# ----- concrete Lagrangians ------------------------------------------------------------

def to_concrete(expr, L, F=0):
    """Replace the derivative symbols of a 1-D expression by the derivatives of a concrete
    L(t, x, v) and F(t, x, v) (sympy expressions in :data:`T`, :data:`X`, :data:`V`)."""
    L, F = sp.sympify(L, strict=True), sp.sympify(F, strict=True)
    subs = {}
    for s in expr.free_symbols:
        parsed = _parse_one_d_symbol(s)
        if parsed is None:
            continue
        fn, nt, nx, nv = parsed
        f = L if fn == "L" else F
        d = f
        for var, n in ((T, nt), (X, nx), (V, nv)):
            if n:
                d = sp.diff(d, var, n)
        subs[s] = d
    return sp.expand(expr.xreplace(subs))


def evaluate_words(words, L, F, t, xs, vs, a, e):
    """Sum of coefficient * word for concrete L(t, x, v) (sympy expression) and F (list of
    n sympy expressions) in the symbols ``t``, ``xs``, ``vs`` (lists of n symbols), with
    contracting vectors v = ``vs``, ``a`` and ``e`` (lists of n sympy expressions free of
    ``xs``, ``vs``).  Valid for any n: the words' meaning as directional derivatives."""
    n = len(xs)
    if not (len(vs) == len(a) == len(e) == n) or (F is not None and len(F) != n):
        raise ValueError(f"evaluate_words: xs, vs, a, e, F must all have {n} entries")
    hold = sp.symbols(f"_vhold0:{n}")              # the contracting v, not differentiated
    aF = sum(ai * Fi for ai, Fi in zip(a, F)) if F is not None else 0
    eF = sum(ei * Fi for ei, Fi in zip(e, F)) if F is not None else 0
    base = {"L": sp.sympify(L, strict=True), "aF": sp.sympify(aF, strict=True),
            "eF": sp.sympify(eF, strict=True)}
    cache = {}

    def directional(f, vec, args):
        return sum(c * sp.diff(f, s) for c, s in zip(vec, args))

    def value(w):
        if w in cache:
            return cache[w]
        f = base[w.fn]
        for _ in range(w.nt):
            f = sp.diff(f, t)
        for vec, k, args in ((hold, w.xv, xs), (a, w.xa, xs), (e, w.xe, xs),
                             (a, w.va, vs), (e, w.ve, vs)):
            for _ in range(k):
                f = directional(f, vec, args)
        cache[w] = f
        return f

    total = sum((c * value(w) for w, c in words.items()), sp.Integer(0))
    return total.xreplace(dict(zip(hold, vs)))


# ----- printed notations ---------------------------------------------------------------

def form_word(text):
    """One normal-ordered FORM monomial without coefficient (``Dt*vDx*aDv*eDv*L``) as a
    :class:`Word`; raises ValueError naming the cause (unknown factor, not normal
    ordered, no function)."""
    factors = [f for f in text.strip().split("*") if f]
    if not factors or factors[-1] not in FUNCTIONS:
        raise ValueError(f"FORM word {text!r}: must end with one of {FUNCTIONS}")
    counts = [0] * len(OPERATORS)
    last = -1
    for f in factors[:-1]:
        if f not in OPERATORS:
            raise ValueError(f"FORM word {text!r}: unknown operator {f!r} (known: "
                             f"{', '.join(OPERATORS)}; eDa must have been eliminated)")
        i = OPERATORS.index(f)
        if i < last:
            raise ValueError(f"FORM word {text!r}: not in FORM's normal order "
                             f"{'<'.join(OPERATORS)} ({f} after {OPERATORS[last]}); a "
                             "commutator would be lost")
        last = i
        counts[i] += 1
    return Word(factors[-1], **dict(zip(_FIELDS, counts)))


_FORM_TERM = re.compile(r"([+-])([^+-]+)")


def parse_form_terms(text):
    """A sum of FORM terms (``- 9/5*Dt*Dt*aDv*eDv*L + 1/5*Dt*eDv*aF + aDx*eF*g``; no tau
    brackets) as ``{Word: sympy coefficient (polynomial in g)}``.  Whitespace and line
    breaks are ignored."""
    s = re.sub(r"\s+", "", text)
    if not s:
        return {}
    if s[0] not in "+-":
        s = "+" + s
    out = {}
    pos = 0
    for m in _FORM_TERM.finditer(s):
        if m.start() != pos:
            raise ValueError(f"FORM terms: cannot read {s[pos:m.start()]!r}")
        pos = m.end()
        sign = -1 if m.group(1) == "-" else 1
        coef = sp.Integer(sign)
        word = []
        for f in m.group(2).split("*"):
            if not f:
                raise ValueError(f"FORM term {m.group(0)!r}: empty factor")
            if re.fullmatch(r"\d+(/\d+)?", f):
                coef *= sp.Rational(f)
            elif f == "g":
                coef *= G
            else:
                word.append(f)
        w = form_word("*".join(word))
        out[w] = sp.expand(out.get(w, 0) + coef)
    if pos != len(s):
        raise ValueError(f"FORM terms: cannot read {s[pos:]!r}")
    return {w: c for w, c in out.items() if c != 0}


_FORM_GROUP = re.compile(r"([+-]?)tau(?:\^(\d+))?\*\(([^()]*)\)")


def parse_form(text):
    """One expression of the FORM output (the text after ``S =``, ``LHS =`` or
    ``DIFF =``: ``+ tau^2 * ( ... ) + ...`` with the tau^0 terms outside any bracket) as
    ``{power of tau: {Word: coefficient}}``.  Whitespace and line breaks are ignored;
    the text must already be free of commentary (see
    :func:`mpvi_papers.mutze._mutze_printed.form_expression`)."""
    s = re.sub(r"\s+", "", text)
    out = {}
    rest = []
    pos = 0
    for m in _FORM_GROUP.finditer(s):
        rest.append(s[pos:m.start()])
        pos = m.end()
        if m.group(1) == "-":
            raise ValueError("FORM output: a negative tau bracket is not expected")
        k = int(m.group(2) or 1)
        if k in out:
            raise ValueError(f"FORM output: tau^{k} appears twice")
        out[k] = parse_form_terms(m.group(3))
    rest.append(s[pos:])
    zero = "".join(rest)
    if zero:
        out[0] = parse_form_terms(zero)
    return dict(sorted(out.items()))


# The grad-notation transliteration syntax (parse_nabla):
#   terms separated by ' + ' / ' - ' (a leading sign is optional);
#   a term = [coefficient] factors... function
#     coefficient: an integer or fraction (2, 2/3) and/or 'g';
#     factors: 'dt' (d_t), 'v.dx', 'a.dx', 'e.dx', 'a.dv', 'e.dv', and the free-index
#              'dx', 'dv' (= e.grad_x, e.grad_v: the vector component contracted with e),
#              each optionally with a power: 'v.dx^2', 'dt^3';
#     function: 'L', 'a.F', 'F' or 'e.F' (free-index F = e.F), or '?' where the print
#              shows no function at all (read as L and reported as garbled).
_NABLA_FACTOR = {"dt": "nt", "v.dx": "xv", "a.dx": "xa", "e.dx": "xe", "dx": "xe",
                 "a.dv": "va", "e.dv": "ve", "dv": "ve"}
_NABLA_FUNCTION = {"L": "L", "a.F": "aF", "F": "eF", "e.F": "eF", "?": "L"}


@dataclass(frozen=True)
class NablaTerm:
    """One printed grad-notation term: its text, coefficient, word, and whether the
    print lacks the function (``garbled``)."""

    text: str
    coefficient: object
    word: Word
    garbled: bool


def parse_nabla(text, factor=1):
    """A transliterated grad-notation sum (syntax in the comment above this function; one
    printed line or several joined) as a list of :class:`NablaTerm`, every coefficient
    multiplied by ``factor`` (e.g. the 2/3 in front of the tau^3 bracket of eq. 69)."""
    tokens = text.replace("+", " + ").replace("-", " - ").split()
    terms, cur, sign = [], [], 1

    def flush():
        if not cur:
            return
        coef = sp.Integer(sign) * as_expression(factor, what="grad notation factor")
        counts = dict.fromkeys(_FIELDS, 0)
        fn = None
        garbled = False
        for tok in cur:
            if fn is not None:
                raise ValueError(f"grad notation {' '.join(cur)!r}: {tok!r} after the "
                                 "function")
            if re.fullmatch(r"\d+(/\d+)?", tok):
                coef *= sp.Rational(tok)
                continue
            if tok == "g":
                coef *= G
                continue
            if tok in _NABLA_FUNCTION:
                fn = _NABLA_FUNCTION[tok]
                garbled = tok == "?"
                continue
            base, _, power = tok.partition("^")
            if base not in _NABLA_FACTOR or (power and not power.isdigit()):
                raise ValueError(f"grad notation {' '.join(cur)!r}: unknown factor {tok!r}")
            counts[_NABLA_FACTOR[base]] += int(power or 1)
        if fn is None:
            raise ValueError(f"grad notation {' '.join(cur)!r}: no function (write '?' "
                             "where the print shows none)")
        terms.append(NablaTerm(("-" if sign < 0 else "+") + " " + " ".join(cur), coef,
                               Word(fn, **counts), garbled))

    for tok in tokens:
        if tok in "+-":
            flush()
            cur, sign = [], (1 if tok == "+" else -1)
        else:
            cur.append(tok)
    flush()
    return terms


def nabla_words(terms):
    """``[NablaTerm]`` -> ``{Word: coefficient}`` (coefficients of equal words added)."""
    out = {}
    for term in terms:
        out[term.word] = sp.expand(out.get(term.word, 0) + term.coefficient)
    return {w: c for w, c in out.items() if c != 0}


def compare_words(derived, printed):
    """Word-by-word comparison: a list of (word, derived coefficient, printed coefficient,
    status) with status ``match``, ``wrong coefficient``, ``missing in print`` or ``not
    derived`` (a printed word with zero derived coefficient)."""
    rows = []
    for w in sorted(set(derived) | set(printed)):
        d, p = derived.get(w), printed.get(w)
        if d is None:
            status = "not derived"
        elif p is None:
            status = "missing in print"
        elif sp.expand(d - p) == 0:
            status = "match"
        else:
            status = "wrong coefficient"
        rows.append((w, d, p, status))
    return rows


# ----- independent numerical check ---------------------------------------------------

def gauss_legendre_rule(ctx, k):
    """k-point Gauss-Legendre nodes and weights on [0, 1] at the precision of ``ctx``
    (Newton's method on the Legendre recurrence; stops when the correction is below
    a few units of ``ctx.eps``)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"gauss_legendre_rule: k must be a positive integer, got {k!r}")
    one, two = ctx.num(1), ctx.num(2)
    tol = ctx.eps * 16
    nodes, weights = [], []
    for i in range(1, k + 1):
        x = ctx.cos(ctx.pi * (ctx.num(4 * i - 1)) / ctx.num(4 * k + 2))
        for _ in range(200):
            p0, p1 = one, x
            for n in range(2, k + 1):
                p0, p1 = p1, ((2 * n - 1) * x * p1 - (n - 1) * p0) / n
            dp = k * (x * p1 - p0) / (x * x - one)
            dx = p1 / dp
            x = x - dx
            if abs(dx) <= tol:
                break
        else:
            raise ArithmeticError(f"gauss_legendre_rule: Newton did not converge for node "
                                  f"{i} of {k}")
        p0, p1 = one, x
        for n in range(2, k + 1):
            p0, p1 = p1, ((2 * n - 1) * x * p1 - (n - 1) * p0) / n
        dp = k * (x * p1 - p0) / (x * x - one)
        nodes.append((one - x) / two)
        weights.append(one / ((one - x * x) * dp * dp))
    return nodes[::-1], weights[::-1]


class DirectCheck:
    """LHS = e.D_tau S by quadrature and RHS = -e.G(...) directly, for a concrete L and F
    with n degrees of freedom, at the precision of a number context -- no series.

    ``L``: sympy expression in ``t``, ``xs``, ``vs``; ``F``: list of n sympy expressions.
    With q(h) = x + v h + a h^2/2, sigma(h) = 3 h (2 tau - h)/(4 tau^3) (eq. 32) and
    w(h) = (h/2)(h - 2 tau), differentiating S under the integral gives

        e.D_tau S = int_0^{2 tau} dh [ sigma e.grad_x L + sigma' e.grad_v L
                    + w (sigma e.grad_x + sigma' e.grad_v)(a.F) - 3/(2 tau^3) w e.F ],

    all at (t + h, q(h), q'(h)): D_tau q = sigma, D_tau q' = sigma' (eqs. 32-37) and the
    explicit a of a.F gives the last term.  The integrand is a smooth function of h, so
    ``nodes``-point Gauss-Legendre converges geometrically on the short interval.
    G = L_vv a + L_vx v + L_vt - L_x - F (eq. 10)."""

    def __init__(self, ctx, L, F, t, xs, vs, nodes=32):
        from mpvi.compiled.codegen import compile_exprs
        n = len(xs)
        self.ctx, self.n = ctx, n
        a = sp.symbols(f"_a0:{n}")
        e = sp.symbols(f"_e0:{n}")
        L = sp.sympify(L, strict=True)
        F = [sp.sympify(f, strict=True) for f in F]
        aF = sum(ai * fi for ai, fi in zip(a, F))
        eF = sum(ei * fi for ei, fi in zip(e, F))
        ex = lambda f: sum(ei * sp.diff(f, xi) for ei, xi in zip(e, xs))
        ev = lambda f: sum(ei * sp.diff(f, vi) for ei, vi in zip(e, vs))
        args = [t, list(xs), list(vs), list(a), list(e)]
        self._integrand = compile_exprs(args, [ex(L), ev(L), ex(aF), ev(aF), eF], ctx)
        Lv = [sp.diff(L, vi) for vi in vs]
        G = [sum(sp.diff(Lv[i], vs[k]) * a[k] + sp.diff(Lv[i], xs[k]) * vs[k]
                 for k in range(n)) + sp.diff(Lv[i], t) - sp.diff(L, xs[i]) - F[i]
             for i in range(n)]
        self._eG = compile_exprs(args, [sum(ei * gi for ei, gi in zip(e, G))], ctx)
        self.nodes, self.weights = gauss_legendre_rule(ctx, nodes)

    def _vec(self, values):
        return [self.ctx.num(x) for x in values]

    def lhs(self, t, x, v, a, e, tau):
        ctx = self.ctx
        t, tau = ctx.num(t), ctx.num(tau)
        x, v, a, e = (self._vec(u) for u in (x, v, a, e))
        h2 = 2 * tau
        c3 = ctx.num(3) / (2 * tau ** 3)
        terms = []
        for z, wz in zip(self.nodes, self.weights):
            h = h2 * z
            q = [xi + vi * h + ai * h * h / 2 for xi, vi, ai in zip(x, v, a)]
            qd = [vi + ai * h for vi, ai in zip(v, a)]
            sig = c3 * h * (h2 - h) / 2
            dsig = c3 * (tau - h)
            w = h * (h - h2) / 2
            Lx, Lv, aFx, aFv, eF = self._integrand(t + h, q, qd, a, e)
            terms.append(wz * h2 * (sig * Lx + dsig * Lv + w * (sig * aFx + dsig * aFv)
                                    - c3 * w * eF))
        return ctx.fsum(terms)

    def rhs(self, t, x, v, a, e, tau, g):
        ctx = self.ctx
        t, tau, g = ctx.num(t), ctx.num(tau), ctx.num(g)
        x, v, a, e = (self._vec(u) for u in (x, v, a, e))
        xs = [xi + vi * tau + ai * tau * tau * g for xi, vi, ai in zip(x, v, a)]
        vs = [vi + ai * tau for vi, ai in zip(v, a)]
        return -self._eG(t + tau, xs, vs, a, e)[0]

    def diff(self, t, x, v, a, e, tau, g):
        """(LHS, RHS, DIFF) at one point."""
        L, R = self.lhs(t, x, v, a, e, tau), self.rhs(t, x, v, a, e, tau, g)
        return L, R, L - R
