"""The smoke test of an installed mpvi (.ci/python-versions runs it in a fresh virtual
environment of each Python it tests, from a temporary directory outside the repository):
mpvi imports from that environment, a 64-digit pendulum is solved with Simpson's
variational integrator for 10 steps, and the command line answers ``mpvi list`` and
``mpvi --version``.  Any failure is an exception or a nonzero exit status."""
import subprocess
import sys
from pathlib import Path

import mpvi                     # first: a broken install fails here, naming mpvi
import sympy as sp              # one of mpvi's dependencies

where = Path(mpvi.__file__).resolve()
assert where.is_relative_to(Path(sys.prefix).resolve()), f"mpvi imported from {where}"

ctx = mpvi.GMPContext(64)
q = sp.Symbol("q")
pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.eye(1), -sp.cos(q), {}, ctx)
problem = mpvi.Problem(pendulum, ["1/2"], p0=[0], t1=1)
sol = mpvi.solve(problem, "simpson", h="1/10", n=10)
assert len(sol.t) == 11 and sol.t[-1] == 1, sol.t
(v,) = pendulum.velocity_symbols
energy = sol.observable(v**2 / 2 - sp.cos(q))
drift = max(abs(e - energy[0]) for e in energy)
assert drift < ctx.num("1e-6"), ctx.to_str(drift, 3)            # order 4, h = 1/10
assert ctx.dps == 64 and drift > 0

mpvi_cli = Path(sys.executable).parent / "mpvi"
listed = subprocess.run([mpvi_cli, "list"], capture_output=True, text=True, check=True).stdout
assert "axioms2024_tab02" in listed, listed[-2000:]
version = subprocess.run([mpvi_cli, "--version"], capture_output=True, text=True,
                         check=True).stdout.strip()
assert version == f"mpvi {mpvi.__version__}", version
print(f"smoke test passed on Python {sys.version.split()[0]}: q(1) = "
      f"{ctx.to_str(sol.q[-1][0], 20)}, energy drift {ctx.to_str(drift, 2)}, {version}, "
      f"{len(listed.splitlines())} lines of mpvi list")
