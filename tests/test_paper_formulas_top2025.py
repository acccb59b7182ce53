"""Audit of the printed formulas of top2025 (Rojas-Quintero, Dubois, Jourdan, "Simpson
variational integrator for nonlinear systems: a tutorial on the Lagrange top", 2025).

Each printed formula of Sec. 2 (eqs. (3)-(14)), App. A (difference and sum equations,
system (18ar), Newton functions F_{qm,j}, F_{p,j}, F_{q,j} and the nine printed Jacobian
blocks) and App. B (midpoint: L_d, momenta, (18as), F(p, q) and its Jacobian) is typed
here *literally*, and compared at 64 digits with the truth computed independently:

* derivatives of L_d: central finite differences of the printed L_d (eq. (6), itself
  checked against :class:`mpvi.methods.variational.DiscreteLagrangian`) at 160 digits;
* "holds at the solution": one step of ``mpvi.solve(..., "simpson" | "midpoint")``
  gives (q_m, p, q); a printed equation must vanish there, relative to its largest term;
* printed Jacobian blocks: central finite differences at 160 digits of the printed F
  (and of the corrected F when the printed F is wrong).

A correct formula is asserted to agree to <= 1e-50; a wrong one is asserted to DISAGREE
(> 1e-10 relative) *and* its correction to agree to <= 1e-50.  The verdicts are written up
in the errata (tags [E20]-...).  Symbolic checks (sympy) cover the kinematics of Sec. 2.2,
Sec. 3 (double pendulum) and Sec. 4.1 (top).

Index conventions: dM[g, a, b] = d_g M_ab.  At a point x with a velocity v,
  quad(x, v)[g]   = d_g M_ab(x) v^a v^b,
  C(x, v)[g, d]   = d_g M_ad(x) v^a        (derivative index = row),
  D(x, v)[g, d]   = d_d M_gb(x) v^b = C^T  (derivative index = column),
  d2quad(x, v)[g, d] = d_g d_d M_ab(x) v^a v^b,   K(x) = hess V(x).

Where the extraction has inconsistent indices (e.g. "d_delta M_{alpha delta}(q) g^beta",
which has no free gamma), the "literal" reading keeps the printed derivative index:
d_delta M_{gamma beta} g^beta = D; the correct term is d_gamma M_{alpha delta} g^alpha = C.

Run as a script to print the measured numbers used in the errata.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from mpvi import MPContext, Problem, solve
from mpvi.methods.variational import MIDPOINT, SIMPSON, DiscreteLagrangian
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top

DPS, DPS_FD = 64, 160
FD_EPS = "1e-50"            # central differences at 160 digits: error ~1e-100
AGREE = 1e-50
DISAGREE = 1e-10

CTX = MPContext(DPS)
CTX_FD = MPContext(DPS_FD)


# ----- the two test systems (built at 64 and at 160 digits) ---------------------------

def _top(ctx):
    return table3_top(ctx)


def _pendulum(ctx):
    return nonlinear_double_pendulum(ctx)


class Case:
    """A system, a step h, the problem from (q0, p0) and one step of each scheme, at 64
    digits, plus the same system at 160 digits for finite differences."""

    def __init__(self, name, make, h, qdot0):
        self.name = name
        obj = make(CTX)
        self.sys = obj.system
        self.sys_fd = make(CTX_FD).system
        self.h = CTX.num(h)
        self.h_fd = CTX_FD.num(h)
        self.q0 = obj.q0
        self.p0 = self.sys.momentum(self.q0, CTX.asarray(qdot0))
        self.problem = Problem(self.sys, self.q0, p0=self.p0)
        n = self.sys.dof
        sol = solve(self.problem, "simpson", h=self.h, n=1)
        self.simpson = dict(ql=sol.q[0], pj=sol.p[0], qm=sol.internal[0, 0], p=sol.p[1], q=sol.q[1])
        sol = solve(self.problem, "midpoint", h=self.h, n=1)
        self.midpoint = dict(ql=sol.q[0], pj=sol.p[0], p=sol.p[1], q=sol.q[1])
        # a generic point (not a solution) for identities and Jacobians
        off = [CTX.num(x) for x in ("0.0123", "-0.0217", "0.0171")][:n]
        s = self.simpson
        self.generic = dict(ql=s["ql"], pj=s["pj"] + np.array(off, dtype=object)[::-1] * 3,
                            qm=s["qm"] + np.array(off, dtype=object),
                            p=s["p"] - np.array(off, dtype=object) * 2,
                            q=s["q"] + np.array(off, dtype=object)[::-1])


CASES = {}


def get_case(name):
    if name not in CASES:
        if name == "top":
            # Table 3 top (q0 = (0, pi/3, 0)), h = 0.05 s (the paper's largest step in
            # Sec. 4.2), with a nonzero nutation rate (Table 3 has theta'0 = 0, which makes
            # theta(t) - theta0 = O(t^2) and hides O(h) terms in the first step)
            CASES[name] = Case(name, _top, "0.05", ("9.2", "2", "252"))
        else:
            # Sec. 3 double pendulum, Table 1 q0 = (pi/4, pi/3), q'0 = (1.5, -2) rad/s
            # (Table 1 has p0 = 0), h = 0.1 s (Sec. 3.2)
            CASES[name] = Case(name, _pendulum, "0.1", ("1.5", "-2"))
    return CASES[name]


@pytest.fixture(params=["top", "pendulum"], scope="module")
def case(request):
    return get_case(request.param)


# ----- helpers ----------------------------------------------------------------------------

def inf(a):
    return max((abs(x) for x in np.ravel(a)), default=CTX.zero)


def acc(*terms):
    """(sum, scale): the sum of the terms and the largest term (for relative residuals)."""
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total, max(inf(t) for t in terms)


def rel(a, b):
    """max|a - b| / max|b| (absolute if b = 0)."""
    d, s = inf(np.asarray(a) - np.asarray(b)), inf(b)
    return d / s if s else d


def resid(pair):
    value, scale = pair
    return inf(value) / scale


def to_ctx(x, ctx):
    """``x`` in ``ctx``: a 64-digit point taken exactly, as it is, into the 160-digit context
    of the finite differences (``lift``: its bits are the point), or a 160-digit result
    rounded to 64 digits."""
    return np.array([ctx.lift(v) for v in np.ravel(x)], dtype=object).reshape(np.shape(x))


class Pieces:
    """Mass-matrix derivatives of one system, contracted as in the module doc."""

    def __init__(self, sys):
        self.sys = sys
        self.n = sys.dof

    def M(self, x):
        return self.sys.mass(x)

    def dV(self, x):
        return self.sys.grad_potential(x)

    def K(self, x):
        return self.sys.hess_potential(x)

    def V(self, x):
        return self.sys.potential(x)

    def quad(self, x, v):
        dM = self.sys.dmass(x)
        return np.array([v @ dM[g] @ v for g in range(self.n)], dtype=object)

    def C(self, x, v):
        dM = self.sys.dmass(x)
        return np.array([v @ dM[g] for g in range(self.n)], dtype=object)

    def D(self, x, v):
        return self.C(x, v).T

    def d2quad(self, x, v):
        d2M = self.sys.d2mass(x)
        n = self.n
        return np.array([[v @ d2M[g, d] @ v for d in range(n)] for g in range(n)], dtype=object)


# ----- Simpson: the printed formulas ------------------------------------------------------

def gear(h, ql, qm, q):
    """Gear velocities (Sec. 2.2): g_l, g_m, g."""
    return (-3 * ql + 4 * qm - q) / h, (q - ql) / h, (ql - 4 * qm + 3 * q) / h


class Simpson:
    """The printed Simpson formulas at points (q_l, q_m, q) for one system and step h."""

    def __init__(self, sys, h):
        self.P, self.h = Pieces(sys), h

    def at(self, ql, qm, q):
        P, h = self.P, self.h
        gl, gm, g = gear(h, ql, qm, q)
        return dict(ql=ql, qm=qm, q=q, gl=gl, gm=gm, g=g, Ml=P.M(ql), Mm=P.M(qm), Mr=P.M(q),
                    Ql=P.quad(ql, gl), Qm=P.quad(qm, gm), Qr=P.quad(q, g),
                    dVl=P.dV(ql), dVm=P.dV(qm), dVr=P.dV(q))

    # eq. (6)
    def Ld(self, ql, qm, q):
        P, h = self.P, self.h
        gl, gm, g = gear(h, ql, qm, q)
        kin = (gl @ P.M(ql) @ gl) / 6 + 2 * (gm @ P.M(qm) @ gm) / 3 + (g @ P.M(q) @ g) / 6
        pot = P.V(ql) / 6 + 2 * P.V(qm) / 3 + P.V(q) / 6
        return h / 2 * kin - h * pot

    # eq. (8), printed
    def eq8(self, ql, qm, q):
        s, h = self.at(ql, qm, q), self.h
        return acc(s["Ml"] @ s["gl"] / 3, -(s["Mr"] @ s["g"]) / 3, h / 6 * s["Qm"],
                   -h / 3 * s["dVm"])

    # eq. (10), printed right-hand side
    def eq10(self, ql, qm, q):
        s, h = self.at(ql, qm, q), self.h
        return acc(-(s["Ml"] @ s["gl"]) / 6, 2 * (s["Mm"] @ s["gm"]) / 3, s["Mr"] @ s["g"] / 2,
                   h / 12 * s["Qr"], -h / 6 * s["dVr"])

    # eq. (11), printed right-hand side
    def eq11(self, ql, qm, q):
        s, h = self.at(ql, qm, q), self.h
        return acc(s["Ml"] @ s["gl"] / 6, 2 * (s["Mm"] @ s["gm"]) / 3, s["Mr"] @ s["g"] / 6,
                   h / 6 * s["Qm"], h / 12 * s["Qr"], -h / 3 * s["dVm"], -h / 6 * s["dVr"])

    # App. A "difference": p_{j+1} - p_j - RHS
    def difference(self, ql, qm, q, pj, p):
        s, h = self.at(ql, qm, q), self.h
        return acc(p, -pj, -h / 12 * s["Ql"], -h / 3 * s["Qm"], -h / 12 * s["Qr"],
                   h / 6 * s["dVl"], 2 * h / 3 * s["dVm"], h / 6 * s["dVr"])

    # App. A "sum": p_{j+1} + p_j - RHS, printed (coefficients 2/3, 4/3, 2/3)
    def sum_printed(self, ql, qm, q, pj, p, third=2):
        """Printed: third = 2 (2/3 M(q_l) g_l, 2/3 M(q) g); corrected: third = 1."""
        s, h = self.at(ql, qm, q), self.h
        c = third * (h / h) / 3
        return acc(p, pj, -c * (s["Ml"] @ s["gl"]), -4 * (s["Mm"] @ s["gm"]) / 3,
                   -c * (s["Mr"] @ s["g"]), h / 12 * s["Ql"], -h / 12 * s["Qr"],
                   -h / 6 * s["dVl"], h / 6 * s["dVr"])

    def sum_corrected(self, ql, qm, q, pj, p):
        return self.sum_printed(ql, qm, q, pj, p, third=1)

    # (18ara)
    def r18a(self, ql, qm, q):
        s, h = self.at(ql, qm, q), self.h
        return acc(s["Mr"] @ s["g"], -(s["Ml"] @ s["gl"]), -h / 2 * s["Qm"], h * s["dVm"])

    # (18arb)
    def r18b(self, ql, qm, q, pj, p):
        s, h = self.at(ql, qm, q), self.h
        return acc(p, -pj, h / 6 * s["dVl"], 2 * h / 3 * s["dVm"], h / 6 * s["dVr"],
                   -h / 12 * s["Ql"], -h / 3 * s["Qm"], -h / 12 * s["Qr"])

    # (18arc), printed (k = 1); corrected: the h-terms halved (k = 1/2)
    def r18c(self, ql, qm, q, pj, p, k=1):
        s, h = self.at(ql, qm, q), self.h
        return acc(s["Ml"] @ s["gl"] / 6, 2 * (s["Mm"] @ s["gm"]) / 3, s["Mr"] @ s["g"] / 6,
                   -(p + pj) / 2, -k * h / 12 * s["Ql"], k * h / 12 * s["Qr"],
                   k * h / 6 * s["dVl"], -k * h / 6 * s["dVr"])

    # Newton functions, printed
    def F_qm(self, ql, qm, q, pj, p):
        s, h = self.at(ql, qm, q), self.h
        return acc(h * (s["Mr"] @ s["g"]), -h * (s["Ml"] @ s["gl"]), h * h * s["dVm"],
                   -h * h / 2 * s["Qm"])

    def F_p(self, ql, qm, q, pj, p):
        s, h = self.at(ql, qm, q), self.h
        return acc(h * (p - pj), h * h * (s["dVl"] / 6 + 2 * s["dVm"] / 3 + s["dVr"] / 6),
                   -h * h / 2 * (s["Ql"] / 6 + 2 * s["Qm"] / 3 + s["Qr"] / 6))

    def F_q(self, ql, qm, q, pj, p, k=1):
        """Printed F_{q,j} (k = 1); corrected (k = 1/2: h^2/24 and h^2/12)."""
        s, h = self.at(ql, qm, q), self.h
        return acc(h * (s["Ml"] @ s["gl"] / 6 + 2 * (s["Mm"] @ s["gm"]) / 3 + s["Mr"] @ s["g"] / 6),
                   -h / 2 * (p + pj), -k * h * h / 12 * s["Ql"], k * h * h / 12 * s["Qr"],
                   k * h * h / 6 * s["dVl"], -k * h * h / 6 * s["dVr"])

    def F_q_corrected(self, ql, qm, q, pj, p):
        return self.F_q(ql, qm, q, pj, p, k=self.h / self.h / 2)

    # the nine printed Jacobian blocks (rows F_qm, F_p, F_q; columns q_m, p, q)
    def jacobian_printed(self, ql, qm, q, pj, p, fix=()):
        """Printed blocks B[row, col], literal reading.  Blocks are numbered 1..9 row-major
        in the paper's order: 3 = (1,3) dF_qm/dq, 7 = (3,1) dF_q/dq_m, 8 = (3,2) dF_q/dp,
        9 = (3,3) dF_q/dq.  ``fix`` names the corrections to apply: '3' (last term at
        (q, g), not (q_m, g_m)), '7' and '9' (index garbles d_delta M_{alpha delta} g^beta
        -> d_gamma M_{alpha delta} g^alpha), '8' (-h/2 instead of -1/2)."""
        P, h = self.P, self.h
        n = P.n
        gl, gm, g = gear(h, ql, qm, q)
        Ml, Mm, Mr = P.M(ql), P.M(qm), P.M(q)
        Cl, Cm, Cr = P.C(ql, gl), P.C(qm, gm), P.C(q, g)
        Dm, Dr = Cm.T, Cr.T
        I = np.identity(n, dtype=object) * (h / h)
        Z = I * 0
        B = {}
        B[1, 1] = -4 * (Mr + Ml) + h * h * P.K(qm) - h * h / 2 * P.d2quad(qm, gm)
        B[1, 2] = Z
        B[1, 3] = Ml + 3 * Mr - h * Cm + h * (Dr if "3" in fix else Dm)
        B[2, 1] = (-2 * h / 3 * Cl + 2 * h / 3 * Cr - h * h / 3 * P.d2quad(qm, gm).T
                   + 2 * h * h / 3 * P.K(qm).T)
        B[2, 2] = h * I
        B[2, 3] = (h / 6 * Cl - 2 * h / 3 * Cm - h / 2 * Cr - h * h / 12 * P.d2quad(q, g).T
                   + h * h / 6 * P.K(q).T)
        garb_l, garb_r = (Cl, Cr) if "7" in fix else (P.D(ql, gl), Dr)
        B[3, 1] = 2 * (Ml - Mr) / 3 + 2 * h / 3 * Dm - h / 3 * garb_l - h / 3 * garb_r
        B[3, 2] = (-h / 2 if "8" in fix else -(h / h) / 2) * I
        B[3, 3] = (-Ml / 6 + 2 * Mm / 3 + Mr / 2 + h * h / 24 * P.d2quad(q, g).T - h * h / 12 * P.K(q)
                   + h / 6 * Dr + h / 12 * Cl + h / 4 * (Cr if "9" in fix else Dr))
        return B

    def jacobian_corrected(self, *args):
        """The printed blocks with the four corrections: the exact Jacobian of
        (F_qm, F_p, corrected F_q)."""
        return self.jacobian_printed(*args, fix=("3", "7", "8", "9"))

    def jacobian_exact(self, ql, qm, q, pj, p, k):
        """Exact Jacobian of (F_qm, F_p, F_q(k)) (k = 1: printed F_q; k = 1/2: corrected),
        derived here: the F_q row's h-terms scale with 2k."""
        B = self.jacobian_corrected(ql, qm, q, pj, p)
        P, h = self.P, self.h
        gl, gm, g = gear(h, ql, qm, q)
        Cl, Cr = P.C(ql, gl), P.C(q, g)
        B[3, 1] = 2 * (P.M(ql) - P.M(q)) / 3 + 2 * h / 3 * P.D(qm, gm) - 2 * k * h / 3 * (Cl + Cr)
        B[3, 3] = (-P.M(ql) / 6 + 2 * P.M(qm) / 3 + P.M(q) / 2 + h / 6 * Cr.T
                   + k * (h * h / 12 * P.d2quad(q, g).T - h * h / 6 * P.K(q) + h / 6 * Cl + h / 2 * Cr))
        return B


def fd_grad(f, x, ctx_fd=CTX_FD, eps=FD_EPS):
    """Central-difference gradient of a scalar f at x (both in ctx_fd)."""
    e = ctx_fd.num(eps)
    out = []
    for i in range(len(x)):
        dx = np.array([ctx_fd.zero] * len(x), dtype=object)
        dx[i] = e
        out.append((f(x + dx) - f(x - dx)) / (2 * e))
    return np.array(out, dtype=object)


def fd_jac(f, x, ctx_fd=CTX_FD, eps=FD_EPS):
    """Central-difference Jacobian [i, j] = d f_i / d x_j of a vector f at x."""
    e = ctx_fd.num(eps)
    cols = []
    for j in range(len(x)):
        dx = np.array([ctx_fd.zero] * len(x), dtype=object)
        dx[j] = e
        cols.append((f(x + dx) - f(x - dx)) / (2 * e))
    return np.array(cols, dtype=object).T


VARS = {1: "qm", 2: "p", 3: "q"}


def simpson_fd_blocks(case, fname, point, fkw=None):
    """FD at 160 digits of the Simpson function ``fname`` (a method of :class:`Simpson`)
    w.r.t. q_m, p, q at ``point``; returned at 64 digits, keyed (row, col)."""
    S_fd = Simpson(case.sys_fd, case.h_fd)
    pt = {k: to_ctx(v, CTX_FD) for k, v in point.items()}
    fun = getattr(S_fd, fname)
    blocks = {}
    for col, var in VARS.items():
        def f(x, var=var):
            args = dict(pt)
            args[var] = x
            return fun(args["ql"], args["qm"], args["q"], args["pj"], args["p"], **(fkw or {}))[0]
        blocks[col] = to_ctx(fd_jac(f, pt[var], CTX_FD), CTX)
    return blocks


ROW_F = {1: "F_qm", 2: "F_p", 3: "F_q"}


# ===== Sec. 2.2: interpolation, Gear velocities, eq. (5) (symbolic) ========================

def test_sec22_basis_and_gear_velocities():
    th, h, ql, qm, q = sp.symbols("theta h q_l q_m q")
    phi0, phim, phi1 = (1 - th) * (1 - 2 * th), 4 * th * (1 - th), th * (2 * th - 1)   # (3)
    qt = phi0 * ql + phim * qm + phi1 * q                                             # (4)
    assert [e.subs(th, t) for e in (qt,) for t in (0, sp.Rational(1, 2), 1)] == [ql, qm, q]
    dq = sp.diff(qt, th) / h
    printed_dq = ((4 * th - 3) * ql + 4 * (1 - 2 * th) * qm + (4 * th - 1) * q) / h
    gl, gm, g = gear(h, ql, qm, q)
    assert sp.simplify(dq - printed_dq) == 0
    assert sp.simplify(dq - ((1 - th) * gl + th * g)) == 0
    assert [sp.simplify(dq.subs(th, t) - v) for t, v in ((0, gl), (sp.Rational(1, 2), gm), (1, g))] == [0, 0, 0]
    # eq. (5): Simpson's rule, exact on cubics in t = theta h
    t = sp.Symbol("t")
    f = 1 + 2 * t - 3 * t ** 2 + 5 * t ** 3
    assert sp.simplify(sp.integrate(f, (t, 0, h)) - h / 6 * (f.subs(t, 0) + 4 * f.subs(t, h / 2) + f.subs(t, h))) == 0


# ===== eq. (6) and the derivatives of L_d (8), (10), (11), (13), (14) ========================

def test_eq6_discrete_lagrangian(case):
    """Printed L_d (6) = h sum w_k L(x_k, g_k) of the library."""
    S = Simpson(case.sys, case.h)
    Ld = DiscreteLagrangian(case.sys, SIMPSON, case.h, CTX)
    pt = case.generic
    a = S.Ld(pt["ql"], pt["qm"], pt["q"])
    b = Ld.value([pt["ql"], pt["qm"], pt["q"]])
    assert abs(a - b) <= AGREE * abs(b)


def _grad_Ld(case, pt, which):
    """dL_d/d(q_l | q_m | q) by central FD of the printed (6) at 160 digits."""
    S_fd = Simpson(case.sys_fd, case.h_fd)
    P = {k: to_ctx(pt[k], CTX_FD) for k in ("ql", "qm", "q")}

    def f(x):
        a = dict(P)
        a[which] = x
        return S_fd.Ld(a["ql"], a["qm"], a["q"])
    return to_ctx(fd_grad(f, P[which]), CTX)


def test_eq8_is_half_the_gradient(case):
    """(8) printed = 1/2 dL_d/dq_m (harmless: it is set to zero)."""
    S, pt = Simpson(case.sys, case.h), case.generic
    truth = _grad_Ld(case, pt, "qm")
    printed = S.eq8(pt["ql"], pt["qm"], pt["q"])[0]
    assert rel(printed, truth) > DISAGREE
    assert rel(2 * printed, truth) <= AGREE
    # the library's exact gradient agrees with FD as well
    lib = DiscreteLagrangian(case.sys, SIMPSON, case.h, CTX).gradient([pt["ql"], pt["qm"], pt["q"]])
    assert rel(lib[1], truth) <= AGREE


def test_eq10_and_eq14_right_momentum(case):
    S, pt = Simpson(case.sys, case.h), case.generic
    truth = _grad_Ld(case, pt, "q")
    assert rel(S.eq10(pt["ql"], pt["qm"], pt["q"])[0], truth) <= AGREE
    # (14) at the scheme's solution: p_{j+1} = dL_d/dq_r
    s = case.simpson
    assert rel(s["p"], _grad_Ld(case, s, "q")) <= AGREE
    assert rel(S.eq10(s["ql"], s["qm"], s["q"])[0], s["p"]) <= AGREE


def test_eq11_is_eq10_plus_half_the_gradient(case):
    """(11) = (10) + 1/2 dL_d/dq_m = (10) + 1 x printed (8).  The text's 'adding half of
    (8)' is right for the true dL_d/dq_m, i.e. confirms (8) is printed halved."""
    S, pt = Simpson(case.sys, case.h), case.generic
    args = (pt["ql"], pt["qm"], pt["q"])
    d = S.eq11(*args)[0] - S.eq10(*args)[0]
    gm = _grad_Ld(case, pt, "qm")
    assert rel(d, gm / 2) <= AGREE
    assert rel(d, S.eq8(*args)[0]) <= AGREE
    assert rel(d, S.eq8(*args)[0] / 2) > DISAGREE
    # at the solution (11) is p_{j+1}
    s = case.simpson
    assert rel(S.eq11(s["ql"], s["qm"], s["q"])[0], s["p"]) <= AGREE


def test_eq13_left_momentum(case):
    s = case.simpson
    assert rel(-_grad_Ld(case, s, "ql"), s["pj"]) <= AGREE
    # and the internal equation (8) holds at the solution
    assert resid(Simpson(case.sys, case.h).eq8(s["ql"], s["qm"], s["q"])) <= AGREE


def test_eq9_discrete_euler_lagrange_two_steps(case):
    """(9) = (12): dL_d/dq_r(q_j-1, q_j-1/2, q_j) + dL_d/dq_l(q_j, q_j+1/2, q_j+1) = 0 on
    two steps of the scheme."""
    sol = solve(case.problem, "simpson", h=case.h, n=2)
    first = dict(ql=sol.q[0], qm=sol.internal[0, 0], q=sol.q[1])
    second = dict(ql=sol.q[1], qm=sol.internal[1, 0], q=sol.q[2])
    a, b = _grad_Ld(case, first, "q"), _grad_Ld(case, second, "ql")
    assert inf(a + b) <= AGREE * inf(a)


# ===== App. A: difference, sum, (18ar), Newton functions at the solution =================

def _at_solution(case, fname, **kw):
    s = case.simpson
    return resid(getattr(Simpson(case.sys, case.h), fname)(s["ql"], s["qm"], s["q"], s["pj"], s["p"], **kw))


def test_appA_difference_holds(case):
    assert _at_solution(case, "difference") <= AGREE


def test_appA_sum_printed_wrong(case):
    """Printed sum has 2/3 M(q_j) g_j and 2/3 M(q_j+1) g_j+1; correct: 1/3 each."""
    assert _at_solution(case, "sum_printed") > DISAGREE
    assert _at_solution(case, "sum_corrected") <= AGREE
    # the corrected sum is an identity (p_j+1 + p_j = dL_d/dq_r - dL_d/dq_l), not only at the solution
    S, pt = Simpson(case.sys, case.h), case.generic
    lhs_minus_rhs, _ = S.sum_corrected(pt["ql"], pt["qm"], pt["q"], pt["pj"] * 0, pt["p"] * 0)
    truth = _grad_Ld(case, pt, "q") - _grad_Ld(case, pt, "ql")
    assert rel(-lhs_minus_rhs, truth) <= AGREE


def test_appA_18ar(case):
    s = case.simpson
    S = Simpson(case.sys, case.h)
    assert resid(S.r18a(s["ql"], s["qm"], s["q"])) <= AGREE
    assert _at_solution(case, "r18b") <= AGREE
    assert _at_solution(case, "r18c") > DISAGREE                          # printed
    assert _at_solution(case, "r18c", k=CTX.one / 2) <= AGREE             # h-terms halved
    # (18ara) = -3/2 dL_d/dq_m identically
    pt = case.generic
    assert rel(S.r18a(pt["ql"], pt["qm"], pt["q"])[0], -3 * _grad_Ld(case, pt, "qm") / 2) <= AGREE


def test_appA_newton_functions_at_solution(case):
    assert _at_solution(case, "F_qm") <= AGREE
    assert _at_solution(case, "F_p") <= AGREE
    assert _at_solution(case, "F_q") > DISAGREE
    assert _at_solution(case, "F_q_corrected") <= AGREE


# ===== App. A: the nine printed Jacobian blocks ==========================================

CORRECT_BLOCKS = [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3)]
WRONG_BLOCKS = [(1, 3), (3, 1), (3, 2), (3, 3)]


def _blocks(case):
    pt = case.generic
    S = Simpson(case.sys, case.h)
    args = (pt["ql"], pt["qm"], pt["q"], pt["pj"], pt["p"])
    printed = S.jacobian_printed(*args)
    corrected = S.jacobian_corrected(*args)
    fd = {r: simpson_fd_blocks(case, ROW_F[r], pt) for r in (1, 2, 3)}
    fd_corr = simpson_fd_blocks(case, "F_q", pt, dict(k=CTX_FD.one / 2))
    return printed, corrected, fd, fd_corr


@pytest.fixture(scope="module")
def blocks():
    return {name: _blocks(get_case(name)) for name in ("top", "pendulum")}


@pytest.mark.parametrize("rc", CORRECT_BLOCKS)
def test_appA_jacobian_correct_blocks(blocks, case, rc):
    printed, _, fd, _ = blocks[case.name]
    r, c = rc
    assert rel(printed[rc], fd[r][c]) <= AGREE


def test_appA_jacobian_block_Fqm_q(blocks, case):
    """dF_qm/dq: last term printed h d_d M_gb(q_m) g_m^b; correct h d_d M_gb(q) g^b."""
    printed, corrected, fd, _ = blocks[case.name]
    assert rel(printed[1, 3], fd[1][3]) > DISAGREE
    assert rel(corrected[1, 3], fd[1][3]) <= AGREE


def test_appA_jacobian_Fq_blocks(blocks, case):
    """The F_q row: printed blocks vs FD of the printed F_q and of the corrected F_q."""
    printed, corrected, fd, fd_corr = blocks[case.name]
    for c in (1, 2, 3):
        assert rel(printed[3, c], fd[3][c]) > DISAGREE          # vs printed F_q
        assert rel(printed[3, c], fd_corr[c]) > DISAGREE        # vs corrected F_q
        assert rel(corrected[3, c], fd_corr[c]) <= AGREE
    # the coefficients of blocks (3,1) and (3,3) were derived from the corrected F_q
    # (h^2/24, h^2/12): fixing only the index garbles is enough; dF_q/dp needs -h/2
    S, pt = Simpson(case.sys, case.h), case.generic
    J7 = S.jacobian_printed(pt["ql"], pt["qm"], pt["q"], pt["pj"], pt["p"], fix=("7", "9"))
    assert rel(J7[3, 1], fd_corr[1]) <= AGREE and rel(J7[3, 3], fd_corr[3]) <= AGREE
    assert rel(J7[3, 1], fd[3][1]) > DISAGREE and rel(J7[3, 3], fd[3][3]) > DISAGREE
    # dF_q/dp: FD gives -h/2 I for either F_q; printed -1/2 I
    assert rel(fd[3][2], -case.h / 2 * np.identity(case.sys.dof, dtype=object)) <= AGREE
    # our exact Jacobian of the printed F_q (k = 1) agrees with FD of the printed F_q
    Jp = S.jacobian_exact(pt["ql"], pt["qm"], pt["q"], pt["pj"], pt["p"], k=CTX.one)
    for c in (1, 2, 3):
        assert rel(Jp[3, c], fd[3][c]) <= AGREE


# ===== Newton with the printed pieces =====================================================

def newton_simpson(case, F_rows, J, x0, h=None, tol=1e-60, max_iter=60, hist=None):
    """Newton on X = (q_m, p, q) with residual rows ``F_rows`` (method names) and Jacobian
    builder ``J(args) -> blocks``.  Returns (X, iterations) or (X, None) if it fails."""
    h = case.h if h is None else h
    S = Simpson(case.sys, h)
    s = case.simpson
    n = case.sys.dof
    x = x0.copy()
    for it in range(1, max_iter + 1):
        qm, p, q = x[:n], x[n:2 * n], x[2 * n:]
        args = (s["ql"], qm, q, s["pj"], p)
        r = np.concatenate([getattr(S, f)(*args)[0] for f in F_rows])
        B = J(S, args)
        JJ = np.block([[B[i, j] for j in (1, 2, 3)] for i in (1, 2, 3)])
        try:
            dx = CTX.solve(JJ, -r)
        except ArithmeticError:
            return x, None
        x = x + dx
        d = inf(dx)
        if hist is not None:
            hist.append(d)
        if not CTX.isfinite(d) or d > 1e6:
            return x, None
        if d <= tol * max(inf(x), 1):
            return x, it
    return x, None


def _guess(case, h=None):
    """The library's start: q_m, q from the velocity M^-1 p_j, p = p_j."""
    h = case.h if h is None else h
    s = case.simpson
    v = case.sys.velocity(s["ql"], s["pj"])
    return np.concatenate([s["ql"] + v * h / 2, s["pj"], s["ql"] + v * h])


def _paper_guess(case):
    s = case.simpson
    return np.concatenate([s["ql"], s["pj"], s["ql"]])


FIXED = ("F_qm", "F_p", "F_q_corrected")
PRINTED = ("F_qm", "F_p", "F_q")


def test_newton_with_printed_jacobian(case):
    """With the corrected F, Newton with the corrected Jacobian converges quadratically
    (<= 8 iterations to 1e-60) to the scheme's solution, from the library's start and from
    the paper's (q_j, p_j, q_j).  The printed blocks (1,3), (3,1), (3,3) (O(h) errors) only
    make it linear (>= 19 iterations); the printed dF_q/dp = -1/2 (instead of -h/2) makes
    it crawl (rate ~0.6, not converged after 25 iterations)."""
    s = case.simpson
    sol = np.concatenate([s["qm"], s["p"], s["q"]])
    for x0 in (_guess(case), _paper_guess(case)):
        xc, nc = newton_simpson(case, FIXED, lambda S, a: S.jacobian_corrected(*a), x0)
        assert nc is not None and nc <= 8 and rel(xc, sol) <= AGREE
    x0 = _guess(case)
    xa, na = newton_simpson(case, FIXED, lambda S, a: S.jacobian_printed(*a, fix=("8",)), x0)
    assert na is not None and na >= 19 and rel(xa, sol) <= AGREE
    xb, nb = newton_simpson(case, FIXED, lambda S, a: S.jacobian_printed(*a), x0, max_iter=25)
    assert nb is None and rel(xb, sol) > 1e-40
    # the printed F with its own exact Jacobian: quadratic convergence, to another point
    xp, np_ = newton_simpson(case, PRINTED, lambda S, a: S.jacobian_exact(*a, k=CTX.one), x0)
    assert np_ is not None and np_ <= 8 and rel(xp, sol) > DISAGREE


def test_printed_Fq_changes_the_solution_and_order(case):
    """The printed F_q = 0 is another (consistent) scheme: its step differs from the
    Simpson step by O(h^3) (local), i.e. the scheme would be second order, not fourth."""
    diffs = []
    for k in (1, 2, 4):
        h = case.h / k
        sol = solve(case.problem, "simpson", h=h, n=1)
        x, n_it = newton_simpson(case, PRINTED, lambda S, a: S.jacobian_exact(*a, k=CTX.one),
                                 _guess(case, h), h=h)
        assert n_it is not None
        diffs.append(inf(x[-case.sys.dof:] - sol.q[1]))
    r1, r2 = diffs[0] / diffs[1], diffs[1] / diffs[2]
    assert diffs[2] > 1e-12
    # local order 3: ratio 2^3 = 8 per halving (measured 6.9-7.9)
    assert 6.5 < r1 < 9.5 and 6.5 < r2 < 9.5, (r1, r2)


def _printed_scheme_run(case, h, N):
    """N steps of the scheme F_qm = F_p = printed F_q = 0 (Newton, exact Jacobian)."""
    S, n = Simpson(case.sys, h), case.sys.dof
    ql, pj = case.q0, case.p0
    for _ in range(N):
        v = case.sys.velocity(ql, pj)
        x = np.concatenate([ql + v * h / 2, pj, ql + v * h])
        for _ in range(30):
            qm, p, q = x[:n], x[n:2 * n], x[2 * n:]
            a = (ql, qm, q, pj, p)
            r = np.concatenate([S.F_qm(*a)[0], S.F_p(*a)[0], S.F_q(*a)[0]])
            B = S.jacobian_exact(*a, k=CTX.one)
            dx = CTX.solve(np.block([[B[i, j] for j in (1, 2, 3)] for i in (1, 2, 3)]), -r)
            x = x + dx
            if inf(dx) < 1e-55:
                break
        ql, pj = x[2 * n:], x[n:2 * n]
    return ql


def test_printed_Fq_scheme_is_second_order():
    """Global: over T = 0.4 s (pendulum) the printed-F_q scheme converges with order 2,
    the library's Simpson with order 4 (reference: Simpson with 128 steps)."""
    case = get_case("pendulum")
    T = CTX.num("0.4")
    ref = solve(case.problem, "simpson", h=T / 128, n=128).q[-1]
    e_pr, e_si = [], []
    for N in (8, 16):
        e_pr.append(inf(_printed_scheme_run(case, T / N, N) - ref))
        e_si.append(inf(solve(case.problem, "simpson", h=T / N, n=N).q[-1] - ref))
    order_pr = CTX.log(e_pr[0] / e_pr[1]) / CTX.log(2)
    order_si = CTX.log(e_si[0] / e_si[1]) / CTX.log(2)
    assert 1.8 < order_pr < 2.2, order_pr
    assert 3.8 < order_si < 4.2, order_si


# ===== App. B: implicit midpoint ============================================================

class Midpoint:
    def __init__(self, sys, h):
        self.P, self.h = Pieces(sys), h

    def Ld(self, ql, q):
        P, h = self.P, self.h
        g, qm = (q - ql) / h, (ql + q) / 2
        return h / 2 * (g @ P.M(qm) @ g) - h * P.V(qm)

    def parts(self, ql, q):
        P, h = self.P, self.h
        g, qm = (q - ql) / h, (ql + q) / 2
        return g, qm, P.M(qm), P.quad(qm, g), P.dV(qm)

    def difference(self, ql, q, pj, p):
        g, qm, M, Q, dV = self.parts(ql, q)
        return acc(p, -pj, -self.h / 2 * Q, self.h * dV)

    def sum(self, ql, q, pj, p):
        g, qm, M, Q, dV = self.parts(ql, q)
        return acc(p, pj, -2 * (M @ g))

    def a18(self, ql, q, pj, p):
        g, qm, M, Q, dV = self.parts(ql, q)
        return acc((p - pj) / self.h, -Q / 2, dV)

    def b18(self, ql, q, pj, p):
        g, qm, M, Q, dV = self.parts(ql, q)
        return acc(M @ (q - ql) / self.h, -(p + pj) / 2)

    def F_p(self, ql, q, pj, p):
        g, qm, M, Q, dV = self.parts(ql, q)
        return acc(p - pj, -self.h / 2 * Q, self.h * dV)

    def F_q(self, ql, q, pj, p):                      # printed
        return acc(-self.h / 2 * (p + pj))

    def F_q_corrected(self, ql, q, pj, p):
        g, qm, M, Q, dV = self.parts(ql, q)
        return acc(M @ (q - ql), -self.h / 2 * (p + pj))

    def jacobian_printed(self, ql, q, pj, p):
        P, h = self.P, self.h
        g, qm = (q - ql) / h, (ql + q) / 2
        I = np.identity(P.n, dtype=object) * (h / h)
        return {(1, 1): I,
                (1, 2): h / 2 * P.K(qm) - h / 4 * P.d2quad(qm, g) - P.C(qm, g),
                (2, 1): -h / 2 * I,
                (2, 2): P.M(qm) + h / 2 * P.D(qm, g)}


def _mid_fd(case, fname, pt):
    M_fd = Midpoint(case.sys_fd, case.h_fd)
    P = {k: to_ctx(v, CTX_FD) for k, v in pt.items()}
    fun = getattr(M_fd, fname)
    out = {}
    for col, var in ((1, "p"), (2, "q")):
        def f(x, var=var):
            a = dict(P)
            a[var] = x
            return fun(a["ql"], a["q"], a["pj"], a["p"])[0]
        out[col] = to_ctx(fd_jac(f, P[var], CTX_FD), CTX)
    return out


def test_appB_Ld_and_momenta(case):
    m, pt = case.midpoint, case.generic
    Mp = Midpoint(case.sys, case.h)
    lib = DiscreteLagrangian(case.sys, MIDPOINT, case.h, CTX)
    a, b = Mp.Ld(pt["ql"], pt["q"]), lib.value([pt["ql"], pt["q"]])
    assert abs(a - b) <= AGREE * abs(b)
    M_fd = Midpoint(case.sys_fd, case.h_fd)
    ql, q = to_ctx(m["ql"], CTX_FD), to_ctx(m["q"], CTX_FD)
    dl = to_ctx(fd_grad(lambda x: M_fd.Ld(x, q), ql, CTX_FD), CTX)
    dr = to_ctx(fd_grad(lambda x: M_fd.Ld(ql, x), q, CTX_FD), CTX)
    assert rel(-dl, m["pj"]) <= AGREE                    # p_j = -dL_d/dq_l
    assert rel(-dr, m["p"]) > DISAGREE                   # printed p_j+1 = -dL_d/dq_r
    assert rel(dr, m["p"]) <= AGREE                      # correct: +dL_d/dq_r


def test_appB_equations_at_solution(case):
    m = case.midpoint
    Mp = Midpoint(case.sys, case.h)
    a = (m["ql"], m["q"], m["pj"], m["p"])
    for f in ("difference", "sum", "a18", "b18", "F_p", "F_q_corrected"):
        assert resid(getattr(Mp, f)(*a)) <= AGREE, f
    assert inf(Mp.F_q(*a)[0]) / inf(m["p"]) > DISAGREE   # printed F_q = -h/2 (p + p_j)


def test_appB_jacobian(case):
    pt = case.generic
    Mp = Midpoint(case.sys, case.h)
    J = Mp.jacobian_printed(pt["ql"], pt["q"], pt["pj"], pt["p"])
    fp_ = _mid_fd(case, "F_p", pt)
    fq = _mid_fd(case, "F_q", pt)
    fqc = _mid_fd(case, "F_q_corrected", pt)
    assert rel(J[1, 1], fp_[1]) <= AGREE
    assert rel(J[1, 2], fp_[2]) <= AGREE
    assert rel(J[2, 1], fq[1]) <= AGREE and rel(J[2, 1], fqc[1]) <= AGREE
    assert inf(fq[2]) == 0 and inf(J[2, 2]) > DISAGREE    # vs printed F_q: d/dq = 0
    assert rel(J[2, 2], fqc[2]) <= AGREE                   # vs corrected F_q


# ===== Sec. 2.1 eq. (2), Sec. 3 and Sec. 4.1 (symbolic) ====================================

def test_eq2_motion_equation_symbolic():
    """Eq. (2) = Euler-Lagrange of (1), for the top's M(q), V(q)."""
    t = sp.Symbol("t")
    I, I3, mgl = sp.symbols("I I3 mgl", positive=True)
    qs = [sp.Function(nm)(t) for nm in ("phi", "theta", "psi")]
    th = qs[1]
    M = sp.Matrix([[I * sp.sin(th) ** 2 + I3 * sp.cos(th) ** 2, 0, I3 * sp.cos(th)],
                   [0, I, 0], [I3 * sp.cos(th), 0, I3]])
    V = mgl * sp.cos(th)
    qd = sp.Matrix([sp.diff(x, t) for x in qs])
    L = (qd.T * M * qd)[0] / 2 - V
    EL = sp.Matrix([sp.diff(sp.diff(L, qd[i]), t) - sp.diff(L, qs[i]) for i in range(3)])
    qdd = sp.Matrix([sp.diff(x, t, 2) for x in qs])
    Mdot = sp.diff(M, t)
    grad = sp.Matrix([(qd.T * sp.diff(M, qs[g]) * qd)[0] for g in range(3)])
    eq2 = M * qdd + Mdot * qd - grad / 2 + sp.Matrix([sp.diff(V, x) for x in qs])
    assert sp.simplify(EL - eq2) == sp.zeros(3, 1)


def test_sec3_double_pendulum_M_V_symbolic():
    m1, m2, l1, l2, gg = sp.symbols("m1 m2 l1 l2 g", positive=True)
    q1, q2, v1, v2 = sp.symbols("q1 q2 v1 v2")
    x1, y1 = l1 * sp.sin(q1), -l1 * sp.cos(q1)
    x2, y2 = l1 * sp.sin(q1) + l2 * sp.sin(q2), -l1 * sp.cos(q1) - l2 * sp.cos(q2)
    vel = lambda e: sp.diff(e, q1) * v1 + sp.diff(e, q2) * v2
    T = m1 * (vel(x1) ** 2 + vel(y1) ** 2) / 2 + m2 * (vel(x2) ** 2 + vel(y2) ** 2) / 2
    T_printed = ((m1 + m2) * l1 ** 2 * v1 ** 2 / 2 + m2 * l2 ** 2 * v2 ** 2 / 2
                 + m2 * l1 * l2 * v1 * v2 * sp.cos(q1 - q2))
    assert sp.simplify(sp.expand_trig(T - T_printed)) == 0
    c = m2 * l1 * l2 * sp.cos(q1 - q2)
    M_printed = sp.Matrix([[(m1 + m2) * l1 ** 2, c], [c, m2 * l2 ** 2]])
    assert sp.simplify(sp.hessian(T, (v1, v2)) - M_printed) == sp.zeros(2, 2)
    V = m1 * gg * y1 + m2 * gg * y2
    V_printed = -m1 * gg * l1 * sp.cos(q1) - m2 * gg * (l1 * sp.cos(q1) + l2 * sp.cos(q2))
    assert sp.simplify(V - V_printed) == 0


def trig_zero(expr, angles):
    """True iff expr (polynomial in sin, cos of the angles) vanishes identically: normal
    form modulo sin^2 + cos^2 = 1 (these relations are a Groebner basis)."""
    subs, gens, rels = {}, [], []
    for x in angles:
        S, C = sp.symbols(f"S_{x} C_{x}")
        subs.update({sp.sin(x): S, sp.cos(x): C})
        gens += [S, C]
        rels.append(S ** 2 + C ** 2 - 1)
    e = sp.expand(sp.sympify(expr).subs(subs))
    return e == 0 or sp.reduced(e, rels, *gens, order="lex")[1] == 0


def test_sec41_top_kinematics_M_and_momenta_symbolic():
    """(16) from the ZXZ rotation R = Rz(phi) Rx(theta) Rz(psi); printed M(q) from (16);
    (18s); (18ac) from the theta Euler-Lagrange equation."""
    I, I3, mgl = sp.symbols("I I3 mgl", positive=True)
    ph, th, ps, a, b, c = sp.symbols("phi theta psi phidot thetadot psidot")

    def Rz(x):
        return sp.Matrix([[sp.cos(x), -sp.sin(x), 0], [sp.sin(x), sp.cos(x), 0], [0, 0, 1]])

    def Rx(x):
        return sp.Matrix([[1, 0, 0], [0, sp.cos(x), -sp.sin(x)], [0, sp.sin(x), sp.cos(x)]])
    R = Rz(ph) * Rx(th) * Rz(ps)
    Rdot = sp.diff(R, ph) * a + sp.diff(R, th) * b + sp.diff(R, ps) * c
    W = R.T * Rdot                                         # body angular velocity, skew
    assert all(trig_zero(W[i, j] + W[j, i], (ph, th, ps)) for i in range(3) for j in range(3))
    Om = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
    T = (Om.T * sp.diag(I, I, I3) * Om)[0] / 2
    T16 = I3 * (c + a * sp.cos(th)) ** 2 / 2 + I * (a ** 2 * sp.sin(th) ** 2 + b ** 2) / 2
    assert trig_zero(T - T16, (ph, th, ps))
    # the printed omega (theta' x + phi' sin th y + (psi' + phi' cos th) z) is the body
    # angular velocity at psi = 0, i.e. its components in the frame (x', ., z) of the line of
    # nodes, not on the body axes (x, y, z) as the text says (same T since I1 = I2)
    om_printed = sp.Matrix([b, a * sp.sin(th), c + a * sp.cos(th)])
    assert all(trig_zero(e, (ph, th, ps)) for e in Om.subs(ps, 0) - om_printed)
    assert not all(trig_zero(e, (ph, th, ps)) for e in Om - om_printed)
    M_printed = sp.Matrix([[I * sp.sin(th) ** 2 + I3 * sp.cos(th) ** 2, 0, I3 * sp.cos(th)],
                           [0, I, 0], [I3 * sp.cos(th), 0, I3]])
    assert sp.simplify(sp.hessian(T16, (a, b, c)) - M_printed) == sp.zeros(3, 3)
    # (18s)
    assert sp.simplify(sp.diff(T16, a) - (I3 * (c + a * sp.cos(th)) * sp.cos(th) + I * a * sp.sin(th) ** 2)) == 0
    assert sp.simplify(sp.diff(T16, c) - I3 * (c + a * sp.cos(th))) == 0
    # (18ac): I theta'' = dL/dtheta (M_theta,theta = I constant), so
    # theta'' = (mgl/I + phi'^2 cos th - p_psi/I phi') sin th
    L = T16 - mgl * sp.cos(th)
    p_psi = I3 * (c + a * sp.cos(th))
    assert sp.simplify(sp.diff(L, th) / I - (mgl / I + a ** 2 * sp.cos(th) - p_psi / I * a) * sp.sin(th)) == 0


# ===== script: print the measured numbers used in the errata ===============================

def report():
    import time
    t0 = time.perf_counter()
    f = lambda x: CTX.to_str(x, 2)
    for name in ("top", "pendulum"):
        cs = get_case(name)
        print(f"== {name}: h = {CTX.to_str(cs.h, 3)}")
        S, pt, s = Simpson(cs.sys, cs.h), cs.generic, cs.simpson
        args3 = (pt["ql"], pt["qm"], pt["q"])
        gm = _grad_Ld(cs, pt, "qm")
        print("eq8 printed vs dLd/dqm:", f(rel(S.eq8(*args3)[0], gm)),
              " 2*eq8:", f(rel(2 * S.eq8(*args3)[0], gm)))
        print("eq10 vs dLd/dq:", f(rel(S.eq10(*args3)[0], _grad_Ld(cs, pt, "q"))))
        d = S.eq11(*args3)[0] - S.eq10(*args3)[0]
        print("(11)-(10) vs eq8:", f(rel(d, S.eq8(*args3)[0])), " vs eq8/2:", f(rel(d, S.eq8(*args3)[0] / 2)))
        print("eq13:", f(rel(-_grad_Ld(cs, s, "ql"), s["pj"])), " eq14:", f(rel(s["p"], _grad_Ld(cs, s, "q"))))
        for fn, kw in (("difference", {}), ("sum_printed", {}), ("sum_corrected", {}), ("r18b", {}),
                       ("r18c", {}), ("r18c", dict(k=CTX.one / 2)), ("F_qm", {}), ("F_p", {}),
                       ("F_q", {}), ("F_q_corrected", {})):
            print(f"  residual at solution {fn}{kw and '(k=1/2)' or ''}: {f(_at_solution(cs, fn, **kw))}")
        print("  residual 18ara:", f(resid(S.r18a(s["ql"], s["qm"], s["q"]))))
        printed, corrected, fd, fd_corr = _blocks(cs)
        for r in (1, 2, 3):
            for c in (1, 2, 3):
                line = f"  block ({r},{c}) printed vs FD(printed F): {f(rel(printed[r, c], fd[r][c]))}"
                if r == 3:
                    line += f"; printed vs FD(corr F): {f(rel(printed[r, c], fd_corr[c]))}"
                    line += f"; corrected vs FD(corr F): {f(rel(corrected[r, c], fd_corr[c]))}"
                elif r == 1 and c == 3:
                    line += f"; corrected: {f(rel(corrected[r, c], fd[r][c]))}"
                print(line)
        sol = np.concatenate([s["qm"], s["p"], s["q"]])
        for label, x0 in (("library guess", _guess(cs)), ("paper guess (q_j,p_j,q_j)", _paper_guess(cs))):
            for fix in (("3", "7", "8", "9"), ("8",), ("3", "8"), ("7", "8"), ("9", "8"),
                        ("7", "9", "8"), ("3", "7", "9"), ()):
                hist = []
                x, it = newton_simpson(cs, FIXED, lambda S, a: S.jacobian_printed(*a, fix=fix),
                                       x0, max_iter=60, hist=hist)
                rate = (hist[-1] / hist[-6]) ** (CTX.one / 5) if len(hist) > 6 else None
                print(f"  Newton corrected F, printed J with fixes {fix}, {label}: iterations {it},"
                      f" dist {f(rel(x, sol))}, last rate {rate and f(rate)}")
            x, it = newton_simpson(cs, PRINTED, lambda S, a: S.jacobian_exact(*a, k=CTX.one), x0)
            print(f"  Newton printed F, its exact J, {label}: iterations {it}, |q - q_simpson| {f(inf(x[-cs.sys.dof:] - s['q']))}")
        diffs = []
        for k in (1, 2, 4, 8):
            h = cs.h / k
            sol1 = solve(cs.problem, "simpson", h=h, n=1)
            x, it = newton_simpson(cs, PRINTED, lambda S, a: S.jacobian_exact(*a, k=CTX.one), _guess(cs, h), h=h)
            diffs.append(inf(x[-cs.sys.dof:] - sol1.q[1]))
        print("  printed-F step - Simpson step (h, h/2, h/4, h/8):", [f(x) for x in diffs],
              "ratios", [CTX.to_str(diffs[i] / diffs[i + 1], 3) for i in range(3)])
        for hs in ("0.2", "0.1", "0.05", "0.01", "0.001"):
            h = CTX.num(hs)
            sol1 = solve(cs.problem, "simpson", h=h, n=1)
            sol_h = np.concatenate([sol1.internal[0, 0], sol1.p[1], sol1.q[1]])
            out = []
            for J in (lambda S, a: S.jacobian_corrected(*a), lambda S, a: S.jacobian_printed(*a)):
                hist = []
                x, it = newton_simpson(cs, FIXED, J, _guess(cs, h), h=h, max_iter=500, hist=hist)
                rate = (hist[-1] / hist[-11]) ** (CTX.one / 10) if len(hist) > 11 else None
                out.append(f"{it} (dist {f(rel(x, sol_h))}, rate {rate and f(rate)})")
            print(f"  h = {hs}: Newton iterations, corrected J: {out[0]}; all printed blocks: {out[1]}")
        T = CTX.num("0.4")
        ref = solve(cs.problem, "simpson", h=T / 256, n=256).q[-1]
        for N in (4, 8, 16, 32):
            e1 = inf(_printed_scheme_run(cs, T / N, N) - ref)
            e2 = inf(solve(cs.problem, "simpson", h=T / N, n=N).q[-1] - ref)
            print(f"  T = 0.4, N = {N}: error printed-F_q scheme {f(e1)}, Simpson {f(e2)}")
        m = cs.midpoint
        Mp = Midpoint(cs.sys, cs.h)
        a = (m["ql"], m["q"], m["pj"], m["p"])
        for fn in ("difference", "sum", "a18", "b18", "F_p", "F_q_corrected"):
            print(f"  midpoint residual {fn}: {f(resid(getattr(Mp, fn)(*a)))}")
        print("  midpoint printed F_q / |p|:", f(inf(Mp.F_q(*a)[0]) / inf(m["p"])))
        J = Mp.jacobian_printed(pt["ql"], pt["q"], pt["pj"], pt["p"])
        fp_, fq, fqc = _mid_fd(cs, "F_p", pt), _mid_fd(cs, "F_q", pt), _mid_fd(cs, "F_q_corrected", pt)
        print("  midpoint J (1,1),(1,2):", f(rel(J[1, 1], fp_[1])), f(rel(J[1, 2], fp_[2])),
              " (2,1):", f(rel(J[2, 1], fqc[1])), " (2,2) vs FD printed:", f(rel(J[2, 2], fq[2])),
              " vs FD corrected:", f(rel(J[2, 2], fqc[2])))
        M_fd = Midpoint(cs.sys_fd, cs.h_fd)
        ql, q = to_ctx(m["ql"], CTX_FD), to_ctx(m["q"], CTX_FD)
        dr = to_ctx(fd_grad(lambda x: M_fd.Ld(ql, x), q, CTX_FD), CTX)
        print("  midpoint p_j+1 vs -dLd/dq_r:", f(rel(-dr, m["p"])), " vs +:", f(rel(dr, m["p"])))
    print(f"time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    report()
