"""Linear mechanical systems  M q'' + K q = 0  (axioms2024, eqs. 3 and 48).

Lagrangian  L = 1/2 q'^T M q' - 1/2 q^T K q  with constant symmetric positive-definite
M and K; momentum p = M q'; Hamiltonian  H(p, q) = 1/2 p^T M^-1 p + 1/2 q^T K q
(axioms2024, Sec. 6.3).  A :class:`LinearSystem` is a
:class:`mpvi.model.mechanics.LagrangianSystem` (M and K enter as its parameters), so every
scheme runs on it; the linear schemes (Newmark, Simpson's closed forms) use M and K
directly, and the Legendre map, energy and Hamiltonian field use the matrix formulas.
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Sequence

import numpy as np
import sympy as sp

from mpvi.model.mechanics import LagrangianSystem
from mpvi.ground.precision import entry_class

if TYPE_CHECKING:
    from flint import acb_mat, arb

    from mpvi.ground.types import Array, Matrix, NumberLike, Real, Vector, VectorLike
    from mpvi.numbers.context import Context


@entry_class
class LinearSystem(LagrangianSystem):
    """A linear mechanical system ``M q'' + K q = 0`` (axioms2024, eqs. 3 and 48).

    L = 1/2 q'^T M q' - 1/2 q^T K q with constant symmetric positive-definite M and K; a
    :class:`mpvi.LagrangianSystem` (M and K enter as its parameters), so every scheme runs
    on it, and the linear schemes (Newmark, Simpson's closed forms) use M and K directly.
    The Legendre map, energy and Hamiltonian field use the matrix formulas, and
    :meth:`exact` gives the exact modal solution.

    Parameters
    ----------
    M : nested sequence of numbers
        The mass matrix, in numbers the context reads exactly (ints, strings,
        Fractions, sympy numbers, the context's own numbers).
    K : nested sequence of numbers
        The stiffness matrix, likewise.
    ctx : Context
        The number context.
    name : str, default "linear system"
        The system's name.

    Raises
    ------
    ValueError
        M or K not finite, not square, not symmetric, not positive definite, or of
        different sizes (naming the matrix).
    PrecisionError
        An entry that would lose precision.
    """

    is_linear = True

    def __init__(self, M: Matrix | Sequence[Sequence[NumberLike]],
                 K: Matrix | Sequence[Sequence[NumberLike]], ctx: Context,
                 name: str = "linear system") -> None:
        self.ctx = ctx
        self.name = name
        self._matrices = (M, K)
        self.M = ctx.asarray(M)
        self.K = ctx.asarray(K)
        for label, a in (("mass matrix M", self.M), ("stiffness matrix K", self.K)):
            if not ctx.all_finite(a):
                raise ValueError(f"{name}: {label} has a non-finite entry")
        for label, a in (("mass matrix M", self.M), ("stiffness matrix K", self.K)):
            ctx.check_symmetric(a, label)
        if self.M.shape != self.K.shape:
            raise ValueError(f"M has shape {self.M.shape} but K has shape {self.K.shape}")
        for label, a in (("mass matrix M", self.M), ("stiffness matrix K", self.K)):
            try:
                ctx.cholesky(a, label)
            except ArithmeticError as exc:
                raise ValueError(str(exc)) from None
        n = self.M.shape[0]
        self.Minv = ctx.inv(self.M)
        self._modes = None
        self._arb_eigs: dict[int, tuple[list[arb], acb_mat, acb_mat]] = {}
        q = sp.symbols(f"q0:{n}")
        params = {}

        def entries(mat, letter):
            sym = sp.zeros(n, n)
            for i in range(n):
                for j in range(i, n):
                    s = sp.Symbol(f"{letter}{i}_{j}")
                    params[s] = mat[i, j]
                    sym[i, j] = sym[j, i] = s
            return sym
        Ms, Ks = entries(self.M, "m"), entries(self.K, "k")
        qv = sp.Matrix(q)
        super().__init__(name, q, Ms, (qv.T * Ks * qv)[0, 0] / 2, params, ctx)

    # ----- modal data ---------------------------------------------------------------
    def modes(self) -> tuple[Vector, Matrix]:
        """Compute the eigenfrequencies and mode shapes (computed once, then cached).

        Returns
        -------
        omega : numpy.ndarray
            The eigenfrequencies, ascending.
        V : numpy.ndarray
            The M-orthonormal mode shapes as columns: ``K V = M V diag(omega^2)``,
            ``V^T M V = I``.
        """
        if self._modes is None:
            w2, v = self.ctx.eigh_generalized(self.K, self.M)
            self._modes = (self.ctx.sqrt(w2), v)
        return self._modes

    def _arb_eig(self):
        """(lam, L, R) of the exact M^-1 K at flint's current precision (cached per
        precision): :func:`mpvi.numbers.arbref.eig_simple_real`."""
        from flint import acb_mat

        from mpvi.numbers.arbref import eig_simple_real, fmpq_matrix, prec_digits
        digits = prec_digits()
        if digits not in self._arb_eigs:
            M, K = (fmpq_matrix(np.array(m, dtype=object).tolist(), label)
                    for m, label in zip(self._matrices, ("M", "K")))
            lam, L, R = eig_simple_real(acb_mat(M.inv() * K), f"{self.name}: M^-1 K")
            for k, x in enumerate(lam):
                if not x > 0:
                    raise ArithmeticError(f"{self.name}: omega_{k}^2 = {x} is not proven positive")
            self._arb_eigs[digits] = (lam, L, R)
        return self._arb_eigs[digits]

    def enclose_modes(self, dps: int) -> tuple[list[arb], list[list[arb]]]:
        """Enclose the eigenfrequencies and mode shapes in Arb balls (proven).

        The generalized eigenproblem ``K v = omega^2 M v`` is solved as the eigenproblem of
        ``M^-1 K``, formed exactly in rationals from the exact M and K the system was given
        (ints, strings, Fractions, or context numbers read as the binary numbers they
        are), by Arb's certified ``acb_mat_eig_simple_rump`` (Rump 2001; Arb: Johansson
        2017), which proves the eigenvalues simple and encloses eigenvalues and
        eigenvectors; each eigenvector is then scaled to ``v^T M v = 1`` in ball
        arithmetic.  Computed with ``dps + GUARD_DIGITS`` digits
        (:data:`mpvi.numbers.arbref.GUARD_DIGITS`); flint's precision is restored after.

        Parameters
        ----------
        dps : int
            The digits wanted; the balls carry about that many or more.

        Returns
        -------
        omega : list of flint.arb
            Balls containing the eigenfrequencies, ascending (the order is proven).
        V : list of list of flint.arb
            ``V[i][k]`` contains entry i of mode k, M-orthonormal, signed so that the entry
            of largest magnitude is positive (:meth:`modes` may differ by the sign).

        Raises
        ------
        ArithmeticError
            Multiple eigenvalues, or ones the working precision cannot separate (the
            message says which step failed).
        TypeError, ValueError
            M or K not given in exact numbers (a float, a non-finite number).
        """
        from flint import arb

        from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, fmpq_matrix, real_part
        with arb_precision(dps + GUARD_DIGITS):
            lam, _, R = self._arb_eig()
            M = fmpq_matrix(np.array(self._matrices[0], dtype=object).tolist(), "M")
            n = len(lam)
            omega, V = [x.sqrt() for x in lam], [[arb(0)] * n for _ in range(n)]
            for k in range(n):
                col = [R[i, k] for i in range(n)]
                j = max(range(n), key=lambda i: abs(complex(col[i].mid())))
                x = [real_part(col[i] / col[j], f"{self.name}: mode {k}") for i in range(n)]
                norm = sum((arb(M[i, l]) * x[i] * x[l] for i in range(n) for l in range(n)),
                           arb(0)).sqrt()
                for i in range(n):
                    V[i][k] = x[i] / norm
        return omega, V

    def omega_max(self) -> Real:
        """Return the largest eigenfrequency, the omega_max of axioms2024 eq. (40).

        Returns
        -------
        number
            The largest eigenfrequency.
        """
        return self.modes()[0][-1]

    # ----- mechanics (matrix formulas) --------------------------------------------------
    def mass(self, q: VectorLike | None = None, v: VectorLike | None = None,
             t: NumberLike | None = None) -> Matrix:
        """Return the constant mass matrix M.

        Parameters
        ----------
        q, v, t : optional
            Ignored (M is constant).

        Returns
        -------
        numpy.ndarray
            M.
        """
        return self.M

    def velocity(self, q: VectorLike, p: VectorLike,  # type: ignore[override]  # no guess: linear
                 t: NumberLike | None = None) -> Vector:
        """Compute the velocity v = M^-1 p.

        Parameters
        ----------
        q : array_like
            Positions (not read).
        p : array_like
            Momenta.
        t : number, optional
            Time (not read).

        Returns
        -------
        numpy.ndarray
            The velocity.
        """
        return self.Minv @ p

    def hamiltonian_rhs(self, q: VectorLike, p: VectorLike, t: NumberLike | None = None
                        ) -> tuple[Array, ...]:
        """Evaluate Hamilton's equations (q', p') = (M^-1 p, -K q).

        Parameters
        ----------
        q : array_like
            Positions.
        p : array_like
            Momenta.
        t : number, optional
            Time (ignored: the system is autonomous).

        Returns
        -------
        tuple of numpy.ndarray
            The derivatives q' and p'.
        """
        return self.Minv @ p, -(self.K @ q)

    def acceleration(self, t: NumberLike | None, q: VectorLike, v: VectorLike) -> Vector:
        """Compute the acceleration a = -M^-1 K q.

        Parameters
        ----------
        t : number or None
            Time (not read).
        q : array_like
            Positions.
        v : array_like
            Velocities (not read).

        Returns
        -------
        numpy.ndarray
            The acceleration.
        """
        return -(self.Minv @ (self.K @ q))

    def hamiltonian(self, q: VectorLike, p: VectorLike, t: NumberLike | None = None) -> Real:
        """Compute the energy H(p, q) = 1/2 p^T M^-1 p + 1/2 q^T K q (axioms2024, Sec. 6.3).

        ``energy`` is the same method.

        Parameters
        ----------
        q : array_like
            Positions.
        p : array_like
            Momenta.
        t : number, optional
            Time (not read).

        Returns
        -------
        number
            H.
        """
        return (p @ (self.Minv @ p) + q @ (self.K @ q)) / 2

    energy = hamiltonian

    def check_state(self, t: NumberLike | None, q: VectorLike, v: VectorLike | None = None
                    ) -> None:
        """Do nothing: M is constant and was checked positive definite at construction.

        Parameters
        ----------
        t, q, v : optional
            Ignored.
        """

    def _rebind(self, ctx, params):
        """This system in ``ctx`` (:meth:`LagrangianSystem.with_context`): M and K read
        from ``params`` where given, else again from the values the system was given;
        the model is shared."""
        M, K = (np.array(m, dtype=object) for m in self._matrices)
        for s, x in params.items():
            if x is not self._params[s]:
                letter, i, j = str(s)[0], *map(int, str(s)[1:].split("_"))
                for m in ((M,) if letter == "m" else (K,)):
                    m[i, j] = m[j, i] = x
        return type(self)(M.tolist(), K.tolist(), ctx, self.name)

    def __reduce__(self):
        d = self.ctx.dump
        exact = all(isinstance(x, (str, int, Fraction, sp.Rational))
                    for m in self._matrices for x in np.ravel(np.array(m, dtype=object)))
        return (_linear_system, ([[d(x) for x in r] for r in self.M], [[d(x) for x in r] for r in self.K],
                                 self.ctx, self.name, self._matrices if exact else None))

    def exact(self, q0: VectorLike, p0: VectorLike) -> ModalSolution:
        """Return the exact solution through (q0, p0) at t = 0, at context precision.

        Parameters
        ----------
        q0 : sequence of numbers
            Initial positions.
        p0 : sequence of numbers
            Initial momenta.

        Returns
        -------
        ModalSolution
            A callable ``t -> (q(t), p(t))``: the exact-solution protocol of a
            :class:`mpvi.Problem` given with ``p0``.
        """
        return ModalSolution(self, q0, p0)


@entry_class
class ModalSolution:
    """The exact solution of ``M q'' + K q = 0`` by modal decomposition.

    With ``K V = M V diag(w^2)`` and ``V^T M V = I``, modal coordinates
    ``a = V^T M q0`` and ``b = diag(1/w) V^T p0`` give
    ``q(t) = V (a cos wt + b sin wt)`` and ``p(t) = M q'(t) = M V diag(w)(-a sin wt + b cos wt)``.
    This is the general form of axioms2024 eq. (51) for any (M, K, q0, p0).

    The instance is the exact solution in mpvi's protocol: ``sol(t)`` -> (q(t), p(t)) for a
    problem given with p0 (:class:`mpvi.Problem`).  The initial data are taken at t = 0.

    Parameters
    ----------
    system : LinearSystem
        The system.
    q0 : sequence of numbers
        Positions at t = 0.
    p0 : sequence of numbers
        Momenta at t = 0.
    """

    def __init__(self, system: LinearSystem, q0: VectorLike, p0: VectorLike) -> None:
        ctx = system.ctx
        self.system = system
        self.ctx = ctx
        self._data = (q0, p0)
        self.omega, self.V = system.modes()
        q0 = self.q0 = ctx.asarray(q0)
        p0 = self.p0 = ctx.asarray(p0)
        self.a = self.V.T @ (system.M @ q0)
        self.b = (self.V.T @ p0) / self.omega
        self.MV = system.M @ self.V

    def __call__(self, t: NumberLike) -> tuple[Vector, Vector]:
        """Evaluate (q(t), p(t)) at one time ``t``.

        Parameters
        ----------
        t : number
            The time.

        Returns
        -------
        tuple of numpy.ndarray
            Positions and momenta.
        """
        return self.q(t), self.p(t)

    def enclose(self, t: NumberLike | arb, dps: int) -> tuple[list[arb], list[arb]]:
        """Enclose (q(t), p(t)) in Arb balls: a proven enclosure of the exact solution.

        With the certified diagonalization ``L (M^-1 K) R = diag(omega^2)``, ``L = R^-1``
        (:meth:`LinearSystem.enclose_modes`), and ``v0 = M^-1 p0``:
        ``q(t) = R (cos(omega t) L q0 + sin(omega t)/omega L v0)`` and
        ``p(t) = M R (-omega sin(omega t) L q0 + cos(omega t) L v0)`` -- the modal form of
        axioms2024 eq. (51), independent of how the eigenvectors are scaled.  Every
        operation is a ball operation from the exact M, K, q0, p0 and t on; the complex
        balls of the eigenvectors give real results (their real parts, checked to have
        imaginary parts containing 0).  Computed with ``dps + GUARD_DIGITS`` digits plus
        the digits ``omega_max |t|`` costs; flint's precision is restored after.

        Parameters
        ----------
        t : int, str, Fraction, context number or flint.arb
            The time, exact (read as a rational), or a ball: then the enclosure holds for
            every time in it.
        dps : int
            The digits wanted.

        Returns
        -------
        q : list of flint.arb
            Balls containing q(t).
        p : list of flint.arb
            Balls containing p(t) = M q'(t).

        Raises
        ------
        ArithmeticError
            Eigenvalues not proven simple (:meth:`LinearSystem.enclose_modes`).
        TypeError, ValueError
            An input that is not an exact number (a float, a non-finite number).
        """
        return self.enclose_many([t], dps)[0]

    def enclose_many(self, times: Sequence[NumberLike | arb], dps: int
                     ) -> list[tuple[list[arb], list[arb]]]:
        """Enclose (q(t), p(t)) at many times: :meth:`enclose` at each, the decomposition
        and the initial data read once.

        Computed with ``dps + GUARD_DIGITS`` digits plus those ``omega_max max|t|``
        costs; flint's precision is restored after.

        Parameters
        ----------
        times : sequence of (int, str, Fraction, context number or flint.arb)
            The times, each exact (read as a rational) or a ball.
        dps : int
            The digits wanted.

        Returns
        -------
        list of tuple
            Per time, (q, p) as :meth:`enclose` returns them.

        Raises
        ------
        ArithmeticError
            Eigenvalues not proven simple (:meth:`LinearSystem.enclose_modes`).
        TypeError, ValueError
            An input that is not an exact number (a float, a non-finite number).
        """
        from flint import acb_mat, arb_mat

        from mpvi.numbers.arbref import (GUARD_DIGITS, arb_precision, ball, exact_rational, fmpq_matrix,
                              lost_digits, magnitude, real_part)
        system = self.system
        size = magnitude(self.omega[-1]) * max((magnitude(t) for t in times), default=0.0)
        with arb_precision(dps + GUARD_DIGITS + lost_digits(size)):
            lam, L, R = system._arb_eig()
            Mq = fmpq_matrix(np.array(system._matrices[0], dtype=object).tolist(), "M")
            n = len(lam)
            q0 = [exact_rational(x, f"q0[{i}]") for i, x in enumerate(self._data[0])]
            p0 = [exact_rational(x, f"p0[{i}]") for i, x in enumerate(self._data[1])]
            if len(q0) != n or len(p0) != n:
                raise ValueError(f"q0 and p0 need {n} entries, got {len(q0)} and {len(p0)}")
            v0 = Mq.inv() * fmpq_matrix([[x] for x in p0], "p0")
            a = L * acb_mat(fmpq_matrix([[x] for x in q0], "q0"))
            b = L * acb_mat(v0)
            MR = acb_mat(arb_mat(Mq)) * R
            w = [x.sqrt() for x in lam]
            out = []
            for t in times:
                tt = ball(t, "t")
                qh, ph = acb_mat(n, 1), acb_mat(n, 1)
                for k in range(n):
                    s, c = (w[k] * tt).sin_cos()
                    qh[k, 0] = c * a[k, 0] + s / w[k] * b[k, 0]
                    ph[k, 0] = c * b[k, 0] - w[k] * s * a[k, 0]
                q = R * qh
                p = MR * ph
                out.append(([real_part(q[i, 0], f"q[{i}]") for i in range(n)],
                            [real_part(p[i, 0], f"p[{i}]") for i in range(n)]))
            return out

    def __reduce__(self):
        d = self.ctx.dump
        return _modal_solution, (self.system, [d(x) for x in self.q0], [d(x) for x in self.p0])

    def _cs(self, t):
        if isinstance(t, (list, tuple)):
            t = self.ctx.asarray(t)
        wt = self.omega * self.ctx.num(t) if not isinstance(t, np.ndarray) else np.outer(t, self.omega)
        return self.ctx.cos(wt), self.ctx.sin(wt)

    def q(self, t: NumberLike | Sequence[NumberLike]) -> Array:
        """Evaluate the positions q(t).

        Parameters
        ----------
        t : number or sequence of numbers
            One time, or a 1-D array of times.

        Returns
        -------
        numpy.ndarray
            q(t) (one row per time for an array).
        """
        c, s = self._cs(t)
        return (self.a * c + self.b * s) @ self.V.T

    def p(self, t: NumberLike | Sequence[NumberLike]) -> Array:
        """Evaluate the momenta p(t) = M q'(t).

        Parameters
        ----------
        t : number or sequence of numbers
            One time, or a 1-D array of times.

        Returns
        -------
        numpy.ndarray
            p(t) (one row per time for an array).
        """
        c, s = self._cs(t)
        return ((self.b * c - self.a * s) * self.omega) @ self.MV.T

    def qddot(self, t: NumberLike | Sequence[NumberLike]) -> Array:
        """Evaluate the accelerations q''(t), for checking the ODE.

        Parameters
        ----------
        t : number or sequence of numbers
            One time, or a 1-D array of times.

        Returns
        -------
        numpy.ndarray
            q''(t) (one row per time for an array).
        """
        c, s = self._cs(t)
        return (-(self.a * c + self.b * s) * self.omega ** 2) @ self.V.T


def _linear_system(M, K, ctx, name, sources=None):
    """Unpickle a :class:`LinearSystem`; ``sources`` are the exact M and K it was given (what
    :meth:`LagrangianSystem.with_context` reads), else its numbers are."""
    system = LinearSystem(M, K, ctx, name)
    system._matrices = sources if sources is not None else (system.M.tolist(), system.K.tolist())
    return system


def _modal_solution(system, q0, p0):
    return ModalSolution(system, q0, p0)
