"""The docstring meta-test over every module of the aqmlab package (python-control's rule,
NumPy style): every module says what it is; every public name (a module's ``__all__``, else
the functions and classes it defines; the public methods and properties of public classes)
has a docstring; a function or method that takes parameters documents each one in a
``Parameters`` section (``name : type``), one that returns a value has a ``Returns`` (or
``Yields``) section; a class documents its constructor's parameters under ``Parameters`` or
``Attributes``; and every docstring example runs. The command line's commands are documented
by their help texts instead (every command and every option has one). Names another module
re-exports are checked once, where they are defined.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
import re
import textwrap

import aqmlab
import pytest

# aqmlab._core, the compiled bindings, is documented by its stub (tests/test_core_stubs.py)
MODULES = ["aqmlab"] + sorted(
    m.name
    for m in pkgutil.walk_packages(aqmlab.__path__, "aqmlab.")
    if m.name not in ("aqmlab.__main__", "aqmlab._core")
)

#: Names whose docstrings are not checked yet, with the reason. Each must still fail the
#: check (a name fixed elsewhere fails the test until it is taken off this list).
PENDING = {
    # sim.py and cli/sim.py are being restructured in parallel; their docstrings are completed
    # there, not here
    "aqmlab.sim.Simulation.aqm_param": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.close_trace": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.conservation": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.flow_groups": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.flow_hash": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.flow_path": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.flow_status": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.link_names": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.link_status": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.result": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.run": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.run_until": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.run_until_ns": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.set_aqm": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.set_aqm_param": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.sqm_slots": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.start_trace": "sim.py restructured in parallel",
    "aqmlab.sim.Simulation.trace_buffers": "sim.py restructured in parallel",
    "aqmlab.cli.sim.build_dumbbell": "cli/sim.py restructured in parallel",
    "aqmlab.cli.sim.register": "cli/sim.py restructured in parallel",
}

_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}[ \t]*$", re.M)


def sections(doc: str) -> set[str]:
    """The NumPy section titles of a docstring."""
    return {m.group(1) for m in _SECTION.finditer(doc)}


def _section(doc: str, title: str) -> str:
    parts = re.split(rf"^{title}\n-{{3,}}[ \t]*$", doc, maxsplit=1, flags=re.M)
    if len(parts) < 2:
        return ""
    return _SECTION.split(parts[1])[0]


def listed(doc: str, *titles: str) -> set[str]:
    """The names a docstring's sections list: unindented ``name : type`` or ``a, b : type``
    lines (stars of ``*args`` and ``**kw`` dropped)."""
    out = set()
    for title in titles:
        for line in _section(doc, title).splitlines():
            if line and not line[0].isspace():
                head = line.split(" : ")[0].split(":")[0]
                out.update(x.strip().lstrip("*") for x in head.split(","))
    return out


def returns_value(fn) -> bool:
    """Whether a function's own body returns something other than None, or yields."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    top = tree.body[0]
    found = False
    todo = list(ast.iter_child_nodes(top))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue  # a nested function's returns are its own
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if isinstance(node, ast.Return) and node.value is not None:
            found |= not (isinstance(node.value, ast.Constant) and node.value.value is None)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _commands():
    """The functions the command line registers as commands (documented by help texts)."""
    from aqmlab.cli import app

    out, todo = set(), [app]
    while todo:
        t = todo.pop()
        out.update(c.callback for c in t.registered_commands)
        todo.extend(g.typer_instance for g in t.registered_groups)
    return out


def _params(fn) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


def _public(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [
            k
            for k, v in vars(mod).items()
            if not k.startswith("_")
            and (inspect.isfunction(v) or inspect.isclass(v))
            and v.__module__ == mod.__name__
        ]
    for k in names:
        obj = getattr(mod, k)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__.startswith(
            "aqmlab"
        ):
            yield obj


def problems(modname: str) -> dict[str, str]:
    """What the rules find in the public names a module defines (by qualified name)."""
    mod = importlib.import_module(modname)
    out = {}
    if not (mod.__doc__ or "").strip():
        out[modname] = "module without a docstring"
    commands = _commands()
    seen = set()
    for mname in MODULES:  # a name is checked in the module that defines it
        if any(part.startswith("_") for part in mname.split(".")[1:]):
            continue  # a private module's names count where a public module exports them
        for obj in _public(importlib.import_module(mname)):
            if obj.__module__ != modname or obj in seen:
                continue
            seen.add(obj)
            out.update(_object_problems(obj, commands))
    return out


def _object_problems(obj, commands) -> dict[str, str]:
    out = {}
    name = f"{obj.__module__}.{obj.__qualname__}"
    doc = inspect.getdoc(obj) or ""
    if obj in commands:  # help texts, checked by test_every_command_and_option_has_help
        return out
    if not doc:
        return {name: "no docstring"}
    if inspect.isclass(obj):
        init = [p for p in _params(obj) if p not in ("args", "kwargs") and not p.startswith("_")]
        own_init = "__init__" in vars(obj) or hasattr(obj, "__dataclass_fields__")
        missing = [p for p in init if p not in listed(doc, "Parameters", "Attributes")]
        if own_init and missing and not issubclass(obj, BaseException):
            out[name] = f"constructor parameters not under Parameters/Attributes: {missing}"
        for mk, mv in vars(obj).items():
            if mk.startswith("_"):
                continue
            fn = mv.__func__ if isinstance(mv, staticmethod | classmethod) else mv
            q = f"{name}.{mk}"
            if isinstance(fn, property):
                if not inspect.getdoc(fn):
                    out[q] = "no docstring"
            elif inspect.isfunction(fn):
                p = _function_problem(fn)
                if p:
                    out[q] = p
        return out
    p = _function_problem(obj)
    return {name: p} if p else {}


def _function_problem(fn) -> str | None:
    doc = inspect.getdoc(fn) or ""
    if not doc:
        return "no docstring"
    params = [p for p in _params(fn) if not p.startswith("_")]  # private: not documented
    missing = [p for p in params if p not in listed(doc, "Parameters")]
    if missing:
        return f"parameters not in a Parameters section: {missing}"
    if returns_value(fn) and not {"Returns", "Yields"} & sections(doc):
        return "returns a value without a Returns section"
    return None


@pytest.mark.parametrize("modname", MODULES)
def test_public_names_are_documented(modname):
    found = problems(modname)
    pending = {k for k in PENDING if k.rsplit(".", 1)[0].startswith(modname + ".")}
    pending = {k for k in pending if _module_of(k) == modname}
    stale = [k for k in pending if k not in found]
    assert not stale, f"documented now, take off PENDING: {stale}"
    left = {k: v for k, v in found.items() if k not in PENDING}
    assert not left, "\n".join(f"{k}: {v}" for k, v in sorted(left.items()))


def _module_of(qualname: str) -> str:
    """The module part of a PENDING name (the longest prefix that is a module)."""
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in MODULES:
            return ".".join(parts[:i])
    return ""


@pytest.mark.parametrize("modname", MODULES)
def test_docstring_examples_run(modname):
    mod = importlib.import_module(modname)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0


def test_every_command_and_option_has_help():
    import typer
    from aqmlab.cli import app

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for n, c in cmd.commands.items():
                yield from walk(c, [*path, n])
        else:
            yield " ".join(path), cmd

    cmds = list(walk(typer.main.get_command(app), ["aqmlab"]))
    assert len(cmds) > 20
    for path, cmd in cmds:
        assert (cmd.help or "").strip(), f"{path}: no help"
        for p in cmd.params:
            assert (getattr(p, "help", None) or "").strip(), f"{path}: {p.name} has no help"


def test_the_rules_see_what_they_look_for():
    # the checks above fail on what they are meant to find
    def f(a, b=1):
        """Do.

        Parameters
        ----------
        a : int
            A.
        """
        return a

    assert _function_problem(f) == "parameters not in a Parameters section: ['b']"
    f.__doc__ = f.__doc__.replace("a : int", "a, b : int")
    assert _function_problem(f) == "returns a value without a Returns section"
    f.__doc__ += "\n        Returns\n        -------\n        int\n"
    assert _function_problem(f) is None
    assert listed("Attributes\n----------\nx, y : float\n    X.\n*args\n", "Attributes") == {
        "x",
        "y",
        "args",
    }
