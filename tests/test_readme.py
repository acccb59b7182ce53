"""The README's library example and the guide's "Using the library" run as written.

* README.md, "## The library in 20 lines": the ```python block runs, and what it prints is
  exactly its comment lines that start at column 0 (``# 20 3.81e-12`` ...).
* docs/guide/library.md: every ```python block, in order, in one namespace, in a
  temporary directory (it writes orbit.json and orbit.png), and the printed comments
  checked below are what the code prints.
* The first screen says what mpvi is, for whom and what it does that nothing else does,
  then gives the two commands (the same text as the docs' landing page); timings, layout
  and CI live on the docs' Development page, linked once.  Every link is an absolute URL
  (the README is also the package index's page, where a relative link is broken), into
  the repository of ``[project.urls]`` and to a file that exists.
"""
import contextlib
import io
import re
import textwrap
from pathlib import Path

try:
    import tomllib
except ImportError:                     # Python 3.10: mypy's own TOML reader (as test_typing)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide" / "library.md"


def python_blocks(text):
    return [textwrap.dedent(m.group(2)) for m in
            re.finditer(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M)]


def test_the_readme_example_prints_what_its_comments_say(tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The library in 20 lines"):]
    section = section[:section.index("\n## ", 1)]
    (block,) = python_blocks(section)
    assert len(block.strip().splitlines()) <= 25
    expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert len(expected) >= 4
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    assert out.getvalue().splitlines() == expected


def test_the_library_guide_runs(tmp_path, monkeypatch, capsys):
    blocks = python_blocks(GUIDE.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "guide"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)
    out = capsys.readouterr().out
    assert "simpson {'q': '5.1e-06'" in out and "drift" in out
    assert (tmp_path / "orbit.json").exists() and (tmp_path / "orbit.png").stat().st_size > 1000
    # the printed comments are what the code prints
    assert "['7.49666012949110', '1.49933202620796e+1']" in out
    assert "['0 .. sqrt(10)', '2*sqrt(3) .. 2*sqrt(15)']" in out


def repository_url():
    """The project's repository, ``[project.urls] Source`` of pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["project"]["urls"]["Source"]


def test_the_readme_fits_two_screens_and_its_links_are_absolute_and_resolve():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"(?:src|href)=\"([^\"]+)\"", text)
    targets += re.findall(r"^\[[^\]]+\]:\s*(\S+)", text, re.M)        # reference-style links
    assert targets
    repo = repository_url()
    assert repo == "https://github.com/mpvi-project/mpvi"
    for target in targets:
        assert target.startswith("https://"), f"a relative link in README.md: {target}"
        if target.startswith("https://github.com/"):
            assert target == repo or target.startswith(repo + "/"), target
        path = re.match(re.escape(repo) + r"/(?:blob|tree)/main/([^#?]+)", target)
        if path:
            assert (ROOT / path.group(1)).exists(), target


def _first_block(text):
    """(lines before the first fenced block, the block's lines) of a Markdown text."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return lines[:start], lines[start + 1:end]


def test_the_first_screen_says_what_mpvi_is_then_gives_the_two_commands():
    text = README.read_text(encoding="utf-8")
    before, block = _first_block(text)
    commands = [line for line in block if line and not line.startswith("#")]
    _, landing = _first_block((ROOT / "docs" / "index.md").read_text(encoding="utf-8"))
    assert commands == [line for line in landing if line.startswith(("python3 -m venv", "bash "))]
    assert commands[0].startswith("python3 -m venv") and commands[1] == "bash .ci/run"
    assert len(before) + len(block) + 2 <= 30                   # the first screen
    intro = " ".join(before)
    for claim in ("Python library for researchers", "variational integrators of any order",
                  "any precision", "64 digits by default", "Simpson", "Lobatto", "Galerkin",
                  "Hermite", "Mutze", "Newmark", "four papers", "published",
                  "numbers with the reproduced one", "Arb balls", "Krawczyk", "proven"):
        assert claim.lower() in intro.lower(), claim
    assert "pip install" not in intro and "fresh clone" not in text   # timings: Development


def test_the_development_page_holds_the_timings_and_is_linked_once():
    text = README.read_text(encoding="utf-8")
    page = f"{repository_url()}/blob/main/docs/guide/development.md"
    assert text.count(f"]({page})") == 1
    development = (ROOT / "docs" / "guide" / "development.md").read_text(encoding="utf-8")
    assert re.search(r"^development$", (ROOT / "docs" / "guide" / "index.md").read_text(
        encoding="utf-8"), re.M)
    assert "Command 1 took" in development and "## Layout" in development
    assert ".ci/python-versions" in development and "constraints/dev.txt" in development
    # its two commands are the README's, to the character
    _, block = _first_block(text)
    _, dev_block = _first_block(development)
    assert dev_block == block
    # the findings about the papers stay in the README
    assert "## The four papers and what we found" in text and "## Layout" not in text
