"""Queue-discipline trees from Python: DRR and WFQ scenarios with classes, per-class results and
time series, paths."""

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


@pytest.mark.parametrize("sched", ["drr", "wfq"])
def test_scheduler_scenario_writes_per_class_results(tmp_path, sched):
    scen = tmp_path / f"{sched}.toml"
    scen.write_text(DRR_TOML.replace('type = "drr"', f'type = "{sched}"'))
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
    assert link["aqm"] == sched
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
    # Per-class time series: one row per sample and class; the classes add up to the link.
    import pyarrow.parquet as pq

    cts = pq.read_table(out / "class_timeseries.parquet").to_pandas()
    ts = pq.read_table(out / "timeseries.parquet").to_pandas()
    assert list(cts.columns) == [
        "time_s",
        "link",
        "class",
        "queue_pkts",
        "queue_bytes",
        "tx_bytes",
        "drops",
        "marks",
        "queue_delay_ms_mean",
    ]
    assert len(cts) == 3 * len(ts)
    assert set(cts["link"]) == {"bottleneck"}
    assert list(cts["class"][:3]) == ["a", "b", "c"]
    per_t = cts.groupby("time_s")[["queue_pkts", "queue_bytes", "drops"]].sum()
    link_t = ts.set_index("time_s")[["queue_pkts", "queue_bytes", "drops"]]
    assert (per_t.loc[link_t.index].to_numpy() == link_t.to_numpy()).all()
    late = cts[cts["time_s"] > 5.0].groupby("class")["tx_bytes"].sum()
    assert late["c"] / late.sum() == pytest.approx(0.5, rel=0.1)


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


@pytest.mark.parametrize("sched", ["drr", "wfq"])
def test_aqms_lists_schedulers(sched):
    from aqmlab.aqm import list_schedulers

    names = {p["name"] for p in list_schedulers()[sched]}
    assert {"classes", "classes.NAME.weight", "classes.NAME.aqm.PARAM"} <= names
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "aqms", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert sched in json.loads(p.stdout)


def test_fifo_writes_no_class_timeseries(tmp_path):
    sim = Simulation({"duration": "1s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}]})
    sim.run()
    res = sim.result()
    assert res.to_pandas("class_timeseries").empty
    res.save(tmp_path / "r", plots=False)
    assert not (tmp_path / "r" / "class_timeseries.parquet").exists()


def test_dumbbell_classes_from_the_command_line(tmp_path):
    """--class NAME:WEIGHT[:AQM] and --class-flows NAME=N build the classes and one flow group
    per class; class parameters by path with --aqm-param."""
    out = tmp_path / "r"
    p = subprocess.run(
        [
            *(sys.executable, "-m", "aqmlab", "dumbbell", "--aqm", "wfq"),
            *("--class", "a:1:codel", "--class", "b:3", "--class", "idle:1"),
            *("--class-flows", "b=3", "--class-flows", "idle=0", "--flows", "2"),
            *("--aqm-param", "classes.a.aqm.target=2ms", "--aqm-param", "classes.b.weight=2"),
            *("--duration", "12s", "--rtt", "40ms", "--buffer", "120", "--out", str(out)),
            "--no-plots",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "classes" in p.stdout
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["aqm"] == "wfq"
    assert list(link["classes"]) == ["a", "b", "idle"]
    groups = [f["group"] for f in s["flows"]]
    assert groups == [0, 0, 1, 1, 1]
    assert link["classes"]["idle"]["enqueued"] == 0
    tx = {k: c["tx_bytes"] for k, c in link["classes"].items()}
    assert tx["b"] / (tx["a"] + tx["b"]) == pytest.approx(2 / 3, rel=0.1)
    # CoDel with a 2 ms target keeps class a's queue short; class b is drop-tail.
    assert (
        link["classes"]["a"]["queue_delay_ms"]["mean"]
        < link["classes"]["b"]["queue_delay_ms"]["mean"]
    )
