"""The C of a test harness module, shared by the tests that compile one
(test_croutine.py, test_series_dot.py): the method table, the module definition and the
init function around a harness's own functions.

A test module imports it as ``from charness import module_tail`` (pytest puts ``tests/`` on
the path of its test modules)."""


def module_tail(methods, init):
    """The end of a harness module's C: ``methods`` (Python name, C function, doc) in its
    method table, and ``init`` (C statements) in its init function after gmpy2's C-API is
    imported."""
    rows = "".join(f'    {{"{name}", {c}, METH_VARARGS, "{doc}"}},\n' for name, c, doc in methods)
    return ("static PyMethodDef methods[] = {\n" + rows + "    {NULL, NULL, 0, NULL}\n};\n"
            "static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, MPVI_STR(MPVI_MODULE), "
            "NULL, -1, methods,\n                                  NULL, NULL, NULL, NULL};\n"
            "PyMODINIT_FUNC MPVI_INIT(void);\nPyMODINIT_FUNC MPVI_INIT(void) {\n"
            "    if (import_gmpy2() < 0) return NULL;\n" + init + "\n"
            "    return PyModule_Create(&def);\n}\n")
