"""aqmlab.online's documentation: runnable examples and documented parameters."""

import doctest
import importlib
import inspect
import re
from pathlib import Path

import aqmlab.online as online
import pytest

MODULES = ["__init__", "ogd", "num", "tuning", "controller"]
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    mod = online if name == "__init__" else importlib.import_module(f"aqmlab.online.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


@pytest.mark.parametrize("name", sorted(online.__all__))
def test_public_api_documented(name):
    obj = getattr(online, name)
    if not callable(obj):
        return
    doc = inspect.getdoc(obj) or ""
    assert doc, name
    if inspect.isfunction(obj):
        for p in inspect.signature(obj).parameters:
            entry = rf"^\s*(\w+,\s*)*{p}(,\s*\w+)*\s*:|^\s*(\w+,\s*)*{p}(,\s*\w+)*\s*$"
            assert re.search(entry, doc, re.M), f"{name}: parameter {p} not documented"
    elif name != "ParamMapping":
        assert "Attributes" in doc, name


def test_docs_page_is_indexed_and_names_the_api():
    page = (ROOT / "docs" / "online.md").read_text()
    assert "online.md" in (ROOT / "docs" / "README.md").read_text()
    assert "docs/online.md" in (ROOT / "README.md").read_text()
    for name in ("online_gradient", "project", "num_optimum", "link_tuning", "run_controller"):
        assert f"`{name}" in page, name
