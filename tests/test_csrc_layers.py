"""The C headers of mpvi/compiled/csrc are layered too (issue 46: "0 circles"): header A
depends on header B if A includes B or uses a name -- a function, a macro, a typedef, an
enumerator, a variable -- that B alone defines at file scope; that graph has no circle.
Names a header declares without defining (a prototype, ``extern``) are no definitions: a
forward declaration does not hide who defines the name.  Locals, parameters and struct
members are not definitions (only file scope is scanned).  Headers may come and go: the
graph is built from whatever ``*.h`` the directory holds."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parent.parent / "mpvi" / "compiled" / "csrc"

_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while _Static_assert _Bool defined""".split())
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _strip(text: str, strings: bool = True) -> str:
    """``text`` without comments and (``strings``) string and character literals (their
    place kept as blanks), and with line continuations joined."""
    text = text.replace("\\\n", " ")
    out, i, n = [], 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(" " * (end - i) if "\n" not in text[i:end] else
                       "".join(c if c == "\n" else " " for c in text[i:end]))
            i = end
        elif two == "//":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif strings and text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(quote + quote)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _statements(code: str) -> list[tuple[str, bool]]:
    """The file-scope statements of ``code`` (preprocessor lines removed): (the text
    outside any braces, whether it had a body in braces)."""
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    statements, current, depth, body = [], [], 0, False
    for c in code:
        if c == "{":
            if depth == 0:
                current.append(" { ")
            depth += 1
            continue
        if c == "}":
            depth -= 1
            if depth == 0:
                current.append(" } ")
                body = True
                text = "".join(current).strip()
                # a function's body ends its statement; a struct's or an initializer's not
                if not re.search(r"(=|\b(struct|union|enum)\b[^;]*)\s*\{\s*\}\s*$", text) \
                        and not text.startswith("typedef"):
                    statements.append((text, True))
                    current, body = [], False
            continue
        if depth:
            continue
        if c == ";":
            statements.append(("".join(current).strip(), body))
            current, body = [], False
        else:
            current.append(c)
    return statements


def _top_level(text: str) -> str:
    """``text`` with everything inside parentheses and brackets removed."""
    out, depth = [], 0
    for c in text:
        if c in "([":
            depth += 1
            out.append(c if depth == 1 else "")
        elif c in ")]":
            depth -= 1
            out.append(c if depth == 0 else "")
        elif depth == 0:
            out.append(c)
    return "".join(out)


def definitions(text: str) -> set[str]:
    """The names ``text`` (a C header) defines at file scope: macros, typedefs,
    enumerators, functions with a body, variables (not ``extern``)."""
    code = _strip(text)
    names = set(re.findall(r"^\s*#\s*define\s+([A-Za-z_]\w*)", code, re.M))
    raw = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    for enum_body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", raw):
        names.update(m.group(1) for m in re.finditer(r"([A-Za-z_]\w*)\s*(?:=[^,]*)?(?:,|$)",
                                                     enum_body.strip()))
    for statement, has_body in _statements(code):
        words = _IDENT.findall(statement)
        if not words or words[0] in ("extern", "_Static_assert"):
            continue
        if words[0] == "typedef":
            pointer = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", statement)
            flat = re.sub(r"\{[^{}]*\}", " ", statement)
            if pointer:
                names.add(pointer.group(1))
            else:
                names.add(_IDENT.findall(_top_level(flat).replace("[]", ""))[-1])
            continue
        flat = _top_level(re.sub(r"\{.*\}", " ", statement, flags=re.S))
        function = re.search(r"([A-Za-z_]\w*)\s*\(\s*\)", flat.split("=", 1)[0])
        if function:
            if has_body:
                names.add(function.group(1))
            continue
        for declarator in flat.split(","):
            idents = [w for w in _IDENT.findall(declarator.split("=", 1)[0].replace("[]", ""))
                      if w not in _KEYWORDS]
            if idents:
                names.add(idents[-1])
    return names


_TYPES = frozenset("""char short int long float double signed unsigned void _Bool size_t
PyObject PyTypeObject Py_ssize_t PyMethodDef PyModuleDef""".split())
_TYPE_LIKE = re.compile(r"\w+(_t|_ptr|_srcptr|_struct)$")


def local_names(text: str, types: frozenset[str] = frozenset()) -> set[str]:
    """The names ``text`` declares after a type anywhere -- parameters, locals, struct
    members, file-scope variables (not ``extern`` ones, nor functions: a prototype declares
    a name another header may define): a use of such a name is the header's own."""
    code = "\n".join(line for line in _strip(text).splitlines()
                     if not line.lstrip().startswith(("#", "extern")))
    type_names = "|".join(sorted(_TYPES | types | {w for w in _IDENT.findall(code)
                                                  if _TYPE_LIKE.match(w)}, key=len,
                                 reverse=True))
    declared = set()
    head = rf"\b(?:struct\s+\w+|{type_names})\b(?:\s+const\b)?[\s*]*"
    for m in re.finditer(head + r"([A-Za-z_]\w*)\s*(?=[;,=\[\)])", code):
        declared.add(m.group(1))
        # the further declarators of the same declaration: ", *name = ...", ", name;"
        rest = code[m.end():]
        stop = re.search(r"[;)]", rest)
        for more in re.finditer(r",\s*\**\s*([A-Za-z_]\w*)\s*(?=[;,=\[])",
                                _top_level(rest[:stop.start() if stop else 0])):
            declared.add(more.group(1))
    return declared - _KEYWORDS


def uses(text: str, types: frozenset[str] = frozenset()) -> set[str]:
    """Every identifier of ``text`` outside comments, strings and its include lines, less
    its own declared names (:func:`local_names`)."""
    code = "\n".join(line for line in _strip(text).splitlines()
                     if not re.match(r"\s*#\s*include\b", line))
    return set(_IDENT.findall(code)) - _KEYWORDS - local_names(text, types)


def includes(text: str) -> set[str]:
    return set(re.findall(r'^\s*#\s*include\s+"([^"]+)"', _strip(text, strings=False), re.M))


def graph(directory: Path) -> dict[str, set[str]]:
    """Header -> the headers it depends on (by include or by a name only that one
    defines)."""
    texts = {p.name: p.read_text() for p in sorted(directory.glob("*.h"))}
    defined = {name: definitions(text) for name, text in texts.items()}
    owners: dict[str, set[str]] = {}
    for header, names in defined.items():
        for n in names:
            owners.setdefault(n, set()).add(header)
    types = frozenset(n for text in texts.values()
                      for n in re.findall(r"\btypedef\b[^;]*?([A-Za-z_]\w*)\s*(?:\[\d*\])?\s*;",
                                          re.sub(r"\{[^{}]*\}", " ", _strip(text))))
    edges: dict[str, set[str]] = {}
    for header, text in texts.items():
        deps = {h for h in includes(text) if h in texts and h != header}
        for n in uses(text, types) - defined[header]:
            owner = owners.get(n, set())
            if len(owner) == 1:
                deps |= owner
        edges[header] = deps
    return edges


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """A circle of ``edges`` (its headers, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def why(edges_of: str, on: str, directory: Path) -> str:
    texts = {p.name: p.read_text() for p in directory.glob("*.h")}
    names = sorted((uses(texts[edges_of]) - definitions(texts[edges_of]))
                   & definitions(texts[on]))
    return f"{edges_of} -> {on}: " + (", ".join(names[:8]) or "#include")


def test_the_headers_have_no_circle():
    edges = graph(CSRC)
    assert len(edges) >= 2
    found = circle(edges)
    assert found is None, "a circle among the C headers: " + " -> ".join(found) + "\n" + \
        "\n".join(why(a, b, CSRC) for a, b in zip(found, found[1:]))


def test_definitions_at_file_scope_only():
    text = """
#define MACRO(x) (x)
typedef long slong;
typedef struct { slong exp; slong size; } arf_struct;
typedef void (*callback)(int member_like);
enum { ONE, TWO = 2, THREE };
static int counter = 0, other[4];
static arb_t tv[N];
extern int declared_elsewhere;
int prototype_only(int parameter);
static int defined_here(int parameter) {
    int local = parameter;
    struct { int member; } s;
    return local + s.member;
}
"""
    assert definitions(text) == {"MACRO", "slong", "arf_struct", "callback", "ONE", "TWO",
                                 "THREE", "counter", "other", "tv", "defined_here"}


def _two_headers(tmp_path: Path, lower: str, upper: str) -> Path:
    (tmp_path / "lower.h").write_text(lower)
    (tmp_path / "upper.h").write_text('#include "lower.h"\n' + upper)
    return tmp_path


def test_a_name_defined_by_one_header_is_a_dependency(tmp_path):
    d = _two_headers(tmp_path, "static int helper(void) { return upper_value; }\n",
                     "static int upper_value = 1;\n")
    assert graph(d) == {"lower.h": {"upper.h"}, "upper.h": {"lower.h"}}
    assert circle(graph(d)) in (["lower.h", "upper.h", "lower.h"],
                                ["upper.h", "lower.h", "upper.h"])


def test_locals_parameters_members_comments_are_no_dependency(tmp_path):
    """A name another header has only as a local, a parameter or a struct member, or
    that appears only in a comment or a string, makes no dependency."""
    (tmp_path / "lower.h").write_text("""
struct pair { int member_name; };
static int helper(int param_name) { int local_name = param_name; return local_name; }
""")
    (tmp_path / "upper.h").write_text("""
/* helper in a comment */
static const char *text = "helper";
static int upper(int member_name) { int param_name = member_name; int local_name = 0;
    return param_name + local_name; }
""")
    assert graph(tmp_path) == {"lower.h": set(), "upper.h": set()}
    (tmp_path / "upper.h").write_text("static int upper(void) { return helper(1); }\n")
    assert graph(tmp_path) == {"lower.h": set(), "upper.h": {"lower.h"}}


def test_a_planted_forward_declaration_is_found(tmp_path):
    """A header that declares a function another header defines, and calls it, depends on
    that header: planted into a header that header depends on, it closes a circle."""
    copy = tmp_path / "csrc"
    shutil.copytree(CSRC, copy)
    edges = graph(copy)
    pairs = [(a, b) for a in sorted(edges) for b in sorted(edges[a])
             if any(n for n in definitions((copy / a).read_text())
                    if re.search(rf"\b{n}\s*\(", (copy / a).read_text()))]
    if not pairs:
        pytest.skip("no header depends on another header defining a function")
    upper, lower = pairs[0]
    text = (copy / upper).read_text()
    function = sorted(n for n in definitions(text)
                      if re.search(rf"^[\w \t*]*\bstatic\b[\w \t*]*\b{n}\s*\([^;]*\)\s*\{{",
                                   text, re.M))[0]
    planted = (f"\nstatic int {function}(void);\n"
               f"static int planted_caller(void) {{ return {function}(); }}\n")
    lower_text = (copy / lower).read_text()
    guard = lower_text.rfind("#endif")
    (copy / lower).write_text(lower_text[:guard] + planted + lower_text[guard:]
                              if guard >= 0 else lower_text + planted)
    found = circle(graph(copy))
    assert found is not None and lower in found and upper in found, (upper, lower, function)
