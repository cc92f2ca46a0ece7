"""The design package's documentation: runnable examples and documented parameters."""

import doctest
import importlib
import inspect
import re

import aqmlab.design as design
import pytest

MODULES = ["__init__", "margins", "plants", "pi_hollot", "pd_lq", "sfc", "edc", "sqm_sigma"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    mod = design if name == "__init__" else importlib.import_module(f"aqmlab.design.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


@pytest.mark.parametrize("name", sorted(design.__all__))
def test_public_api_documented(name):
    # Every public function has a docstring naming each of its parameters, and a citation or
    # example; every result class documents its attributes.
    obj = getattr(design, name)
    doc = inspect.getdoc(obj) or ""
    assert doc, name
    if inspect.isfunction(obj):
        for p in inspect.signature(obj).parameters:
            # a NumPy-style entry "p : type" (or "p, q : type") in the Parameters section
            entry = rf"^\s*(\w+,\s*)*{p}(,\s*\w+)*\s*:"
            assert re.search(entry, doc, re.M), f"{name}: parameter {p} not documented"
    else:
        assert "Attributes" in doc, name
