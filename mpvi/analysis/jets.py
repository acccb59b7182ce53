"""Truncated power series in the step h ("jets") with exact polynomial coefficients, and
sympy expressions evaluated on them: the arithmetic of :mod:`mpvi.analysis.modified`.

A :class:`Jet` is sum_{lo <= k < hi} c_k h^k + O(h^hi).  Negative powers are allowed (a
velocity (x_1 - x_0) / h of a trial function).  Sums, products, quotients by a jet whose
leading coefficient can be inverted, and any sympy function of a jet whose lowest power
is >= 0 keep track of the order to which they are known:

* sin, cos and exp by the recurrences of Taylor-mode differentiation (O(N^2) products);
* any other function f by Taylor's formula, f(a_0 + d) = sum_k f^(k)(a_0) d^k / k!.

:func:`evaluate` takes a sympy expression with jets for some of its symbols.  The
methods' own step code (:func:`mpvi.engines.ode.rk4_step`, :func:`mpvi.engines.ode.gbs_step`) runs on
lists of jets unchanged.

**The coefficients** live in an :class:`Algebra`: the polynomial ring
Q[symbols, atoms], where the symbols are the state, the system's parameters and any
extra symbols of a derivation, and the *atoms* are the non-polynomial parts of the
system's expressions -- sin(q), cos(q), exp(u), 1/D(q), sqrt(B), the radicals of the
numbers -- each one generator.  The atoms are closed under differentiation (the
derivative of an atom is a polynomial in the atoms: (1/D)' = -D'/D^2, sin' = cos, ...),
so that derivatives, products and sums never leave the ring.  Relations between the
atoms (sin^2 + cos^2 = 1, sqrt(5)^2 = 5) are applied by :meth:`Algebra.reduce`, which
makes zero tests exact for the common cases (one angle per sine-cosine pair); nothing
depends on it for correctness, only for size.

**Two backends** hold the ring, with identical results term by term:

* ``"flint"`` (the default): python-flint's ``fmpq_mpoly`` (FLINT's sparse multivariate
  polynomials over Q, in C): products, derivatives, the reduction (a remainder on
  division by gen^d - R in a lexicographic order whose first generators are those of the
  relations: the unique normal form the relations define), composition and
  coefficient extraction never leave C (products are 40 to 60 times faster than
  sympy's);
* ``"sympy"``: sympy's sparse ``PolyRing`` (dictionaries of exponent tuples), the
  arithmetic of earlier versions, kept as the independent check of the first and the
  baseline of ``benchmarks/modified_cost.py``.

:func:`ring_backend` selects the backend of the algebras (and so of the derivations)
made inside a ``with`` block.
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from functools import lru_cache
from math import factorial
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import sympy as sp
from flint import fmpq, fmpq_mpoly, fmpq_mpoly_ctx
from sympy.polys.domains import QQ
from sympy.polys.orderings import lex
from sympy.polys.rings import PolyElement, PolyRing
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from fractions import Fraction

    import sympy

    from mpvi.ground.types import ExprLike, RingElement, RingScalar

_X = sp.Dummy("x")
MAX_ATOMS = 400
"""The largest number of atoms a derivation may need (a function whose derivatives do
not close -- each one a new function -- stops here with an error)."""

BACKENDS = ("flint", "sympy")
"""The ring backends (module doc): FLINT's ``fmpq_mpoly``, sympy's ``PolyRing``."""

_backend = "flint"
_names = itertools.count()          # FLINT caches contexts by their names: each algebra
                                    # gets names of its own (an element of one algebra is
                                    # never taken for one of another)


class UnsupportedExpression(NotImplementedError):
    """An expression the algebra of a derivation cannot represent exactly (a float, a
    function whose derivatives do not close, a power with a varying exponent)."""


@entry
@contextmanager
def ring_backend(name: str) -> Iterator[str]:
    """Make the algebras created inside the ``with`` block use the ring backend ``name``.

    Parameters
    ----------
    name : {"flint", "sympy"}
        FLINT's ``fmpq_mpoly`` (the default) or sympy's ``PolyRing`` (module doc).

    Yields
    ------
    str
        ``name``.

    Raises
    ------
    ValueError
        An unknown backend.
    """
    global _backend
    if name not in BACKENDS:
        raise ValueError(f"unknown ring backend {name!r}; the backends are {', '.join(BACKENDS)}")
    previous, _backend = _backend, name
    try:
        yield name
    finally:
        _backend = previous


def current_backend() -> str:
    """Return the ring backend new algebras use (:func:`ring_backend`).

    Returns
    -------
    str
        One of :data:`BACKENDS`.
    """
    return _backend


def _canonical(e):
    return sp.expand(e)


def _angle_addition(e):
    """sin or cos of an integer combination of two or more symbols, or of an integer
    multiple of one, written with the sines and cosines of the symbols (so that sin(q1 -
    q2) and sin(q1), cos(q2), ... are not independent atoms); None otherwise."""
    if e.func not in (sp.sin, sp.cos):
        return None
    arg = _canonical(e.args[0])
    terms = sp.Add.make_args(arg)
    pairs = [t.as_coeff_Mul() for t in terms]
    if not all(c.is_Integer and x.is_Symbol for c, x in pairs):
        return None
    if len(pairs) == 1 and abs(pairs[0][0]) == 1:
        return None
    return sp.expand(sp.expand_trig(e.func(arg)))


def _primitive(e):
    """(c, P): e = c P with P's numerical content 1 and sign fixed (so that 1/(2 D) and
    1/D share an atom)."""
    c, P = _canonical(e).as_content_primitive()
    if P.could_extract_minus_sign():
        c, P = -c, -P
    return c, P


@lru_cache(maxsize=None)
def _prime_radicand(D):
    """Whether the root D^(1/n) is independent of the other atoms of a canonical algebra:
    D a polynomial in symbols only, irreducible over Q and primitive with its sign fixed
    (:func:`_primitive`), so that 1, D^(1/n), ..., D^((n-1)/n) are linearly independent
    over the rational functions, also with other such roots of non-associate radicands
    (each is a prime of Q[symbols]: the valuations tell the monomials apart)."""
    if not D.is_polynomial(*D.free_symbols) or not D.free_symbols:
        return False
    if _primitive(D) != (1, D):
        return False
    c, factors = sp.factor_list(D)
    return c == 1 and len(factors) == 1 and factors[0][1] == 1


def _rational_parts(x):
    """(numerator, denominator) of an exact rational number of any of the kinds the
    derivations meet (int, sympy's QQ, FLINT's fmpq, a sympy Rational)."""
    if isinstance(x, int):
        return x, 1
    if isinstance(x, sp.Rational):
        return int(x.p), int(x.q)
    return int(x.numerator), int(x.denominator)


@entry_class
class Algebra:
    """The ring Q[symbols, atoms] of a derivation (module doc).

    Parameters
    ----------
    exprs : iterable of sympy expressions
        Every expression the derivation will evaluate: their free symbols become
        generators, their non-polynomial parts atoms (with the closure under
        differentiation by ``variables``).
    variables : sequence of sympy symbols
        The symbols derivatives are taken by (the state).
    extra : sequence of sympy symbols, optional
        More generators (a node variable, perturbations), not differentiated through atoms.
    parent : Algebra, optional
        An algebra whose atoms are taken over (so that the walk is not repeated); its
        backend is the new algebra's.
    expand_angles : bool, default False
        Write sin and cos of integer combinations of the variables (sin(q1 - q2), cos(2 q))
        with those of the variables (angle addition): a canonical form for zero tests
        (:meth:`is_zero` uses such an algebra), larger than the compact one the
        derivations use.
    backend : {"flint", "sympy"}, optional
        The ring backend (module doc); default the parent's, else :func:`current_backend`.
    """

    backend = None

    if TYPE_CHECKING:
        # What a backend (:class:`_FlintAlgebra`, :class:`_PolyRingAlgebra`) sets and
        # defines, declared for the type checker only.
        zero: RingElement
        one: RingElement
        symbols: list[sympy.Symbol]
        _element: type
        _gens: list[RingElement]
        _images: dict[Algebra, list[RingElement]]

        def _make_ring(self, gens: list[sympy.Symbol], first: list[int]) -> None: ...
        def _use_rules(self) -> None: ...
        def _owns(self, x: object) -> bool: ...
        def _constant(self, p: int, q: int = 1) -> RingElement: ...
        @staticmethod
        def _scalar(p: int, q: int = 1) -> RingScalar: ...
        def _to_sympy(self, c: RingElement) -> sympy.Expr: ...
        def _powers(self, c: RingElement, g: int) -> dict[int, RingElement]: ...
        def _convert_from(self, c: RingElement, source: Algebra,
                          images: list[RingElement]) -> RingElement: ...
        @staticmethod
        def _remainder(c: RingElement, divisor: RingElement) -> RingElement: ...
        def _compose(self, c: RingElement, images: list[RingElement]) -> RingElement: ...

    def __new__(cls, *args, **kwargs):
        if cls is Algebra:
            parent = kwargs.get("parent", args[3] if len(args) > 3 else None)
            name = kwargs.get("backend") or (parent.backend if parent is not None else _backend)
            if name not in _ALGEBRAS:
                raise ValueError(f"unknown ring backend {name!r}; the backends are "
                                 f"{', '.join(BACKENDS)}")
            cls = _ALGEBRAS[name]
        return super().__new__(cls)

    def __init__(self, exprs: Iterable[ExprLike], variables: Sequence[sympy.Symbol],
                 extra: Sequence[sympy.Symbol] = (),
                 parent: "Algebra | None" = None, expand_angles: bool = False,
                 backend: str | None = None):
        if parent is not None and parent.backend != self.backend:
            raise ValueError(f"an algebra on {self.backend} cannot take over the atoms of one "
                             f"on {parent.backend}")
        self.variables = list(variables)
        self.expand_angles = expand_angles
        self._canonical = None
        self._atoms: list = list(parent._atoms) if parent else []
        self._atom_index: dict = dict(parent._atom_index) if parent else {}
        symbols = set(parent.symbols) if parent else set()
        symbols |= set(self.variables) | set(extra)
        exprs = [sp.sympify(e, strict=True) for e in exprs]
        try:
            for e in exprs:
                self._walk(e)
        except RecursionError:          # a chain of new functions (besselj(k, q), k = 0, 1, ...)
            raise UnsupportedExpression(
                f"the derivatives of the system's functions do not close (Python's recursion "
                f"limit reached after {len(self._atoms)} functions, the last one "
                f"{self._atoms[-1][0]}); the derivation needs functions whose derivatives are "
                "polynomials in finitely many functions") from None
        for e in exprs + [a for a, _ in self._atoms]:
            symbols |= {s for s in e.free_symbols}
        self.symbols = sorted(symbols, key=lambda s: (s.name, s.dummy_index if isinstance(s, sp.Dummy) else 0))
        self._ns = len(self.symbols)
        self._atom_symbols = [sp.Dummy(f"atom{i}") for i in range(len(self._atoms))]
        gens = list(self.symbols) + self._atom_symbols
        self._exprs = list(self.symbols) + [a for a, _ in self._atoms]
        self._make_ring(gens, [self._ns + i for i in self._rule_atoms()])
        self._gen = {s: g for s, g in zip(gens, self._gens)}
        self._index = {s: i for i, s in enumerate(gens)}
        self._to_expr = {d: a for d, (a, _) in zip(self._atom_symbols, self._atoms)}
        self._cache: dict = {}
        # derivative table: d gen / d variable, for the atoms (the symbols: 0 or 1)
        self._d_atom: list = []
        for a, _ in self._atoms:
            row = {}
            for v in self.variables:
                d = sp.diff(a, v)
                if d != 0:
                    row[v] = self.coerce(d)
            self._d_atom.append(row)
        self._rules = self._reduction_rules()
        self._use_rules()

    # ----- atoms ------------------------------------------------------------------------
    def _register(self, atom, kind):
        if atom in self._atom_index:
            return
        if len(self._atoms) >= MAX_ATOMS:
            raise UnsupportedExpression(
                f"the derivatives of the system's functions do not close in {MAX_ATOMS} "
                f"functions (last one: {atom}); the derivation needs functions whose "
                "derivatives are polynomials in finitely many functions")
        self._atom_index[atom] = len(self._atoms)
        self._atoms.append((atom, kind))
        for v in self.variables:
            d = sp.diff(atom, v)
            if d != 0:
                self._walk(d)

    def _atom_of_power(self, base, ex):
        """(factor, [(atom, power), ...]): base^ex = factor * prod atom^power, for ex a
        negative integer or a non-integer rational.  A reciprocal is split along the
        irreducible factors of its base (each 1/f one atom, so that 1/D^2 written expanded
        and 1/D share it), a root of the whole base is one atom."""
        if ex.is_Integer:                      # negative
            c, factors = sp.factor_list(_canonical(base))
            out, factor = [], sp.sympify(c, strict=True) ** ex
            for f, k in factors:
                g, P = _primitive(f)
                factor *= g ** (k * ex)
                if P.is_Number:
                    factor *= P ** (k * ex)
                else:
                    out.append((sp.Pow(P, -1, evaluate=False), int(-k * ex)))
            return factor, out
        num, den = int(ex.p), int(ex.q)
        base = _canonical(base)
        if num < 0 and self.expand_angles:
            # the canonical form: D^(-p/n) = D^(k/n) (1/D)^m, m = ceil(p/n), a root with its
            # rule (D^(1/n))^n = D and reciprocals, whose zero test is exact (decidable)
            m = -(num // den)
            factor, out = self._atom_of_power(base, sp.Integer(-m))
            if m * den + num:
                out.append((sp.Pow(base, sp.Rational(1, den), evaluate=False), m * den + num))
            return factor, out
        sign = 1 if num > 0 else -1
        atom = sp.Pow(base, sp.Rational(sign, den), evaluate=False)
        return sp.Integer(1), [(atom, abs(num))]

    def _walk(self, e):
        if e.is_Rational or e.is_Symbol:
            return
        if e.is_Float:
            raise UnsupportedExpression(f"a floating-point number ({e}) in an expression of "
                                        "the derivation; write exact numbers (Rational, '1/3')")
        if e.is_Add or e.is_Mul:
            for a in e.args:
                self._walk(a)
            return
        if e.is_Pow:
            base, ex = e.args
            if not ex.is_Rational:
                if ex.free_symbols & set(self.variables):
                    raise UnsupportedExpression(f"a power with a varying exponent: {e}")
                self._register(e, "constant")
                return
            self._walk(base)
            if ex.is_Integer and ex >= 0:
                return
            for atom, _ in self._atom_of_power(base, ex)[1]:
                self._register(atom, ("pow", atom.args[0], atom.args[1]))
            return
        if e.is_NumberSymbol or e.is_number:
            self._register(e, "constant")
            return
        if isinstance(e, sp.Function) and not all(isinstance(a, sp.Expr) for a in e.args):
            raise UnsupportedExpression(f"{type(e).__name__} in an expression of the derivation "
                                        f"({e}): its arguments are not expressions (a piecewise "
                                        "function's conditions); the derivation expands smooth "
                                        "functions only: write one smooth piece per system")
        if isinstance(e, sp.Function):
            expanded = _angle_addition(e) if self.expand_angles else None
            if expanded is not None:
                self._walk(expanded)
                return
            args = [_canonical(a) for a in e.args]
            for a in args:
                self._walk(a)
            atom = e.func(*args)
            if isinstance(atom, sp.Function) and atom.func == e.func:
                self._register(atom, "function")
            else:
                self._walk(atom)
            return
        raise UnsupportedExpression(f"{type(e).__name__} in an expression of the derivation: {e}")

    def _rule_atom(self, i):
        """(d, R as a sympy expression) when atom i obeys atom^d = R (sin(u)^2 =
        1 - cos(u)^2 when cos(u) is an atom too; B^(1/d)^d = B), else None."""
        a, kind = self._atoms[i]
        if kind == "function" and a.func == sp.sin:
            c = sp.cos(*a.args)
            if c in self._atom_index:
                return 2, 1 - c ** 2
        elif isinstance(kind, tuple) and kind[0] == "pow":
            base, ex = kind[1], kind[2]
            if ex.q > 1 and ex.p == 1:
                return int(ex.q), base
        return None

    def _rule_atoms(self):
        """The atoms with a relation, the later ones first: a relation's right-hand side
        has only atoms met before it in the walk (a root's base is walked before the root
        is registered, a sine's is a cosine), so that in this order each relation's
        generator comes before every generator of its right-hand side."""
        return [i for i in reversed(range(len(self._atoms))) if self._rule_atom(i)]

    def _reduction_rules(self):
        """gen index -> (d, R): gen^d = R (sin(u)^2 = 1 - cos(u)^2; B^(1/d)^d = B)."""
        rules = {}
        for i in self._rule_atoms():
            d, R = self._rule_atom(i)
            rules[self._ns + i] = (d, self.coerce(R))
        return rules

    # ----- conversion ------------------------------------------------------------------
    def coerce(self, x: int | Fraction | sympy.Basic | RingElement) -> RingElement:
        """Return a number or sympy expression as an element of the ring.

        Parameters
        ----------
        x : int, rational, sympy expression or element of the ring
            The value.

        Returns
        -------
        element of the ring
            ``x`` in the ring (its atoms replaced by their generators).

        Raises
        ------
        UnsupportedExpression
            ``x`` has a symbol or function that is not the algebra's.
        ValueError
            ``x`` is an element of another algebra.
        """
        if isinstance(x, self._element):
            if not self._owns(x):
                raise ValueError("a coefficient of another derivation's algebra")
            return x
        if isinstance(x, int) or QQ.of_type(x) or isinstance(x, fmpq):
            return self._constant(*_rational_parts(x))
        x = sp.sympify(x, strict=True)
        if x.is_Rational:
            return self._constant(int(x.p), int(x.q))
        hit = self._cache.get(x)
        if hit is None:
            hit = self._cache[x] = self._convert(x)
        return hit

    def _convert(self, e):
        if e.is_Symbol:
            if e not in self._gen:
                raise UnsupportedExpression(f"the symbol {e} is not one of the derivation's")
            return self._gen[e]
        if e.is_Rational or e.is_Float:
            if e.is_Float:
                self._walk(e)
            return self._constant(int(e.p), int(e.q))
        if e in self._atom_index:
            return self._gen[self._atom_symbols[self._atom_index[e]]]
        if e.is_Add:
            out = self.zero
            for a in e.args:
                out = out + self.coerce(a)
            return out
        if e.is_Mul:
            out = self.one
            for a in e.args:
                out = out * self.coerce(a)
            return out
        if e.is_Pow:
            base, ex = e.args
            if ex.is_Integer and ex >= 0:
                return self.coerce(base) ** int(ex)
            if ex.is_Rational:
                factor, atoms = self._atom_of_power(base, ex)
                out = self.coerce(factor)
                for atom, power in atoms:
                    if atom not in self._atom_index:
                        raise UnsupportedExpression(f"{e} needs the function {atom}, which is "
                                                    "not in the derivation's algebra")
                    out = out * self._gen[self._atom_symbols[self._atom_index[atom]]] ** power
                return out
        if isinstance(e, sp.Function) and not all(isinstance(a, sp.Expr) for a in e.args):
            raise UnsupportedExpression(f"{type(e).__name__} in an expression of the derivation "
                                        f"({e}): its arguments are not expressions (a piecewise "
                                        "function's conditions); the derivation expands smooth "
                                        "functions only: write one smooth piece per system")
        if isinstance(e, sp.Function):
            expanded = _angle_addition(e) if self.expand_angles else None
            if expanded is not None:
                return self.coerce(expanded)
            args = [_canonical(a) for a in e.args]
            atom = e.func(*args)
            if atom != e or not (isinstance(atom, sp.Function) and atom.func == e.func):
                return self.coerce(atom)
        raise UnsupportedExpression(f"{e} is not in the derivation's algebra (atoms: "
                                    f"{', '.join(str(a) for a, _ in self._atoms[:8])}...)")

    def to_expr(self, c: RingElement | int) -> sympy.Expr:
        """Return an element of the ring as a sympy expression (atoms written out).

        Parameters
        ----------
        c : element of the ring, or a number
            The value.

        Returns
        -------
        sympy expression
            ``c`` with every generator replaced by its symbol or atom.
        """
        if not isinstance(c, self._element):
            return sp.sympify(c, strict=True)
        return self._to_sympy(c)

    def rational(self, p: int, q: int = 1) -> RingScalar:
        """Return the number p/q as the backend's scalar (it multiplies elements of the ring).

        Parameters
        ----------
        p, q : int
            Numerator and denominator.

        Returns
        -------
        scalar
            FLINT's ``fmpq`` or sympy's ``QQ``.
        """
        return self._scalar(p, q)

    def gen(self, symbol: sympy.Symbol) -> RingElement:
        """Return the generator of ``symbol`` (one of :attr:`symbols`) as an element of the ring.

        Parameters
        ----------
        symbol : sympy symbol
            A symbol of the algebra.

        Returns
        -------
        element of the ring
            The generator.
        """
        return self._gen[symbol]

    def atom_gen(self, i: int) -> RingElement:
        """Return the generator of the atom of index ``i`` as an element of the ring.

        Parameters
        ----------
        i : int
            The atom's index (the order of the walk).

        Returns
        -------
        element of the ring
            The generator.
        """
        return self._gens[self._ns + i]

    # ----- operations ------------------------------------------------------------------
    def function(self, f: Callable[[sympy.Expr], sympy.Expr], c: RingElement) -> RingElement:
        """f(c) for a sympy function ``f`` of one argument (a class or a lambda), an atom of
        the algebra (or a polynomial in atoms)."""
        return self.coerce(f(self.to_expr(c)))

    def reciprocal(self, c: RingElement) -> RingElement:
        """1 / c: a number, or an atom 1/D of the algebra."""
        k = self.number(c)
        if k is not None:
            if k == 0:
                raise ZeroDivisionError("the inverse of a jet whose leading coefficient is 0")
            return self.coerce(1 / k)
        return self.coerce(sp.Pow(self.to_expr(c), -1))

    def is_zero(self, c: RingElement | sympy.Expr) -> bool | None:
        """Test exactly whether ``c`` is zero: True, False, or None when the algebra cannot decide.

        ``c`` is reduced (:meth:`reduce`), then divided by (1/D) D - 1 for every reciprocal
        atom 1/D: a zero remainder proves c = 0 (the relations hold as functions) -- this
        decides the common case, a combination of the field's terms that vanishes, without
        leaving the algebra.  Otherwise the remainder is multiplied by D^a for every
        reciprocal atom 1/D it contains (a its highest power: this clears the relation
        D (1/D) = 1) and reduced again.  The atoms sin(x), cos(x) of distinct variables, polynomials in
        the variables and the reciprocals of polynomials in them are algebraically
        independent up to sin^2 + cos^2 = 1, and so are the roots D^(1/n) of irreducible
        polynomials D in them with (D^(1/n))^n = D applied (the canonical algebra writes
        D^(-k/n) as such a root times reciprocals), so a non-zero result proves c != 0 when
        only such atoms occur; with any other atom (exp, a root of a reducible
        polynomial), a non-zero result is None ("cannot tell"), for the caller to
        simplify.  The test runs in the algebra's canonical form (sines
        and cosines of sums expanded, ``expand_angles``).

        Parameters
        ----------
        c : ring element or sympy expression
            The value to test.

        Returns
        -------
        bool or None
            Whether c is zero; None when undecided.
        """
        c = self.lower_reciprocals(self.reduce(self.coerce(c)))
        if not c:
            return True
        if not self.expand_angles:
            C = self.canonical()
            return C.is_zero(C.convert(c, self))
        c = self.reduce(self.clear_reciprocals(c, self.reciprocal_degrees([c])))
        if not c:
            return True
        return False if self.decidable(c) else None

    def canonical(self) -> "Algebra":
        """The algebra's canonical copy (sines and cosines of sums expanded, the same
        symbols, the same backend): where :meth:`is_zero` decides.  Built once."""
        if self.expand_angles:
            return self
        if self._canonical is None:
            self._canonical = Algebra([a for a, _ in self._atoms], self.variables,
                                      self.symbols, expand_angles=True, backend=self.backend)
        return self._canonical

    def convert(self, c: RingElement, source: Algebra) -> RingElement:
        """An element of another algebra ``source`` over the same symbols as one of this
        algebra (its generators' images: each symbol and atom of ``source`` coerced
        once)."""
        if source.backend != self.backend:
            raise ValueError(f"an element of an algebra on {source.backend} converted to one "
                             f"on {self.backend}")
        images = self._images.get(source)
        if images is None:
            images = self._images[source] = [self.coerce(e) for e in source._exprs]
        return self._convert_from(c, source, images)

    def at(self, c: RingElement, point: Mapping[sympy.Symbol, ExprLike]) -> RingElement:
        """c with the symbols of ``point`` replaced by its numbers (the atoms that depend on
        them by their values): c at a point, in the ring.

        Raises UnsupportedExpression when an atom's value is not in the algebra (sqrt(2 +
        q^2) at q = 0 without the atom sqrt(2))."""
        point = {s: sp.sympify(v, strict=True) for s, v in point.items()}
        images = []
        for e in self._exprs:
            if e.free_symbols & set(point):
                images.append(self.coerce(e.subs(point)))
            else:
                images.append(self._gen[e] if e in self._gen else self.coerce(e))
        return self._compose(c, images)

    def reciprocal_degrees(self, cs: Iterable[RingElement]) -> dict[int, int]:
        """{index of a reciprocal atom 1/D: its highest power in any of ``cs``}."""
        ns = self._ns
        out = {}
        for c in cs:
            if not c:
                continue
            for i, d in enumerate(self.degrees(c)[ns:]):
                kind = self._atoms[i][1]
                if d and isinstance(kind, tuple) and kind[2] == -1:
                    out[i] = max(out.get(i, 0), d)
        return out

    def lower_reciprocals(self, c: RingElement) -> RingElement:
        """c reduced modulo (1/D) D - 1 for every reciprocal atom 1/D in it, one after the
        other: the same function, the powers of 1/D lowered where a factor D meets them
        (the derivations' products leave (1/D)^8 D^5 where (1/D)^3 is meant)."""
        for i in self.reciprocal_degrees([c]):
            if not c:
                break
            c = self.reduce(self._remainder(c, self.atom_gen(i) * self.reciprocal_base(i) - 1))
        return c

    def reciprocal_base(self, i: int) -> RingElement:
        """D for the reciprocal atom 1/D of index ``i`` (an element of the ring)."""
        return self.coerce(self._atoms[i][1][1])

    def clear_reciprocals(self, c: RingElement, degrees: Mapping[int, int]) -> RingElement:
        """c * prod D^a over ``degrees`` {atom index of 1/D: a}, written without those atoms
        (a must be at least the power of 1/D in c: D (1/D) = 1 is applied)."""
        for i, a in degrees.items():
            base = self.reciprocal_base(i)
            groups = self._powers(c, self._ns + i)   # power of 1/D -> the part without it
            # Horner: sum_k N_k D^(a - k) = (..(N_0 D + N_1) D + ..) D + N_a, reduced
            # after each product (D^(a - k) itself, expanded, is far larger than D)
            out = self.zero
            for k in range(a + 1):
                out = self.reduce(out * base) if out else out
                if k in groups:
                    out += groups[k]
            c = out
        return c

    def decidable(self, c: RingElement) -> bool:
        """Whether c's atoms are independent up to the relations :meth:`reduce` applies (in
        the canonical algebra: sines and cosines of the variables, reciprocals, radicals of
        rationals, roots D^(1/n) of irreducible polynomials D), so that a reduced non-zero c
        is not zero once its reciprocals are cleared."""
        ns = self._ns
        return all(self._canonical_atom(atom, kind) for (atom, kind), d
                   in zip(self._atoms, self.degrees(c)[ns:]) if d)

    @staticmethod
    def _canonical_atom(atom, kind):
        if kind == "constant":
            return atom.is_Pow and atom.base.is_Rational and atom.exp.is_Rational
        if kind == "function":
            return atom.func in (sp.sin, sp.cos) and atom.args[0].is_Symbol
        return kind[2] == -1 or (kind[2].p == 1 and _prime_radicand(kind[1]))

    def root_reciprocals(self) -> set[int]:
        """The indices of the reciprocal atoms 1/f of the irreducible factors f of every
        root atom's radicand D (D^(1/n): its derivative is D^(1/n) D'/(n D))."""
        out = set()
        for atom, kind in self._atoms:
            if isinstance(kind, tuple) and kind[2].is_Rational and kind[2].p == 1 \
                    and kind[2].q > 1:
                for a, _ in self._atom_of_power(kind[1], sp.Integer(-1))[1]:
                    if a in self._atom_index:
                        out.add(self._atom_index[a])
        return out

    # ----- the backend's operations (:class:`_FlintAlgebra`, :class:`_PolyRingAlgebra`) --
    def number(self, c: RingElement) -> sympy.Rational | None:
        """The ring element ``c`` as a sympy Rational if it is a constant, else None."""
        raise NotImplementedError

    def degrees(self, c: RingElement) -> tuple[int, ...]:
        """The highest power of each generator in ``c`` (symbols, then atoms; 0 for the
        zero element)."""
        raise NotImplementedError

    def terms(self, c: RingElement) -> list[tuple[tuple[int, ...], RingScalar]]:
        """(exponents: symbols then atoms, coefficient) of every term of ``c``."""
        raise NotImplementedError

    def generators(self) -> list[sympy.Expr]:
        """Return the generators as sympy expressions, in the order of :meth:`terms`'
        exponents.

        Returns
        -------
        list of sympy expressions
            The symbols, then the atoms written out (``sin(q1)``, ``1/(2 - cos(q1)**2)``).
        """
        return list(self._exprs)

    def from_terms(self, terms: Mapping[tuple[int, ...], RingScalar]) -> RingElement:
        """The element sum coefficient * monomial of {exponents (symbols then atoms):
        coefficient}."""
        raise NotImplementedError

    def diff(self, c: RingElement, symbol: sympy.Symbol) -> RingElement:
        """Return dc/d symbol (a variable or another generator), through the atoms' derivatives.

        Parameters
        ----------
        c : element of the ring
            The value.
        symbol : sympy symbol
            A generator of the algebra.

        Returns
        -------
        element of the ring
            The derivative.
        """
        raise NotImplementedError

    def reduce(self, c: RingElement) -> RingElement:
        """Return c with the relations of the atoms applied (sin^2 -> 1 - cos^2, sqrt(B)^2 -> B).

        The result is the normal form of c modulo the relations: no sine of a
        sine-cosine pair above the first power, no root B^(1/d) above the (d - 1)-th.

        Parameters
        ----------
        c : element of the ring
            The value.

        Returns
        -------
        element of the ring
            c reduced.
        """
        raise NotImplementedError

    def coefficient(self, c: RingElement, symbol: sympy.Symbol) -> RingElement:
        """The coefficient of ``symbol`` (a generator) in c: the terms of c of degree one
        in it, divided by it."""
        raise NotImplementedError

    def drop(self, c: RingElement, symbols: Iterable[sympy.Symbol]) -> RingElement:
        """c with every term containing one of ``symbols`` removed (c at symbols = 0)."""
        raise NotImplementedError

    def integrate(self, c: RingElement, symbol: sympy.Symbol) -> RingElement:
        """int_0^symbol c d symbol for a generator ``symbol`` no atom depends on (a
        momentum)."""
        raise NotImplementedError

    def integrate_moments(self, c: RingElement, symbol: sympy.Symbol,
                          moments: Callable[[int], RingScalar | sympy.Rational]) -> RingElement:
        """sum_m [symbol^m] c * moments(m): the quadrature rule sum_k w_k c(tau_k) taken
        exactly on a polynomial in ``symbol`` through the moments sum_k w_k tau_k^m of an
        interpolatory rule on [0, 1] (:class:`mpvi.analysis.modified._Moments`: a callable of m
        with ``node_coefficients``, those of the rule's node polynomial omega, lowest
        first)."""
        raise NotImplementedError

    def substitute(self, c: RingElement, symbol: sympy.Symbol, value: RingElement) -> RingElement:
        """c with the generator ``symbol`` replaced by ``value`` (an element of the ring)."""
        raise NotImplementedError


class _FlintAlgebra(Algebra):
    """:class:`Algebra` on FLINT's ``fmpq_mpoly`` (module doc).  The FLINT generators are
    the algebra's in another order -- those of the relations first (:meth:`_rule_atoms`),
    then the others -- so that in FLINT's lexicographic order the leading term of each
    relation's gen^d - R is gen^d, and the remainder on division by it is the normal form
    the relations define."""

    backend = "flint"
    _element = fmpq_mpoly

    def _make_ring(self, gens, first):
        firsts = set(first)
        rest = [i for i in range(len(gens)) if i not in firsts]
        self._logical = first + rest                 # FLINT index -> the algebra's index
        self._flint = [0] * len(gens)                # the algebra's index -> FLINT's
        for f, i in enumerate(self._logical):
            self._flint[i] = f
        uid = next(_names)
        self.ctx = fmpq_mpoly_ctx.get(tuple(f"g{uid}_{f}" for f in range(len(gens))), "lex")
        fgens = self.ctx.gens()
        self._fgens = list(fgens)
        self._gens = [fgens[self._flint[i]] for i in range(len(gens))]
        self._fexprs = [self._exprs[i] for i in self._logical]
        self._powers_cache: dict = {}
        self._images: dict = {}
        self._omega: dict = {}
        self.zero, self.one = self.ctx.from_dict({}), self.ctx.constant(1)

    def _use_rules(self):
        self._divisors = [(self._flint[g], d, self._gens[g] ** d - R)
                          for g, (d, R) in self._rules.items()]
        self._divisors.sort(key=lambda t: t[0])

    def _owns(self, x):
        return x.context() is self.ctx

    def _constant(self, p, q=1):
        return self.ctx.constant(fmpq(p, q))

    @staticmethod
    def _scalar(p, q=1):
        return fmpq(p, q)

    def _to_sympy(self, c):
        exprs, powers = self._fexprs, self._powers_cache
        terms = []
        for m, v in c.terms():
            factors = [sp.Rational(int(v.p), int(v.q))]
            for f, e in enumerate(m):
                if e:
                    key = (f, e)
                    if key not in powers:
                        powers[key] = sp.Pow(exprs[f], e)
                    factors.append(powers[key])
            terms.append(sp.Mul(*factors))
        return sp.Add(*terms)

    def number(self, c):
        if c.is_zero():
            return sp.Integer(0)
        if c.is_constant():
            v = c.leading_coefficient()
            return sp.Rational(int(v.p), int(v.q))
        return None

    def degrees(self, c) -> tuple:
        d = c.degrees()
        return tuple(max(d[f], 0) for f in self._flint)

    def terms(self, c):
        order = self._flint
        return [(tuple(m[f] for f in order), v) for m, v in c.terms()]

    def from_terms(self, terms: Mapping) -> Any:
        logical = self._logical
        return self.ctx.from_dict({tuple(m[i] for i in logical): fmpq(*_rational_parts(v))
                                   for m, v in terms.items()})

    def diff(self, c, symbol) -> Any:
        if not c:
            return self.zero
        ns, out = self._ns, self.zero
        for f, d in enumerate(c.degrees()):
            if d <= 0:
                continue
            i = self._logical[f]
            if i < ns:
                if self.symbols[i] == symbol:
                    out += c.derivative(f)
            else:
                da = self._d_atom[i - ns].get(symbol)
                if da is not None:
                    out += c.derivative(f) * da
        return out

    def reduce(self, c) -> Any:
        # the remainder on division by each gen^d - R, the earliest generator first (a
        # later relation does not bring an earlier generator back)
        if not self._divisors or not c:
            return c
        degrees = c.degrees()
        for f, d, divisor in self._divisors:
            if degrees[f] >= d:
                c = c % divisor
                degrees = c.degrees()
        return c

    def _powers(self, c, g):
        """{k: the part of c of degree k in generator g, divided by g^k}."""
        gen, out, k = self._gens[g], {}, 0
        while c:
            c, r = divmod(c, gen)
            if r:
                out[k] = r
            k += 1
        return out

    def _convert_from(self, c, source, images):
        return c.compose(*[images[i] for i in source._logical], ctx=self.ctx)

    @staticmethod
    def _remainder(c, divisor):
        return c % divisor

    def _compose(self, c, images):
        return c.compose(*[images[i] for i in self._logical])

    def coefficient(self, c, symbol) -> Any:
        g = self._gen[symbol]
        return (c // g) % g

    def drop(self, c, symbols) -> Any:
        return c.subs({self._flint[self._index[s]]: 0 for s in symbols})

    def integrate(self, c, symbol) -> Any:
        return c.integral(self._flint[self._index[symbol]])

    def integrate_moments(self, c, symbol, moments) -> Any:
        # the integral over [0, 1] of the remainder of c on division by omega(symbol): the
        # rule integrates it exactly and it agrees with c at every node
        f = self._flint[self._index[symbol]]
        key = (f, tuple(moments.node_coefficients))
        omega = self._omega.get(key)
        if omega is None:
            gen = self._fgens[f]
            omega = self._omega[key] = sum(
                (gen ** k * fmpq(*_rational_parts(a)) for k, a in enumerate(key[1]) if a),
                self.zero)
        return (c % omega).integral(f).subs({f: 1})

    def substitute(self, c, symbol, value) -> Any:
        images = list(self._fgens)
        images[self._flint[self._index[symbol]]] = value
        return c.compose(*images)


class _PolyRingAlgebra(Algebra):
    """:class:`Algebra` on sympy's sparse ``PolyRing`` (module doc)."""

    backend = "sympy"
    _element = PolyElement

    def _make_ring(self, gens, first):
        self.ring = PolyRing(gens, QQ, lex)
        self._gens = list(self.ring.gens)
        self._images: dict = {}
        self.zero, self.one = self.ring.zero, self.ring.one

    def _use_rules(self):
        pass

    def _owns(self, x):
        return x.ring is self.ring

    def _constant(self, p, q=1):
        return self.ring(QQ(p, q))

    @staticmethod
    def _scalar(p, q=1):
        return QQ(p, q)

    def _to_sympy(self, c):
        return c.as_expr().xreplace(self._to_expr)

    def number(self, c):
        if not c:
            return sp.Integer(0)
        if len(c) == 1:
            (m, v), = c.items()
            if not any(m):
                return sp.Rational(int(v.numerator), int(v.denominator))
        return None

    def degrees(self, c) -> tuple:
        if not c:
            return (0,) * len(self._gens)
        return c.degrees()

    def terms(self, c):
        return list(c.items())

    def from_terms(self, terms: Mapping) -> Any:
        return self.ring.from_dict({m: QQ(*_rational_parts(v)) for m, v in terms.items()})

    def diff(self, c, symbol) -> Any:
        if not c:
            return self.zero
        present = [i for i, d in enumerate(c.degrees()) if d > 0]
        out = self.zero
        gens = self.ring.gens
        ns = self._ns
        for i in present:
            if i < ns:
                if self.symbols[i] == symbol:
                    out += c.diff(gens[i])
            else:
                d = self._d_atom[i - ns].get(symbol)
                if d is not None:
                    out += c.diff(gens[i]) * d
        return out

    def reduce(self, c) -> Any:
        if not self._rules or not c:
            return c
        ring = self.ring
        powers: dict = {}
        while True:
            groups: dict = {}                 # the rules' factor -> the reduced monomials
            changed = False
            for m, v in c.items():
                hits = tuple((g, m[g] // d) for g, (d, _) in self._rules.items() if m[g] >= d)
                if hits:
                    changed = True
                    mm = list(m)
                    for g, k in hits:
                        mm[g] -= k * self._rules[g][0]
                    m = tuple(mm)
                group = groups.setdefault(hits, {})
                group[m] = group.get(m, 0) + v
            if not changed:
                return c
            out = ring.zero
            for hits, group in groups.items():
                term = ring.from_dict({m: v for m, v in group.items() if v})
                for g, k in hits:
                    if (g, k) not in powers:
                        powers[g, k] = self._rules[g][1] ** k
                    term = term * powers[g, k]
                out += term
            c = out

    def _powers(self, c, g):
        """{k: the part of c of degree k in generator g, divided by g^k}."""
        groups: dict = {}
        for m, v in c.items():
            mm = list(m)
            k = mm[g]
            mm[g] = 0
            groups.setdefault(k, {})[tuple(mm)] = v
        return {k: self.ring.from_dict(d) for k, d in groups.items()}

    def _convert_from(self, c, source, images):
        return self._compose(c, images)

    @staticmethod
    def _remainder(c, divisor):
        return c.rem(divisor)

    def _compose(self, c, images):
        """c with generator i replaced by images[i], monomial by monomial."""
        powers: dict = {}
        out: dict = {}                        # summed in place: ``+=`` on ring elements
        for m, v in c.items():               # copies the sum each time (quadratic)
            term = self.ring(v)
            for i, e in enumerate(m):
                if e:
                    key = (i, e)
                    if key not in powers:
                        powers[key] = images[i] ** e
                    term = term * powers[key]
            for mt, vt in term.items():
                out[mt] = out.get(mt, 0) + vt
        return self.ring.from_dict({m: v for m, v in out.items() if v})

    def coefficient(self, c, symbol) -> Any:
        i = self._index[symbol]
        out = {}
        for m, v in c.items():
            if m[i] == 1:
                mm = list(m)
                mm[i] = 0
                out[tuple(mm)] = v
        return self.ring.from_dict(out)

    def drop(self, c, symbols) -> Any:
        idx = [self._index[s] for s in symbols]
        return self.ring.from_dict({m: v for m, v in c.items() if not any(m[i] for i in idx)})

    def integrate(self, c, symbol) -> Any:
        i = self._index[symbol]
        out = {}
        for m, v in c.items():
            mm = list(m)
            mm[i] += 1
            out[tuple(mm)] = v * QQ(1, mm[i])
        return self.ring.from_dict(out)

    def integrate_moments(self, c, symbol, moments) -> Any:
        i = self._index[symbol]
        out = {}
        for m, v in c.items():
            mm = list(m)
            k = mm[i]
            mm[i] = 0
            mm = tuple(mm)
            mu = moments(k)
            if mu:
                out[mm] = out.get(mm, 0) + v * mu
        return self.ring.from_dict({m: v for m, v in out.items() if v})

    def substitute(self, c, symbol, value) -> Any:
        out = self.zero
        for k, part in self._powers(c, self._index[symbol]).items():
            out += part * value ** k
        return out


_ALGEBRAS = {"flint": _FlintAlgebra, "sympy": _PolyRingAlgebra}


@entry_class
class Jet:
    """sum_{k < hi} c_k h^k + O(h^hi); ``terms``: power -> coefficient (an element of
    ``alg``; zeros omitted)."""

    __slots__ = ("terms", "hi", "alg")

    def __init__(self, terms: Mapping[int, RingElement], hi: int, alg: Algebra) -> None:
        self.hi = hi
        self.alg = alg
        self.terms = {k: v for k, v in terms.items() if k < hi and v}

    @classmethod
    def constant(cls, value: int | Fraction | sympy.Basic | RingElement, hi: int, alg: Algebra
                 ) -> Jet:
        return cls({0: alg.coerce(value)}, hi, alg)

    @classmethod
    def step(cls, hi: int, alg: Algebra) -> "Jet":
        """h itself."""
        return cls({1: alg.one}, hi, alg)

    @property
    def lo(self) -> int:
        """The lowest power present (``hi`` for a jet known to be O(h^hi))."""
        return min(self.terms) if self.terms else self.hi

    def coeff(self, k: int) -> RingElement:
        if k >= self.hi:
            raise ArithmeticError(f"the coefficient of h^{k} of a jet known to O(h^{self.hi})")
        return self.terms.get(k, self.alg.zero)

    def __repr__(self):
        return " + ".join(f"({v})*h^{k}" for k, v in sorted(self.terms.items())) + f" + O(h^{self.hi})"

    # ----- arithmetic ---------------------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, Jet):
            other = self.alg.coerce(other)
            terms = dict(self.terms)
            if 0 < self.hi:
                terms[0] = terms.get(0, self.alg.zero) + other
            return Jet(terms, self.hi, self.alg)
        hi = min(self.hi, other.hi)
        terms = {k: v for k, v in self.terms.items() if k < hi}
        for k, v in other.terms.items():
            if k < hi:
                terms[k] = terms[k] + v if k in terms else v
        return Jet(terms, hi, self.alg)

    __radd__ = __add__

    def __neg__(self):
        return Jet({k: -v for k, v in self.terms.items()}, self.hi, self.alg)

    def __sub__(self, other):
        return self + (-other if isinstance(other, Jet) else -self.alg.coerce(other))

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if not isinstance(other, Jet):
            other = self.alg.coerce(other)
            if not other:
                return Jet({}, self.hi, self.alg)
            return Jet({k: v * other for k, v in self.terms.items()}, self.hi, self.alg)
        hi = min(self.lo + other.hi, other.lo + self.hi)
        terms: dict = {}
        for i, a in self.terms.items():
            for j, b in other.terms.items():
                if i + j < hi:
                    p = a * b
                    terms[i + j] = terms[i + j] + p if i + j in terms else p
        return Jet(terms, hi, self.alg)

    __rmul__ = __mul__

    def inverse(self) -> "Jet":
        """1 / self (its lowest coefficient must be invertible in the algebra)."""
        lo = self.lo
        if lo >= self.hi:
            raise ZeroDivisionError("the inverse of a jet that is O(h^hi) with no known term")
        inv0 = self.alg.reciprocal(self.terms[lo])
        if len(self.terms) == 1:                  # a monomial: exact to its own order
            return Jet({-lo: inv0}, self.hi - 2 * lo, self.alg)
        n = self.hi - lo                          # relative precision
        b = [self.terms.get(lo + k, self.alg.zero) for k in range(n)]
        e = [inv0]
        for k in range(1, n):
            acc = self.alg.zero
            for j in range(1, k + 1):
                if b[j]:
                    acc += b[j] * e[k - j]
            e.append(-acc * inv0)
        return Jet({k - lo: v for k, v in enumerate(e)}, n - lo, self.alg)

    def __truediv__(self, other):
        if not isinstance(other, Jet):
            return self * self.alg.reciprocal(self.alg.coerce(other))
        return self * other.inverse()

    def __rtruediv__(self, other):
        return self.inverse() * other

    def __pow__(self, e):
        if isinstance(e, (int, sp.Integer)):
            e = int(e)
            if e < 0:
                return (self ** (-e)).inverse()
            result, base = Jet.constant(1, self.hi, self.alg), self
            while e:
                if e & 1:
                    result = result * base
                e >>= 1
                if e:
                    base = base * base
            return result
        power = _power(self, sp.Rational(e))
        return power if power is not None else apply(lambda x: x ** e, self)

    def diff(self, symbol: sympy.Symbol) -> Jet:
        """d/d symbol, coefficient by coefficient."""
        return Jet({k: self.alg.diff(v, symbol) for k, v in self.terms.items()}, self.hi, self.alg)

    def map(self, fn: Callable[[RingElement], RingElement]) -> Jet:
        """``fn`` applied to every coefficient (a linear map of the algebra)."""
        return Jet({k: fn(v) for k, v in self.terms.items()}, self.hi, self.alg)

    def truncate(self, hi: int) -> "Jet":
        return Jet(self.terms, min(hi, self.hi), self.alg)


def _coefficients(a: Jet):
    return [a.terms.get(k, a.alg.zero) for k in range(a.hi)]


def _recurrence(A, alg, k, other):
    """sum_{j=1..k} j A_j other_(k-j) / k."""
    acc = None
    for j in range(1, k + 1):
        if A[j]:
            t = A[j] * other[k - j] * j if j > 1 else A[j] * other[k - j]
            acc = t if acc is None else acc + t
    return acc * alg.rational(1, k) if acc is not None else alg.zero


def _sin_cos(a: Jet) -> tuple:
    """(sin a, cos a) by the recurrences of Taylor-mode differentiation:
    s_k = sum_j j a_j c_(k-j) / k, c_k = -sum_j j a_j s_(k-j) / k (O(N^2) products)."""
    alg, n = a.alg, a.hi
    A = _coefficients(a)
    S, C = [alg.function(sp.sin, A[0])], [alg.function(sp.cos, A[0])]
    for k in range(1, n):
        S.append(_recurrence(A, alg, k, C))
        C.append(-_recurrence(A, alg, k, S))
    return Jet(dict(enumerate(S)), n, alg), Jet(dict(enumerate(C)), n, alg)


def _exp(a: Jet) -> Jet:
    """exp a by e_k = sum_j j a_j e_(k-j) / k."""
    alg, n = a.alg, a.hi
    A = _coefficients(a)
    E = [alg.function(sp.exp, A[0])]
    for k in range(1, n):
        E.append(_recurrence(A, alg, k, E))
    return Jet(dict(enumerate(E)), n, alg)


def _power(a: Jet, e: sympy.Rational) -> Jet | None:
    """a^e for a rational e by the recurrence of Taylor-mode differentiation, a_0 k b_k =
    sum_(j=1..k) (e j - (k - j)) a_j b_(k-j) (from a b' = e a' b: O(N^2) products where
    Taylor's formula takes O(N^3)), when 1/a_0 is in the algebra (as (a_0^(-1/q))^q, q the
    denominator of e: Kepler's atom D^(-1/2) gives 1/D) and a_0^e, a_0^(e - 1), ... are
    the powers of one atom; None otherwise.  The same coefficients as :func:`apply`'s, term
    by term: both are then the formal expansion in that atom's powers."""
    alg, n = a.alg, a.hi
    if a.lo != 0 or not e.is_Rational:
        return None
    A = _coefficients(a)
    a0e = alg.to_expr(A[0])
    try:
        inv = alg.coerce(sp.Pow(a0e, sp.Rational(-1, e.q))) ** int(e.q)
        B = [alg.coerce(sp.Pow(a0e, e))]
        # Taylor's formula's coefficients a_0^(e - k) must be B_0 (1/a_0)^k in the ring (one
        # atom for both: D^(-3/2) = (D^(-1/2))^3), else the two write them differently
        if any(alg.coerce(sp.Pow(a0e, e - k)) != B[0] * inv ** k for k in (1, 2)):
            return None
    except UnsupportedExpression:
        return None
    for k in range(1, n):
        acc = None
        for j in range(1, k + 1):
            c = e * j - (k - j)
            if A[j] and c:
                t = A[j] * B[k - j] * alg.rational(int(c.p), int(c.q))
                acc = t if acc is None else acc + t
        B.append(acc * inv * alg.rational(1, k) if acc is not None else alg.zero)
    return Jet(dict(enumerate(B)), n, alg)


def apply(f, a: Jet) -> Jet:
    """f(a) for a sympy function ``f`` of one argument (a lambda on a sympy expression),
    by Taylor's formula at the constant term of ``a`` (whose lowest power must be >= 0);
    sin, cos and exp by their recurrences."""
    if a.lo < 0:
        raise ArithmeticError("a function of a jet with negative powers of h")
    if f in (sp.sin, sp.cos):
        return _sin_cos(a)[0 if f is sp.sin else 1]
    if f is sp.exp:
        return _exp(a)
    alg = a.alg
    a0 = a.terms.get(0, alg.zero)
    a0e = alg.to_expr(a0)
    d = a - a0                                    # O(h)
    hi = a.hi
    result = Jet.constant(alg.coerce(f(a0e)), hi, alg)
    fx = f(_X)
    power = Jet.constant(1, hi, alg)
    for k in range(1, hi):
        if d.lo * k >= hi:
            break
        power = power * d
        fx = sp.diff(fx, _X)
        c = alg.coerce(fx.subs(_X, a0e) / factorial(k))
        if c:
            result = result + power * c
    return result


def evaluate_all(exprs: Iterable[sympy.Expr], env: Mapping[sympy.Symbol, Jet | RingElement],
                 hi: int, alg: Algebra) -> list[Jet | RingElement]:
    """:func:`evaluate` of each of ``exprs``, a subexpression they share computed once (the
    components of a field: the power r^(-3/2) of a pair distance in all six components of
    two bodies' forces)."""
    cache: dict = {}
    return [evaluate(e, env, hi, alg, cache) for e in exprs]


@entry
def evaluate(expr: sympy.Expr, env: Mapping[sympy.Symbol, Jet | RingElement], hi: int,
             alg: Algebra, cache: dict | None = None) -> Jet | RingElement:
    """``expr`` (sympy) with the jets of ``env`` for its symbols, as a jet to O(h^hi) (an
    element of ``alg`` when no jet enters); ``cache`` holds the subexpressions found, for
    later calls with the same ``env``, ``hi`` and ``alg`` (:func:`evaluate_all`)."""
    if cache is None:
        cache = {}
    names = set(env)

    def ev(e):
        if e in cache:
            return cache[e]
        if e in env:
            r = env[e] if isinstance(env[e], Jet) else alg.coerce(env[e])
        elif not (e.free_symbols & names):
            r = alg.coerce(e)
        elif e.is_Add:
            parts = [ev(a) for a in e.args]
            jets = [p for p in parts if isinstance(p, Jet)]
            rest = sum((p for p in parts if not isinstance(p, Jet)), alg.zero)
            r = rest
            for p in jets:
                r = p + r
        elif e.is_Mul:
            parts = [ev(a) for a in e.args]
            jets = [p for p in parts if isinstance(p, Jet)]
            rest = alg.one
            for p in parts:
                if not isinstance(p, Jet):
                    rest = rest * p
            r = rest
            for p in jets:
                r = p * r
        elif e.is_Pow:
            base, ex = ev(e.args[0]), e.args[1]
            if ex.free_symbols & names:
                raise UnsupportedExpression(f"a power with a varying exponent: {e}")
            r = base ** ex
        elif isinstance(e, sp.Function) and len(e.args) == 1:
            r = apply(e.func, ev(e.args[0]))
        else:
            raise UnsupportedExpression(f"jets through {type(e).__name__}: {e}")
        if isinstance(r, Jet):
            r = r.truncate(hi)
        cache[e] = r
        return r
    return ev(sp.sympify(expr, strict=True))
