"""How precisely mpvi's public surface is annotated: the public parameters (and returns)
annotated ``Any``, with an annotation that contains ``Any`` (``dict[str, Any]``), and
not annotated at all.

The public surface is that of tests/test_guards.py (``_public_surface``: the functions and
classes of ``mpvi.__all__``, the documented names of its modules, the factories of
:mod:`mpvi.systems`) with the number contexts, and for each class its constructor,
``__call__`` and the public methods and property getters mpvi defines along its MRO
(each definition once, as tests/test_docstrings.py validates them).  A parameter is one
of a signature's except ``self``/``cls``; ``*args``/``**kwargs`` count.  The annotations
are read as written (strings, ``from __future__ import annotations``), so a name that
exists only for the type checker counts like any other.

``python tests/annotation_counts.py`` prints the counts (``--list`` every parameter
annotated ``Any`` or not at all, ``--json``); tests/test_typing.py asserts them.
"""
from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_docstrings import _function_of  # noqa: E402  (the same rule as the docstrings')


def public_callables():
    """{qualified name: function} of the public surface, each definition once."""
    import importlib

    import mpvi
    from test_guards import _public_surface

    out = {}
    classes = set()
    for module, name in _public_surface():
        obj = getattr(importlib.import_module(module), name)
        if inspect.isclass(obj):
            classes.add(obj)
        elif inspect.isfunction(obj):
            out[f"{module}.{name}"] = obj
    for name in mpvi.__all__:                       # the contexts (test_guards leaves them)
        obj = getattr(mpvi, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            classes.add(obj)
        elif inspect.isfunction(obj):
            out[f"{obj.__module__}.{obj.__name__}"] = obj
    for cls in classes:
        if issubclass(cls, BaseException):
            continue
        for klass in cls.__mro__:
            if not klass.__module__.startswith("mpvi"):
                continue
            for name, attr in vars(klass).items():
                if name.startswith("_") and name not in ("__init__", "__call__"):
                    continue
                f = _function_of(attr)
                if f is not None:
                    out.setdefault(f"{klass.__module__}.{klass.__qualname__}.{name}", f)
    return out


_ANY = re.compile(r"\bAny\b")


def counts():
    """{"parameters", "any", "contains_any", "unannotated", "returns", "returns_any",
    "returns_unannotated", "callables", "lists"}: the counts of the module doc."""
    params = any_ = contains = unannotated = 0
    returns = returns_any = returns_unannotated = 0
    lists = {"any": [], "unannotated": []}
    found = public_callables()
    for qualname, f in sorted(found.items()):
        sig = inspect.signature(inspect.unwrap(f))
        for i, p in enumerate(sig.parameters.values()):
            if i == 0 and p.name in ("self", "cls"):
                continue
            params += 1
            ann = p.annotation
            if ann is inspect.Parameter.empty:
                unannotated += 1
                lists["unannotated"].append(f"{qualname}({p.name})")
            elif str(ann).strip("'\"") == "Any":
                any_ += 1
                lists["any"].append(f"{qualname}({p.name})")
            elif _ANY.search(str(ann)):
                contains += 1
        if f.__name__ == "__init__":
            continue
        returns += 1
        ann = sig.return_annotation
        if ann is inspect.Signature.empty:
            returns_unannotated += 1
            lists["unannotated"].append(f"{qualname} -> return")
        elif str(ann).strip("'\"") == "Any":
            returns_any += 1
            lists["any"].append(f"{qualname} -> return")
    return {"callables": len(found), "parameters": params, "any": any_,
            "contains_any": contains, "unannotated": unannotated, "returns": returns,
            "returns_any": returns_any, "returns_unannotated": returns_unannotated,
            "lists": lists}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true",
                        help="list every parameter and return annotated Any or not at all")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    c = counts()
    if args.json:
        print(json.dumps(c if args.list else {k: v for k, v in c.items() if k != "lists"},
                         indent=1))
        return
    print(f"{c['callables']} public callables, {c['parameters']} parameters: "
          f"{c['any']} annotated Any, {c['contains_any']} with Any inside "
          f"(dict[str, Any], ...), {c['unannotated']} unannotated; {c['returns']} returns: "
          f"{c['returns_any']} Any, {c['returns_unannotated']} unannotated")
    if args.list:
        for kind in ("any", "unannotated"):
            for item in c["lists"][kind]:
                print(f"{kind:12} {item}")


if __name__ == "__main__":
    main()
