"""Errors keep their structure across the Rust/Python boundary: every error of the core is an
exception of a ``ValueError`` subclass per kind that carries ``key``, ``value`` and ``reason``,
and the command line formats its one line from those fields, never from the message."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from aqmlab import _core
from aqmlab.aqm import Queue
from aqmlab.errors import AqmConfigError, ArgumentError, ScenarioError, error
from aqmlab.scenario import Scenario
from aqmlab.sim import Simulation

ROOT = Path(__file__).resolve().parents[1]
OK = {"duration": "1s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 1}]}


@pytest.mark.parametrize(
    "make, cls, key, value, reason",
    [
        (
            lambda: Scenario({**OK, "flows": [{"count": 0}]}),
            ScenarioError, "flows[0].count", "0", "must be a whole number",
        ),
        (
            lambda: Scenario({**OK, "dumbbell": {"rate": "fast"}}),
            ScenarioError, "dumbbell.rate", '"fast"', "",
        ),
        (
            lambda: Scenario({**OK, "aqm": {"type": "codel", "target": -1}}),
            ScenarioError, "aqm.target", "-1", "",
        ),
        (lambda: Queue("codel", {"target": -1.0}), AqmConfigError, "target", "-1", ""),
        (lambda: Queue("nosuch"), AqmConfigError, "type", "'nosuch'", "unknown AQM"),
        (lambda: Simulation(OK).run_until(-1.0), ArgumentError, "t", "-1", "finite time"),
        (
            lambda: Simulation(OK).set_aqm_param("bottleneck", "nosuch", 1),
            AqmConfigError, "nosuch", None, "unknown parameter",
        ),
        (lambda: _core.secs_to_ns("period", float("nan")), ArgumentError, "period", "NaN", ""),
    ],
)  # fmt: skip
def test_core_errors_carry_key_value_and_reason(make, cls, key, value, reason):
    with pytest.raises(cls) as info:
        make()
    e = info.value
    assert isinstance(e, ValueError)
    assert e.key == key
    assert e.value == value
    assert reason in e.reason
    # the message is one line naming the same key (or the value, for an unknown name)
    assert str(e).splitlines() == [str(e)]
    assert key in str(e) or value.strip("'") in str(e)


def test_python_raised_errors_have_the_fields_too():
    e = error("dumbbell.loss", 0.01, "not emulated")
    assert (e.key, e.value, e.reason) == ("dumbbell.loss", "0.01", "not emulated")
    assert str(e) == "dumbbell.loss = 0.01: not emulated"
    bare = ScenarioError("scenario file 'x.toml': malformed TOML")
    assert (bare.key, bare.value, bare.reason) == (None, None, None)


def test_the_command_line_reads_no_error_message_with_a_regular_expression():
    # the CLI's modules map an error's key to an option; none imports re
    for f in sorted((ROOT / "python" / "aqmlab" / "cli").glob("*.py")):
        tree = ast.parse(f.read_text())
        imported = {
            a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.Import | ast.ImportFrom)
            for a in n.names
        } | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "re" not in imported, f.name
