"""The type stubs of aqmlab._core (python/aqmlab/_core.pyi) describe the built module exactly:
the same classes and functions, the same methods and properties, the same parameter names and
defaults (read from the signatures PyO3 gives the built module). A binding added, removed or
renamed without its stub fails here."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import aqmlab
import aqmlab._core as core
import pytest

STUB = Path(aqmlab.__file__).with_name("_core.pyi")


def _stub() -> ast.Module:
    return ast.parse(STUB.read_text())


def _params(fn: ast.FunctionDef) -> list[tuple[str, object]]:
    """(name, default) of a stub function's parameters, without self/cls; no default: ``...``."""
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    defaults = [...] * (len(a.posonlyargs + a.args) - len(a.defaults)) + [
        ast.literal_eval(d) for d in a.defaults
    ]
    defaults += [... if d is None else ast.literal_eval(d) for d in a.kw_defaults]
    out = list(zip(names, defaults, strict=True))
    return [p for p in out if p[0] not in ("self", "cls")]


def _runtime_params(obj) -> list[tuple[str, object]]:
    sig = inspect.signature(obj)
    return [
        (p.name, ... if p.default is inspect.Parameter.empty else p.default)
        for p in sig.parameters.values()
        if p.name not in ("self", "cls", "$self", "$type")
    ]


def _public(names) -> set[str]:
    return {n for n in names if not n.startswith("__")}


def test_the_stub_ships_with_the_package_and_says_it_is_typed():
    assert STUB.is_file()
    assert STUB.with_name("py.typed").is_file(), "PEP 561 marker missing"


def test_module_names_match():
    stub = {n.name for n in _stub().body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    runtime = _public(dir(core))
    assert stub - runtime == set(), "in the stub, not in aqmlab._core"
    assert runtime - stub == set(), "in aqmlab._core, not in the stub"
    (all_,) = [
        n.value for n in _stub().body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__"
    ]
    assert sorted(ast.literal_eval(all_)) == sorted(core.__all__) == sorted(stub)


STUB_ITEMS = {n.name: n for n in _stub().body if isinstance(n, ast.FunctionDef | ast.ClassDef)}


@pytest.mark.parametrize(
    "name", sorted(n for n, v in STUB_ITEMS.items() if isinstance(v, ast.FunctionDef))
)
def test_function_signatures_match(name):
    assert _params(STUB_ITEMS[name]) == _runtime_params(getattr(core, name))


@pytest.mark.parametrize(
    "name", sorted(n for n, v in STUB_ITEMS.items() if isinstance(v, ast.ClassDef))
)
def test_class_members_and_signatures_match(name):
    cls = getattr(core, name)
    node = STUB_ITEMS[name]
    if issubclass(cls, BaseException):
        bases = [b.id for b in node.bases]
        assert bases == [cls.__base__.__name__]
        return
    members = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    assert _public(members) == _public(vars(cls)), "methods and properties"
    assert _params(members["__new__"]) == _runtime_params(cls), "constructor"
    for m, fn in members.items():
        if m.startswith("__"):
            continue
        attr = inspect.getattr_static(cls, m)
        is_prop = any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)
        if is_prop:
            assert type(attr).__name__ == "getset_descriptor", f"{m} is not a property"
        else:
            assert callable(attr), m
            assert _params(fn) == _runtime_params(getattr(cls, m)), m


def test_every_stub_name_has_a_docstring():
    # the compiled module's documentation is its stub (the docstring meta-test skips _core)
    tree = _stub()
    assert ast.get_docstring(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name != "__new__":
            assert ast.get_docstring(node), node.name


def test_the_comparison_sees_a_wrong_stub():
    # the checks above fail on a stub that renames a parameter or drops a default
    fn = ast.parse("def secs_to_ns(key: str, seconds: float) -> int: ...").body[0]
    assert _params(fn) != _runtime_params(core.secs_to_ns)
    fn = ast.parse("def parse_quantity(kind: str, text: str, require_unit: bool) -> float: ...")
    assert _params(fn.body[0]) != _runtime_params(core.parse_quantity)
