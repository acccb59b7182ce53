"""Checking a proof again: :func:`mpvi.verify`.

A certificate (:class:`mpvi.Certificate`, from :func:`mpvi.certify` or a saved solution)
and a certified block of a results directory (``mpvi run --certify``) are claims: each
enclosure claims to hold the exact value, each count of proven digits claims that many.
A digest (:func:`mpvi.ground.io.content_digest`) shows that a file is as it was written, not
that what was written is true: whoever edits a value can compute the digest again.
:func:`verify` trusts neither: it proves the claims again from the recorded inputs and
checks that each recorded enclosure *contains* the recomputed one (then it holds the exact
value too) and that no recorded count of digits exceeds the recomputed one.

For a :class:`mpvi.Solution` the run is walked again on balls (:func:`mpvi.certify`, at the
certificate's digits; the solution must carry its problem: one of :func:`mpvi.solve`, or
a file of :meth:`mpvi.Solution.save` of format version 3, which rebuilds it).  For a
results directory the reproductions are computed and certified again by the framework
that wrote it (the ``mpvi.verifiers`` entry point ``results``, installed with mpvi:
``mpvi.repro.run.verify_results``, the same as ``mpvi verify``); the library does not
import the framework by name.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from mpvi.proof.certify import Certificate
    from mpvi.drive.solution import Solution

__all__ = ["verify", "Verification"]

VERIFIERS = "mpvi.verifiers"
"""The entry-point group of the verifier of results directories (``results``)."""


@entry_class
@dataclass
class Verification:
    """What :func:`verify` found (made by it, true when every claim holds).

    Parameters
    ----------
    checked : int, default 0
        The claims proven again.
    failures : list of str, optional
        The claims that do not hold, one line each.
    refused : dict, optional
        Id -> why it could not run here.
    skipped : list of str, optional
        The ids without a certified block.

    Attributes
    ----------
    checked : int
        The claims proven again (enclosures and counts of digits).
    failures : list of str
        One line per claim that does not hold, naming it (empty: every claim holds).
    refused : dict
        Results directories only: id -> why it could not run here (its context).
    skipped : list of str
        Results directories only: the ids without a certified block.
    """

    checked: int = 0
    failures: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every claim holds (and nothing was refused)."""
        return not self.failures and not self.refused

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        state = "every claim holds" if self.ok else (
            f"{len(self.failures)} failure(s)" + (f", {len(self.refused)} refused"
                                                   if self.refused else ""))
        return f"<Verification: {self.checked} claim(s) proven again, {state}>"


@entry
def verify(target: Solution | str | Path, certificate: Certificate | None = None, *,
           ids: Sequence[str] | None = None, stream: TextIO | None = None) -> Verification:
    """Prove a certificate or a results directory's certified blocks again.

    Parameters
    ----------
    target : Solution or path
        A solution (its ``certificate``, or ``certificate``, is checked by walking its
        run again with :func:`mpvi.certify` at the certificate's digits), or a results
        directory of ``mpvi run --certify`` (each certified block recomputed from its
        recorded context, digits and parameters, as ``mpvi verify`` does).
    certificate : Certificate, optional
        The certificate of ``target`` to check (default ``target.certificate``).
    ids : sequence of str, optional
        Results directory only: the reproductions to check (default every one with a
        certified block).
    stream : file, optional
        Results directory only: where the progress lines of the computations go
        (default none).

    Returns
    -------
    Verification
        The claims checked and the failures, each naming its point and component or its
        reproduction and value; true when every claim holds.

    Raises
    ------
    ValueError
        A solution without a certificate.
    TypeError
        A solution without its problem (:func:`mpvi.certify`), or a target of another type.
    LookupError
        A results directory, without the framework installed (its entry point).
    """
    from mpvi.drive.solution import Solution
    if isinstance(target, Solution):
        return _verify_solution(target, certificate if certificate is not None
                                else target.certificate)
    if isinstance(target, (str, Path)):
        found: Verification = _results_verifier()(Path(target), ids=ids, stream=stream)
        return found
    raise TypeError(f"verify takes an mpvi.Solution or a results directory, got "
                    f"{type(target).__name__}")


def _results_verifier() -> Any:
    from importlib.metadata import entry_points
    found = [e for e in entry_points(group=VERIFIERS) if e.name == "results"]
    if not found:
        raise LookupError(f"verify: no verifier of results directories is installed (entry "
                          f"point {VERIFIERS}:results; install mpvi with `pip install -e .`)")
    return found[0].load()


def _verify_solution(sol: Solution, cert: Certificate | None) -> Verification:
    """Walk ``sol`` again (:func:`mpvi.certify` at ``cert``'s digits) and check every
    recorded ball against the recomputed one."""
    from mpvi.proof.certify import certify
    if cert is None:
        raise ValueError("verify: the solution carries no certificate (mpvi.certify makes "
                         "one; pass certificate=)")
    new = certify(sol, dps=cert.context.dps)
    out = Verification()
    fail = out.failures.append
    if cert.method != new.method or list(cert.nodes) != list(new.nodes):
        fail(f"the certificate is of method {cert.method!r} at nodes {len(cert.nodes)}, the "
             f"run of {new.method!r} at {len(new.nodes)}")
        return out
    if len(cert.t) > len(new.t):
        fail(f"{len(cert.t)} points certified, {len(new.t)} proven again (step "
             f"{new.failed_step} not proven: {new.why})")
    names = ["q"] + ([] if sol.state == "y" else ["p" if sol.state == "qp" else "v"])
    for i in range(min(len(cert.t), len(new.t))):
        k = cert.nodes[i]
        pairs = [("t", [cert.t[i]], [new.t[i]]), (names[0], cert.q[i], new.q[i])]
        if len(names) > 1:
            pairs.append((names[1], cert.y[i], new.y[i]))
        for name, old_balls, new_balls in pairs:
            for c, (a, b) in enumerate(zip(old_balls, new_balls)):
                out.checked += 1
                if not a.contains(b):
                    where = name if name == "t" else f"{name}[{c}]"
                    fail(f"node {k}: {where}: the recorded enclosure of {_sci(a.mid(), 20)} "
                         f"(radius {_sci(a.rad())}) does not contain the recomputed one "
                         f"(radius {_sci(b.rad())}, midpoints {_sci(abs(a.mid() - b.mid()))} "
                         f"apart)")
        for c, (a, b) in enumerate(zip(cert.digits[i], new.digits[i])):
            out.checked += 1
            if a > b and not (math.isinf(a) and math.isinf(b)):
                fail(f"node {k}: component {c}: {a:.1f} proven digits recorded, {b:.1f} "
                     f"recomputed")
    return out


def _sci(x: Any, digits: int = 3) -> str:
    """A ball's midpoint (or an exact number) in ``digits`` significant digits."""
    return str(x.str(digits, radius=False))
