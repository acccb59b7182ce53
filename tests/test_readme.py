"""The README's library section runs as written: every ```python block between
"## Using the library" and "### Adding a system", in order, in one namespace, in a
temporary directory (it writes orbit.json and orbit.png)."""
import re
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def library_blocks():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Using the library"):text.index("### Adding a system")]
    return [textwrap.dedent(m.group(2)) for m in
            re.finditer(r"^( *)```python\n(.*?)^\1```", section, re.S | re.M)]


def test_the_library_section_of_the_readme_runs(tmp_path, monkeypatch, capsys):
    blocks = library_blocks()
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "simpson {'q': '5.1e-06'" in out and "drift" in out
    assert (tmp_path / "orbit.json").exists() and (tmp_path / "orbit.png").stat().st_size > 1000
    # the printed comments are what the code prints
    assert "['7.49666003899698', '1.49933224034629e+1']" in out
    assert "['0 .. sqrt(10)', '2*sqrt(3) .. 2*sqrt(15)']" in out
