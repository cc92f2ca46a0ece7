"""Documentation of aqmlab.sweep, aqmlab.stats and aqmlab.rfc7928: runnable examples, documented
parameters, indexed pages that name the API and every suite file."""

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = [
    "aqmlab.sweep",
    "aqmlab.sweep.spec",
    "aqmlab.sweep.table",
    "aqmlab.sweep.budget",
    "aqmlab.stats",
    "aqmlab.rfc7928",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


@pytest.mark.parametrize(
    "func",
    ["aqmlab.sweep.run", "aqmlab.stats.mean_ci", "aqmlab.stats.across_seeds", "aqmlab.rfc7928.run"],
)
def test_parameters_documented(func):
    mod, name = func.rsplit(".", 1)
    obj = getattr(importlib.import_module(mod), name)
    doc = inspect.getdoc(obj) or ""
    for p in inspect.signature(obj).parameters:
        entry = rf"^\s*(\w+,\s*)*{p}(,\s*\w+)*\s*:"
        assert re.search(entry, doc, re.M), f"{func}: parameter {p} not documented"


def test_pages_are_indexed_and_name_the_api():
    index = (ROOT / "docs" / "README.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for page in ("sweep.md", "rfc7928.md"):
        assert page in index and f"docs/{page}" in readme
    sweep = (ROOT / "docs" / "sweep.md").read_text()
    for name in ("results.parquet", "runs/<run_key>.json", "run_key=<key>", "spec.toml",
                 "mean_ci", "across_seeds", "--dask local", "--workers"):  # fmt: skip
        assert name in sweep, name
    rfc = (ROOT / "docs" / "rfc7928.md").read_text()
    for f in (ROOT / "scenarios" / "rfc7928").glob("*.toml"):
        assert f"`{f.name}`" in rfc, f.name
