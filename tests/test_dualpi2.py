"""DualPI2 and the L4S senders from Python and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from aqmlab.scenario import ScenarioError, parse_scenario
from aqmlab.sim import Simulation

ROOT = Path(__file__).resolve().parents[1]

L4S_TOML = """
name = "l4s"
duration = "10s"
warmup = "2s"

[dumbbell]
rate = "40Mbps"
rtt = "20ms"
buffer = 1000
pkt_size = 1500

[aqm]
type = "dualpi2"
l = {step_thresh = "1ms"}

[[flows]]
cc = "cubic"
ecn = true

[[flows]]
cc = "prague"
"""


def test_l4s_scenario_reports_l_and_c(tmp_path):
    scen = tmp_path / "l4s.toml"
    scen.write_text(L4S_TOML)
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
    assert link["aqm"] == "dualpi2"
    cl = link["classes"]
    assert set(cl) == {"l", "c"}
    for c in cl.values():
        assert set(c["queue_delay_ms"]) >= {"mean", "p50", "p95", "p99"}
        for key in ("enqueued", "drops", "marks", "tx_bytes"):
            assert key in c, key
    # Prague (ECT(1)) is served by the L queue with sub-ms delay, CUBIC waits near 15 ms.
    assert cl["l"]["queue_delay_ms"]["mean"] < 2.0
    assert 5.0 < cl["c"]["queue_delay_ms"]["mean"] < 25.0
    assert cl["l"]["marks"] > 0
    assert [f["cc"] for f in s["flows"]] == ["cubic", "prague"]
    assert sum(c["enqueued"] for c in cl.values()) == link["enqueued"]


def test_dumbbell_cli_dualpi2_and_dctcp(tmp_path):
    out = tmp_path / "d"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "aqmlab",
            "dumbbell",
            "--out",
            str(out),
            "--no-plots",
            "--quiet",
            "--flows",
            "2",
            "--cc",
            "dctcp",
            "--rate",
            "40Mbps",
            "--rtt",
            "20ms",
            "--pkt-size",
            "1500",
            "--buffer",
            "500",
            "--duration",
            "10s",
            "--aqm",
            "dualpi2",
            "--aqm-param",
            "ecn_mask=3",
            "--aqm-param",
            "l.step_thresh=1ms",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    link = json.loads((out / "summary.json").read_text())["links"]["bottleneck"]
    # Every DCTCP packet (ECT(0)) goes to L with ecn_mask = 3; the 1 ms step keeps it short.
    assert link["classes"]["c"]["enqueued"] == 0
    assert link["queue_delay_ms"]["mean"] < 1.0
    assert link["utilization"] > 0.9
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "aqmlab",
            "dumbbell",
            "--out",
            str(tmp_path / "x"),
            "--aqm",
            "dualpi2",
            "--aqm-param",
            "l.step_thresh=1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 2
    assert "--aqm-param l.step_thresh=1" in bad.stderr


def test_dualpi2_params_paths_and_errors():
    base = {
        "duration": "4s",
        "dumbbell": {"rate": "20Mbps", "rtt": "20ms"},
        "aqm": {"type": "dualpi2", "l.step_thresh": "2ms", "target": "10ms"},
        "flows": [{"cc": "prague"}, {"cc": "newreno"}],
    }
    sc = parse_scenario(base)
    assert sc.normalized["aqm"]["l.step_thresh"] == pytest.approx(0.002)
    sim = Simulation(sc)
    sim.run_until(1.0)
    assert sim.aqm_param("bottleneck", "l.step_thresh") == pytest.approx(0.002)
    sim.set_aqm_param("bottleneck", "l.step_thresh", 0.0005)
    assert sim.aqm_param("bottleneck", "l.step_thresh") == pytest.approx(0.0005)
    with pytest.raises(ValueError, match="coupling_factor"):
        sim.set_aqm_param("bottleneck", "coupling_factor", 0)
    sim.run_until(4.0)
    with pytest.raises(ScenarioError, match=r'^aqm\.l\.step_thresh = "5 parsecs": '):
        parse_scenario({**base, "aqm": {"type": "dualpi2", "l": {"step_thresh": "5 parsecs"}}})
    with pytest.raises(ScenarioError, match=r"^aqm\.step_thresh = 1"):
        parse_scenario({**base, "aqm": {"type": "dualpi2", "step_thresh": 1}})
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.ecn = false: .*needs ECN"):
        parse_scenario({**base, "flows": [{"cc": "prague", "ecn": False}]})
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.cc = \"vegas\": must be one of"):
        parse_scenario({**base, "flows": [{"cc": "vegas"}]})


def test_aqms_lists_dualpi2():
    from aqmlab.aqm import list_schedulers

    params = {p["name"]: p for p in list_schedulers()["dualpi2"]}
    assert {
        "target",
        "tupdate",
        "alpha",
        "beta",
        "coupling_factor",
        "c_protection",
        "drop_overload",
        "l.step_thresh",
        "l.min_qlen_step",
    } <= set(params)
    assert params["target"]["default"] == pytest.approx(0.015)
    assert params["tupdate"]["default"] == pytest.approx(0.016)
    assert params["l.step_thresh"]["unit"] == "s"
    assert params["coupling_factor"]["default"] == 2
