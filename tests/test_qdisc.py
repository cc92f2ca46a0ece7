"""Queue-discipline trees from Python: a DRR scenario with classes, per-class results, paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from aqmlab.scenario import ScenarioError, parse_scenario
from aqmlab.sim import Simulation

ROOT = Path(__file__).resolve().parents[1]

DRR_TOML = """
name = "drr3"
duration = "20s"
warmup = "5s"

[dumbbell]
rate = "10Mbps"
rtt = "60ms"
buffer = 150

[aqm]
type = "drr"
classes = [
  {name = "a", weight = 1, aqm = {type = "codel", target = "5ms"}},
  {name = "b", weight = 2},
  {name = "c", weight = 3, aqm = {type = "pie", target = "10ms"}},
]

[[flows]]
count = 3
class = "a"

[[flows]]
count = 3
class = "b"

[[flows]]
count = 3
class = "c"
"""


def test_drr_scenario_writes_per_class_results(tmp_path):
    scen = tmp_path / "drr.toml"
    scen.write_text(DRR_TOML)
    out = tmp_path / "r"
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(scen), "--out", str(out), "--no-plots"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["aqm"] == "drr"
    classes = link["classes"]
    assert set(classes) == {"a", "b", "c"}
    for c in classes.values():
        assert set(c["queue_delay_ms"]) >= {"mean", "p50", "p95", "p99"}
        for key in ("enqueued", "drops", "marks", "tx_bytes"):
            assert key in c, key
    tx = [classes[k]["tx_bytes"] for k in "abc"]
    total = sum(tx)
    for share, w in zip(tx, (1, 2, 3), strict=True):
        assert share / total == pytest.approx(w / 6, rel=0.1)
    assert sum(c["enqueued"] for c in classes.values()) == link["enqueued"]


def test_drr_schema_errors_and_paths():
    base = {
        "duration": "5s",
        "dumbbell": {"rate": "10Mbps"},
        "aqm": {"type": "drr", "classes": [{"name": "a"}, {"name": "b", "weight": 2}]},
        "flows": [{"class": "a"}, {"class": "b"}],
    }
    with pytest.raises(ScenarioError, match=r'^flows\[1\]\.class = "z": no such class'):
        parse_scenario({**base, "flows": [{"class": "a"}, {"class": "z"}]})
    bad = {
        "type": "drr",
        "classes": [{"name": "a"}, {"name": "b", "aqm": {"type": "codel", "target": "5 parsecs"}}],
    }
    with pytest.raises(ScenarioError, match=r'^aqm\.classes\[1\]\.aqm\.target = "5 parsecs": '):
        parse_scenario({**base, "aqm": bad})
    sc = parse_scenario(base)
    assert sc.normalized["aqm"]["classes"][1]["weight"] == 2
    sim = Simulation(sc)
    sim.run_until(1.0)
    sim.set_aqm_param("bottleneck", "classes.b.weight", 4)
    assert sim.aqm_param("bottleneck", "classes.b.weight") == 4.0
    with pytest.raises(ValueError, match="classes.q.weight"):
        sim.set_aqm_param("bottleneck", "classes.q.weight", 1)
    sim.run_until(5.0)


def test_aqms_lists_drr():
    from aqmlab.aqm import list_schedulers

    names = {p["name"] for p in list_schedulers()["drr"]}
    assert {"classes", "classes.NAME.weight", "classes.NAME.aqm.PARAM"} <= names
