"""The sqm qdisc from the CLI, scenarios and Python, and the online controller writing its
per-queue weights (issue 11 §1 and §4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from aqmlab.online import run_controller
from aqmlab.online.controller import SqmMapping
from aqmlab.sim import Simulation

ROOT = Path(__file__).resolve().parents[1]

TOML = """
name = "sqm"
duration = "12s"
warmup = "4s"

[dumbbell]
rate = "10Mbps"
rtt = "50ms"
buffer = 300

[aqm]
type = "sqm"
queues = 4

[[flows]]
count = 10
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_toml_run_reports_reserved_and_elephant_queues(tmp_path):
    scen = tmp_path / "sqm.toml"
    scen.write_text(TOML)
    out = tmp_path / "r"
    p = _run("run", str(scen), "--out", str(out), "--no-plots")
    assert p.returncode == 0, p.stderr
    link = json.loads((out / "summary.json").read_text())["links"]["bottleneck"]
    assert link["aqm"] == "sqm"
    assert link["utilization"] > 0.9
    cl = link["classes"]
    assert set(cl) == {"reserved", "elephants"}
    # four flows in elephant queues, six in the reserved one: both send
    assert cl["elephants"]["tx_packets"] > 0 and cl["reserved"]["tx_packets"] > 0
    assert cl["elephants"]["tx_packets"] + cl["reserved"]["tx_packets"] == link["tx_packets"]
    # active_flows: elephant slots in use, all four taken
    assert link["active_flows"]["max"] == 4


def test_cli_dumbbell_sqm_and_bad_params(tmp_path):
    out = tmp_path / "d"
    p = _run(
        "dumbbell", "--flows", "8", "--rate", "10Mbps", "--rtt", "40ms", "--buffer", "200",
        "--aqm", "sqm", "--aqm-param", "queues=3", "--aqm-param", "target=10ms",
        "--duration", "5s", "--out", str(out), "--no-plots", "--quiet",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["links"]["bottleneck"]["aqm"] == "sqm"
    assert set(s["links"]["bottleneck"]["classes"]) == {"reserved", "elephants"}
    for param, needle in (("reserved_share=1.5", "reserved_share"), ("queues=0", "queues")):
        bad = tmp_path / "bad"
        p = _run(
            "dumbbell", "--aqm", "sqm", "--aqm-param", param, "--rate", "10Mbps",
            "--duration", "2s", "--out", str(bad),
        )  # fmt: skip
        assert p.returncode == 2, p.stderr
        assert needle in p.stderr and param.split("=")[1] in p.stderr
        assert "Traceback" not in p.stderr and not bad.exists()


def test_aqms_lists_sqm_with_per_queue_paths():
    p = _run("aqms", "--json")
    assert p.returncode == 0, p.stderr
    params = {q["name"]: q for q in json.loads(p.stdout)["sqm"]}
    assert params["queues"]["default"] == 40
    assert params["target"]["default"] == 0.005 and params["reserved_share"]["default"] == 0.1
    assert {"queues.N.weight", "queues.N.sigma", "queues.N.beta"} <= set(params)
    for q in params.values():
        assert q["unit"] and q["doc"], q


def _codel_sim():
    return Simulation(
        {"duration": 1, "dumbbell": {"rate": "10Mbps"}, "aqm": {"type": "codel"}, "flows": [{}]}
    )


def _sim(duration=20.0, queues=4):
    return Simulation(
        {
            "duration": duration,
            "seed": 1,
            "dumbbell": {"rate": "10Mbps", "rtt": "50ms", "buffer": 300},
            "aqm": {"type": "sqm", "queues": queues},
            "flows": [{"count": 10}],
        }
    )


def test_slots_and_paths_from_python():
    sim = _sim()
    sim.run_until(5.0)
    slots = sim.sqm_slots("bottleneck")
    assert len(slots) == 4 and all(f is not None for f in slots)
    f0 = slots[0]
    sim.set_aqm_param("bottleneck", f"flows.{sim.flow_hash(f0)}.weight", 2.5)
    assert sim.aqm_param("bottleneck", "queues.0.weight") == pytest.approx(2.5)
    sim.set_aqm_param("bottleneck", "queues.1.sigma", 80)
    sim.set_aqm_param("bottleneck", "queues.1.beta", 7)
    assert sim.aqm_param("bottleneck", "queues.1.sigma") == 80
    assert sim.aqm_param("bottleneck", "queues.1.beta") == 7
    # automatic beta: 5 ms x C (833.3 pkt/s) x the slot's share of the DRR quanta
    beta2 = sim.aqm_param("bottleneck", "queues.2.beta")
    assert 0 < beta2 < 0.005 * 10e6 / 8 / 1500
    outsider = next(f for f in range(10) if f not in slots)
    with pytest.raises(ValueError, match="holds no elephant queue"):
        sim.set_aqm_param("bottleneck", f"flows.{sim.flow_hash(outsider)}.weight", 2)
    with pytest.raises(ValueError, match="queues.9.weight"):
        sim.set_aqm_param("bottleneck", "queues.9.weight", 2)
    with pytest.raises(ValueError, match="queues.0.weight"):
        sim.set_aqm_param("bottleneck", "queues.0.weight", -1)
    assert _codel_sim().sqm_slots("bottleneck") is None


def test_controller_writes_the_slot_holders_weights():
    sim = _sim(20.0)
    r = run_controller(sim, period=5.0)
    slots = sim.sqm_slots("bottleneck")
    last = r.periods[-1]["written"]
    # only the four slot holders are written, by slot; equal OGD rates -> weight 1 each
    assert set(last) == {f"queues.{i}.weight" for i, f in enumerate(slots) if f is not None}
    assert all(v == pytest.approx(1.0) for v in last.values())
    with pytest.raises(ValueError, match="does not run sqm"):
        SqmMapping(
            _codel_sim(),
            "bottleneck",
        )


def test_run_with_the_online_controller(tmp_path):
    scen = tmp_path / "sqm.toml"
    scen.write_text(TOML + '\n[sqm]\nperiod = "4s"\n')
    out = tmp_path / "r"
    p = _run("run", str(scen), "--out", str(out), "--no-plots")
    assert p.returncode == 0, p.stderr
    log = json.loads((out / "sqm_controller.json").read_text())
    assert log["period_s"] == 4.0 and len(log["periods"]) == 3
    written = log["periods"][-1]["written"]
    assert written and all(k.startswith("queues.") for k in written)
    assert json.loads((out / "summary.json").read_text())["links"]["bottleneck"]["aqm"] == "sqm"
    # [sqm] asks for the sqm qdisc; a bad period names the key
    for text, needle in (
        (TOML.replace('type = "sqm"', 'type = "codel"').replace("queues = 4\n", ""), "sqm"),
        (TOML + '\n[sqm]\nperiod = "-1s"\n', "sqm.period"),
    ):
        scen.write_text(text if "[sqm]" in text else text + '\n[sqm]\nperiod = "4s"\n')
        bad = tmp_path / "bad"
        p = _run("run", str(scen), "--out", str(bad), "--no-plots")
        assert p.returncode == 2, p.stderr
        assert needle in p.stderr and "Traceback" not in p.stderr and not bad.exists()
