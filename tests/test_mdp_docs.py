"""Documentation of aqmlab.mdp: every public function documents each parameter (NumPy style),
and every docstring example runs (python-control's rule)."""

import doctest
import importlib
import inspect
import re

import pytest

MODULES = [
    "aqmlab.mdp",
    "aqmlab.mdp.model",
    "aqmlab.mdp.rtt",
    "aqmlab.mdp.solver",
    "aqmlab.mdp.policy_io",
    "aqmlab.mdp.inference",
    "aqmlab.mdp.multiflow",
    "aqmlab.mdp.dqn",
    "aqmlab.mdp.evaluate",
    "aqmlab.mdp.figures",
]


def _public_functions():
    seen = set()
    for name in MODULES:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr)
            if inspect.isfunction(obj) and obj not in seen:
                seen.add(obj)
                yield f"{obj.__module__}.{obj.__name__}", obj


@pytest.mark.parametrize("qualname,fn", list(_public_functions()), ids=lambda x: str(x))
def test_every_parameter_is_documented(qualname, fn):
    doc = inspect.getdoc(fn) or ""
    assert doc, f"{qualname} has no docstring"
    params = [p for p in inspect.signature(fn).parameters if p not in ("self",)]
    assert "Parameters\n----------" in doc, f"{qualname}: no Parameters section"
    section = doc.split("Parameters\n----------", 1)[1]
    section = re.split(r"\n(Returns|Examples|Raises|Notes|Yields)\n-+", section)[0]
    listed = set()
    for line in section.splitlines():
        m = re.match(r"^([A-Za-z_][\w, ]*?)\s*(:|$)", line)
        if m and not line.startswith(" "):
            listed.update(x.strip() for x in m.group(1).split(","))
    missing = [p for p in params if p not in listed]
    assert not missing, f"{qualname}: undocumented {missing}"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
