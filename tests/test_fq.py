"""Hashed flow queueing from Python and the CLI: fq_codel, fq_pie, sfq, sfq_codel."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from aqmlab.scenario import ScenarioError, parse_scenario
from aqmlab.sim import Simulation

ROOT = Path(__file__).resolve().parents[1]
HASHED = ("fq_codel", "fq_pie", "sfq", "sfq_codel")

FQ_TOML = """
name = "fq"
duration = "12s"
warmup = "3s"

[dumbbell]
rate = "10Mbps"
rtt = "50ms"
buffer = 300

[aqm]
type = "fq_codel"
target = "5ms"
quantum = "1500B"

[[flows]]
count = 5

[[flows]]
kind = "udp_cbr"
rate = "20Mbps"
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_toml_run_reports_active_flows(tmp_path):
    scen = tmp_path / "fq.toml"
    scen.write_text(FQ_TOML)
    out = tmp_path / "r"
    p = _run("run", str(scen), "--out", str(out), "--no-plots")
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["aqm"] == "fq_codel"
    af = link["active_flows"]
    assert set(af) == {"mean", "max"}
    assert 1 <= af["max"] <= 6 and 0 < af["mean"] <= af["max"]
    # The five TCP flows keep most of the link against the UDP flow at twice its rate.
    tcp = sum(f["goodput_bps"] for f in s["flows"] if f["kind"] == "tcp")
    assert tcp > 0.7 * 10e6
    ts = pq.read_table(out / "timeseries.parquet").to_pandas()
    assert "active_flows" in ts.columns
    assert ts["active_flows"].max() <= af["max"]
    assert ts["active_flows"].max() >= 2


def test_cli_dumbbell_aqm_and_params(tmp_path):
    out = tmp_path / "d"
    p = _run(
        "dumbbell", "--flows", "3", "--rate", "10Mbps", "--rtt", "40ms", "--buffer", "100",
        "--aqm", "fq_codel", "--aqm-param", "target=2ms", "--aqm-param", "ce_threshold=1ms",
        "--duration", "4s", "--out", str(out), "--no-plots", "--quiet",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["links"]["bottleneck"]["aqm"] == "fq_codel"
    assert "active_flows" in s["links"]["bottleneck"]
    # A bad parameter: one line naming the key and value, exit 2, nothing written.
    bad = tmp_path / "bad"
    p = _run(
        "dumbbell", "--aqm", "sfq", "--aqm-param", "divisor=1000", "--rate", "10Mbps",
        "--duration", "2s", "--out", str(bad),
    )  # fmt: skip
    assert p.returncode == 2
    assert "divisor" in p.stderr and "1000" in p.stderr
    assert "Traceback" not in p.stderr
    assert not bad.exists()


def test_aqms_lists_hashed_qdiscs():
    p = _run("aqms", "--json")
    assert p.returncode == 0, p.stderr
    table = json.loads(p.stdout)
    for name in HASHED:
        params = {q["name"]: q for q in table[name]}
        for q in params.values():
            assert q["unit"] and q["doc"], (name, q)
    fq = {q["name"]: q for q in table["fq_codel"]}
    assert fq["flows"]["default"] == 1024
    assert fq["target"]["default"] == 0.005 and fq["target"]["unit"] == "s"
    assert fq["ecn"]["default"] == 1.0
    assert fq["drop_batch_size"]["default"] == 64
    assert {q["name"] for q in table["sfq"]} >= {"divisor", "perturb", "quantum", "depth"}
    assert {q["name"] for q in table["sfq_codel"]} >= {"flows", "quantum", "target"}
    assert {q["name"] for q in table["fq_pie"]} >= {"flows", "target", "t_update", "ecn_prob"}


@pytest.mark.parametrize("name", HASHED)
def test_every_hashed_qdisc_runs_and_steps(name):
    sc = parse_scenario(
        {
            "duration": "4s",
            "warmup": "1s",
            "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 100},
            "aqm": {"type": name},
            "flows": [{"count": 4}],
        }
    )
    assert sc.normalized["aqm"]["type"] == name
    sim = Simulation(sc)
    sim.run_until(2.0)
    key = "target" if name != "sfq" else "quantum"
    value = 0.002 if key == "target" else 3000
    sim.set_aqm_param("bottleneck", key, value)
    assert sim.aqm_param("bottleneck", key) == pytest.approx(value)
    with pytest.raises(ValueError, match=r"'(flows|divisor)'"):
        sim.set_aqm_param("bottleneck", "divisor" if name == "sfq" else "flows", 2)
    sim.run_until(4.0)
    res = sim.result()
    assert res.summary["links"]["bottleneck"]["active_flows"]["max"] <= 4
    assert res.summary["conservation"]["sent"] > 0


def test_schema_errors_name_the_key():
    base = {"duration": "2s", "dumbbell": {"rate": "10Mbps"}, "flows": [{}]}
    with pytest.raises(ScenarioError, match=r'^aqm\.tagret = "5ms": unknown parameter'):
        parse_scenario({**base, "aqm": {"type": "fq_codel", "tagret": "5ms"}})
    with pytest.raises(ScenarioError, match=r"^aqm\.quantum = 10: "):
        parse_scenario({**base, "aqm": {"type": "fq_pie", "quantum": 10}})
    with pytest.raises(ScenarioError, match="has no classes"):
        parse_scenario({**base, "aqm": {"type": "sfq"}, "flows": [{"class": "a"}]})
    # The ECN default follows the flows unless set; fq_codel's own default is on.
    sc = parse_scenario({**base, "aqm": {"type": "sfq_codel"}, "flows": [{"ecn": True}]})
    assert sc.normalized["aqm"]["ecn"] == 1.0
    sc = parse_scenario({**base, "aqm": {"type": "fq_codel", "ecn": False}, "flows": [{}]})
    assert sc.normalized["aqm"]["ecn"] == 0.0
