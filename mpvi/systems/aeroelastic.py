"""The 2-DOF pitch-plunge aeroelastic section of hermite Sec. 5.3 (eqs. (42)-(46), Fig. 8).

A flat plate of semichord b is supported by a linear plunge spring k_h and a nonlinear
pitch spring with stiffness k_alpha(alpha) = k_alpha0 + k_alpha1 alpha + k_alpha2 alpha^2;
it is driven by quasi-steady aerodynamics at freestream speed U.  Coordinates
q = (h, alpha): plunge h [m], **positive downward**, and pitch alpha [rad], positive nose
up, about the elastic axis at a b behind mid-chord (a < 0: ahead of it).

What mpvi integrates (the printed equations corrected; reproductions/ERRATA.md [E50]-[E52]):

* Lagrangian (eq. (42) with the factors 1/2 and b the printed one lacks, [E50])

      L = 1/2 m_T h'^2 + 1/2 I_alpha alpha'^2 + m_W x_alpha b h' alpha'
          - 1/2 k_h h^2 - 1/2 k_alpha0 alpha^2 - 1/3 k_alpha1 alpha^3 - 1/4 k_alpha2 alpha^4,

  i.e. M = [[m_T, m_W x_alpha b], [m_W x_alpha b, I_alpha]] and V the potential of
  k_h h and k_alpha(alpha) alpha (any number of coefficients k_alpha_i: V_alpha =
  sum_i k_alpha_i alpha^(i+2) / (i+2));
* generalized forces (eqs. (43)-(44) with the sign of the lift in f_h reversed, [E51])

      f_h     = -c_h h'     - rho U^2 b   C_Lalpha alpha_eff,
      f_alpha = -c_alpha alpha' + rho U^2 b^2 C_Malpha alpha_eff,
      alpha_eff = alpha + h'/U + (1/2 - a) b alpha'/U,   C_Malpha = (1/2 + a) C_Lalpha;

* hence the equations of motion (eqs. (45)-(46) with both aerodynamic terms of the
  opposite sign, [E51])::

      m_T h'' + m_W x_alpha b alpha'' + c_h h' + k_h h + rho U^2 b C_Lalpha alpha_eff = 0,
      I_alpha alpha'' + m_W x_alpha b h'' + c_alpha alpha' + k_alpha(alpha) alpha
          - rho U^2 b^2 C_Malpha alpha_eff = 0.

The kinematics fix the convention: the coupling +m_W x_alpha b h' alpha' (a centre of mass
x_alpha b behind the elastic axis moves by h + x_alpha b alpha) and the +h'/U in
alpha_eff (a downward plunge velocity raises the angle of attack) both hold for h
positive down, in which the lift L = rho U^2 b C_Lalpha alpha_eff acts as -L on h (the
convention of Ko, Kurdila & Strganac and Platanitis & Strganac, whose apparatus the
parameters describe).  The symbolic pieces -- printed and corrected -- are
:func:`symbolic_model`; ``tests/test_aeroelastic.py`` derives the equations of motion
from them.

Parameters (:data:`DEFAULT_PARAMETERS`, exact decimal strings).  The paper prints none;
it takes the model from Shukla & Patil (its ref. [24]), whose table we could not find.
The default set is the Texas A&M nonlinear aeroelastic test apparatus (NATA) as reused
across the literature (O'Neil & Strganac, J. Aircraft 35(4), 1998; Platanitis & Strganac,
J. Guid. Control Dyn. 27(1), 2004), an **assumption** recalled from that literature and
not verified against the sources (reproductions/ERRATA.md [E53]):

====================  ==========  ===================================================
key                   value       meaning
====================  ==========  ===================================================
``b``                 0.135       semichord [m]
``a``                 -0.6847     elastic axis behind mid-chord [semichords]
``m_T``               12.387      total plunging mass [kg]
``m_W``               2.049       wing mass [kg]
``x_cg``              0.0873      wing centre of mass behind the leading edge [m];
                                  x_alpha = (x_cg - (b + a b)) / b [semichords]
``I_cg``              0.0517      pitch inertia without the offset term [kg m^2];
                                  I_alpha = I_cg + m_W x_alpha^2 b^2 [kg m^2]
``k_h``               2844.4      plunge stiffness [N/m]
``c_h``               27.43       plunge damping [kg/s]
``c_alpha``           0.036       pitch damping [kg m^2/s]
``rho``               1.225       air density [kg/m^3]
``C_Lalpha``          6.28        lift-curve slope [1/rad]; C_Malpha = (1/2 + a) C_Lalpha
``k_alpha``           6.833,      k_alpha0 [N m/rad], k_alpha1 [N m/rad^2],
                      9.967,      k_alpha2 [N m/rad^3] (eq. (46))
                      667.685
====================  ==========  ===================================================

Linear stability (:func:`linear_matrix`, :func:`flutter_speed`): about q = 0 the section
is x' = A(U) x with x = (h, alpha, h', alpha') and k_alpha(alpha) -> k_alpha0; the
linear flutter speed U_f is the smallest U at which the largest real part of the
eigenvalues of A(U) crosses zero (hermite Sec. 5.3: "U_f is the linear flutter
velocity").
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import sympy as sp

from mpvi.compiled.codegen import compile_exprs
from mpvi.engines.dense import locate_root
from mpvi.model.mechanics import LagrangianSystem
from mpvi.model.problem import Problem
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from mpvi.ground.types import Matrix, Number, NumberLike, Real, VectorLike
    from mpvi.numbers.context import Context

    ExactValue = str | int | Fraction
    Parameters = Mapping[str, ExactValue | Sequence[ExactValue]]
    CheckedParameters = dict[str, Fraction | tuple[Fraction, ...]]

DEFAULT_PARAMETERS = {
    "b": "0.135", "a": "-0.6847", "m_T": "12.387", "m_W": "2.049", "x_cg": "0.0873",
    "I_cg": "0.0517", "k_h": "2844.4", "c_h": "27.43", "c_alpha": "0.036", "rho": "1.225",
    "C_Lalpha": "6.28", "k_alpha": ("6.833", "9.967", "667.685"),
}
"""The candidate NATA parameter set (module docstring; an assumption, ERRATA [E53])."""

PAPER_INITIAL_STATE = {"q0": ("0.01", "0.1"), "v0": ("0", "0")}
"""hermite Sec. 5.3: (h0, h0', alpha0, alpha0') = (0.01, 0, 0.1, 0)."""

_SCALARS = ("b", "a", "m_T", "m_W", "x_cg", "I_cg", "k_h", "c_h", "c_alpha", "rho", "C_Lalpha")


# ----- parameters ---------------------------------------------------------------------------

def _exact(name, value):
    """An exact parameter value (decimal string, int or Fraction) as a Fraction."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
        raise TypeError(f"aeroelastic parameter {name!r}: give an exact value (a decimal "
                        f"string such as '0.135', an int or a Fraction), not "
                        f"{type(value).__name__} {value!r}")
    try:
        return Fraction(str(value).strip())
    except ValueError:
        raise ValueError(f"aeroelastic parameter {name!r}: cannot read a number from "
                         f"{value!r}") from None


@entry
def section_parameters(params: Parameters | None = None) -> CheckedParameters:
    """The parameter set ``params`` (default :data:`DEFAULT_PARAMETERS`; a dict with the
    same keys, values exact) checked and completed with the derived quantities, all as
    Fractions: x_alpha = (x_cg - (b + a b)) / b, I_alpha = I_cg + m_W x_alpha^2 b^2,
    C_Malpha = (1/2 + a) C_Lalpha, and ``k_alpha`` as a tuple.  Unknown or missing keys,
    non-positive masses, inertia, semichord or plunge stiffness, or an empty k_alpha raise
    ``ValueError``."""
    p = dict(DEFAULT_PARAMETERS if params is None else params)
    unknown = sorted(set(p) - set(DEFAULT_PARAMETERS))
    missing = sorted(set(DEFAULT_PARAMETERS) - set(p))
    if unknown or missing:
        raise ValueError(f"aeroelastic parameters: unknown key(s) {unknown}, missing key(s) "
                         f"{missing}; the keys are {sorted(DEFAULT_PARAMETERS)}")
    out = {k: _exact(k, p[k]) for k in _SCALARS}
    ks = p["k_alpha"]
    if isinstance(ks, (str, bytes)) or not hasattr(ks, "__len__") or len(ks) == 0:
        raise ValueError(f"aeroelastic parameter 'k_alpha': give the coefficients "
                         f"(k_alpha0, k_alpha1, ...) of k_alpha(alpha) as a sequence, got {ks!r}")
    out["k_alpha"] = tuple(_exact(f"k_alpha{i}", k) for i, k in enumerate(ks))
    for k in ("b", "m_T", "m_W", "k_h"):
        if out[k] <= 0:
            raise ValueError(f"aeroelastic parameter {k!r} must be positive, got {p[k]!r}")
    b, a = out["b"], out["a"]
    out["x_alpha"] = (out["x_cg"] - (b + a * b)) / b
    out["I_alpha"] = out["I_cg"] + out["m_W"] * out["x_alpha"] ** 2 * b ** 2
    out["C_Malpha"] = (Fraction(1, 2) + a) * out["C_Lalpha"]
    det = out["m_T"] * out["I_alpha"] - (out["m_W"] * out["x_alpha"] * b) ** 2
    if out["I_alpha"] <= 0 or det <= 0:
        raise ValueError(f"aeroelastic parameters: the mass matrix [[m_T, m_W x_alpha b], "
                         f"[m_W x_alpha b, I_alpha]] is not positive definite "
                         f"(I_alpha = {float(out['I_alpha']):.6g}, det = {float(det):.6g})")
    return out


# ----- symbolic model -------------------------------------------------------------------------

@entry_class
@dataclass(frozen=True)
class SymbolicModel:
    """The printed and corrected forms of hermite eqs. (42)-(46) in sympy.

    Symbols: coordinates ``h``, ``alpha``, velocities ``hd``, ``ad``, accelerations ``hdd``,
    ``add``, parameters in ``sym`` (keys m_T, m_W, x_alpha, b, a, I_alpha, k_h, c_h,
    c_alpha, rho, U, C_Lalpha, C_Malpha, k_alpha0.. k_alpha{n-1}).  Expressions:
    ``lagrangian_printed`` (42 as printed), ``lagrangian`` (42 corrected, [E50]),
    ``forces_printed`` (43)-(44), ``forces`` (corrected, [E51]), ``eom_printed``
    (45)-(46), ``eom`` (the corrected (45)-(46)), ``alpha_eff``, and ``forces_of_eom_printed``:
    the forces that, with the corrected Lagrangian, give the printed (45)-(46) (neither
    (43)-(44) nor the corrected ones: only for comparisons, ERRATA [E51])."""

    h: sp.Symbol
    alpha: sp.Symbol
    hd: sp.Symbol
    ad: sp.Symbol
    hdd: sp.Symbol
    add: sp.Symbol
    sym: dict[str, sp.Symbol]
    alpha_eff: sp.Expr
    lagrangian_printed: sp.Expr
    lagrangian: sp.Expr
    forces_printed: tuple[sp.Expr, sp.Expr]
    forces: tuple[sp.Expr, sp.Expr]
    forces_of_eom_printed: tuple[sp.Expr, sp.Expr]
    eom_printed: tuple[sp.Expr, sp.Expr]
    eom: tuple[sp.Expr, sp.Expr]

    def forces_for(self, equations: str) -> tuple[sp.Expr, sp.Expr]:
        """The forces of ``equations``: 'corrected' (the default everywhere) or 'printed'
        (those giving the printed eqs. (45)-(46) with the corrected Lagrangian)."""
        if equations == "corrected":
            return self.forces
        if equations == "printed":
            return self.forces_of_eom_printed
        raise ValueError(f"equations must be 'corrected' or 'printed' (eqs. (45)-(46) as "
                         f"printed, for comparisons only), got {equations!r}")

    def euler_lagrange(self, L: sp.Expr, forces: Sequence[sp.Expr]) -> tuple[sp.Expr, ...]:
        """d/dt dL/dq' - dL/dq - f for q = (h, alpha), with q'' the symbols hdd, add."""
        q, v, acc = (self.h, self.alpha), (self.hd, self.ad), (self.hdd, self.add)

        def ddt(expr):
            return sum(sp.diff(expr, x) * dx for x, dx in zip(q + v, v + acc))
        return tuple(sp.expand(ddt(sp.diff(L, vi)) - sp.diff(L, qi) - f)
                     for qi, vi, f in zip(q, v, forces))


@entry
@lru_cache(maxsize=None)
def symbolic_model(n_stiffness: int = 3) -> SymbolicModel:
    """:class:`SymbolicModel` with k_alpha(alpha) = sum_{i < n_stiffness} k_alpha_i alpha^i
    (the paper's form has n_stiffness = 3)."""
    h, alpha, hd, ad, hdd, add = sp.symbols("h alpha hd ad hdd add")
    names = ("m_T", "m_W", "x_alpha", "b", "I_alpha", "k_h", "c_h", "c_alpha", "rho", "U",
             "C_Lalpha")
    sym = {n: sp.Symbol(n, positive=True) for n in names}
    sym["a"] = sp.Symbol("a", real=True)
    sym["C_Malpha"] = sp.Symbol("C_Malpha", real=True)
    ks = [sp.Symbol(f"k_alpha{i}", real=True) for i in range(n_stiffness)]
    for i, k in enumerate(ks):
        sym[f"k_alpha{i}"] = k
    s = sym
    half = sp.Rational(1, 2)
    aeff = alpha + hd / s["U"] + (half - s["a"]) * s["b"] * ad / s["U"]
    V_alpha = sum(k * alpha ** (i + 2) / (i + 2) for i, k in enumerate(ks))
    V = half * s["k_h"] * h ** 2 + V_alpha
    L_printed = (s["m_T"] * hd ** 2 + s["I_alpha"] * ad ** 2 + s["m_W"] * s["x_alpha"] * hd * ad
                 - V)
    L = (half * s["m_T"] * hd ** 2 + half * s["I_alpha"] * ad ** 2
         + s["m_W"] * s["x_alpha"] * s["b"] * hd * ad - V)
    lift = s["rho"] * s["U"] ** 2 * s["b"] * s["C_Lalpha"] * aeff
    moment = s["rho"] * s["U"] ** 2 * s["b"] ** 2 * s["C_Malpha"] * aeff
    f_printed = (-s["c_h"] * hd + lift, -s["c_alpha"] * ad + moment)
    f = (-s["c_h"] * hd - lift, -s["c_alpha"] * ad + moment)
    k_of_alpha = sum(k * alpha ** i for i, k in enumerate(ks))
    coupling = s["m_W"] * s["x_alpha"] * s["b"]
    eom_h = s["m_T"] * hdd + coupling * add + s["c_h"] * hd + s["k_h"] * h
    eom_a = s["I_alpha"] * add + coupling * hdd + s["c_alpha"] * ad + k_of_alpha * alpha
    eom_printed = (sp.expand(eom_h - lift), sp.expand(eom_a + moment))
    eom = (sp.expand(eom_h + lift), sp.expand(eom_a - moment))
    f_eom_printed = (-s["c_h"] * hd + lift, -s["c_alpha"] * ad - moment)
    return SymbolicModel(h, alpha, hd, ad, hdd, add, sym, aeff, L_printed, L,
                         f_printed, f, f_eom_printed, eom_printed, eom)


# ----- the system -----------------------------------------------------------------------------

@entry_class
class AeroelasticSection(Problem):
    """The section at one speed: a :class:`mpvi.Problem` (``system``, state q = (h, alpha),
    the paper's initial state ``q0``, ``v0``) with ``U`` (a context number) and the checked
    parameters ``params`` (Fractions, derived ones included)."""

    def __init__(self, system: LagrangianSystem, U: Real, params: CheckedParameters,
                 q0: VectorLike, v0: VectorLike) -> None:
        self.U, self.params = U, params
        super().__init__(system, q0, v0=v0, name=system.name)

    def energy(self, q: VectorLike, v: VectorLike) -> Number:
        """Total mechanical energy 1/2 v^T M v + V(q) of the corrected Lagrangian (42)."""
        return self.system.energy(q, self.system.momentum(q, v))


def _param_table(p, U, model):
    """{sympy parameter symbol: value} for :class:`LagrangianSystem`."""
    s = model.sym
    table = {s[k]: p[k] for k in ("m_T", "m_W", "x_alpha", "b", "a", "I_alpha", "k_h", "c_h",
                                  "c_alpha", "rho", "C_Lalpha", "C_Malpha")}
    for i, k in enumerate(p["k_alpha"]):
        table[s[f"k_alpha{i}"]] = k
    table[s["U"]] = U
    return table


@entry
def aeroelastic_section(ctx: Context, U: NumberLike, params: Parameters | None = None,
                        q0: VectorLike | None = None, v0: VectorLike | None = None,
                        equations: str = "corrected") -> AeroelasticSection:
    """The aeroelastic section (corrected eqs. (42)-(46), module docstring) at freestream
    speed ``U`` [m/s] (a positive decimal string, int, Fraction or context number) with
    parameters ``params`` (:func:`section_parameters`); q0, v0 default to the paper's
    initial state (0.01 m, 0.1 rad) at rest.  ``equations='printed'`` gives the printed
    signs of the aerodynamic terms of eqs. (45)-(46) instead (for comparisons, ERRATA [E51])."""
    p = section_parameters(params)
    U = ctx.num(U)
    if not U > 0:
        raise ValueError(f"the freestream speed U must be positive, got {ctx.to_str(U, 10)}")
    model = symbolic_model(len(p["k_alpha"]))
    forces = model.forces_for(equations)
    h, alpha, vel = model.h, model.alpha, (model.hd, model.ad)
    L = model.lagrangian
    M = sp.Matrix(2, 2, lambda i, j: sp.diff(L, vel[i], vel[j]))
    V = -L.subs({model.hd: 0, model.ad: 0})

    def force(t, q, v):
        rep = {model.h: q[0], model.alpha: q[1], model.hd: v[0], model.ad: v[1]}
        return sp.Matrix([sp.expand(f.xreplace(rep)) for f in forces])

    name = "aeroelastic section" + ("" if equations == "corrected" else f" ({equations} eqs. 45-46)")
    system = LagrangianSystem(name, [h, alpha], M, V,
                              _param_table(p, U, model), ctx, force=force)
    q0 = ctx.asarray(PAPER_INITIAL_STATE["q0"] if q0 is None else q0)
    v0 = ctx.asarray(PAPER_INITIAL_STATE["v0"] if v0 is None else v0)
    return AeroelasticSection(system, U, p, q0, v0)


# ----- linear stability -----------------------------------------------------------------------

@lru_cache(maxsize=None)
def _linear_pieces(n_stiffness, equations):
    """Sorted parameter keys, their symbols, and the entries of M, K = d2V/dq2 at 0, dF/dq
    and dF/dv at 0 (F is linear in q, v) as sympy expressions in them."""
    model = symbolic_model(n_stiffness)
    s = model.sym
    q, v = (model.h, model.alpha), (model.hd, model.ad)
    L = model.lagrangian
    M = [[sp.diff(L, vi, vj) for vj in v] for vi in v]
    zero = {x: 0 for x in q + v}
    K = [[-sp.diff(L, qi, qj).subs(zero) for qj in q] for qi in q]
    F = [sp.expand(f) for f in model.forces_for(equations)]
    Fq = [[sp.diff(f, qj).subs(zero) for qj in q] for f in F]
    Fv = [[sp.diff(f, vj).subs(zero) for vj in v] for f in F]
    keys = sorted(s)
    exprs = [e for m in (M, K, Fq, Fv) for row in m for e in row]
    return keys, [s[k] for k in keys], exprs


@entry
def linear_matrix(U: NumberLike, ctx: Context, params: Parameters | None = None,
                  equations: str = "corrected") -> Matrix:
    """A(U): the first-order matrix of the equations of motion linearized about q = 0
    (k_alpha(alpha) -> k_alpha0), x' = A x with x = (h, alpha, h', alpha'):

        A = [[0, I], [M^-1 (dF/dq - K), M^-1 (dF/dv)]],

    M the mass matrix, K = diag(k_h, k_alpha0) and F the corrected forces (43)-(44),
    derived symbolically from :func:`symbolic_model` (``equations='printed'``: the printed
    signs of (45)-(46)).  ``U`` may be any positive number of ``ctx`` (or an exact value)."""
    p = section_parameters(params)
    keys, _, _ = _linear_pieces(len(p["k_alpha"]), equations)
    fns = _compiled_linear(len(p["k_alpha"]), equations, ctx)
    table = dict(p)
    for i, k in enumerate(p["k_alpha"]):
        table[f"k_alpha{i}"] = k
    table["U"] = U
    vals = fns([ctx.num(table[k]) for k in keys])
    M, K, Fq, Fv = (np.array(vals[4 * i:4 * i + 4], dtype=ctx.dtype).reshape(2, 2) for i in range(4))
    Minv = ctx.inv(M)
    A = ctx.zeros((4, 4))
    A[0, 2] = A[1, 3] = ctx.one
    A[2:, :2] = Minv @ (Fq - K)
    A[2:, 2:] = Minv @ Fv
    return A


_COMPILED = {}


def _compiled_linear(n_stiffness, equations, ctx):
    key = (n_stiffness, equations, id(ctx))
    if key not in _COMPILED:
        _, symbols, exprs = _linear_pieces(n_stiffness, equations)
        _COMPILED[key] = (ctx, compile_exprs([symbols], exprs, ctx))
    return _COMPILED[key][1]


@entry
def linear_eigenvalues(U: NumberLike, ctx: Context, params: Parameters | None = None,
                       equations: str = "corrected") -> list[Number]:
    """The eigenvalues of :func:`linear_matrix` (complex numbers of ``ctx``)."""
    return ctx.eigvals(linear_matrix(U, ctx, params, equations))


@entry
def max_real_part(U: NumberLike, ctx: Context, params: Parameters | None = None,
                  equations: str = "corrected") -> Real:
    """The largest real part of the eigenvalues of A(U): negative where the origin is
    linearly stable."""
    return max(z.real for z in linear_eigenvalues(U, ctx, params, equations))


class NoFlutterError(ArithmeticError):
    """No crossing of the largest real part through zero in the scanned speed range."""


@entry
def flutter_speed(params: Parameters | None, ctx: Context, U_max: NumberLike = "100",
                  samples: int = 200, equations: str = "corrected") -> tuple[Real, Real]:
    """The linear flutter speed U_f [m/s] and the flutter frequency omega_f [rad/s].

    The largest real part g(U) of the eigenvalues of :func:`linear_matrix` is sampled at
    U = U_max k / samples, k = 1..samples; the first sign change from negative to positive
    brackets U_f, which is then refined by the Illinois (modified regula falsi) method
    until the bracket is a few ulps wide (:func:`mpvi.engines.dense.locate_root`).  omega_f = ``|Im lambda|`` of the eigenvalue
    whose real part crosses zero.  Raises :class:`NoFlutterError` if the origin is
    unstable at the first sample or no crossing lies below U_max.  ``equations='printed'``
    uses the printed signs of (45)-(46) (for comparisons, ERRATA [E51])."""
    U_max = ctx.num(U_max)
    if not U_max > 0 or not isinstance(samples, int) or samples < 2:
        raise ValueError(f"flutter_speed: need U_max > 0 and an integer samples >= 2, got "
                         f"U_max = {ctx.to_str(U_max, 6)}, samples = {samples!r}")

    def g(U):
        return max_real_part(U, ctx, params, equations)

    lo = U_max / samples
    g_lo = g(lo)
    if not g_lo < 0:
        raise NoFlutterError(f"the origin is not linearly stable at U = {ctx.to_str(lo, 6)} m/s "
                             f"(largest real part {ctx.to_str(g_lo, 6)}); no flutter speed "
                             "to find from below")
    for k in range(2, samples + 1):
        hi = U_max * k / samples
        g_hi = g(hi)
        if g_hi >= 0:
            break
        lo = hi
    else:
        raise NoFlutterError(f"the largest real part stays negative up to U_max = "
                             f"{ctx.to_str(U_max, 6)} m/s: no linear flutter below it")
    U_f = locate_root(g, lo, hi, g_lo, g_hi, ctx, 8 * ctx.eps * abs(hi))
    crit = max(linear_eigenvalues(U_f, ctx, params, equations), key=lambda z: z.real)
    return U_f, abs(crit.imag)


__all__ = ["DEFAULT_PARAMETERS", "PAPER_INITIAL_STATE", "AeroelasticSection", "SymbolicModel",
           "NoFlutterError", "aeroelastic_section", "flutter_speed", "linear_eigenvalues",
           "linear_matrix", "max_real_part", "section_parameters", "symbolic_model"]
