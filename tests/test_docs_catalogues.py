"""The catalogues of the documentation site (docs/_ext/mpvi_catalogues.py) are complete:
every registered method, every system module, every subcommand, every reproduction and
every benchmark has its entry, and the declared functions of a method's parameters are
read from its registration (so a new method or a changed order shows up by itself)."""
import importlib
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "_ext"))
catalogues = importlib.import_module("mpvi_catalogues")

import mpvi  # noqa: E402


def test_every_registered_method_is_in_the_catalogue():
    page = catalogues.methods_page()
    for name, method in mpvi.METHODS.items():
        assert f".. _method-{name}:" in page
        assert method.reference in page
    assert f"({len(mpvi.METHODS)} methods)" in page


def test_the_catalogue_states_each_method_dense_output_and_its_order():
    page = catalogues.methods_page()
    assert page.count("dense output ``sol(t)``") == len(mpvi.METHODS)
    assert ("Hermite interpolation of degree 7 through q and the exact flow's derivatives to "
            "order 3 at both nodes: order 6 in q, p and v") in catalogues._dense_output(
                mpvi.get_method("lobatto"))
    assert catalogues._dense_output(mpvi.get_method("gbs")) == (
        "a step of the method from the node: order 32 in q, p and v (as the nodes)")


def test_declared_orders_are_read_from_the_registration():
    lobatto = mpvi.get_method("lobatto")
    assert catalogues._declared(lobatto, "order") == "2 * p['points'] - 2"
    mutze = mpvi.get_method("mutze")
    assert "p['iterations'] == 0" in catalogues._declared(mutze, "order")
    assert catalogues._declared(mpvi.get_method("simpson"), "order") is None   # a number
    for method in mpvi.METHODS.values():            # every callable field has its source
        for keyword in ("order", "symplectic", "stability_bound"):
            if callable(getattr(method, keyword)):
                assert catalogues._declared(method, keyword)


def test_a_method_registered_later_is_catalogued(monkeypatch):
    lobatto = mpvi.get_method("lobatto")
    from dataclasses import replace
    monkeypatch.setitem(mpvi.METHODS, "lobatto_copy", replace(lobatto, name="lobatto_copy"))
    page = catalogues.methods_page()
    assert ".. _method-lobatto_copy:" in page


def test_systems_cli_reproductions_and_benchmarks_are_complete():
    import pkgutil
    import mpvi.systems
    systems = catalogues.systems_page()
    for mod in pkgutil.iter_modules(mpvi.systems.__path__):
        if not mod.name.startswith("_"):
            assert f".. automodule:: mpvi.systems.{mod.name}" in systems
    cli = catalogues.cli_page()
    for command in ("list", "run", "diff", "report"):
        assert f".. _cli-{command}:" in cli
    assert "--check-digits" in cli and "--scheduler" in cli
    from mpvi.repro.declare import all_reproductions
    reps = catalogues.reproductions_page()
    for rid, rep in all_reproductions().items():
        assert f"`{rid} <../../report/{rep.paper}.html#{rid}>`__" in reps
    assert "not run" not in reps                       # figures/ holds every full run
    bench = catalogues.benchmarks_page()
    for path in (catalogues.ROOT / "benchmarks").glob("*.py"):
        assert f"python benchmarks/{path.name} --help" in bench
