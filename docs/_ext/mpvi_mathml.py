"""A Sphinx math renderer that writes MathML at build time (latex2mathml).

Chromium, Firefox and Safari render MathML natively, so the pages need no JavaScript and
no network (Sphinx's default, MathJax, is loaded from a CDN).  ``html_math_renderer =
"mathml"`` in conf.py selects it.  A formula latex2mathml cannot convert is a build
error naming the formula and its page, never a silently raw string.
"""
from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.errors import ExtensionError


def _mathml(self, latex: str, display: str, node) -> str:
    try:
        return convert(latex, display=display)
    except Exception as exc:  # latex2mathml raises its own exception classes
        where = self.builder.current_docname
        raise ExtensionError(f"{where}: cannot render the formula {latex!r} as MathML: "
                             f"{type(exc).__name__}: {exc}") from exc


def visit_inline(self, node):
    self.body.append(f'<span class="math">{_mathml(self, node.astext(), "inline", node)}</span>')
    raise nodes.SkipNode


def visit_block(self, node):
    latex = node.astext()
    self.body.append(self.starttag(node, "div", CLASS="math-wrapper docutils container"))
    if node.get("number") and node.get("label"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    self.body.append(f'<div class="math notranslate">{_mathml(self, latex, "block", node)}</div>')
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_inline, None), (visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
