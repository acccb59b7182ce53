"""Issue 35: the compiled-kernel cache is a trusted store (a module is loaded only if it is
the one mpvi built, from a directory nobody else can write), bad environment variables and
command-line inputs give one clear line, and a Dask run whose cluster goes away ends with
one line instead of a traceback or a hang.

The cache tests run mpvi in a subprocess: a module that is loaded when it should not be
may crash the process (SIGBUS, SIGSEGV) or hang it (a FIFO), which must not take pytest
with it."""
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from mpvi.compiled import cbackend

needs_toolchain = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

KERNEL = textwrap.dedent("""
    import sys
    import sympy as sp
    import mpvi
    from mpvi.compiled import cbackend, codegen
    x = sp.Symbol("x")
    ctx = mpvi.GMPContext(30)
    exprs = [sp.sin(x) / 3 + x**5 - sp.Rational(2, 7)]
    compiled = codegen.generate([[x]], exprs, ctx, compiled=True)
    python = codegen.generate([[x]], exprs, ctx, compiled=False)
    with ctx.active():
        args = [ctx.num("0.7")]
        c, p = compiled(args)[0], python(args)[0]
    print(type(compiled).__name__, c == p and c.precision == p.precision, ctx.to_str(c))
    private = getattr(cbackend, "_private", {}).get("dir")
    print(private[0] if private else "-")
""")
"""Compiles a small kernel (a module of its own) and prints: whether the compiled function
was used and equals the Python one bit for bit, its value, and the private directory of the
process if it made one."""

COMPILED = "builtin_function_or_method"


def run_kernel(cache, timeout=120, **env):
    """Run :data:`KERNEL` in a subprocess with the kernel cache ``cache``: (process, the
    lines of stdout)."""
    environ = dict(os.environ, MPVI_KERNEL_CACHE=str(cache), MPVI_COMPILED="1",
                   MPVI_COMPILE_AFTER="0", **env)
    r = subprocess.run([sys.executable, "-c", KERNEL], capture_output=True, text=True,
                       timeout=timeout, env=environ)
    return r, r.stdout.splitlines()


def mpvi_lines(err):
    return [line for line in err.splitlines() if line.startswith("mpvi: ")]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A cache directory holding the module of :data:`KERNEL`, built by mpvi: (directory,
    module file name, the value the kernel prints)."""
    cache = tmp_path_factory.mktemp("built") / "kernels"
    r, out = run_kernel(cache)
    assert r.returncode == 0, r.stderr
    assert out[0].split()[:2] == [COMPILED, "True"]
    modules = [p.name for p in cache.iterdir() if p.name.startswith("mpvi_k")
               and not p.name.endswith(".sha256")]
    assert len(modules) == 1
    return cache, modules[0], out[0].split()[2]


@pytest.fixture
def cache(built, tmp_path):
    """A fresh copy of the built cache: (directory, module path, value)."""
    directory, name, value = built
    copy = tmp_path / "kernels"
    shutil.copytree(directory, copy)
    os.chmod(copy, 0o700)
    return copy, copy / name, value


def plant(path, marker):
    """Write at ``path`` a valid extension module of the same name whose loading writes
    ``marker`` (at dlopen, before any Python code of it runs)."""
    tc = cbackend.toolchain()
    name = path.name.split("_")[0] + "_" + path.name.split("_")[1]      # mpvi_k<hash>
    src = path.parent / "planted.c"
    src.write_text(textwrap.dedent(f"""
        #include <Python.h>
        #include <stdio.h>
        __attribute__((constructor)) static void planted(void) {{
            FILE *f = fopen("{marker}", "w");
            if (f) {{ fputs("planted code ran", f); fclose(f); }}
        }}
        PyMODINIT_FUNC PyInit_{name}(void) {{
            PyErr_SetString(PyExc_ImportError, "planted module");
            return NULL;
        }}
    """))
    out = path.parent / "planted.so"
    subprocess.run([tc["cc"], "-shared", "-fPIC", "-w", str(src), "-o", str(out),
                    *[f"-I{d}" for d in tc["includes"]]], check=True, capture_output=True)
    os.replace(out, path)
    src.unlink()


def record_for(path):
    """A digest record that vouches for whatever is at ``path`` now (as an attacker who can
    write the directory -- and read the store's key -- could write)."""
    import hashlib
    data = path.read_bytes()
    record = path.with_name(path.name + ".sha256")
    source = dict(line.split(" ", 1) for line in record.read_text().splitlines()
                  if " " in line)["source"]
    key = cbackend._store_key(path.parent, create=False)
    record.write_text(cbackend._record_text(path.name, len(data),
                                            hashlib.sha256(data).hexdigest(), source, key))


def assert_rebuilt_and_used(r, out, module, value):
    """The kernel ran compiled with the right value, after one line saying that the bad
    module was not loaded, and the module now in the cache is one mpvi built."""
    assert r.returncode == 0, r.stderr
    assert out[0].split() == [COMPILED, "True", value]
    lines = mpvi_lines(r.stderr)
    assert len(lines) == 1 and str(module) in lines[0], r.stderr
    assert lines[0].endswith("not loaded; removed and rebuilt")
    assert cbackend._module_problem(module) is None


# ----- a bad module in a trusted cache -------------------------------------------------------

@needs_toolchain
def test_a_planted_module_at_the_cached_name_is_never_loaded(cache, tmp_path):
    directory, module, value = cache
    marker = tmp_path / "marker"
    plant(module, marker)
    r, out = run_kernel(directory)
    assert not marker.exists(), "the planted module was loaded"
    assert_rebuilt_and_used(r, out, module, value)
    assert "not the" in mpvi_lines(r.stderr)[0]


@needs_toolchain
def test_a_module_without_its_digest_record_is_rebuilt(cache, tmp_path):
    directory, module, value = cache
    marker = tmp_path / "marker"
    plant(module, marker)
    module.with_name(module.name + ".sha256").unlink()
    r, out = run_kernel(directory)
    assert not marker.exists()
    assert_rebuilt_and_used(r, out, module, value)
    assert "has no digest record" in r.stderr


@needs_toolchain
@pytest.mark.parametrize("damage", ["truncated", "flipped bytes", "empty"])
def test_a_damaged_module_is_not_loaded_and_the_run_gets_the_right_numbers(cache, damage):
    directory, module, value = cache
    data = bytearray(module.read_bytes())
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "flipped bytes":
        for i in range(len(data) // 4, len(data) // 4 + 64):
            data[i] ^= 0xFF
    else:
        data = b""
    module.write_bytes(bytes(data))
    r, out = run_kernel(directory)
    assert_rebuilt_and_used(r, out, module, value)


@needs_toolchain
def test_the_digest_record_of_another_module_does_not_vouch_for_it(cache, tmp_path):
    """A module and its record copied to the name of another module: the record binds the
    file name."""
    directory, module, value = cache
    other = module.with_name(module.name.replace("mpvi_k", "mpvi_kf", 1))
    shutil.copy(module, other)
    shutil.copy(module.with_name(module.name + ".sha256"), other.with_name(other.name + ".sha256"))
    os.replace(other, module)
    os.replace(other.with_name(other.name + ".sha256"), module.with_name(module.name + ".sha256"))
    data = module.read_bytes()
    plant(module, tmp_path / "marker")
    assert module.read_bytes() != data
    record = module.with_name(module.name + ".sha256")
    record.write_text(record.read_text().replace(module.name, other.name))
    r, out = run_kernel(directory)
    assert not (tmp_path / "marker").exists()
    assert_rebuilt_and_used(r, out, module, value)
    assert "digest record this store did not write" in r.stderr    # edited by hand


@needs_toolchain
@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory", "group-writable"])
def test_a_cache_entry_that_is_not_a_private_regular_file_is_not_opened(cache, tmp_path, kind):
    """A FIFO at the cached name does not hang the run (it is never opened); a symbolic
    link (even to a good module) and a module others can write are not loaded; a
    directory, which mpvi does not remove, leaves the module unstored but used."""
    directory, module, value = cache
    good = tmp_path / "good.so"
    shutil.copy(module, good)
    module.unlink()
    if kind == "fifo":
        os.mkfifo(module)
    elif kind == "symlink":
        module.symlink_to(good)
    elif kind == "directory":
        module.mkdir()
    else:
        shutil.copy(good, module)
        os.chmod(module, 0o775)
    t0 = time.monotonic()
    r, out = run_kernel(directory, timeout=60)
    assert time.monotonic() - t0 < 60
    assert r.returncode == 0, r.stderr
    assert out[0].split() == [COMPILED, "True", value]
    lines = mpvi_lines(r.stderr)
    if kind == "directory":
        assert lines == [
            f"mpvi: the compiled kernel {module} is a directory, not a regular file: not "
            f"loaded; rebuilt (it cannot be removed)",
            f"mpvi: the compiled kernel {module} cannot be stored (Is a directory); it is "
            f"used by this process only"]
        assert module.is_dir()
        return
    assert len(lines) == 1 and lines[0].endswith("not loaded; removed and rebuilt"), r.stderr
    assert {"fifo": "is a FIFO", "symlink": "is a symbolic link",
            "group-writable": "is writable by group or others (mode 0775)"}[kind] in lines[0]
    assert cbackend._module_problem(module) is None


@needs_toolchain
@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_digest_record_that_is_not_a_regular_file_is_not_opened(cache, tmp_path, kind):
    directory, module, value = cache
    record = module.with_name(module.name + ".sha256")
    good = tmp_path / "good.sha256"
    shutil.copy(record, good)
    record.unlink()
    if kind == "fifo":
        os.mkfifo(record)
    else:
        record.symlink_to(good)
    r, out = run_kernel(directory, timeout=60)
    assert_rebuilt_and_used(r, out, module, value)
    assert f"has a digest record that is a {'FIFO' if kind == 'fifo' else 'symbolic link'}, " \
           f"not a regular file" in r.stderr


# ----- an untrusted cache directory ----------------------------------------------------------

def other_owner(path):
    """Give ``path`` to another user (needs root), else skip."""
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    os.chown(path, 65534, 65534)


@needs_toolchain
@pytest.mark.parametrize("how", ["world-writable", "group-writable", "another owner",
                                 "in a world-writable directory"])
def test_an_untrusted_cache_directory_is_not_used(cache, tmp_path, how):
    """Modules that would pass every check of a module (a record vouching for them) are not
    loaded from a directory someone else can write: one line, once, and the kernel is
    compiled in a private directory of the process, removed at its exit."""
    directory, module, value = cache
    marker = tmp_path / "marker"
    plant(module, marker)
    record_for(module)
    used = directory
    if how == "world-writable":
        os.chmod(directory, 0o777)
    elif how == "group-writable":
        os.chmod(directory, 0o770)
    elif how == "another owner":
        other_owner(directory)
    else:
        parent = tmp_path / "shared"
        parent.mkdir()
        used = parent / "kernels"
        os.replace(directory, used)
        os.chmod(parent, 0o777)
    before = sorted(p.name for p in used.iterdir())
    r, out = run_kernel(used)
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "a module of the untrusted directory was loaded"
    assert out[0].split() == [COMPILED, "True", value]
    lines = mpvi_lines(r.stderr)
    assert lines == [lines[0]] and lines[0].startswith(f"mpvi: the kernel cache {used} ")
    assert lines[0].endswith("not used; compiled kernels are built in a private temporary "
                             "directory for this process")
    expected = {"world-writable": "is writable by group or others (mode 0777)",
                "group-writable": "is writable by group or others (mode 0770)",
                "another owner": "is owned by uid 65534",
                "in a world-writable directory": f"is in {used.parent}, writable by group or "
                                                 f"others (mode 0777)"}[how]
    assert expected in lines[0]
    private = out[1]
    assert private != "-" and not os.path.exists(private), "the private directory is left"
    assert sorted(p.name for p in used.iterdir()) == before, "the untrusted directory was written"


@needs_toolchain
def test_a_new_cache_directory_is_private(tmp_path):
    """The default cache directory (below $HOME) is created with mode 0700."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MPVI_KERNEL_CACHE"}
    r = subprocess.run([sys.executable, "-c", KERNEL], capture_output=True, text=True,
                       timeout=120, env=dict(env, HOME=str(home), MPVI_COMPILE_AFTER="0"))
    assert r.returncode == 0 and not mpvi_lines(r.stderr), r.stderr
    kernels = home / ".cache" / "mpvi" / "kernels"
    assert stat.S_IMODE(os.stat(kernels).st_mode) == 0o700
    assert r.stdout.split()[:2] == [COMPILED, "True"]


@needs_toolchain
def test_a_module_is_stored_writable_by_its_owner_alone_whatever_the_umask(tmp_path):
    """Under umask 002 (a shared group) the module and its record are still not
    group-writable: the next process loads them without a word."""
    code = "import os; os.umask(0o002); exec(compile(open(0).read(), 'k', 'exec'))"
    env = dict(os.environ, MPVI_KERNEL_CACHE=str(tmp_path / "kernels"), MPVI_COMPILE_AFTER="0")
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code], input=KERNEL, capture_output=True,
                           text=True, timeout=120, env=env)
        assert r.returncode == 0 and not mpvi_lines(r.stderr), r.stderr
    for p in (tmp_path / "kernels").iterdir():
        assert not p.stat().st_mode & 0o022, p


# ----- MPVI_COMPILE_AFTER ---------------------------------------------------------------------

@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "", "1e3"])
def test_a_bad_compile_after_is_one_clear_error(monkeypatch, tmp_path, value):
    import sympy as sp
    import mpvi
    from mpvi.compiled import codegen
    monkeypatch.setenv("MPVI_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setenv("MPVI_COMPILE_AFTER", value)
    x = sp.Symbol("x")
    with pytest.raises(ValueError) as exc:
        codegen.generate([[x]], [x / 7 + 1], mpvi.GMPContext(30))
    assert str(exc.value).startswith(f"MPVI_COMPILE_AFTER={value!r}: must be a non-negative "
                                     f"integer")


def test_compile_after_reads_a_non_negative_integer(monkeypatch):
    monkeypatch.setenv("MPVI_COMPILE_AFTER", " 25 ")
    assert cbackend.compile_after() == 25
    monkeypatch.delenv("MPVI_COMPILE_AFTER")
    assert cbackend.compile_after() == cbackend.COMPILE_AFTER


# ----- the command line: missing inputs, numeric options --------------------------------------

def test_list_report_and_diff_of_a_missing_results_directory_are_one_line(tmp_path, capsys):
    from mpvi.repro.cli import main
    missing, file = tmp_path / "nonexistent", tmp_path / "a-file"
    file.write_text("x")
    for argv, option, path in [
            (["report", "--results", str(missing), "--out", str(tmp_path / "r")], "--results",
             missing),
            (["list", "--results", str(missing)], "--results", missing),
            (["list", "--results", str(file)], "--results", file),
            (["diff", "--all", "--results", str(missing)], "--results", missing),
            (["diff", "axioms2024_fig08", "--results", str(file)], "--results", file)]:
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        what = "does not exist" if path == missing else "is not a directory"
        assert lines == [f"mpvi: the results directory {path} ({option}) {what}: run `mpvi run "
                         f"--all --results {path}` (or some ids) first"], argv
        assert captured.out == ""
    assert not (tmp_path / "r").exists()


def test_a_report_of_a_directory_without_outputs_is_refused(tmp_path, capsys):
    from mpvi.repro.cli import main
    empty = tmp_path / "empty"
    (empty / "axioms2024").mkdir(parents=True)
    assert main(["report", "--results", str(empty), "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"mpvi: no outputs of `mpvi run` in the results directory {empty}: nothing to report"]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("argv, message", [
    (["--dps", "1000001"], "argument --dps: expected at most 1000000 digits, got 1000001"),
    (["--dps", "99999999999999999999"], "expected at most 1000000 digits"),
    (["--jobs", str(4 * (os.cpu_count() or 1) + 1)],
     f"argument --jobs: expected at most {4 * (os.cpu_count() or 1)} (4 per CPU of this "
     f"machine), got {4 * (os.cpu_count() or 1) + 1}"),
])
def test_numeric_run_options_out_of_range_are_argparse_errors(capsys, tmp_path, argv, message):
    from mpvi.repro.cli import main
    with pytest.raises(SystemExit) as exc:
        main(["run", "axioms2024_fig02", "--out", str(tmp_path / "o"), *argv])
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_mpvi_run_with_a_bad_compile_after_is_one_line(monkeypatch, tmp_path, capsys):
    from mpvi.repro.cli import main
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "abc")
    assert main(["run", "axioms2024_fig02", "--quick", "--results", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "mpvi: error: EnvironmentSettingError: MPVI_COMPILE_AFTER='abc': must be a "
        "non-negative integer "
        "(the calls of a kernel before it is compiled; unset: when its time in Python "
        "reaches its expected compile time)"]
    assert not (tmp_path / "o").exists()


# ----- a Dask cluster that goes away mid-run ---------------------------------------------------
# The reproductions are defined at the top level of this module: a Dask worker imports it
# (PYTHONPATH) to find them.

SLEEP_S = 0.5
"""How long each study task of the slow reproductions takes (their compute twice that)."""

try:
    from mpvi.repro.declare import Output, Reproduction
    from mpvi.repro.studies import Task, study

    @study("test_trust_cache_slow")
    def slow(rec, params):
        time.sleep(params["s"])
        return {"x": rec.ctx.num(params["x"])}

    def _slow_reproduction(i):
        def compute(run):
            import pandas as pd
            x = run.study(slow, {"x": str(i), "s": SLEEP_S})["x"]
            time.sleep(2 * SLEEP_S)
            return Output(tables={"": pd.DataFrame({"x": [run.ctx.to_str(x)]})})

        def plot(out, params):
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots()
            ax.plot([0, 1], [0, i])
            return fig
        return Reproduction(id=f"slow_{i}", paper="slow", item=f"Fig. {i}", title="t",
                            params={}, compute=compute, plot=plot,
                            tasks=lambda p: [Task(slow, {"x": str(i), "s": SLEEP_S})],
                            module=__name__)

    SLOW = {f"slow_{i}": _slow_reproduction(i) for i in range(8)}
    for _rep in SLOW.values():
        globals()[f"REP_{_rep.id}"] = _rep
except ImportError:                     # pragma: no cover - imported by a bare worker
    SLOW = {}

TESTS = os.path.dirname(os.path.abspath(__file__))

SCHEDULER = textwrap.dedent("""
    import asyncio, sys
    import distributed

    async def main():
        async with distributed.Scheduler(host="127.0.0.1", port=0, dashboard_address=None) as s:
            print(s.address, flush=True)
            if sys.argv[1] == "with a worker":
                async with distributed.Worker(s.address, nthreads=1):
                    await s.finished()
            await s.finished()
    asyncio.run(main())
""")
"""A Dask scheduler on a free port (it prints its address), with a worker in the same
process or none."""

WORKER = textwrap.dedent("""
    import asyncio, sys
    import distributed

    async def main():
        async with distributed.Worker(sys.argv[1], nthreads=1) as w:
            await w.finished()
    asyncio.run(main())
""")

DRIVER = textwrap.dedent("""
    import sys
    import mpvi.repro.cli
    import mpvi.repro.parallel
    import test_trust_cache
    from mpvi.repro.cli import main
    mpvi.repro.cli.all_reproductions = lambda: test_trust_cache.SLOW
    mpvi.repro.parallel.WORKERLESS_S = test_trust_cache.WORKERLESS_S
    sys.exit(main(["run", "--all", "--no-cache", "--scheduler", sys.argv[1], "--out", sys.argv[2]]))
""")
"""``mpvi run --all --scheduler ADDRESS --out DIR`` on the slow reproductions, waiting
:data:`WORKERLESS_S` for a worker instead of the 20 s of a real run."""
WORKERLESS_S = 3.0


def start(code, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def wait_for(condition, seconds, what):
    t0 = time.monotonic()
    while not condition():
        assert time.monotonic() - t0 < seconds, f"no {what} after {seconds} s"
        time.sleep(0.1)


def written(out):
    return sorted(p.stem for p in (out / "slow").glob("*.json")) if (out / "slow").is_dir() else []


@pytest.fixture
def processes():
    """Start processes; kill those still running at the end."""
    started = []

    def run(code, *args):
        p = start(code, *args)
        started.append(p)
        return p
    yield run
    for p in started:
        if p.poll() is None:
            p.kill()
        p.communicate()


@pytest.mark.parametrize("what", ["the scheduler dies", "all workers die"])
def test_a_dask_run_whose_cluster_goes_away_ends_in_one_line(processes, tmp_path, what):
    """Killing the scheduler (with its worker) or the only worker of an external cluster in
    the middle of ``mpvi run --scheduler``: the run ends within a minute with one line
    naming what happened, exit status 1, no traceback, and the reproductions that were
    written before are kept."""
    pytest.importorskip("distributed", reason="Dask is not installed (pip install -e '.[dask]')")
    scheduler = processes(SCHEDULER, "with a worker" if what == "the scheduler dies" else "alone")
    address = scheduler.stdout.readline().strip()
    assert address.startswith("tcp://"), scheduler.stderr.read()
    if what == "all workers die":
        worker = processes(WORKER, address)
    out = tmp_path / "out"
    run = processes(DRIVER, address, str(out))
    wait_for(lambda: written(out) or run.poll() is not None, 60, "reproduction written")
    assert run.poll() is None, run.communicate()
    kept = written(out)
    (scheduler if what == "the scheduler dies" else worker).kill()
    t0 = time.monotonic()
    try:
        _, err = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"mpvi run still running 60 s after {what}")
    elapsed = time.monotonic() - t0
    assert run.returncode == 1, err
    assert "Traceback" not in err and "CancelledError" not in err, err
    lines = [x for x in err.splitlines() if "the run stops after" in x]
    cause = ("the Dask scheduler " + address + " is gone" if what == "the scheduler dies" else
             f"the Dask scheduler {address} has had no worker for {WORKERLESS_S:g} s")
    assert len(lines) == 1 and lines[0].startswith(cause), err
    assert "whose results are kept; not finished: slow_" in lines[0]
    assert set(kept) <= set(written(out)) and len(written(out)) < len(SLOW)
    assert err.splitlines()[-1].startswith("failed: slow_")
