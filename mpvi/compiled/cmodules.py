"""The C source of each kind of compiled module: the generated part that Python writes.

A module is the generated part -- its sizes and name as macros, ``#include`` of the C
runtime's header of its kind (``mpvi/compiled/csrc``), and the translated statements of its
kernels (:mod:`mpvi.compiled.ctranslate`) as the static functions (hooks) the header declares --
compiled against the runtime by :mod:`mpvi.compiled.cbackend`.  One function per kind:
:func:`translate` (a kernel), :func:`translate_newton` (Newton's method),
:func:`translate_explicit` (RK4 and GBS), :func:`translate_check` (the checks after a
step) and :func:`translate_taylor` (the Taylor steps).
"""
from __future__ import annotations

from typing import Sequence

from mpvi.compiled import cdouble
from mpvi.compiled.croutine import routines_c
from mpvi.compiled.ctranslate import _FUNCTIONS, _PERIODIC, Unsupported, _Translator, _nan_if
from mpvi.ground import environment
from mpvi.numbers.explicit import gbs_core, rk4_core
from mpvi.numbers.linalg import (gauss_eliminate, hadamard_regular, ldl_positive,
                                 linear_combination)
from mpvi.numbers.newton import doubles_for, newton_core
from mpvi.numbers.series import (series_adaptive, series_div, series_exp, series_horner,
                                 series_log, series_mul, series_powc, series_sincos,
                                 series_solve_row, series_sqr, series_sqrt)

ROUTINES = {"mpvi_newton.h": (newton_core, linear_combination),
            "mpvi_explicit.h": (gauss_eliminate, hadamard_regular, rk4_core, gbs_core),
            "mpvi_taylor.h": (gauss_eliminate, series_mul, series_div, series_sqr,
                              series_sincos, series_exp, series_log, series_sqrt,
                              series_powc, series_solve_row, series_horner, series_adaptive),
            "mpvi_check.h": (ldl_positive,),
            "mpvi_energy.h": (gauss_eliminate,)}
"""The numerical routines each kind of module runs, written once in Python and translated
to C (:func:`mpvi.compiled.croutine.routines_c`, with the routines they call) into every
module of the kind, before its
header: the elimination of :func:`mpvi.numbers.linalg.solve_dense` (``mpvi_solve.h``
glues it), the LDL^T test of :func:`mpvi.numbers.linalg.is_positive_definite`, the
iteration of :func:`mpvi.numbers.newton.newton_core`, the RK4 and GBS steps of
:mod:`mpvi.numbers.explicit` and the Taylor recurrences, Horner's rule and the adaptive
substeps of :mod:`mpvi.numbers.series`."""

COUNTED_OPERATIONS = {
    "mpfr_add": "binary", "mpfr_sub": "binary", "mpfr_mul": "binary", "mpfr_div": "binary",
    "mpfr_sqr": "unary", "mpfr_neg": "unary", "mpfr_abs": "unary",
    "mpfr_add_si": "si", "mpfr_sub_si": "si", "mpfr_mul_si": "si", "mpfr_div_si": "si",
    "mpfr_si_sub": "si_first", "mpfr_si_div": "si_first",
    "mpfr_mul_2ui": "ui", "mpfr_div_2ui": "ui", "mpfr_mul_2si": "si", "mpfr_pow_ui": "ui",
    "mpfr_pow_si": "si",
    "mpvi_sin_cos": "sin_cos", "mpvi_sin": "unary", "mpvi_cos": "unary", "mpfr_tan": "unary",
    "mpfr_exp": "unary", "mpfr_log": "unary", "mpfr_sqrt": "unary", "mpfr_rec_sqrt": "unary",
    "mpfr_cbrt": "unary", "mpfr_pow": "binary", "mpfr_atan": "unary", "mpfr_atan2": "binary",
    "mpfr_sinh": "unary", "mpfr_cosh": "unary", "mpfr_tanh": "unary", "mpfr_asin": "unary",
    "mpfr_acos": "unary", "mpfr_atanh": "unary", "mpfr_asinh": "unary", "mpfr_acosh": "unary",
    "mpfr_erf": "unary", "mpfr_erfc": "unary", "mpfr_gamma": "unary", "mpfr_lngamma": "unary",
    "mpfr_digamma": "unary", "mpfr_zeta": "unary", "mpfr_eint": "unary", "mpfr_ai": "unary",
    "mpfr_set": "copy", "mpfr_set_si": "set_si"}
"""The MPFR functions an operation-counting build counts (:func:`operation_counts`), with
the shape of their arguments: "binary" (out, a, b), "unary" (out, a), "si" (out, a,
long), "si_first" (out, long, a), "ui" (out, a, unsigned long), "sin_cos" (sin, cos, a),
"copy" (out, a) and "set_si" (out, long) -- the copies, not arithmetic.  Sin and cos are
the runtime's ``mpvi_sin_cos``, ``mpvi_sin`` and ``mpvi_cos`` (``mpvi_trig.h``: MPFR's
values, by Arb where it decides them)."""

ENV_COUNT = "MPVI_COUNT_OPERATIONS"
"""``MPVI_COUNT_OPERATIONS=1`` (set before the first kernel is built) builds the compiled
modules with a counter on every MPFR function of :data:`COUNTED_OPERATIONS`
(:func:`operation_counts`): an instrument of ``benchmarks/step_speed.py --floor``, slower."""


def _counting_lines() -> list[str]:
    """The generated part of an operation-counting build (:data:`ENV_COUNT`; nothing in a
    normal build): ``MPVI_COUNT``, the counters and one macro per function of
    :data:`COUNTED_OPERATIONS` that counts its calls, placed after ``mpvi_runtime.h`` (the
    MPFR header) and before everything that calls MPFR; ``mpvi_count.h`` adds the module's
    ``operation_counts``."""
    if not counting():
        return []
    lines = ["#define MPVI_COUNT 1",
             f"static unsigned long long mpvi_counts[{len(COUNTED_OPERATIONS)}];",
             "static const char *mpvi_counted[] = {"
             + ", ".join(f'"{f}"' for f in COUNTED_OPERATIONS) + "};"]
    for i, f in enumerate(COUNTED_OPERATIONS):
        lines += [f"#undef {f}", f"#define {f}(...) (mpvi_counts[{i}]++, ({f})(__VA_ARGS__))"]
    return lines


def counting() -> bool:
    """Whether the modules built now count their MPFR operations (:data:`ENV_COUNT`)."""
    return environment.flag(ENV_COUNT, False)


def _module_source(what: str, note: str, header: str, defines: dict, hooks: Sequence[str],
                   counted: bool = True) -> str:
    """The C source of a compiled module: a comment (``what``, ``note``), the ``defines``
    (sizes, the module name), the runtime (``mpvi_runtime.h``, the counting macros of an
    operation-counting build if ``counted``, the C of the kind's :data:`ROUTINES`
    translated from their Python now, then the kind's ``header``) and the generated
    ``hooks`` the header declares."""
    lines = [f"/* generated by mpvi.compiled.cbackend: {what}", f"   {note.replace('*/', '* /')} */"]
    lines += [f"#define {k} {v}" for k, v in defines.items()]
    lines.append('#include "mpvi_runtime.h"')
    lines += _counting_lines() if counted else []
    lines += routines_c(ROUTINES.get(header, ()))
    lines.append(f'#include "{header}"')
    return "\n".join(lines) + "\n\n" + "\n\n".join(hooks) + "\n"


def _hook(signature: str, lines: Sequence[str], result: str | None = None) -> str:
    """A generated static C function ``signature`` of ``lines`` (then ``return result;``)."""
    body = [f"    {x}" for x in lines] + ([f"    return {result};"] if result is not None else [])
    return f"static {signature} {{\n" + "".join(f"{x}\n" for x in body) + "}"


def translate(name: str, source: str, prec: int, constants: Sequence[str],
              note: str = "", values: dict | None = None) -> str:
    """The C source of an extension module ``name`` whose function ``f(*groups)`` computes
    what the Python ``source`` (printed by :func:`mpvi.compiled.codegen.generate`) computes, bit for
    bit, at ``prec`` bits; ``constants`` are the names of the constant table given to
    ``setup`` once (the hoisted rationals, pi, E), ``values`` their exact values as
    (numerator, denominator) if known.  The module is ``mpvi_function.h`` of the runtime
    with the hooks ``mk_evaluate`` (the arguments read, the statements, the results) and
    ``mk_init``."""
    tr = _Translator(constants, values=values)
    info = tr.function(source)
    groups, unpack, results = info["groups"], info["unpack"], info["results"]
    members = {m for g in unpack.values() for m in g}
    scalars = {g for g in groups if g not in unpack}
    names = sorted(m for m in tr.names if m in tr.used or (m not in members and m not in scalars))
    decls = [f"mpfr_ptr v_{n} = NULL;" for n in names]
    read, nslots = [], 0          # slots: exact copies of arguments given as Python ints
    for i, g in enumerate(groups):
        if g in unpack:
            group = unpack[g]
            decls.append(f"mpfr_ptr g{i}[{max(len(group), 1)}];")
            read.append(f"if (!mk_group(args[{i}], {i}, {len(group)}, g{i}, &slots[{nslots}])) "
                        "return 0;")
            read += [f"v_{m} = g{i}[{j}];" for j, m in enumerate(group) if m in tr.used]
            nslots += len(group)
        elif g in tr.used:   # a scalar argument; one never read (an empty group) is not checked
            read.append(f"if (!(v_{g} = arg(args[{i}], {i}, -1, &slots[{nslots}]))) return 0;")
            nslots += 1
    outs = [f'if (!mk_int(result, {i}, "{r}")) return 0;' if kind == "int" else
            f"if (!mk_mpfr(result, {i}, {r})) return 0;" for i, (kind, r) in enumerate(results)]
    init = [f"mpfr_init2({z}, 64); mpfr_set_si({z}, {n}L, MPFR_RNDN);"
            for n, z in tr.ints.items()] + tr.init
    defines = {"PREC": prec, "MPVI_MODULE": name, "NTEMPS": max(tr.temps, 1),
               "NCONST": max(len(constants), 1), "NCONST_REAL": len(constants),
               "NZ": max(len(tr.ints), 1), "NSLOTS": max(nslots, 1), "NGROUPS": len(groups),
               "NRESULTS": len(results)}
    hooks = [_hook("int mk_evaluate(PyObject *const *args, PyObject *result)",
                   ([] if read else ["(void)args;"]) + decls + read + tr.lines + outs, "1"),
             _hook("void mk_init(void)", init)]
    return _module_source("a kernel of mpvi.compiled.codegen translated to MPFR", note,
                          "mpvi_function.h", defines, hooks)


def _storage(tr: "_Translator") -> tuple[list[str], list[str]]:
    """(C declarations, module-init lines) of a translated function's storage: its
    temporaries, constant table and exact integers (``prefix``t/k/z) and its named
    values (``prefix``v_*); the init lines end with the operations on literals alone."""
    p, nt, nc, nz = tr.prefix, max(tr.temps, 1), max(len(tr.constants), 1), max(len(tr.ints), 1)
    decls = [f"static mpfr_t {p}t[{nt}], {p}k[{nc}], {p}z[{nz}];"]
    decls += [f"static mpfr_ptr {p}v_{m};" for m in sorted(tr.names)   # an argument never
              if m not in tr.scalars or m in tr.used]                # read is not declared
    inits = [f"for (int i = 0; i < {nt}; i++) mpfr_init2({p}t[i], PREC);",
             f"for (int i = 0; i < {nc}; i++) mpfr_init2({p}k[i], PREC);",
             f"for (int i = 0; i < {nz}; i++) mpfr_init2({p}z[i], 64);"]
    inits += [f"mpfr_set_si({z}, {v}L, MPFR_RNDN);" for v, z in tr.ints.items()]
    return decls, inits + tr.init


def translate_newton(name: str, sources: Sequence[str], constants: Sequence[Sequence[str]],
                     prec: int, n: int, nk: int, np_: int, note: str = "",
                     values: Sequence[dict] | None = None, start: bool = True,
                     steady: int = 0) -> str:
    """The C source of an extension module ``name`` whose ``newton(X0, K, P, eps, rtol,
    scale, max_iter, slack)`` runs :func:`mpvi.numbers.newton.solve_info` on a generated kernel
    entirely in C: ``sources`` are the Python sources of (residual_and_jacobian, residual[,
    outputs]) of :class:`mpvi.engines.kernels.Kernel`, ``constants`` their constant names.  The
    same dense elimination (:func:`mpvi.numbers.linalg.solve_dense`), stopping rule and residual
    check, operation by operation, so the same bits and iteration counts.  It returns
    ``(X, iterations, residual[, outputs])``, or None wherever the Python iteration would
    raise or could take a path the C one does not follow (a non-finite number, a singular
    pivot, the iteration limit, an argument wider than the context): the caller then runs
    the Python iteration, which raises its own error (or, rarely, succeeds).  With
    ``start`` (the Python iteration's choice), the iteration starts in doubles where the
    kernel has a twin in doubles (:mod:`mpvi.compiled.cdouble`).  The last ``steady``
    entries of K stay through a run of steps (a step's table numbers): what is computed from
    them and P alone is ``nw_steady``, run once per solve and once per batch of ``steps``,
    the rest of what the unknowns do not change ``nw_pre``, once per step."""
    parts, shared = [], {}
    for src, consts, prefix, scope in zip(sources, constants, ("b_", "r_", "o_"),
                                         (None, "final", "final")):
        tr = _Translator(consts, prefix, varying=(0,), shared=shared, scope=scope,
                         values=values[len(parts)] if values else None,
                         stepping=(1, nk - steady))
        parts.append((tr, tr.function(src)))
    results = [[tr.exact_int(v) if kind == "int" else v for kind, v in info["results"]]
               for tr, info in parts]
    if len(results[0]) != n + n * n or len(results[1]) != n:
        raise Unsupported(f"a Newton kernel of {n} unknowns returns {len(results[0])} and "
                          f"{len(results[1])} values")
    decls, inits, steadies, pres, setups, evaluate = [], [], [], [], [], []
    for c, (tr, info) in enumerate(parts):
        p, nc = tr.prefix, len(tr.constants)
        d, i = _storage(tr)
        decls += d
        inits += i
        setups.append(f"if (!nw_set_table(tables, {c}, {p}k, {nc})) return 0;")
        X, K, P = (info["unpack"].get(g, ()) for g in info["groups"])
        steadies += [f"{p}v_{m} = kp[{j}];" for j, m in enumerate(K) if j >= nk - steady]
        steadies += [f"{p}v_{m} = pp[{j}];" for j, m in enumerate(P)] + tr.steady
        pres += [f"{p}v_{m} = kp[{j}];" for j, m in enumerate(K) if j < nk - steady] + tr.pre
        evaluate.append([f"{p}v_{m} = xp[{j}];" for j, m in enumerate(X)] + tr.lines)
    both, res = results[0], results[1]
    fill = [f"rp[{i}] = {r};" for i, r in enumerate(both[:n])]
    fill += [f"Jp[{i}][{j}] = {both[n + i * n + j]};" for i in range(n) for j in range(n)]
    rfill = [f"rr[{i}] = {r};" for i, r in enumerate(res)]
    outputs = []
    if len(parts) > 2:
        outputs = evaluate[2] + [f"oo[{i}] = {r};" for i, r in enumerate(results[2])]
    try:                      # the kernel in doubles of Newton's start (mpvi.compiled.cdouble)
        doubled = cdouble.c_kernel(sources[0], constants[0], ["x", "d_kp", "d_pp"]) \
            if start else None
    except Unsupported:
        doubled = None
    nc0 = len(parts[0][0].constants)
    if doubled is not None:
        setups += [f"for (int j = 0; j < {nc0}; j++) d_k[j] = mpfr_get_d(b_k[j], MPFR_RNDN);"]
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "DOUBLES": doubles_for(n),
               "STARTING": int(doubled is not None), "NDK": max(nc0, 1),
               "NK": nk, "NP": np_, "NSTEADY": steady,
               "NKA": max(nk, 1), "NPA": max(np_, 1),
               "NOUT": max(len(results[2]) if len(parts) > 2 else 0, 1),
               "HAS_OUTPUTS": int(len(parts) > 2), "NTABLES": len(parts)}
    hooks = ["\n".join(decls),
             _hook("int nw_tables(PyObject *tables)", setups, "1"),
             _hook("void nw_init(void)", inits),
             _hook("void nw_steady(void)", steadies),
             _hook("void nw_pre(void)", pres),
             _hook("void nw_both(void)", evaluate[0] + fill),
             _hook("void nw_residual(void)", evaluate[1] + rfill),
             _hook("void nw_outputs(void)", outputs),
             _hook("int nw_both_d(const double *x)", doubled or ["(void)x;"],
                   "0" if doubled is None else "1")]
    return _module_source("Newton's method of mpvi.numbers.newton.solve_info on a kernel of "
                          "mpvi.engines.kernels, with the elimination of mpvi.numbers.linalg.solve_dense, "
                          "in MPFR", note, "mpvi_newton.h", defines, hooks)


def _bind(tr: "_Translator", info: dict, sources: Sequence[str]) -> list[str]:
    """C lines pointing the unpacked arguments of a translated function at ``sources``: one
    C array expression per argument group (``None``: bound elsewhere)."""
    lines = []
    for g, src in zip(info["groups"], sources):
        members = info["unpack"].get(g)
        if members is None:
            if g in tr.used:
                raise Unsupported(f"scalar argument {g} of an explicit field")
            continue
        if src is not None:
            lines += [f"{tr.prefix}v_{m} = {src}[{j}];" for j, m in enumerate(members)]
    return lines


def _parts(sources: Sequence[str], constants: Sequence[Sequence[str]], specs: Sequence[tuple],
           values: Sequence[dict] | None) -> list[tuple]:
    """The generated functions ``sources`` of a module translated, each by its spec
    (prefix, varying argument groups, the C arrays of its arguments): [(translator, info,
    the C arrays, the C operands of its results)]."""
    parts = []
    for c, (src, consts, (prefix, varying, args)) in enumerate(zip(sources, constants, specs)):
        tr = _Translator(consts, prefix, varying=varying, values=values[c] if values else None)
        info = tr.function(src)
        results = [tr.exact_int(v) if kind == "int" else v for kind, v in info["results"]]
        parts.append((tr, info, args, results))
    return parts


def _parts_c(parts: Sequence[tuple]) -> tuple[list[str], list[str], list[str], list[str],
                                               list[list[str]]]:
    """The C of translated functions (:func:`_parts`): their declarations, module-init
    lines, constant-table bindings (table c for part c), the lines binding the fixed
    arguments and running the operations on them alone, and per part the lines binding
    the varying arguments and evaluating it."""
    decls: list[str] = []
    inits: list[str] = []
    binds: list[str] = []
    fixed: list[str] = []
    evaluate: list[list[str]] = []
    for c, (tr, info, args, _) in enumerate(parts):
        d, i = _storage(tr)
        decls += d
        inits += i
        binds.append(f"if (!nw_set_table(tables, {c}, {tr.prefix}k, {len(tr.constants)})) return 0;")
        varying = {info["groups"][i] for i in (tr.varying_groups or ())}
        fixed += _bind(tr, info, [a if g not in varying else None
                                  for g, a in zip(info["groups"], args)]) + tr.pre
        evaluate.append(_bind(tr, info, [a if g in varying else None
                                          for g, a in zip(info["groups"], args)]) + tr.lines)
    return decls, inits, binds, fixed, evaluate


def _explicit_field(parts, evaluate, n: int, ng: int) -> tuple[list[str], list[str]]:
    """(C of the field fo = f(t, y) from the translated ``parts`` and their ``evaluate``
    lines, the C operands of the ``ng`` singular factors): by the symbolic inverse of M
    (one part: [det M, M, v, p'], checked by Hadamard's bound) or by the dense solve of
    M v = p (two parts: M, then the force at v)."""
    if len(parts) == 1:
        (tr, info, args, res), = parts
        if len(res) != 1 + n * n + 2 * n + ng:
            raise Unsupported(f"a Hamiltonian field of {n} degrees of freedom returns {len(res)} values")
        body = evaluate[0] + [f"mp[{i}] = {r};" for i, r in enumerate(res[1:1 + n * n])]
        body += [f"if (!ex_regular({res[0]}, eps)) return 0;"]
        body += [f"mpfr_set(fo[{i}], {r}, MPFR_RNDN);"
                 for i, r in enumerate(res[1 + n * n:1 + n * n + 2 * n])]
        factors = res[1 + n * n + 2 * n:]
    else:
        (_, _, _, mres), (_, _, _, gres) = parts
        gres, factors = gres[:len(gres) - ng], gres[len(gres) - ng:]
        if len(mres) != n * n or len(gres) != n:
            raise Unsupported(f"a mass matrix of {len(mres)} and a force of {len(gres)} values "
                              f"for {n} degrees of freedom")
        body = evaluate[0] + [f"mp[{i}] = {r};" for i, r in enumerate(mres)]
        body += ["for (int i = 0; i < N; i++) bp[i] = fy[N + i];",
                 "if (!dense_solve(mp, bp, vx, eps)) return 0;"]
        body += evaluate[1]
        body += ["for (int i = 0; i < N; i++) mpfr_set(fo[i], vx[i], MPFR_RNDN);"]
        body += [f"mpfr_set(fo[N + {i}], {r}, MPFR_RNDN);" for i, r in enumerate(gres)]
    return body, factors


def translate_explicit(name: str, sources: Sequence[str], constants: Sequence[Sequence[str]],
                       prec: int, n: int, npar: int, note: str = "", ng: int = 0,
                       values: Sequence[dict] | None = None) -> str:
    """The C source of an extension module ``name`` with the explicit steps of
    :mod:`mpvi.engines.ode` on a mechanical system's Hamiltonian field y = (q, p), in MPFR:
    ``rk4(t, y, h, params, eps)`` (:func:`mpvi.engines.ode.rk4_step`), ``gbs(t, y, H, levels,
    params, eps)`` (:func:`mpvi.engines.ode.gbs_step`) and ``field(t, y, params, eps)``
    (the field of :func:`mpvi.engines.kernels.hamiltonian_field`), operation by operation, so the
    same bits.  ``sources``: the generated ``hamiltonian_field(t, q, p, params)`` returning
    [det M, M, v, p'] (the symbolic inverse), or ``M(q, params)`` and ``force(t, q, v,
    params)`` (v from M v = p by the elimination of :func:`mpvi.numbers.linalg.solve_dense`).
    Each returns a list of 2n numbers, or None wherever the Python field would take
    another path (M singular to working precision, a non-finite pivot, an argument wider
    than the context): the caller then runs the Python step, which gives the same bits
    or raises its error.  With ``ng`` > 0 the field's last function (``hamiltonian_field``
    or ``force``) also returns, after its values, the system's ``ng`` singular factors at
    (t, q) (:mod:`mpvi.model.singular`; one elimination of common subexpressions with the field,
    so they cost next to nothing); each function then takes one more argument, ``signs``
    (a tuple of -1, 0, +1 per factor, or None: no check), and every evaluation of the field
    also requires each factor to keep its sign at that stage (else None: the Python step
    raises, naming it)."""
    symbolic = len(sources) == 1
    if symbolic:
        specs = [("f_", (0, 1, 2), ("ft_", "fy", "(fy + N)", "parp"))]
    elif len(sources) == 2:
        specs = [("m_", (0,), ("fy", "parp")), ("g_", (0, 1, 2), ("ft_", "fy", "vxp", "parp"))]
    else:
        raise Unsupported(f"an explicit field of {len(sources)} functions")
    parts = _parts(sources, constants, specs, values)
    decls, inits, binds, fixed, evaluate = _parts_c(parts)
    body, factors = _explicit_field(parts, evaluate, n, ng)
    guards = []
    if ng:
        guards = ["if (gon) {"] + [f"    if (!sg_ok({r}, {j})) return 0;"
                                   for j, r in enumerate(factors)] + ["}"]
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "NPAR": npar,
               "NPARA": max(npar, 1), "NG": ng, "NGR": max(ng, 1), "NTABLES": len(parts)}
    hooks = ["\n".join(decls),
             _hook("int ex_tables(PyObject *tables)", binds, "1"),
             _hook("void ex_init(void)", inits),
             _hook("void ex_fixed(void)", fixed),
             _hook("int ex_evaluate(mpfr_srcptr eps)", body, "1"),
             _hook("int ex_guards(void)", guards, "1")]
    return _module_source("the RK4 and GBS steps of mpvi.engines.ode on a Hamiltonian field of "
                          "mpvi.engines.kernels, in MPFR", note, "mpvi_explicit.h", defines, hooks)


def translate_energy(name: str, sources: Sequence[str], constants: Sequence[Sequence[str]],
                     prec: int, n: int, npar: int, note: str = "",
                     values: Sequence[dict] | None = None) -> str:
    """The C source of an extension module ``name`` whose ``energies(q, p, params, eps)``
    computes :meth:`mpvi.LagrangianSystem.energies` of an M, V system in MPFR, row by row:
    v = M(q)^-1 p by the elimination of :func:`mpvi.numbers.linalg.solve_dense`, then
    H = p^T v / 2 + V(q), operation by operation, so the same bits (``mpvi_energy.h``).
    ``sources``: the generated ``M(q, params)`` and ``potential(q, params)``.  It returns
    the energies of the rows before the first one the C does not take (M singular to
    working precision, a number wider than the context): the caller computes from there."""
    if len(sources) != 2:
        raise Unsupported(f"energies of {len(sources)} functions (M and V are needed)")
    specs = [("m_", (0,), ("qp", "parp")), ("u_", (0,), ("qp", "parp"))]
    parts = _parts(sources, constants, specs, values)
    if any(len(info["groups"]) != 2 for _, info, _, _ in parts):
        raise Unsupported("an energy kernel without the arguments (q, params)")
    mres, vres = parts[0][3], parts[1][3]
    if len(mres) != n * n or len(vres) != 1:
        raise Unsupported(f"a mass matrix of {len(mres)} and a potential of {len(vres)} values "
                          f"for {n} degrees of freedom")
    decls, inits, binds, fixed, evaluate = _parts_c(parts)
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "NPAR": npar,
               "NPARA": max(npar, 1), "NTABLES": 2}
    hooks = ["\n".join(decls),
             _hook("int en_tables(PyObject *tables)", binds, "1"),
             _hook("void en_init(void)", inits),
             _hook("void en_fixed(void)", fixed),
             _hook("void en_mass(void)",
                   evaluate[0] + [f"mp[{i}] = {r};" for i, r in enumerate(mres)]),
             _hook("mpfr_srcptr en_potential(void)", evaluate[1], vres[0])]
    return _module_source("the energies of mpvi.LagrangianSystem.energies, in MPFR", note,
                          "mpvi_energy.h", defines, hooks)


def translate_check(name: str, source: str, constants: Sequence[str], prec: int, n: int,
                    note: str = "", guard: tuple | None = None,
                    values: Sequence[dict] | None = None) -> str:
    """The C source of an extension module ``name`` whose ``check(t, q, y, params, bound)``
    runs the checks :func:`mpvi.solve` makes after every step of an M, V system, in MPFR:
    every number of q and y finite, max |x| <= ``bound`` (the growth guard; None: off), and
    the system regular at q (:meth:`mpvi.LagrangianSystem.irregularity`: ``source`` is its
    generated ``regularity(t, q, v, params)`` returning [V, M]; V and M finite, M positive
    definite by the LDL^T of :func:`mpvi.numbers.linalg.is_positive_definite`, the same operations
    in the same order).  With ``guard`` = (source, constant names) of the generated
    ``singular_factors(t, q, v, params)`` (:mod:`mpvi.model.singular`), ``source`` returns [V, M,
    the factors] (one elimination of common subexpressions: the factors at the node cost
    next to nothing) and the check takes two more arguments, ``signs`` (a tuple of -1, 0,
    +1, one per factor, or None: not checked) and ``qprev`` (the previous node's
    positions, or None), and also requires every factor to have its sign at q and, with
    ``qprev``, at the chord midpoint (q + qprev)/2 (``guard``'s function; a 0 sign: the
    caller decides).  True when all hold; False otherwise or for an argument it does not
    take: the caller then runs its own checks, which raise with the message."""
    tr = _Translator(constants, "r_", values=values[0] if values else None)
    info = tr.function(source)
    res = [tr.exact_int(v) if kind == "int" else v for kind, v in info["results"]]
    ng = 0
    if guard is not None:
        gt = _Translator(guard[1], "g_", values=values[1] if values and len(values) > 1 else None)
        ginfo = gt.function(guard[0])
        gres = [gt.exact_int(v) if kind == "int" else v for kind, v in ginfo["results"]]
        if len(ginfo["groups"]) != 4:
            raise Unsupported("a singular-factor kernel without the arguments (t, q, v, params)")
        ng = len(gres)
    if len(res) != 1 + n * n + ng or len(info["groups"]) != 4:
        raise Unsupported(f"a regularity kernel of {n} degrees of freedom and {ng} singular "
                          f"factors returns {len(res)} values")
    binds = _bind(tr, info, ("tp", "yp", "yp", "parp"))   # the M, V form: q stands in for v
    body = tr.lines + [f"mp[{i}] = {r};" for i, r in enumerate(res[1:1 + n * n])]
    decls, inits = _storage(tr)
    npar = len(info["unpack"].get(info["groups"][3], ()))
    tables = [f"if (!nw_set_table(tables, 0, r_k, {len(constants)})) return 0;"]
    guards = []
    if guard is not None:
        d, i = _storage(gt)
        decls, inits = decls + d, inits + i
        guards = ["if (gon) {"] + [f"    if (!sg_ok({r}, {j})) return 0;"
                                   for j, r in enumerate(res[1 + n * n:])] + ["}"]
        guards += ["if (gon && qmid) {"] + [f"    {x}" for x in _bind(gt, ginfo, ("tp", "qm", "qm", "parp"))]
        guards += [f"    {x}" for x in gt.lines]
        guards += [f"    if (!sg_ok({r}, {j})) return 0;" for j, r in enumerate(gres)]
        guards += ["}"]
        tables.append(f"if (!nw_set_table(tables, 1, g_k, {len(guard[1])})) return 0;")
    else:
        guards = ["(void)qmid;"]
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "NPAR": npar,
               "NPARA": max(npar, 1), "NG": ng, "NGR": max(ng, 1),
               "NTABLES": 2 if guard is not None else 1}
    hooks = ["\n".join(decls),
             _hook("int ck_tables(PyObject *tables)", tables, "1"),
             _hook("void ck_init(void)", inits),
             _hook("mpfr_srcptr ck_evaluate(void)", binds + body, res[0]),
             _hook("int ck_guards(int qmid)", guards, "1")]
    return _module_source("the checks after a step of mpvi.solve, in MPFR", note,
                          "mpvi_check.h", defines, hooks)


def _F(o) -> str:
    """The C of a fixed slot of a tape (an ``mpfr_ptr``)."""
    return f"F[{o[1]}]"


def _S(o, k) -> str:
    """The C of the coefficient ``k`` (a C expression) of a series slot of a tape."""
    return f"S[{o[1]}][{k}]"


def _T(o) -> str:
    """The C of a whole series of a tape (an array of ``mpfr_t``)."""
    return f"S[{o[1]}]"


def _coef(o, k) -> str:
    """The coefficient ``k`` of a slot: a series' own, a fixed slot's value at 0, else 0."""
    return _S(o, k) if o[0] == "s" else f"(({k}) == 0 ? F[{o[1]}] : ZERO)"


def _series_binary(a, b, fixed_first: str, fixed_second: str, both_series: str) -> str:
    """The C of a binary operation of a series tape on the slots ``a`` and ``b``: the
    statement ``fixed_first`` where ``a`` is a fixed slot, else ``fixed_second`` where
    ``b`` is, else ``both_series``."""
    return fixed_first if a[0] == "f" else fixed_second if b[0] == "f" else both_series


def _taylor_fixed(tape) -> list[str]:
    """C of the fixed slots of ``tape`` (parameters, constants, operations on them alone)."""
    fixed = []
    for ins in tape.fixed:
        op, d = ins[0], f"FS[{ins[1][1]}]"
        ptr = f"F[{ins[1][1]}]"
        if op == "param":
            fixed.append(f"{ptr} = par[{ins[2]}];")
            continue
        if op == "const":
            fixed.append(f"{ptr} = KC[{ins[2]}];")
            continue
        if op == "int":
            if not -2 ** 62 < ins[2] < 2 ** 62:
                raise Unsupported(f"integer literal {ins[2]} beyond 62 bits")
            fixed.append(f"mpfr_set_si({d}, {ins[2]}L, MPFR_RNDN);")
        elif op == "mpf":
            v = ins[2]
            if isinstance(v, int):
                if not -2 ** 62 < v < 2 ** 62:
                    raise Unsupported(f"mpf({v}) beyond 62 bits")
                fixed.append(f"mpfr_set_si({d}, {v}L, MPFR_RNDN);")
            else:
                if not all(ch in "0123456789.eE+-" for ch in v):
                    raise Unsupported(f"mpf({v!r})")
                fixed.append(f'mpfr_set_str({d}, "{v}", 10, MPFR_RNDN);')
        elif op == "fun":
            fn, a = ins[2], _F(ins[3])
            if fn not in _FUNCTIONS:
                raise Unsupported(f"function {fn}")
            call = f"{_FUNCTIONS[fn]}({d}, {a}, MPFR_RNDN);"
            if fn in _PERIODIC:
                call = _nan_if(a, d, call, f"mpfr_cmpabs({a}, limit) >= 0")
            fixed.append(call)
        elif op == "neg":
            fixed.append(f"mpfr_neg({d}, {_F(ins[2])}, MPFR_RNDN);")
        elif op == "pow_i":
            e = ins[3]
            if e == 2:
                fixed.append(f"mpfr_sqr({d}, {_F(ins[2])}, MPFR_RNDN);")
            else:
                fixed.append(f"mpfr_pow_si({d}, {_F(ins[2])}, {e}L, MPFR_RNDN);")
        elif op in ("add", "sub", "mul", "div", "pow"):
            fixed.append(f"mpfr_{op}({d}, {_F(ins[2])}, {_F(ins[3])}, MPFR_RNDN);")
        else:
            raise Unsupported(f"fixed tape operation {op}")
        fixed.append(f"{ptr} = {d};")

    return fixed


def _taylor_series(tape) -> list[str]:
    """C of the k-th coefficient of every series of ``tape``: one call of a recurrence
    per operation (:mod:`mpvi.numbers.series` translated, or its ``mpvi_taylor.h`` glue
    that takes coefficient 0 of an elementary function; the solve for the velocities
    written out)."""
    body = []
    emit = body.append
    for ins in tape.series:
        op = ins[0]
        emit(f"/* {op} */")
        if op == "solve":
            v, M, p = ins[1], ins[2], ins[3]
            n = len(v)
            for i in range(n):                   # mpvi.numbers.series.series_solve_row
                terms = [m for m in range(n) if M[i * n + m][0] == "s"]
                ms = ", ".join(_T(M[i * n + m]) for m in terms) or "NULL"
                vs = ", ".join(_T(v[m]) for m in terms) or "NULL"
                emit(f"{{ mpfr_t *ms[] = {{{ms}}}, *vs[] = {{{vs}}}; "
                     f"mpvi_series_solve_row(k, {len(terms)}, ms, vs, {_coef(p[i], 'k')}, RHS, {i}); }}")
                emit(f"rp[{i}] = RHS[{i}];")
            for i, e in enumerate(M):
                emit(f"mp[{i}] = {_S(e, 0) if e[0] == 's' else _F(e)};")
            emit("if (!dense_solve(mp, rp, vx, eps)) return 0;")
            for i in range(n):
                emit(f"mpfr_set({_S(v[i], 'k')}, vx[{i}], MPFR_RNDN);")
            continue
        d, a = ins[1], ins[2]
        D = _S(d, "k")
        if op in ("add", "sub"):
            b = ins[3]
            later = "mpfr_set" if op == "add" else "mpfr_neg"     # F +- b at k > 0: +-b_k
            emit(_series_binary(
                a, b, f"if (k > 0) {later}({D}, {_S(b, 'k')}, MPFR_RNDN); "
                      f"else mpfr_{op}({D}, {_F(a)}, {_S(b, '0')}, MPFR_RNDN);",
                f"if (k > 0) mpfr_set({D}, {_S(a, 'k')}, MPFR_RNDN); "
                f"else mpfr_{op}({D}, {_S(a, '0')}, {_F(b)}, MPFR_RNDN);",
                f"mpfr_{op}({D}, {_S(a, 'k')}, {_S(b, 'k')}, MPFR_RNDN);"))
        elif op == "neg":
            emit(f"mpfr_neg({D}, {_S(a, 'k')}, MPFR_RNDN);")
        elif op == "mul":
            b = ins[3]
            emit(_series_binary(a, b, f"mpfr_mul({D}, {_F(a)}, {_S(b, 'k')}, MPFR_RNDN);",
                                f"mpfr_mul({D}, {_S(a, 'k')}, {_F(b)}, MPFR_RNDN);",
                                f"mpvi_series_mul({_T(d)}, {_T(a)}, {_T(b)}, k);"))
        elif op == "div":
            b = ins[3]
            if b[0] == "f":
                emit(f"mpfr_div({D}, {_S(a, 'k')}, {_F(b)}, MPFR_RNDN);")
            else:
                emit(f"mpvi_series_div({_T(d)}, {_coef(a, 'k')}, {_T(b)}, k);")
        elif op == "sqr":
            emit(f"mpvi_series_sqr({_T(d)}, {_T(a)}, k);")
        elif op == "sincos":
            emit(f"ts_sincos({_T(d)}, {_T(ins[2])}, {_T(ins[3])}, {_T(ins[4])}, k);")
        elif op == "exp":
            emit(f"ts_exp({_T(d)}, {_T(a)}, {_T(ins[3])}, k);")
        elif op in ("log", "sqrt"):
            emit(f"ts_{op}({_T(d)}, {_T(a)}, k);")
        elif op == "powc":
            emit(f"ts_powc({_T(d)}, {_T(a)}, {_T(ins[4])}, {_F(ins[3])}, k);")
        else:
            raise Unsupported(f"series tape operation {op}")
    return body


def translate_taylor(name: str, tape, prec: int, note: str = "") -> str:
    """The C source of an extension module ``name`` with the Taylor steps on a
    :class:`mpvi.engines.taylor.Tape`, each bit-identical to its method of
    :class:`mpvi.engines.taylor.TaylorEvaluator` (the same recurrences, operation by operation):
    ``step(t, y, h, order, params, eps)`` -> the new y as a list;
    ``adaptive(t, y, h, order, params, eps, factor, record)`` -> (the new y, the number
    of substeps, the interior substep ends or None), Jorba & Zou's adaptive substeps --
    (None, substeps, [tau, hs]) where Python raises :func:`mpvi.engines.taylor.substep_limit`; and
    ``coefficients(t, y, order, params, eps)`` -> the flat list of the coefficients y_0 ..
    y_order.  Each returns None where Python takes another path (a singular M_0 in a
    solve; a substep that no longer moves the time; an argument wider than the context):
    the caller then runs the Python step, which raises its error.  ``setup`` takes a
    one-element tuple: the list of the tape's constants."""
    fixed, body = _taylor_fixed(tape), _taylor_series(tape)
    outputs = [f"mpfr_div_si(S[{st}][k + 1], {_coef(o, 'k')}, k + 1, MPFR_RNDN);"
               for st, o in zip(tape.state, tape.outputs)]
    nparams = sum(1 for i in tape.fixed if i[0] == "param")
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": tape.n, "NS": max(tape.nseries, 1),
               "NF": max(tape.nfixed, 1), "NC": len(tape.constants),
               "NCA": max(len(tape.constants), 1), "NPAR": nparams,
               "NPARA": max(nparams, 1), "MAX_SUBSTEPS": f"{tape.max_substeps}L",
               "MPVI_STATE": ", ".join(map(str, tape.state)),
               "MPVI_COPIES": ", ".join(map(str, tape.copies or tape.state)),
               "NCOPIES": len(tape.copies or tape.state),
               "MPVI_TIME": -1 if tape.time is None else tape.time}
    hooks = [_hook("void tp_fixed(void)", fixed),
             _hook("int tp_order(long k, mpfr_srcptr eps)", ["(void)k;", "(void)eps;"] + body, "1"),
             _hook("void tp_outputs(long k)", ["(void)k;"] + outputs)]
    return _module_source("one Taylor step of mpvi.engines.taylor on a Hamiltonian field of "
                          "mpvi.engines.kernels, in MPFR", note, "mpvi_taylor.h", defines, hooks,
                          counted=False)
