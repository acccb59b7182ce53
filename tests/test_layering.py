"""Layering of the package: no private number-context access outside mpvi/context.py."""


def test_no_private_context_access_outside_context_py():
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    bad = []
    for d in ("mpvi", "tests", "reproductions", "benchmarks"):
        for p in (root / d).rglob("*.py"):
            if (p.name == "context.py" and p.parent.name == "mpvi") or p.name == "test_layering.py":
                continue
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if re.search(r"\bctx\._|\._m\b", line):
                    bad.append(f"{p.relative_to(root)}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)
