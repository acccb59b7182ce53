"""The smoke test of an installed mpvi (.ci/python-versions runs it in a fresh virtual
environment of each Python it tests, from a temporary directory outside the repository):
mpvi imports from that environment, a 64-digit pendulum is solved with Simpson's
variational integrator for 10 steps, and the command line answers ``mpvi list`` and
``mpvi --version``.  Given the checkout (``smoke.py CHECKOUT``, as .ci/python-versions
does), also what a user does first with the wheel: the README's library block prints what
its comments say, ``mpvi list`` names every reproduction of the checkout as not run yet,
``mpvi run`` and ``mpvi diff`` of a quick run work outside the repository with the data
files read from the wheel, and a paper script of the checkout answers ``--help``.  Any
failure is an exception or a nonzero exit status."""
import re
import subprocess
import sys
import textwrap
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
RID = "axioms2024_tab02"          # a quick run of a few seconds, with published values


def run(*argv):
    """``argv`` run to its end here; its stdout (its output on a nonzero exit status)."""
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    assert out.returncode == 0, f"{argv} exited with {out.returncode}:\n{out.stdout[-3000:]}" \
                                f"\n{out.stderr[-3000:]}"
    return out.stdout


def readme_library_block(checkout):
    """The ```python block of README.md's section "## The library in 20 lines"."""
    text = (checkout / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The library in 20 lines"):]
    section = section[:section.index("\n## ", 1)]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    return textwrap.dedent(block)


checked = ""
if len(sys.argv) > 1:
    checkout = Path(sys.argv[1]).resolve()
    import mpvi_papers
    assert Path(mpvi_papers.ROOT).resolve().is_relative_to(Path(sys.prefix).resolve())
    block = readme_library_block(checkout)
    Path("readme.py").write_text(block, encoding="utf-8")
    expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert len(expected) >= 4
    printed = run(sys.executable, "readme.py").splitlines()
    assert printed == expected, f"the README's block printed {printed}, its comments say {expected}"
    ids = sorted(p.stem for p in (checkout / "reproductions").glob("*/[!_]*.py"))
    assert len(ids) >= 48 and all(re.search(rf"^{i}\s", listed, re.M) for i in ids)
    assert "not run" in listed                 # no results outside the repository yet
    run(mpvi_cli, "run", RID, "--quick")
    assert Path("quick-figures", "axioms2024", f"{RID}.json").is_file()
    diff = run(mpvi_cli, "diff", RID, "--quick")          # exit 0: no mismatch
    assert re.search(r"\b\d+ match", diff), diff
    script = run(sys.executable, checkout / "reproductions" / "axioms2024" / f"{RID}.py", "--help")
    assert f"python {RID}.py" in script        # outside the checkout: its file name
    checked = f", the README's {len(expected)} printed lines, mpvi run and diff of {RID}"
print(f"smoke test passed on Python {sys.version.split()[0]}: q(1) = "
      f"{ctx.to_str(sol.q[-1][0], 20)}, energy drift {ctx.to_str(drift, 2)}, {version}, "
      f"{len(listed.splitlines())} lines of mpvi list{checked}")
