"""The public API's docstrings follow numpydoc, its signatures are annotated, and the API
reference (docs/reference/api.md and its pages docs/reference/api/*.md) names every public name.

The public API is every name of ``mpvi.__all__`` and the public methods and properties
(names not starting with ``_``, defined in mpvi, inherited ones included) of its classes;
each object is validated once, under the name of the class that defines it
(``mpvi.numbers.context.Context.vector`` for ``GMPContext.vector``).  Data (``mp``, ``fp``,
``TIME``, ``METHODS``) has no docstring of its own: its attribute docstring in the
defining module's source is checked instead (and the API page must repeat it).
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from pathlib import Path

import pytest

import mpvi

numpydoc_validate = pytest.importorskip("numpydoc.validate")

ROOT = Path(__file__).resolve().parents[1]

# The numpydoc codes that must not occur (numpydoc.validate.ERROR_MSGS has the messages).
CHECKED = {
    # global: a docstring exists and is laid out so that numpydoc parses it
    "GL01",   # the summary starts right after the quotes or on the next line
    "GL02",   # closing quotes on their own line (multi-line docstrings)
    "GL03",   # no double blank lines
    "GL05",   # no tabs
    "GL06",   # no unknown section (a typo in a heading renders as text)
    "GL07",   # sections in numpydoc's order
    "GL08",   # a docstring at all
    "GL10",   # reST directives with two colons
    # summary: one line, a sentence, an infinitive for a function ("Return", not "Returns")
    "SS01", "SS02", "SS03", "SS04", "SS05", "SS06",
    # parameters: every parameter documented, none unknown, in order, with a type and a
    # description written as a sentence
    "PR01", "PR02", "PR03", "PR04", "PR05", "PR06", "PR07", "PR08", "PR09", "PR10",
    # returns / yields: present when the callable returns (yields) something, described
    "RT01", "RT02", "RT03", "RT04", "RT05", "YD01",
    # see also: when present, every entry is described as a sentence
    "SA02", "SA03", "SA04",
}
# Off, deliberately:
#   ES01 (extended summary): a one-line summary is the whole story of many small methods
#        (``Context.eye``); requiring a second paragraph would only pad them.
#   SA01 (See Also section): cross-references are given where they help, not everywhere.
#   EX01 (Examples section): the examples live in the README ("Using the library", run by
#        tests/test_readme.py) and the tutorials, which are executed; doctests in every
#        docstring would duplicate them without being run.
#   GL09 (deprecation directive): mpvi deprecates nothing.
NOT_CHECKED = {"ES01", "SA01", "EX01", "GL09"}


def test_the_code_lists_are_numpydocs():
    known = set(numpydoc_validate.ERROR_MSGS)
    assert CHECKED | NOT_CHECKED == known, sorted(known - CHECKED - NOT_CHECKED)
    assert not CHECKED & NOT_CHECKED


# ----- the public objects ---------------------------------------------------------------

def _function_of(attr):
    """The Python function behind a class attribute (method, static or class method,
    property getter, cached property), or None for data and foreign callables."""
    if isinstance(attr, property):
        attr = attr.fget
    elif isinstance(attr, (staticmethod, classmethod)):
        attr = attr.__func__
    elif isinstance(attr, functools.cached_property):
        attr = attr.func
    if not inspect.isfunction(attr):
        return None
    return attr if inspect.unwrap(attr).__module__.startswith("mpvi") else None


def _members(cls):
    """(validation name, function, kind) of the public members of ``cls``: for each name,
    the definition the class uses (the first in its MRO), if mpvi defines it."""
    seen = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("mpvi"):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            f = _function_of(attr)
            if f is None:
                continue
            kind = ("property" if isinstance(attr, (property, functools.cached_property))
                    else "method")
            yield f"{klass.__module__}.{klass.__qualname__}.{name}", f, kind


def _is_data(obj):
    return not (inspect.isclass(obj) or inspect.isfunction(obj))


def public_objects():
    """{validation name: (object, kind)} of the public API, each object once."""
    out = {}
    for name in mpvi.__all__:
        obj = getattr(mpvi, name)
        if _is_data(obj):
            continue
        out[f"mpvi.{name}"] = (obj, "class" if inspect.isclass(obj) else "function")
        if inspect.isclass(obj):
            for key, f, kind in _members(obj):
                out.setdefault(key, (f, kind))
    return out


PUBLIC = public_objects()


def test_the_public_api_is_all_there():
    # a floor, so that a broken enumeration cannot pass vacuously
    assert len(PUBLIC) > 150
    for key in ("mpvi.drive.solution.Solution.save", "mpvi.model.problem.Problem.replace",
                "mpvi.numbers.context.Context.vector", "mpvi.numbers.context.MPContext.num",
                "mpvi.numbers.context.GMPContext.workdps", "mpvi.methods.base.Method.order_for",
                "mpvi.model.mechanics.LagrangianSystem.from_lagrangian"):
        assert key in PUBLIC, key


# ----- numpydoc ---------------------------------------------------------------------------

def _errors(name):
    result = numpydoc_validate.validate(name)
    return sorted({code for code, _ in result["errors"] if code in CHECKED})


def test_numpydoc():
    bad = {}
    for name in PUBLIC:
        try:
            codes = _errors(name)
        except Exception as exc:            # noqa: BLE001 - report, do not hide
            codes = [f"cannot validate: {type(exc).__name__}: {exc}"]
        if codes:
            bad[name] = codes
    if bad:
        lines = [f"{name}: {', '.join(codes)}" for name, codes in sorted(bad.items())]
        msgs = ", ".join(f"{c} {numpydoc_validate.ERROR_MSGS[c]}" for c in sorted(
            {c for codes in bad.values() for c in codes if c in numpydoc_validate.ERROR_MSGS}))
        pytest.fail(f"{len(bad)} of {len(PUBLIC)} public objects break numpydoc:\n  "
                    + "\n  ".join(lines) + f"\n(codes: {msgs})")


def _data_modules():
    """{name: module} for the names of ``mpvi.__all__``, from mpvi/__init__.py's table
    of where each public name is defined (the package imports them on first use)."""
    return {name: f"mpvi.{module}" for name, module in mpvi._WHERE.items()}


def _attribute_docstring(module, name):
    """The string literal after ``name = ...`` at the top level of ``module`` (or of a
    module it imports the name from), or None."""
    mod = importlib.import_module(module)
    tree = ast.parse(inspect.getsource(mod))
    body = tree.body
    for i, node in enumerate(body):
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            nxt = body[i + 1] if i + 1 < len(body) else None
            if (isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)):
                return nxt.value.value
            return None
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            if not node.level:
                return _attribute_docstring(node.module, name)
            base = module if hasattr(mod, "__path__") else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            return _attribute_docstring(f"{base}.{node.module}" if node.module else base, name)
    return None


def test_data_have_attribute_docstrings():
    where = _data_modules()
    missing = []
    for name in mpvi.__all__:
        if _is_data(getattr(mpvi, name)):
            doc = _attribute_docstring(where[name], name)
            if not doc or not doc.strip().split("\n")[0].endswith("."):
                missing.append(name)
    assert not missing, f"data without an attribute docstring (one-line sentence): {missing}"


# ----- annotations --------------------------------------------------------------------------

def _unannotated(f):
    """What of ``f``'s signature is not annotated: parameters other than self/cls/*args/
    **kwargs, and the return (not for ``__init__``)."""
    sig = inspect.signature(f)
    out = [p.name for i, p in enumerate(sig.parameters.values())
           if p.annotation is inspect.Parameter.empty
           and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
           and not (i == 0 and p.name in ("self", "cls"))]
    if f.__name__ != "__init__" and sig.return_annotation is inspect.Signature.empty:
        out.append("return")
    return out


def _callables():
    for name, (obj, kind) in PUBLIC.items():
        if kind == "class":
            init = vars(obj).get("__init__")
            if init is None:
                init = next((vars(k)["__init__"] for k in obj.__mro__
                             if "__init__" in vars(k) and k.__module__.startswith("mpvi")),
                            None)
            if init is not None and inspect.isfunction(init):
                yield f"{name}.__init__", init
            call = vars(obj).get("__call__")
            if call is not None and inspect.isfunction(call):
                yield f"{name}.__call__", call
        else:
            yield name, obj


def test_signatures_are_annotated():
    bad = {name: missing for name, f in _callables() if (missing := _unannotated(f))}
    assert not bad, "unannotated signatures:\n  " + "\n  ".join(
        f"{k}: {', '.join(v)}" for k, v in sorted(bad.items()))


# ----- the API reference page ----------------------------------------------------------------

def test_api_reference_names_every_public_name():
    # the API reference: an index page (api.md) and one page per group (api/*.md)
    pages = [ROOT / "docs" / "reference" / "api.md",
             *sorted((ROOT / "docs" / "reference" / "api").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    documented = set(re.findall(r"^\.\. auto(?:class|function|exception):: mpvi\.(\w+)\s*$",
                                text, flags=re.MULTILINE))
    # Data: autodata under mpvi.X would show the docstring of the value's type (the
    # attribute docstring is in the defining module), so the page declares ``py:data::
    # mpvi.X`` with the attribute docstring, which must be the source's, word for word.
    where = _data_modules()
    flat = " ".join(text.split())
    for name in re.findall(r"^\.\. py:data:: mpvi\.(\w+)\s*$", text, flags=re.MULTILINE):
        doc = _attribute_docstring(where[name], name) if name in where else None
        if doc and " ".join(doc.split()) in flat:
            documented.add(name)
    missing = [name for name in mpvi.__all__ if name not in documented]
    assert not missing, f"no page of docs/reference/api* documents {missing}"
