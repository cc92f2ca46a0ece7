"""The simulator through the Python package and the CLI: results contract, determinism,
stepping, conservation and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from aqmlab.scenario import ScenarioError, load_scenario, parse_scenario
from aqmlab.sim import Simulation, simulate

ROOT = Path(__file__).resolve().parents[1]
AQMLAB = [sys.executable, "-m", "aqmlab"]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([*AQMLAB, *args], capture_output=True, text=True, cwd=ROOT)
    if check and p.returncode != 0:
        raise AssertionError(f"aqmlab {' '.join(args)} failed:\n{p.stdout}\n{p.stderr}")
    return p


def small(aqm: str = "codel", **kw) -> dict:
    d = {
        "name": "t",
        "seed": kw.pop("seed", 1),
        "duration": kw.pop("duration", "20s"),
        "warmup": kw.pop("warmup", "5s"),
        "dumbbell": {"rate": "10Mbps", "rtt": "60ms", "buffer": 400},
        "aqm": {"type": aqm, **kw.pop("aqm_params", {})},
        "flows": kw.pop("flows", [{"count": 8}]),
    }
    d.update(kw)
    return d


def test_dumbbell_cli_writes_results_contract(tmp_path):
    out = tmp_path / "r"
    cli(
        "dumbbell", "--flows", "5", "--rate", "10Mbps", "--rtt", "50ms", "--buffer", "100",
        "--aqm", "pie", "--aqm-param", "target=10ms", "--duration", "15s", "--warmup", "5s",
        "--seed", "3", "--out", str(out), "--quiet",
    )  # fmt: skip
    s = json.loads((out / "summary.json").read_text())
    for key in ("scenario", "seed", "sim_seconds", "wall_seconds", "events", "packets_forwarded",
                "links", "flows", "fairness"):  # fmt: skip
        assert key in s, key
    link = s["links"]["bottleneck"]
    for key in ("aqm", "utilization", "mean_queue_pkts", "mean_queue_bytes", "queue_delay_ms",
                "drops", "marks", "enqueued", "aqm_activations"):  # fmt: skip
        assert key in link, key
    assert set(link["queue_delay_ms"]) >= {"mean", "p50", "p95", "p99"}
    assert link["aqm"] == "pie"
    assert len(s["flows"]) == 5 and all(f["goodput_bps"] > 0 for f in s["flows"])
    assert 0 < s["fairness"]["jain"] <= 1
    ts = pd.read_parquet(out / "timeseries.parquet")
    assert {"time_s", "link", "queue_pkts", "queue_delay_ms_mean", "throughput_bps"} <= set(ts)
    assert ts["time_s"].max() == pytest.approx(15.0, abs=0.02)
    assert len(pd.read_parquet(out / "flows.parquet")) == 5
    assert (out / "queue.png").stat().st_size > 1000


def test_same_seed_same_summary_other_seed_differs():
    def summary(seed):
        s = simulate(small("red", seed=seed)).summary
        # what the machine did, not the result: the wall time and the run's provenance
        # (`meta.started` is to the second, so two runs across a second boundary differ)
        s.pop("wall_seconds")
        s.pop("meta")
        return json.dumps(s, sort_keys=True)

    a, b, c = summary(7), summary(7), summary(8)
    assert a == b
    assert a != c


def test_conservation_at_the_end_and_mid_run():
    sim = Simulation(parse_scenario(small("codel")))
    for t in (3.3, 11.0, 20.0):
        sim.run_until(t)
        c = sim.conservation()
        # every packet an endpoint created is delivered, dropped, lost or still in the network
        assert c["sent"] == c["delivered"] + c["dropped"] + c["lost"] + c["in_flight"]
        assert c["sent"] > 0


def test_stepping_and_changing_pi_reference_moves_the_queue():
    """A PI designed with Hollot's rule for this network (aqmlab.design) integrates the queue
    error, so after q_ref changes from 30 to 120 packets mid-run the mean queue follows.
    Tolerance: +-35% at 30 packets and +-15% at 120 (TCP sawtooth noise around the reference)."""
    from aqmlab.design import hollot_pi

    fs = 170.0
    d = hollot_pi(20, 1250.0, 0.2, fs=fs)  # N- = 20 flows, C = 1250 pkt/s, R+ = 0.2 s
    a, b = d.a, d.b
    sc = parse_scenario(
        small(
            "pi",
            duration="80s",
            warmup="0s",
            aqm_params={"q_ref": 30, "a": a, "b": b, "w": fs},
            flows=[{"count": 20}],
        )
    )
    sim = Simulation(sc)
    sim.run_until(40.0)
    sim.set_aqm_param("bottleneck", "q_ref", 120)
    assert sim.aqm_param("bottleneck", "q_ref") == 120.0
    sim.run_until(80.0)
    ts = sim.result().to_pandas("timeseries")
    first = ts[(ts.time_s > 20) & (ts.time_s <= 40)]["queue_pkts"].mean()
    second = ts[(ts.time_s > 60) & (ts.time_s <= 80)]["queue_pkts"].mean()
    assert first == pytest.approx(30, rel=0.35)
    assert second == pytest.approx(120, rel=0.15)


def test_load_step_group_joins_and_leaves():
    """A group with start = 10 s and stop = 20 s sends nothing before 10 s and nothing new after
    20 s (TCP finishes what it had sent, so its delivered bytes freeze within a few RTTs)."""
    sc = parse_scenario(
        small(
            "droptail",
            duration="30s",
            warmup="0s",
            flows=[{"count": 4}, {"count": 4, "start": "10s", "stop": "20s"}],
        )
    )
    sim = Simulation(sc)
    late = range(4, 8)
    sim.run_until(9.9)
    assert all(not sim.flow_status(i)["started"] for i in late)
    assert all(sim.flow_status(i)["bytes_delivered"] == 0 for i in late)
    sim.run_until(15.0)
    assert all(sim.flow_status(i)["bytes_delivered"] > 0 for i in late)
    sim.run_until(25.0)
    frozen = [sim.flow_status(i)["bytes_delivered"] for i in late]
    sim.run_until(30.0)
    assert [sim.flow_status(i)["bytes_delivered"] for i in late] == frozen
    assert all(sim.flow_status(i)["bytes_delivered"] > 0 for i in range(4))


def test_run_scenario_file_with_overrides(tmp_path):
    out = tmp_path / "demo"
    cli(
        "run", str(ROOT / "scenarios" / "demo.toml"), "--out", str(out), "--no-plots",
        "--set", "duration=12s", "--set", "aqm.type=codel", "--set", "flows[1].start=5s",
        "--set", "flows[1].stop=10s",
    )  # fmt: skip
    s = json.loads((out / "summary.json").read_text())
    assert s["sim_seconds"] == pytest.approx(12.0)
    assert s["links"]["bottleneck"]["aqm"] == "codel"


def test_aqms_lists_parameters():
    table = json.loads(cli("aqms", "--json").stdout)
    names = {p["name"] for p in table["codel"]}
    assert {"target", "interval", "ecn", "ce_threshold", "control_law"} <= names
    codel = {p["name"]: p for p in table["codel"]}
    # Booleans as true/false and choices by name, in JSON and in the table.
    assert codel["ecn"]["default"] is False
    assert table["fq_codel"][[p["name"] for p in table["fq_codel"]].index("ecn")]["default"] is True
    assert codel["control_law"] == {**codel["control_law"], "unit": "linux|rfc", "default": "linux"}
    text = cli("aqms").stdout
    rows = [line for line in text.splitlines() if line.split()[:1] in (["ecn"], ["control_law"])]
    assert rows and all(("false" in r or "true" in r or "linux" in r) for r in rows), rows
    assert not any(" 0 " in r.split("│")[2] for r in rows if "│" in r), rows


def test_scenario_errors_name_key_and_value():
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.count = -3: "):
        parse_scenario(small(flows=[{"count": -3}]))
    with pytest.raises(ScenarioError, match=r'^dumbbell.rate = "10Mbpz": unknown rate unit'):
        d = small()
        d["dumbbell"]["rate"] = "10Mbpz"
        parse_scenario(d)
    with pytest.raises(ScenarioError, match="warmup"):
        parse_scenario(small(warmup="30s"))


def test_demo_scenario_is_valid():
    sc = load_scenario(ROOT / "scenarios" / "demo.toml")
    assert sc.topology == "dumbbell" and len(sc.normalized["flows"]) == 2


def test_demo_keeps_the_scenarios_aqm_parameters():
    """``demo --scenario F`` compares AQMs on F: F's own AQM keeps its parameters, the others get
    their defaults, and an explicit ``ecn`` carries over to every AQM."""
    from aqmlab.compare import with_aqm

    base = parse_scenario(small("codel", aqm_params={"target": "10ms", "ecn": True}))
    assert with_aqm(base, "codel").aqm["target"] == pytest.approx(0.010)
    pie = with_aqm(base, "pie").aqm
    assert pie["target"] == pytest.approx(0.015) and pie["ecn"] == 1.0


def test_ecn_flows_get_a_marking_aqm_by_default():
    """--ecn means ECN end to end: an ECN-capable scenario's AQM marks (no ecn key given), and
    an explicit ecn = false keeps it dropping."""
    marks = {}
    for explicit in (None, False):
        params = {} if explicit is None else {"ecn": explicit}
        res = simulate(small("codel", duration="8s", warmup="2s", aqm_params=params,
                             flows=[{"count": 8, "ecn": True}]))  # fmt: skip
        marks[explicit] = res.link("bottleneck")["marks"]
    assert marks[None] > 0 and marks[False] == 0


def test_set_accepts_dotted_indices(tmp_path):
    sc = load_scenario(ROOT / "scenarios" / "demo.toml", overrides=["flows.0.count=5"])
    assert sc.normalized["flows"][0]["count"] == 5


def test_dumbbell_access_none_runs_with_base_rtt_rtt(tmp_path):
    """``--access none``: no access links; one segment in flight never queues, so the RTT is
    ``rtt`` plus the bottleneck serialization of the data packet and its ACK (1000 B + 40 B at
    10 Mb/s = 0.832 ms), exactly. Without delayed ACKs (the linux profile's would hold every
    ACK of a lone segment 40 ms once the 16 quick ACKs are used: mean 58.832 ms)."""
    out = tmp_path / "r"
    cli(
        "dumbbell", "--access", "none", "--flows", "1", "--rwnd", "1", "--rtt", "50ms", "--no-delack",
        "--duration", "2s", "--warmup", "0s", "--out", str(out), "--quiet", "--no-plots",
    )  # fmt: skip
    s = json.loads((out / "summary.json").read_text())
    assert s["flows"][0]["rtt_ms_mean"] == pytest.approx(50.832, abs=1e-6)
    sc = small(flows=[{"count": 4}], duration="3s", warmup="1s")
    sc["dumbbell"]["access"] = "none"
    sim = Simulation(sc)
    sim.run()
    assert sim.result().summary["links"]["bottleneck"]["utilization"] > 0.5


def test_dumbbell_profile_option(tmp_path):
    """``--profile`` (default linux) writes the flow group's TCP profile; ``--no-sack`` and
    ``--delack`` override what it implies."""
    import tomllib

    def group(*opts: str) -> dict:
        out = tmp_path / "-".join(opts or ("default",))
        cli("dumbbell", "--flows", "1", "--duration", "1s", *opts, "--out", str(out),
            "--quiet", "--no-plots")  # fmt: skip
        return tomllib.loads((out / "scenario.toml").read_text())["flows"][0]

    g = group()
    assert (g["profile"], g["sack"], g["delack"], g["rack"], g["timestamps"]) == (
        "linux", True, True, True, True)  # fmt: skip
    g = group("--profile", "classic")
    assert (g["profile"], g["sack"], g["delack"], g["timestamps"]) == (
        "classic",
        False,
        False,
        False,
    )
    g = group("--no-sack")
    assert (g["sack"], g["rack"], g["prr"], g["delack"]) == (False, False, False, True)
    g = group("--profile", "classic", "--delack")
    assert (g["sack"], g["delack"]) == (False, True)


def test_dumbbell_pacing_option_and_bbr3(tmp_path):
    """``--pacing/--no-pacing`` write the group's ``pacing`` key (default: not written, off);
    ``--cc bbr3`` runs BBRv3, which paces itself."""
    import tomllib

    def run(*opts: str, duration: str = "2s") -> Path:
        out = tmp_path / "-".join(opts)
        cli("dumbbell", "--flows", "1", "--duration", duration, *opts, "--out", str(out),
            "--quiet", "--no-plots")  # fmt: skip
        return out

    def group(out: Path) -> dict:
        return tomllib.loads((out / "scenario.toml").read_text())["flows"][0]

    assert group(run("--pacing"))["pacing"] is True
    assert group(run("--no-pacing"))["pacing"] is False
    assert "pacing" not in group(run("--cc", "cubic")), "written only when given"
    # 4 s: the linux profile's receive window (Linux's autotuning from 64 KiB, docs/tcp.md) holds
    # a flow's first 2 s on this 100 ms path near half the link (0.48 at 2 s, 0.84 at 4 s)
    out = run("--cc", "bbr3", duration="4s")
    assert group(out)["cc"] == "bbr3"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["links"]["bottleneck"]["utilization"] > 0.5
