"""The sqm qdisc from the CLI, scenarios and Python, and the online controller writing its
per-queue weights."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
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
    # only the four slot holders are written, by slot; equal OGD rates -> weight 1 each; the
    # default (Reno) sigma rule also writes each holder's sigma and beta (0: the rule's offset)
    held = [i for i, f in enumerate(slots) if f is not None]
    assert set(last) == {f"queues.{i}.{k}" for i in held for k in ("weight", "sigma", "beta")}
    assert all(last[f"queues.{i}.weight"] == pytest.approx(1.0) for i in held)
    assert all(last[f"queues.{i}.beta"] == 0.0 for i in held)
    for i in held:  # what was written is what the queue runs
        assert sim.aqm_param("bottleneck", f"queues.{i}.sigma") == pytest.approx(
            last[f"queues.{i}.sigma"]
        )
    tu = r.periods[-1]["tuning"]["bottleneck"]
    assert tu["rule"] == "reno" and sorted(last[f"queues.{i}.sigma"] for i in held) == (
        pytest.approx(
            sorted(
                v for f, v in zip(r.periods[-1]["present"], tu["sigma"], strict=True) if f in slots
            )
        )
    )
    # a fluid-unit sigma rule is not written into the qdisc: weights only
    sim2 = _sim(10.0)
    r2 = run_controller(sim2, period=5.0, sigma_rule="delay")
    assert all(k.endswith(".weight") for k in r2.periods[-1]["written"])
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


def test_controller_on_an_explicit_topology():
    """Two bottlenecks running sqm (the SQM paper's network): the controller finds them, their
    capacities and each flow's route by itself."""
    from aqmlab.repro import sqm_net as net

    flows = [
        {"group": g, "cc": "newreno", "start": 0.1 * i, "rtt": 0.1}
        for i, g in enumerate(["R5->R6", "R6->R4", "R1->R4"])
    ]
    sc = net.scenario("t", "sqm", flows, duration=10.0, warmup=0.0)
    sim = Simulation(sc)
    assert [sim.flow_path(f) for f in range(3)] == [
        ["h0->R5", *net.ROUTES["R5->R6"][2]],
        ["h1->R6", *net.ROUTES["R6->R4"][2]],
        ["h2->R1", *net.ROUTES["R1->R4"][2]],
    ]
    assert sim.link_status("l23")["rate_bps"] == 50_000_000
    sim.run()  # the [sqm] table: the controller every 5 s
    log = sim.result().extra["sqm_controller.json"]
    assert log["period_s"] == 5.0 and len(log["periods"]) == 2
    p = log["periods"][-1]
    # NUM optimum (alpha = 2) on two equal links: the two-link flow gets 1/sqrt(2) of the others
    num = np.array(p["num_pps"])
    assert num[0] == pytest.approx(num[1]) and num[2] == pytest.approx(num[0] / np.sqrt(2))
    assert num[0] + num[2] == pytest.approx(net.CAPACITY_PPS)
    assert p["tuned_pps"] == p["num_pps"]  # the scenario asked for state = "num"
    assert set(p["tuning"]) == {"l23", "l34"}
    assert any(k.endswith(".sigma") for k in p["written"])
    # without a link running sqm the [sqm] table is refused, naming the key
    for ln in sc["links"]:
        if "aqm" in ln:
            ln["aqm"] = {"type": "codel"}
    with pytest.raises(ValueError, match="sqm"):
        Simulation(sc)
