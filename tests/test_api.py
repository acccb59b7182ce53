"""The public surface of ``import mpvi`` (issue 20): what it exports, what it does not
import, and that every exported function and class documents itself (numpydoc sections)
with annotated signatures."""
import inspect
import subprocess
import sys
from pathlib import Path

import mpvi

REQUIRED = {"GMPContext", "MPContext", "FPContext", "LagrangianSystem", "LinearSystem",
            "FirstOrderSystem", "Problem", "solve", "Solution", "load_solution", "METHODS",
            "Method", "register", "get_method", "error_norms", "fit_order", "energy",
            "symplecticity_defect", "PrecisionError", "NewtonError", "IntegrationError",
            "StabilityError", "Event"}
PAPER_SPECIFIC = {"linearized_double_pendulum", "simpson_phi", "table3_top", "double_well",
                  "integrate", "SCHEMES", "get_scheme"}


def test_exports():
    assert REQUIRED <= set(mpvi.__all__)
    assert not PAPER_SPECIFIC & set(dir(mpvi))
    for name in mpvi.__all__:
        assert hasattr(mpvi, name), name
    assert (Path(mpvi.__file__).parent / "py.typed").exists()


def test_import_mpvi_loads_no_plotting_table_or_report_package():
    code = ("import mpvi, sys; print(sorted(m for m in ('matplotlib','pandas','jinja2','rich',"
            "'markdown_it') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _documented(obj):
    doc = inspect.getdoc(obj) or ""
    return any(f"{section}\n---" in doc for section in ("Parameters", "Returns", "Attributes"))


def test_every_public_callable_has_numpydoc_sections_and_annotations():
    missing, unannotated = [], []
    for name in mpvi.__all__:
        obj = getattr(mpvi, name)
        if not callable(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        if not _documented(obj):
            missing.append(name)
        target = obj.__init__ if inspect.isclass(obj) else obj
        if target is object.__init__ or (inspect.isclass(obj) and hasattr(obj, "_fields")):
            continue                           # no own constructor / a NamedTuple
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):
            continue
        unannotated += [f"{name}({p})" for p, par in sig.parameters.items()
                        if p not in ("self", "cls") and par.annotation is inspect.Parameter.empty]
    assert not missing, missing
    assert not unannotated, unannotated
