"""Mutze's quantum direct midpoint rule (Sec. 6, eq. 86) for a particle on a 1-D grid.

The paper (Sec. 6, "Informal remark on quantum and field dynamics") applies the direct
midpoint method -- the g = 0 member of the family (72), with the acceleration of eq. (78),
a = A(t + tau, x + v tau, v) when A does not depend on v, and the update (74)
x <- x + 2 tau v + 2 tau^2 a, v <- v + 2 tau a -- to the second-order equation

    psi'' = -(1/hbar^2) H^2 psi,

which every solution of i hbar psi' = H psi satisfies (eq. 86):

    a              := -(1/hbar^2) H_{t+tau}^2 (psi_t + tau psi'_t)
    psi_{t+2 tau}  := psi_t + 2 tau psi'_t + 2 tau^2 a
    psi'_{t+2 tau} := psi'_t + 2 tau a,          psi'_0 := H_0 psi_0 / (i hbar).

Here H = -(hbar^2 / 2m) D2 + V on N interior points x_j = j dx (j = 1..N) with Dirichlet
ends x_0 = 0, x_{N+1} = L = (N+1) dx; D2 is the 3-point Laplacian, so H is a real
symmetric tridiagonal matrix (diagonal hbar^2/(m dx^2) + V_j, off-diagonal
-hbar^2/(2 m dx^2)), applied as a stencil, never built.  The potential is
time-independent, so H_{t+tau} = H.  Since H is real, the real and imaginary parts of psi
evolve under the same real linear map; states are stored as real pairs X = [Re psi,
Im psi] of shape (2, N) -- numpy object arrays of the context's mpf, or float64 arrays.

**Stability** (:func:`amplification_matrix`, :func:`stability_bound`).  On an eigenvector
of H with eigenvalue lambda, omega = lambda / hbar, the scheme is the g = 0 map of the
scalar test equation x'' = -omega^2 x: with z = (omega tau)^2

    M = [[1 - 2 z, 2 tau (1 - z)], [-2 tau omega^2, 1 - 2 z]],   det M = 1,
    tr M = 2 (1 - 2 z),

stable (bounded powers, eigenvalues exp(+-i theta), cos theta = 1 - 2 z distinct on the
unit circle) iff 0 < omega tau < 1; at omega tau = 1 M is a Jordan block (-1 double),
linear growth.  The grid's spectral radius is bounded by Gershgorin:
rho(H) <= 2 hbar^2/(m dx^2) + max V (V >= 0), so :meth:`Particle.check_tau` refuses
tau >= hbar / rho_Gershgorin.  (The map is position Verlet with step 2 tau.)

**Conserved quadratic form** (:func:`invariant_form`).  M^T Q M = Q has the one-parameter
family of solutions Q ~ diag(omega^2, 1 - omega^2 tau^2): per mode
omega^2 |x|^2 + (1 - omega^2 tau^2) |v|^2 is invariant, hence for any function f(H) the
form <psi|f(H) H^2/hbar^2|psi> + <psi'|f(H)(1 - tau^2 H^2/hbar^2)|psi'> is conserved
exactly by eq. (86).  Computed here (:meth:`Particle.observe`):

* ``Q``  (f = 1): ||H psi||^2/hbar^2 + ||psi'||^2 - tau^2 ||H psi'||^2/hbar^2;
* ``Nbar`` (f = hbar^2 H^-2 / 2): (||psi||^2 + hbar^2 ||H^-1 psi'||^2 - tau^2 ||psi'||^2) / 2,
  which is the long-time mean of the norm (one tridiagonal solve; H must be
  nonsingular -- here V >= 0 makes H positive definite).

**Why the norm does not come back** (:func:`closed_form`).  With the Schroedinger initial
velocity psi'_0 = -i omega psi_0 a mode c_k is not an eigenvector of M (the forward one
has psi' = -i omega psi / sqrt(1 - z)); it splits into a forward and a small backward
wave, c_k(n) = c_k(0) (alpha e^{-i n theta} + beta e^{+i n theta}), alpha, beta =
(1 +- sqrt(1 - z)) / 2, and exactly

    ||psi_n||^2 = sum_k |c_k|^2 [1 - (z_k / 2)(1 - cos 2 n theta_k)],
    <psi_n|H|psi_n> = sum_k lambda_k |c_k|^2 [1 - (z_k / 2)(1 - cos 2 n theta_k)].

The norm equals its initial value only where all cos 2 n theta_k = 1 (n = 0); its time mean
is Nbar = N0 - tau^2 ||H psi_0||^2 / (2 hbar^2) -- a shift of O(tau^2 <H^2>), independent
of the arithmetic's precision.  Since 2 n theta_k = 2 t lambda_k / hbar (1 + O(z)), the
deviation is, to leading order,

    ||psi(t)||^2 - N0 ~ -(tau^2 / 2 hbar^2) [||H psi_0||^2 - Re <H psi_0| exp(-2 i H t / hbar) |H psi_0>]:

it depends on the autocorrelation of the initial state at the *doubled* time 2t, not on
whether the packet is in a violent phase at time t; it returns towards 0 only at
(partial) revivals of psi_0 at time 2t.  (Started instead from the forward eigenvector,
psi'_0 = H (1 - tau^2 H^2/hbar^2)^(-1/2) psi_0 / (i hbar), eq. (86) multiplies every mode by
exp(-i theta_k) and conserves norm and energy exactly -- tests/test_mutze_quantum.py.)

**Exact reference** (:class:`ChebyshevPropagator`): exp(-i H t / hbar) psi by the Chebyshev
expansion exp(-i x A) = J_0(x) + 2 sum_k (-i)^k J_k(x) T_k(A), A = (H - c)/r with the
Gershgorin interval [c - r, c + r], truncated when |J_k| < eps 1e-10 beyond k > x; the
spectral data (eigenvalues lambda_k and weights |c_k|^2 of psi_0) by mpmath's implicit QL
(``tridiag_eigen``, EISPACK imtql2; :func:`tridiag_eigen` here runs its operations on
gmpy2 numbers, with mpmath's bits) on the tridiagonal H, with the eigenvector matrix
multiplied into the 2 x N row block of psi_0 (no N x N matrix).  The eigenvalues and the
Bessel coefficients J_k are computed in a private mpmath context at the number context's
precision plus ``GUARD_BITS``; the Chebyshev recurrence runs in the number context.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

GUARD_BITS = 24
"""Extra bits of the private mpmath context of the spectral data and Bessel coefficients."""

# --------------------------------------------------------------------------------------
# the scalar test equation x'' = -omega^2 x (exact, sympy)
# --------------------------------------------------------------------------------------
OMEGA, TAU = sp.symbols("omega tau", positive=True)


def amplification_matrix():
    """The g = 0 step (eqs. 74, 78) on x'' = -omega^2 x as a matrix acting on (x, v):
    a = -omega^2 (x + tau v), x <- x + 2 tau v + 2 tau^2 a, v <- v + 2 tau a."""
    x, v = sp.symbols("x v")
    a = -OMEGA ** 2 * (x + TAU * v)
    new = [sp.expand(x + 2 * TAU * v + 2 * TAU ** 2 * a), sp.expand(v + 2 * TAU * a)]
    return sp.Matrix([[sp.diff(e, x), sp.diff(e, v)] for e in new])


def stability_bound():
    """``(sup, interval)``: the set of r = omega tau > 0 for which the powers of
    :func:`amplification_matrix` stay bounded, derived from det M = 1 and
    |tr M| < 2 (eigenvalues distinct on the unit circle); ``sup`` is its supremum (1).
    Raises ``ArithmeticError`` if det M != 1 (then the criterion would not apply)."""
    M = amplification_matrix()
    if sp.simplify(M.det() - 1) != 0:
        raise ArithmeticError(f"det M = {sp.factor(M.det())} is not 1: |tr M| < 2 is not the "
                              "stability criterion")
    r = sp.Symbol("r", positive=True)
    half_trace = sp.simplify((M.trace() / 2).subs(OMEGA, r / TAU))
    interval = sp.solve_univariate_inequality(sp.Abs(half_trace) < 1, r, relational=False)
    interval = interval.intersect(sp.Interval.open(0, sp.oo))
    return interval.sup, interval


def invariant_form():
    """The symmetric Q (up to a factor) with M^T Q M = Q for :func:`amplification_matrix`,
    normalised to Q[0, 0] = omega^2: diag(omega^2, 1 - omega^2 tau^2)."""
    M = amplification_matrix()
    q11, q12, q22 = sp.symbols("q11 q12 q22")
    Q = sp.Matrix([[q11, q12], [q12, q22]])
    eqs = [e for e in (M.T * Q * M - Q) if e != 0]
    sol = sp.solve(eqs, [q12, q22], dict=True)
    if len(sol) != 1:
        raise ArithmeticError(f"M^T Q M = Q has no unique one-parameter solution: {sol}")
    return sp.simplify(Q.subs(sol[0]).subs(q11, OMEGA ** 2))


# --------------------------------------------------------------------------------------
# the particle on the grid
# --------------------------------------------------------------------------------------
class Particle:
    """H = -(hbar^2/2m) D2 + V on ``n`` interior points x_j = j dx (Dirichlet ends), in the
    number context ``ctx`` (mp: object arrays of its mpf; fp: float64).  ``potential`` is a
    callable x -> V(x) (x a context number; returns something ``ctx.num`` reads or a
    context number), V >= 0 required (H positive definite, see :meth:`solve`).
    ``dx``, ``hbar``, ``mass``: strings, ints or Fractions."""

    def __init__(self, ctx, n, dx="1", hbar="1", mass="1", potential=None):
        if not isinstance(n, int) or n < 3:
            raise ValueError(f"the grid needs n >= 3 interior points, got {n!r}")
        self.ctx, self.n = ctx, n
        self.dx, self.hbar, self.mass = ctx.num(dx), ctx.num(hbar), ctx.num(mass)
        for name in ("dx", "hbar", "mass"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        self.x = ctx.asarray([j for j in range(1, n + 1)]) * self.dx
        self.length = (n + 1) * self.dx
        if potential is None:
            self.V = ctx.zeros(n)
        else:
            self.V = ctx.asarray([potential(xj) for xj in self.x])
        if min(self.V) < 0:
            raise ValueError("the potential must be >= 0 (H positive definite: the invariant "
                             "Nbar needs H^-1 and the Gershgorin bound assumes V >= 0)")
        kin = self.hbar ** 2 / (self.mass * self.dx ** 2)
        self.diag = kin + self.V
        self.off = -kin / 2
        # Thomas factorisation of H (symmetric positive definite: no pivoting needed)
        self._piv = [self.diag[0]]
        for i in range(1, n):
            self._piv.append(self.diag[i] - self.off * self.off / self._piv[i - 1])

    # ---- H and its bounds ----------------------------------------------------------
    def H(self, p):
        """H applied as a 3-point stencil along the last axis (Dirichlet: psi_0 = psi_{N+1} = 0)."""
        q = self.diag * p
        q[..., 1:] += self.off * p[..., :-1]
        q[..., :-1] += self.off * p[..., 1:]
        return q

    def gershgorin(self):
        """(lo, hi): every eigenvalue of H lies in [lo, hi] (Gershgorin discs; end rows have
        one neighbour)."""
        r = abs(self.off)
        radii = [r if i in (0, self.n - 1) else 2 * r for i in range(self.n)]
        return (min(d - s for d, s in zip(self.diag, radii)),
                max(d + s for d, s in zip(self.diag, radii)))

    def omega_max(self):
        """Gershgorin bound of the spectral radius of Omega = H / hbar."""
        lo, hi = self.gershgorin()
        return max(abs(lo), abs(hi)) / self.hbar

    def check_tau(self, tau):
        """Refuse (``ValueError``) a half step tau outside the stability region
        omega tau < 1 of :func:`stability_bound` for omega = the Gershgorin bound of H/hbar."""
        tau = self.ctx.num(tau)
        if not tau > 0:
            raise ValueError(f"tau must be positive, got {self.ctx.to_str(tau, 6)}")
        r = tau * self.omega_max()
        if not r < 1:
            raise ValueError(
                f"tau = {self.ctx.to_str(tau, 6)} is beyond the stability bound of eq. (86): "
                f"tau * omega_max = {self.ctx.to_str(r, 6)} >= 1 (omega_max <= "
                f"{self.ctx.to_str(self.omega_max(), 6)} by Gershgorin, 2 hbar/(m dx^2) + max V/hbar); "
                f"need tau < {self.ctx.to_str(1 / self.omega_max(), 6)}")
        return tau

    def solve(self, b):
        """H^-1 b along the last axis (Thomas algorithm)."""
        n, off, piv = self.n, self.off, self._piv
        ratio = self.__dict__.get("_ratio")
        if ratio is None:               # off / piv[i], the same numbers at every call
            ratio = self._ratio = [off / p for p in piv]
        rows = b.reshape(-1, n)
        out = np.empty_like(rows)
        for r in range(rows.shape[0]):  # one row at a time, on lists: no numpy per number
            y = rows[r].tolist()
            for i in range(1, n):
                y[i] = y[i] - ratio[i - 1] * y[i - 1]
            y[n - 1] = y[n - 1] / piv[n - 1]
            for i in range(n - 2, -1, -1):
                y[i] = (y[i] - off * y[i + 1]) / piv[i]
            out[r] = y
        return out.reshape(b.shape)

    # ---- inner products --------------------------------------------------------------
    def dot(self, a, b):
        """Re <a|b> = dx sum a.b over real pairs."""
        return self.dx * self.ctx.fsum(np.ravel(a * b))

    def norm2(self, a):
        return self.dot(a, a)

    # ---- states ------------------------------------------------------------------------
    def gaussian(self, x0, sigma, k0):
        """exp(-(x - x0)^2/(4 sigma^2) + i k0 x), normalised (dx-weighted), as a real pair."""
        ctx = self.ctx
        x0, sigma, k0 = ctx.num(x0), ctx.num(sigma), ctx.num(k0)
        env = ctx.exp(-(self.x - x0) ** 2 / (4 * sigma ** 2))
        X = np.array([env * ctx.cos(k0 * self.x), env * ctx.sin(k0 * self.x)], dtype=ctx.dtype)
        return X / ctx.sqrt(self.norm2(X))

    def box(self, x0, width, k0):
        """A sharp-edged state: exp(i k0 x) on |x - x0| <= width/2, 0 elsewhere, normalised."""
        ctx = self.ctx
        x0, width, k0 = ctx.num(x0), ctx.num(width), ctx.num(k0)
        inside = np.array([abs(xj - x0) <= width / 2 for xj in self.x])
        if not inside.any():
            raise ValueError("the box state holds no grid point")
        env = ctx.zeros(self.n)
        env[inside] = ctx.one
        X = np.array([env * ctx.cos(k0 * self.x), env * ctx.sin(k0 * self.x)], dtype=ctx.dtype)
        return X / ctx.sqrt(self.norm2(X))

    def schroedinger_velocity(self, X):
        """psi' = H psi / (i hbar) as a real pair: (H Im psi, -H Re psi) / hbar."""
        HX = self.H(X)
        return np.array([HX[1], -HX[0]], dtype=X.dtype) / self.hbar

    # ---- eq. (86) ----------------------------------------------------------------------
    def step(self, X, V, tau):
        """One step of eq. (86) (time-independent H): a = -H^2 (psi + tau psi') / hbar^2,
        psi <- psi + 2 tau psi' + 2 tau^2 a, psi' <- psi' + 2 tau a."""
        a = -self.H(self.H(X + tau * V)) / self.hbar ** 2
        return X + 2 * tau * V + 2 * tau * tau * a, V + 2 * tau * a

    def observe(self, X, V, tau):
        """norm ||psi||^2, unnormalised energy <psi|H|psi>, energy <H> = that / norm, the
        relative Schroedinger residual ||psi' - H psi/(i hbar)|| / ||H psi / hbar||, and the
        invariants Q and Nbar (module docstring)."""
        hb = self.hbar
        HX, HV = self.H(X), self.H(V)
        norm = self.norm2(X)
        eu = self.dot(X, HX)
        S = np.array([HX[1], -HX[0]], dtype=X.dtype) / hb
        res = self.ctx.sqrt(self.norm2(V - S) / self.norm2(S))
        vv = self.norm2(V)
        Q = self.norm2(HX) / hb ** 2 + vv - tau ** 2 * self.norm2(HV) / hb ** 2
        Y = self.solve(V)
        nbar = (norm + hb ** 2 * self.norm2(Y) - tau ** 2 * vv) / 2
        return {"norm": norm, "energy_unnorm": eu, "energy": eu / norm, "residual": res,
                "Q": Q, "Nbar": nbar}

    def mass_in(self, X, mask):
        """Fraction of ||psi||^2 on the grid points of ``mask``."""
        sel = X[:, mask]
        return self.ctx.fsum(np.ravel(sel * sel)) / self.ctx.fsum(np.ravel(X * X))


def to_fp(particle):
    """The float64 copy of an mp particle (numbers rounded once)."""
    from mpvi.numbers.context import fp
    p = Particle.__new__(Particle)
    p.ctx, p.n = fp, particle.n
    f = float                                  # rounding to float64 is the point
    p.dx, p.hbar, p.mass = f(particle.dx), f(particle.hbar), f(particle.mass)
    p.x = np.array([f(v) for v in particle.x])
    p.length = f(particle.length)
    p.V = np.array([f(v) for v in particle.V])
    p.diag = np.array([f(v) for v in particle.diag])
    p.off = f(particle.off)
    p._piv = [f(v) for v in particle._piv]
    return p


# --------------------------------------------------------------------------------------
# spectral data, closed form, exact reference (mp only)
# --------------------------------------------------------------------------------------
def _private_mp(ctx):
    if not ctx.is_mp:
        raise ValueError("the spectral data and the exact reference need an mp context")
    m = mpmath.MPContext()
    m.prec = ctx.prec + GUARD_BITS
    return m


def spectral_data(particle, X0):
    """``(lam, w)``: the eigenvalues of H (ascending) and the weights w_k = |c_k|^2 of psi_0
    (dx-weighted, sum w_k = ||psi_0||^2), by implicit QL on the tridiagonal H with the
    eigenvector matrix multiplied into the 2 x N block [Re psi_0; Im psi_0]
    (:func:`tridiag_eigen`, mpmath's algorithm on MPFR numbers)."""
    ctx = particle.ctx
    m = _private_mp(ctx)
    n = particle.n
    d = [ctx.to_mpmath(v, m) for v in particle.diag]
    e = [ctx.to_mpmath(particle.off, m)] * (n - 1) + [m.zero]
    z = [[ctx.to_mpmath(X0[r, j], m) for j in range(n)] for r in range(2)]
    d, z = tridiag_eigen(m, d, e, z)
    # computed in the private context m at ctx.prec + GUARD_BITS bits: lift keeps them
    lam = ctx.asarray([ctx.lift(v) for v in d])
    w = ctx.asarray([ctx.lift(particle.dx * (z[0][k] ** 2 + z[1][k] ** 2)) for k in range(n)])
    return lam, w


def tridiag_eigen(m, d, e, z):
    """mpmath's ``tridiag_eigen(m, d, e, z)`` (EISPACK imtql2: implicit QL on the
    symmetric tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``, the rotations
    applied to the rows ``z``, eigenvalues sorted ascending) with the same operations on
    gmpy2 ``mpfr`` numbers of ``m.prec`` bits: each is rounded as mpmath rounds it (to
    nearest; hypot(x, 1) as mpmath computes it: x^2 exact, + 1 rounded down to prec + 4
    bits, the square root to nearest), so the results are mpmath's bit for bit, about
    six times faster.  Returns (eigenvalues, rotated rows) as mpmath numbers of ``m``."""
    import gmpy2
    prec = m.prec
    ctx = gmpy2.context(precision=prec, round=gmpy2.RoundToNearest)
    wide = gmpy2.context(precision=prec + 4, round=gmpy2.RoundDown)
    exact = gmpy2.context(precision=2 * prec + 2)

    def to_mpfr(x):                       # exact: x has at most prec bits
        sign, man, exp, _ = x._mpf_
        if not man:
            if x != 0:
                raise ValueError(f"tridiag_eigen: a non-finite input {x}")
            return gmpy2.mpfr(0, prec)
        return gmpy2.mul_2exp(gmpy2.mpfr(-man if sign else man, prec), exp)

    def to_mp(x):
        man, exp = x.as_mantissa_exp()
        return m.mpf((int(man), int(exp)))

    def hypot1(x):                        # mpmath's ctx.hypot(x, 1)
        return ctx.sqrt(wide.add(exact.mul(x, x), 1))

    saved = gmpy2.get_context()
    gmpy2.set_context(ctx)
    try:
        d = [to_mpfr(x) for x in d]
        e = [to_mpfr(x) for x in e]
        z = [[to_mpfr(x) for x in row] for row in z]
        eps = to_mpfr(m.eps)
        n = len(d)
        e[n - 1] = gmpy2.mpfr(0)
        iterlim = 2 * m.dps
        for l in range(n):
            j = 0
            while True:
                k = l
                while k + 1 != n and not abs(e[k]) <= eps * (abs(d[k]) + abs(d[k + 1])):
                    k += 1
                if k == l:
                    break
                if j >= iterlim:
                    raise RuntimeError("tridiag_eigen: no convergence to an eigenvalue after "
                                       f"{iterlim} iterations")
                j += 1
                p = d[l]
                g = (d[l + 1] - p) / (2 * e[l])
                r = hypot1(g)
                s = g - r if g < 0 else g + r
                g = d[k] - p + e[l] / s
                s, c, p = 1, 1, 0
                for i in range(k - 1, l - 1, -1):
                    f = s * e[i]
                    b = c * e[i]
                    if abs(f) > abs(g):
                        c = g / f
                        r = hypot1(c)
                        e[i + 1] = f * r
                        s = 1 / r
                        c = c * s
                    else:
                        s = f / g
                        r = hypot1(s)
                        e[i + 1] = g * r
                        c = 1 / r
                        s = s * c
                    g = d[i + 1] - p
                    r = (d[i] - g) * s + 2 * c * b
                    p = s * r
                    d[i + 1] = g + p
                    g = c * r - b
                    for row in z:
                        f = row[i + 1]
                        row[i + 1] = s * row[i] + c * f
                        row[i] = c * row[i] - s * f
                d[l] = d[l] - p
                e[l] = g
                e[k] = gmpy2.mpfr(0)
        for ii in range(1, n):                # selection sort, as mpmath
            i = ii - 1
            k = i
            p = d[i]
            for j in range(ii, n):
                if d[j] >= p:
                    continue
                k = j
                p = d[k]
            if k == i:
                continue
            d[k] = d[i]
            d[i] = p
            for row in z:
                row[i], row[k] = row[k], row[i]
        return [to_mp(x) for x in d], [[to_mp(x) for x in row] for row in z]
    finally:
        gmpy2.set_context(saved)


def closed_form(particle, lam, w, tau, steps):
    """``(norm, energy_unnorm)`` after ``steps`` steps of eq. (86) from psi'_0 = H psi_0/(i hbar),
    exactly (module docstring): sum_k w_k (lambda_k) [1 - (z_k/2)(1 - cos 2 n theta_k)],
    z_k = (tau lambda_k / hbar)^2, cos theta_k = 1 - 2 z_k."""
    ctx = particle.ctx
    fac = []
    for lk in lam:
        zk = (tau * lk / particle.hbar) ** 2
        theta = ctx.acos(1 - 2 * zk)
        fac.append(1 - zk / 2 * (1 - ctx.cos(2 * steps * theta)))
    norm = ctx.fsum(wk * f for wk, f in zip(w, fac))
    eu = ctx.fsum(lk * wk * f for lk, wk, f in zip(lam, w, fac))
    return norm, eu


def bessel_coefficients(ctx, x):
    """J_k(x), k = 0, 1, ..., K, at the context's precision (private mpmath context with
    guard bits), K the first order beyond x with |J_K|, |J_{K+1}| < eps 1e-10."""
    m = _private_mp(ctx)
    xm = ctx.to_mpmath(x, m)
    tol = ctx.to_mpmath(ctx.eps, m) * m.mpf(10) ** -10
    out, k = [], 0
    while True:
        j = m.besselj(k, xm)
        out.append(ctx.lift(j))                 # m has ctx.prec + GUARD_BITS bits
        if k > xm and abs(j) < tol and len(out) > 1 and abs(out[-2]) < tol:
            return out
        k += 1


class ChebyshevPropagator:
    """psi -> exp(-i H t / hbar) psi for a fixed t (mp only): the Chebyshev expansion of the
    module docstring, applied by stencils (three-term recurrence)."""

    def __init__(self, particle, t):
        ctx = particle.ctx
        self.p, self.ctx = particle, ctx
        lo, hi = particle.gershgorin()
        self.c, self.r = (lo + hi) / 2, (hi - lo) / 2
        self.xarg = self.r * ctx.num(t) / particle.hbar
        self.J = bessel_coefficients(ctx, self.xarg)
        self.phase = self.c * ctx.num(t) / particle.hbar
        self.cos_ph, self.sin_ph = ctx.cos(self.phase), ctx.sin(self.phase)

    def terms(self):
        return len(self.J)

    def __call__(self, X):
        p = self.p
        d2 = 2 * (p.diag - self.c) / self.r          # B = 2 A = 2 (H - c) / r as a stencil
        o2 = 2 * p.off / self.r

        def B(Y):
            q = d2 * Y
            q[..., 1:] += o2 * Y[..., :-1]
            q[..., :-1] += o2 * Y[..., 1:]
            return q

        S = self.J[0] * X
        T_prev, T = X, B(X) / 2
        for k in range(1, len(self.J)):
            if k > 1:
                T_prev, T = T, B(T) - T_prev
            c = 2 * self.J[k]
            # S += c (-i)^k T on real pairs: -i (u, w) = (w, -u)
            if k % 4 == 1:
                S[0] += c * T[1]
                S[1] -= c * T[0]
            elif k % 4 == 2:
                S -= c * T
            elif k % 4 == 3:
                S[0] -= c * T[1]
                S[1] += c * T[0]
            else:
                S += c * T
        # times exp(-i c t / hbar): (u + i w)(cos - i sin)
        cp, sp_ = self.cos_ph, self.sin_ph
        return np.array([S[0] * cp + S[1] * sp_, S[1] * cp - S[0] * sp_], dtype=X.dtype)


# ----- certified: the exact discrete trajectory of eq. (86) (mpvi run --certify) ------------

CERTIFIED_STATEMENT = (
    "The exact discrete trajectory of eq. (86) from the exact problem (the Gaussian psi_0 "
    "of the rational x0, sigma, k0 enclosed in Arb, psi'_0 = H psi_0/(i hbar), tau, dx, "
    "the barrier exact) is enclosed without wrapping: the run is walked on Arb balls from "
    "exact midpoints, each step's rounding delta_k bounded by its ball's radii, and the "
    "distance e_n of the exact trajectory from the walked midpoints bounded through the "
    "invariant form W(x, v) = |x|^2 + hbar^2 |H^-1 v|^2 - tau^2 |v|^2 that the step "
    "preserves exactly (checked symbolically per eigenmode of H): sqrt W(e_n) <= sqrt W(e_0) "
    "+ sum_k sqrt W(delta_k), with c_lo |y|^2 <= W(y) <= c_hi |y|^2 from Gershgorin "
    "(lambda_max) and the Dirichlet Laplacian's least eigenvalue (lambda_min, V >= 0).  "
    "Norm, energy and the mass near the walls and barrier are enclosed from that bound; "
    "the calm/violent classification of every output is decided on the balls; eps is the "
    "context's (2^-52 for float64).  The float64 rows are compared with the same exact "
    "value (the exact problem, not its float64 rounding).  The long run's trend / range "
    "statistics: the same for its 100000 steps, walked 50 steps at a time by the matrix "
    "M^50 on Arb balls.")


def _ball_H(diag, off, p):
    """H p for a list ``p`` of balls (3-point stencil, Dirichlet ends)."""
    n = len(p)
    return [diag[i] * p[i] + (off * p[i - 1] if i else 0) + (off * p[i + 1] if i < n - 1 else 0)
            for i in range(n)]


def _exact_setup(p, sc, tau_text):
    """The exact problem of :func:`certified_outputs` on balls: grid, H's diagonal and
    off-diagonal, tau, hbar, psi_0 and psi'_0 (rows re, im), lambda_max (Gershgorin) and
    sqrt(c_hi/c_lo) of the invariant form (module statement)."""
    from flint import arb

    from mpvi_papers.mutze._mutze_certify import exact
    if sc["kind"] != "gauss":
        raise ValueError("certified_outputs: only the Gaussian packet is enclosed")
    q = lambda s: Fraction(s)
    n, dx, hbar, mass = p["n"], q(p["dx"]), q(p["hbar"]), q(p["mass"])
    b = p["barrier"]
    c, hw, height = q(b["center"]), q(b["halfwidth"]), q(b["height"])
    xs = [j * dx for j in range(1, n + 1)]
    kin = hbar * hbar / (mass * dx * dx)
    diag = [exact(kin + (height if abs(x - c) <= hw else 0)) for x in xs]
    off = exact(-kin / 2)
    tau, hb = exact(q(tau_text)), exact(hbar)
    # psi_0: exp(-(x - x0)^2/(4 sigma^2) + i k0 x), normalised (dx-weighted)
    x0, sigma, k0 = exact(q(sc["x0"])), exact(q(sc["sigma"])), exact(q(sc["k0"]))
    env = [(-(exact(x) - x0) ** 2 / (4 * sigma * sigma)).exp() for x in xs]
    re = [e * (k0 * exact(x)).cos() for e, x in zip(env, xs)]
    im = [e * (k0 * exact(x)).sin() for e, x in zip(env, xs)]
    scale = (exact(dx) * sum((u * u for u in re + im), arb(0))).sqrt()
    X = [[u / scale for u in re], [u / scale for u in im]]
    HX = [_ball_H(diag, off, row) for row in X]
    V = [[u / hb for u in HX[1]], [-u / hb for u in HX[0]]]
    # the invariant form's constants
    lam_max = max(d + (abs(off) if i in (0, n - 1) else 2 * abs(off)) for i, d in enumerate(diag))
    lam_min = 2 * exact(kin) * (arb.pi() / (2 * (n + 1))).sin() ** 2
    c_lo = arb(1).min(hb * hb / (lam_max * lam_max) - tau * tau)
    c_hi = arb(1).max(hb * hb / (lam_min * lam_min))
    if not c_lo > 0:
        raise ArithmeticError("tau lambda_max < hbar is not proven: W is not proven definite")
    grow = (c_hi / c_lo).sqrt()
    return {"xs": xs, "diag": diag, "off": off, "tau": tau, "hb": hb, "X": X, "V": V,
            "lam_max": lam_max, "grow": grow}


def certified_outputs(p, sc, tau_text):
    """Enclosures of norm_dev, energy_dev and violent_mass at every output step of the
    scenario ``sc`` of the reproduction's parameters ``p`` (module statement
    :data:`CERTIFIED_STATEMENT`), at flint's current precision: a list of dicts
    ``{"step", "norm_dev", "energy_dev", "violent_mass"}`` (arb)."""
    from flint import arb

    from mpvi_papers.mutze._mutze_certify import exact
    setup = _exact_setup(p, sc, tau_text)
    xs, diag, off, tau, hb, X, V, lam_max, grow = (setup[k] for k in (
        "xs", "diag", "off", "tau", "hb", "X", "V", "lam_max", "grow"))
    q = Fraction
    n, dx = p["n"], Fraction(p["dx"])
    c, hw = Fraction(p["barrier"]["center"]), Fraction(p["barrier"]["halfwidth"])
    mask = [x < q(p["zone"]) or x > (n + 1) * dx - q(p["zone"]) or abs(x - c) <= hw + q(p["zone"])
            for x in xs]

    def mids(rows):
        return [[arb(u.mid()) for u in row] for row in rows]

    def radius(*parts):
        return sum((arb(u.rad()) ** 2 for rows in parts for row in rows for u in row),
                   arb(0)).sqrt()

    E = radius(X, V)                           # e_0: |psi_0 - mid|, |psi'_0 - mid|
    Y, Vy = mids(X), mids(V)
    two_tau, two_tau2 = 2 * tau, 2 * tau * tau
    dxb = exact(dx)
    out, first = [], None
    for step in range(sc["steps"] + 1):
        if step % sc["out_every"] == 0:
            bound = E * grow                   # |e_n|_2 <= sqrt(W(e_n) / c_lo)
            ny = (sum((u * u for row in Y for u in row), arb(0))).sqrt()
            HY = [_ball_H(diag, off, row) for row in Y]
            nHy = (sum((u * u for row in HY for u in row), arb(0))).sqrt()
            norm = dxb * (ny * ny + arb(0, (2 * ny * bound + bound * bound).upper()))
            eu = dxb * (sum((a * h for ra, rh in zip(Y, HY) for a, h in zip(ra, rh)), arb(0))
                        + arb(0, (2 * nHy * bound + lam_max * bound * bound).upper()))
            nm = (sum((u * u for row in Y for u, m in zip(row, mask) if m), arb(0))).sqrt()
            inside = dxb * (nm * nm + arb(0, (2 * nm * bound + bound * bound).upper()))
            if first is None:
                first = (norm, eu / norm)
            out.append({"step": step, "norm_dev": (norm - first[0]) / first[0],
                        "energy_dev": (eu / norm - first[1]) / first[1],
                        "violent_mass": inside / norm})
        if step == sc["steps"]:
            break
        s = [[a + tau * v for a, v in zip(ra, rv)] for ra, rv in zip(Y, Vy)]
        acc = [[-u / (hb * hb) for u in _ball_H(diag, off, _ball_H(diag, off, row))] for row in s]
        nX = [[a + two_tau * v + two_tau2 * w for a, v, w in zip(ra, rv, rw)]
              for ra, rv, rw in zip(Y, Vy, acc)]
        nV = [[v + two_tau * w for v, w in zip(rv, rw)] for rv, rw in zip(Vy, acc)]
        E = E + radius(nX, nV)                 # sqrt W(delta_k) <= sqrt(c_hi) |delta_k|
        Y, Vy = mids(nX), mids(nV)
    return out


def certified_long_trend(p, sc, tau_text, steps, block):
    """Enclosures of the long run's "trend / range" statistics of the norm and the energy
    (:func:`mpvi_papers.mutze.mutze_quantum.trend` of :func:`mpvi_papers.mutze.mutze_quantum.long_run`:
    deviations sampled every block/10 steps, block means, the least-squares slope of the
    means against the block-end times times the time spanned, over the range of the
    samples) for the exact discrete trajectory of eq. (86) from the exact problem of the
    scenario ``sc`` (:data:`CERTIFIED_STATEMENT`): the block/10-step map M^(block/10) as an
    Arb matrix (binary powering), applied from exact midpoints, the rounding bounded through
    the invariant form W as in :func:`certified_outputs`.  Returns (norm trend, energy
    trend) balls."""
    from flint import arb, arb_mat

    from mpvi_papers.mutze._mutze_certify import exact
    setup = _exact_setup(p, sc, tau_text)
    diag, off, tau, hb, X, V, lam_max, grow = (setup[k] for k in (
        "diag", "off", "tau", "hb", "X", "V", "lam_max", "grow"))
    n = len(diag)
    every = block // 10
    if block % 10 or steps % block:
        raise ValueError("the long run needs block a multiple of 10 and steps of block")
    H = arb_mat(n, n)
    for i in range(n):
        H[i, i] = diag[i]
        if i + 1 < n:
            H[i, i + 1] = H[i + 1, i] = off
    H2 = H * H / (hb * hb)
    eye = arb_mat(n, n)
    for i in range(n):
        eye[i, i] = 1
    A, B = eye - H2 * (2 * tau * tau), eye * (2 * tau) - H2 * (2 * tau ** 3)
    C = H2 * (-2 * tau)
    M = arb_mat(2 * n, 2 * n)
    for i in range(n):
        for j in range(n):
            M[i, j], M[i, n + j], M[n + i, j], M[n + i, n + j] = A[i, j], B[i, j], C[i, j], A[i, j]
    P = M ** every
    S = arb_mat(2 * n, 2)
    for r in range(2):
        for i in range(n):
            S[i, r], S[n + i, r] = X[r][i], V[r][i]

    def mid(m):
        out = arb_mat(m.nrows(), m.ncols())
        for i in range(m.nrows()):
            for j in range(m.ncols()):
                out[i, j] = arb(m[i, j].mid())
        return out

    def rad(m):
        return sum((arb(m[i, j].rad()) ** 2 for i in range(m.nrows())
                    for j in range(m.ncols())), arb(0)).sqrt()

    def observe(Y, E):
        bound = E * grow
        x = [[Y[i, r] for i in range(n)] for r in range(2)]
        ny = sum((u * u for row in x for u in row), arb(0)).sqrt()
        Hx = [[sum((H[i, k] * row[k] for k in (i - 1, i, i + 1) if 0 <= k < n), arb(0))
               for i in range(n)] for row in x]
        nHy = sum((u * u for row in Hx for u in row), arb(0)).sqrt()
        norm = ny * ny + arb(0, (2 * ny * bound + bound * bound).upper())
        eu = (sum((a * h for ra, rh in zip(x, Hx) for a, h in zip(ra, rh)), arb(0))
              + arb(0, (2 * nHy * bound + lam_max * bound * bound).upper()))
        return norm, eu / norm

    E = rad(S)
    Y = mid(S)
    n0, e0 = observe(Y, E)
    samples = []
    for _ in range(steps // every):
        R = P * Y
        E = E + rad(R)
        Y = mid(R)
        nm, en = observe(Y, E)
        samples.append((nm / n0 - 1, en / e0 - 1))
    per = block // every
    blocks = [samples[k:k + per] for k in range(0, len(samples), per)]
    times = [exact(2 * Fraction(tau_text) * block * (k + 1)) for k in range(len(blocks))]

    def trend(col):
        means = [sum((s[col] for s in b), arb(0)) / len(b) for b in blocks]
        tm = sum(times, arb(0)) / len(times)
        ym = sum(means, arb(0)) / len(means)
        slope = (sum(((t - tm) * (y - ym) for t, y in zip(times, means)), arb(0))
                 / sum(((t - tm) * (t - tm) for t in times), arb(0)))
        hi = samples[0][col]
        lo = samples[0][col]
        for s_ in samples[1:]:
            hi, lo = hi.max(s_[col]), lo.min(s_[col])
        return abs(slope * (times[-1] - times[0])) / (hi - lo)
    return trend(0), trend(1)
