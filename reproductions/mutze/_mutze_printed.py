"""The printed text of Mutze's series theorem (Sec. 5, eq. (60), and the Appendix) kept as
data, for :mod:`mpvi_papers.mutze.mutze_theorem60`.

Source: U. Mutze, "A Simple Variational Integrator for General Holonomic Mechanical
Systems", text extracted from the PDF (``../shared/papers/002_1fd9b0ece8760466.txt``).

``FORM_OUTPUT`` is the "Results" part of the Appendix copied verbatim from the extracted
text (lines 902-957 of that file), including the extraction's markdown/LaTeX wrappers
(```` ``` ````, ``$$\\begin{aligned}``, ``& ``, `` \\``, ``\\tau``, ``\\text{...}``) and the
author's two remarks ("term manually moved ...", "higher order terms which were deleted
manually ...").  :func:`form_expression` strips exactly those wrappers and remarks and
returns the text after ``S =``, ``LHS =`` or ``DIFF =`` for
:func:`mpvi_papers.mutze._mutze_series.parse_form`.  One extraction artifact is repaired
there and reported by :data:`FORM_REPAIRS`: a FORM line break inside ``eDv*L`` of the
DIFF came out as ``eDv* \\ & *L`` (a doubled ``*``).

``EQ69``, ``EQ70`` and ``REMAINING`` are the hand conversions of eqs. (69), (70) and of
the remaining tau^2 terms of DIFF for L = T(v) - V(x), F = 0 (just before "QED"): one
entry per printed line, (printed LaTeX of the line as extracted, power of tau, common
factor of the bracket, my transliteration in the syntax of
:func:`mpvi_papers.mutze._mutze_series.parse_nabla`).  In that syntax ``dt`` = partial_t, ``v.dx`` =
v.nabla_x, ``a.dv^2`` = (a.nabla_v)^2, ``dx``/``dv`` = the free-index nabla_x/nabla_v
(contracted with e), ``e.dx`` = e.nabla_x, ``F`` = the free-index F (= e.F), ``a.F``,
``L``; ``?`` marks a term printed without a function.  The transliteration is literal:
nothing is corrected.  Where the printed line and the transliteration differ in form
(not in content) a comment says so.
"""
from __future__ import annotations

import re

FORM_OUTPUT = r"""
S =
+ tau * ( 2*L )
+ tau^2 * ( 2*Dt*L + 2*vDx*L + 2*aDv*L )
+ tau^3 * ( - 2/3*aF + 4/3*Dt*Dt*L + 8/3*Dt*vDx*L + 8/3*Dt*aDv*L + 4/3
*vDx*vDx*L + 8/3*vDx*aDv*L + 4/3*aDx*L + 4/3*aDv*aDv*L )
+ tau^4 * ( - 2/3*Dt*aF + 2/3*Dt*Dt*Dt*L + 2*Dt*Dt*vDx*L + 2*Dt*Dt*aDv
*L + 2*Dt*vDx*vDx*L + 4*Dt*vDx*aDv*L + 2*Dt*aDx*L + 2*Dt*aDv*aDv*L -
2/3*vDx*aF + 2/3*vDx*vDx*vDx*L + 2*vDx*vDx*aDv*L + 2*vDx*aDx*L + 2*
vDx*aDv*aDv*L + 2*aDx*aDv*L - 2/3*aDv*aF + 2/3*aDv*aDv*aDv*L )
+ tau^5 * ( - 2/5*Dt*Dt*aF + 4/15*Dt*Dt*Dt*Dt*L + 16/15*Dt*Dt*Dt*vDx*L
+ 16/15*Dt*Dt*Dt*aDv*L + 8/5*Dt*Dt*vDx*vDx*L + 16/5*Dt*Dt*vDx*aDv*L
+ 8/5*Dt*Dt*aDx*L + 8/5*Dt*Dt*aDv*aDv*L - 4/5*Dt*vDx*aF + 16/15*Dt*
vDx*vDx*vDx*L + 16/5*Dt*vDx*vDx*aDv*L + 16/5*Dt*vDx*aDx*L + 16/5*Dt*
vDx*aDv*aDv*L + 16/5*Dt*aDx*aDv*L - 4/5*Dt*aDv*aF + 16/15*Dt*aDv*aDv*
aDv*L - 2/5*vDx*vDx*aF + 4/15*vDx*vDx*vDx*vDx*L + 16/15*vDx*vDx*vDx*
aDv*L + 8/5*vDx*vDx*aDx*L + 8/5*vDx*vDx*aDv*aDv*L + 16/5*vDx*aDx*aDv*
L - 4/5*vDx*aDv*aF + 16/15*vDx*aDv*aDv*aDv*L - 2/5*aDx*aF + 4/5*aDx*
aDx*L + 8/5*aDx*aDv*aDv*L - 2/5*aDv*aDv*aF + 4/15*aDv*aDv*aDv*aDv*L )

LHS =
+ eF - Dt*eDv*L - vDx*eDv*L + eDx*L - aDv*eDv*L
(term manually moved from the last position to the first one)
+ tau * ( Dt*eF - Dt*Dt*eDv*L - 2*Dt*vDx*eDv*L + Dt*eDx*L - 2*Dt*aDv*
eDv*L + vDx*eF - vDx*vDx*eDv*L + vDx*eDx*L - 2*vDx*aDv*eDv*L - aDx*
eDv*L + eDx*aDv*L + aDv*eF - aDv*aDv*eDv*L )
+ tau^2 * ( 3/5*Dt*Dt*eF - 3/5*Dt*Dt*Dt*eDv*L - 9/5*Dt*Dt*vDx*eDv*L + 3/
5*Dt*Dt*eDx*L - 9/5*Dt*Dt*aDv*eDv*L + 6/5*Dt*vDx*eF - 9/5*Dt*vDx*vDx*
eDv*L + 6/5*Dt*vDx*eDx*L - 18/5*Dt*vDx*aDv*eDv*L - 9/5*Dt*aDx*eDv*L
+ 6/5*Dt*eDx*aDv*L + 6/5*Dt*aDv*eF - 9/5*Dt*aDv*aDv*eDv*L + 1/5*Dt*
eDv*aF + 3/5*vDx*vDx*eF - 3/5*vDx*vDx*vDx*eDv*L + 3/5*vDx*vDx*eDx*L

```

$$\begin{aligned}
& - 9/5*vDx*vDx*aDv*eDv*L - 9/5*vDx*aDx*eDv*L + 6/5*vDx*eDx*aDv*L + 6/ \\
& 5*vDx*aDv*eF - 9/5*vDx*aDv*aDv*eDv*L + 1/5*vDx*eDv*aF + 3/5*aDx*eF + \\
& 3/5*aDx*eDx*L - 9/5*aDx*aDv*eDv*L - 2/5*eDx*aF + 3/5*eDx*aDv*aDv*L + \\
& 3/5*aDv*aDv*eF - 3/5*aDv*aDv*aDv*eDv*L + 1/5*aDv*eDv*aF) \\
& + \text{higher order terms which were deleted manually in order to save space}
\end{aligned}$$

DIFF =

$$\begin{aligned}
& + \tau^2 * (1/10*Dt*Dt*eF - 1/10*Dt*Dt*Dt*eDv*L - 3/10*Dt*Dt*vDx*eDv*L \\
& + 1/10*Dt*Dt*eDx*L - 3/10*Dt*Dt*aDv*eDv*L + 1/5*Dt*vDx*eF - 3/10*Dt* \\
& vDx*vDx*eDv*L + 1/5*Dt*vDx*eDx*L - 3/5*Dt*vDx*aDv*eDv*L - 4/5*Dt*aDx* \\
& eDv*L + Dt*aDx*eDv*L*g + 1/5*Dt*eDx*aDv*L + 1/5*Dt*aDv*eF - 3/10*Dt* \\
& aDv*aDv*eDv*L + 1/5*Dt*eDv*aF + 1/10*vDx*vDx*eF - 1/10*vDx*vDx*vDx* \\
& eDv*L + 1/10*vDx*vDx*eDx*L - 3/10*vDx*vDx*aDv*eDv*L - 4/5*vDx*aDx*eDv* \\
& *L + vDx*aDx*eDv*L*g + 1/5*vDx*eDx*aDv*L + 1/5*vDx*aDv*eF - 3/10*vDx* \\
& aDv*aDv*eDv*L + 1/5*vDx*eDv*aF + 3/5*aDx*eF - aDx*eF*g + 3/5*aDx*eDx* \\
& L - aDx*eDx*L*g - 4/5*aDx*aDv*eDv*L + aDx*aDv*eDv*L*g - 2/5*eDx*aF + \\
& 1/10*eDx*aDv*aDv*L + 1/10*aDv*aDv*eF - 1/10*aDv*aDv*aDv*eDv*L + 1/5* \\
& aDv*eDv*aF) \\
& + \text{higher order terms which were deleted manually in order to save space}
"""


FORM_PROGRAM_HTAU = "Local Htau=1+sum_(j,1,'p',invfac_(j)*(taut+tau*tau+aDx)^j);"
"""The Appendix's definition of the shift operator H(tau, g) as extracted.  As printed it
would not use taux, tauv (defined on the two lines before) and cannot produce the printed
output; the printed RHS corresponds to (taut+taux+tauv), as in the analogous
``Local Hh=1+sum_(j,1,'p',invfac_(j)*(ht+hx+hv)^j);``."""

FORM_REPAIRS = {"eDv**L": "eDv*L"}
"""Repairs of extraction artifacts applied by :func:`form_expression` (after removing all
whitespace): a line break inside a word that came out as a doubled ``*``."""

_OBJECTS = ("S", "LHS", "DIFF")


def form_expression(name, text=None):
    """The FORM output for ``name`` ('S', 'LHS' or 'DIFF') without the extraction's
    wrappers and the author's remarks, as one whitespace-free string."""
    if name not in _OBJECTS:
        raise ValueError(f"form_expression: name must be one of {_OBJECTS}, got {name!r}")
    text = FORM_OUTPUT if text is None else text
    lines = text.splitlines()
    starts = {ln.strip()[:-1].strip(): i for i, ln in enumerate(lines)
              if ln.strip().endswith("=") and ln.strip()[:-1].strip() in _OBJECTS}
    if name not in starts:
        raise ValueError(f"form_expression: no line '{name} =' in the FORM output")
    begin = starts[name] + 1
    end = min([i for i in starts.values() if i > starts[name]], default=len(lines))
    kept = []
    for ln in lines[begin:end]:
        s = ln.strip()
        if s in ("```", r"$$\begin{aligned}", r"\end{aligned}$$") or "manually" in s:
            continue
        s = s.removeprefix("&")
        if s.endswith("\\\\"):
            s = s[:-2]
        kept.append(s.replace(r"\tau", "tau"))
    out = re.sub(r"\s+", "", "".join(kept))
    for bad, good in FORM_REPAIRS.items():
        out = out.replace(bad, good)
    return out


def form_repairs_used(name):
    """Which of :data:`FORM_REPAIRS` the output of ``name`` needs."""
    saved = dict(FORM_REPAIRS)
    try:
        FORM_REPAIRS.clear()
        text = form_expression(name)
    finally:
        FORM_REPAIRS.update(saved)
    return [bad for bad in FORM_REPAIRS if bad in text]


# ----- eq. (69): S to tau^4 -------------------------------------------------------------
# The tau^2 bracket "(d_t + v.nabla_x + a.nabla_v) L" is written out as three terms.
EQ69 = [
    (r"S(t, x, v, a, \tau) &= [2\tau L + 2\tau^2(\partial_t + v \cdot \nabla_x + a \cdot \nabla_v) L",
     1, "2", "L"),
    (None, 2, "2", "dt L + v.dx L + a.dv L"),
    (r"&+ \frac{2}{3}\tau^3(-a \cdot F + 2\partial_t^2 L + 4\partial_t v \cdot \nabla_x L + 4\partial_t a \cdot \nabla_v L + 2v \cdot \nabla_x^2 L",
     3, "2/3", "- a.F + 2 dt^2 L + 4 dt v.dx L + 4 dt a.dv L + 2 v.dx^2 L"),
    (r"&+ 4v \cdot \nabla_x a \cdot \nabla_v L + 2a \cdot \nabla_x L + 2a \cdot \nabla_v^2 L)",
     3, "2/3", "+ 4 v.dx a.dv L + 2 a.dx L + 2 a.dv^2 L"),
    (r"&+ \frac{2}{3}\tau^4(-\partial_t a \cdot F + \partial_t^3 L + 3\partial_t^2 v \cdot \nabla_x L + 3\partial_t^2 a \cdot \nabla_v L",
     4, "2/3", "- dt a.F + dt^3 L + 3 dt^2 v.dx L + 3 dt^2 a.dv L"),
    (r"&+ 3\partial_t v \cdot \nabla_x^2 L + 6\partial_t v \cdot \nabla_x a \cdot \nabla_v L + 3\partial_t a \cdot \nabla_x L + 3\partial_t a \cdot \nabla_v^2",
     4, "2/3", "+ 3 dt v.dx^2 L + 6 dt v.dx a.dv L + 3 dt a.dx L + 3 dt a.dv^2 ?"),
    (r"&- v \cdot \nabla_x a \cdot F + v \cdot \nabla_x^3 L + 3v \cdot \nabla_x^2 a \cdot \nabla_v L + 3v \cdot \nabla_x a \cdot \nabla_x L",
     4, "2/3", "- v.dx a.F + v.dx^3 L + 3 v.dx^2 a.dv L + 3 v.dx a.dx L"),
    (r"&+ 3v \cdot \nabla_x a \cdot \nabla_v^2 L + 3a \cdot \nabla_x a \cdot \nabla_v L - a \cdot \nabla_v a \cdot F + a \cdot \nabla_v^3 L)](t, x, v)",
     4, "2/3", "+ 3 v.dx a.dv^2 L + 3 a.dx a.dv L - a.dv a.F + a.dv^3 L"),
]
"""Eq. (69), S through tau^4: (printed line, power, factor, transliteration).  The first
printed line holds the tau and tau^2 terms (two entries, the second with ``None``)."""

# ----- eq. (70): D_tau S to tau^1 (free index = contraction with e) ----------------------
EQ70 = [
    (r"(D_\tau S)(t, x, v, a, \tau) &= [F - \partial_t \nabla_v L - v \cdot \nabla_x \nabla_v L + \nabla_x L - a \cdot \nabla_v \nabla_v L",
     0, "1", "F - dt dv L - v.dx dv L + dx L - a.dv dv L"),
    (r"&+ \tau(\partial_t F - \partial_t^2 \nabla_v L - 2\partial_t v \cdot \nabla_x \nabla_v L + \partial_t \nabla_x L - 2\partial_t a \cdot \nabla_v \nabla_v L",
     1, "1", "dt F - dt^2 dv L - 2 dt v.dx dv L + dt dx L - 2 dt a.dv dv L"),
    (r"&+ v \cdot \nabla_x F - v \cdot \nabla_x^2 \nabla_v L + v \cdot \nabla_x \nabla_x L - 2v \cdot \nabla_x a \cdot \nabla_v \nabla_v L - a \cdot \nabla_x \nabla_v L",
     1, "1", "+ v.dx F - v.dx^2 dv L + v.dx dx L - 2 v.dx a.dv dv L - a.dx dv L"),
    (r"&+ \nabla_x a \cdot \nabla_v L + a \cdot \nabla_v F - a \cdot \nabla_v^2 \nabla_v L)](t, x, v)",
     1, "1", "+ dx a.dv L + a.dv F - a.dv^2 dv L"),
]
"""Eq. (70), D_tau S through tau^1: (printed line, power, factor, transliteration)."""

# ----- the remaining tau^2 terms of DIFF for L = T(v) - V(x), F = 0 ------------------------
# The print has no sign between its two lines; read as '+'.
REMAINING = [
    (r"& \frac{1}{10} v \cdot \nabla_x^2 e \cdot \nabla_x L - \frac{1}{10} a \cdot \nabla_v^3 e \cdot \nabla_v L",
     2, "1", "1/10 v.dx^2 e.dx L - 1/10 a.dv^3 e.dv L"),
    (r"& \frac{3}{5} a \cdot \nabla_x e \cdot \nabla_x L - g a \cdot \nabla_x e \cdot \nabla_x L .",
     2, "1", "3/5 a.dx e.dx L - g a.dx e.dx L"),
]
"""The terms printed as remaining in DIFF for L = T(v) - V(x), F = 0 (end of the proof of
eq. 60): (printed line, power, factor, transliteration)."""

G_PRINTED = "3/5"
"""The value of g printed in the theorem (eq. 60) and at the end of its proof."""
