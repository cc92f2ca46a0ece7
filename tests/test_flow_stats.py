"""Per-flow numbers that add up (docs/design.md, "Per-flow statistics").

The reference for goodput is ``Simulation.flow_status``: the receiver's in-order bytes read
when a flow's window opens and when it closes. RTT statistics must exist for every flow that
received an ACK in its window (Karn's rule left flows in timeout backoff without any), and the
queueing delay of each flow and group at the links it crosses is reported as FlowMonitor-style
per-flow statistics.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from aqmlab.sim import Simulation, simulate  # noqa: E402
from badinput import AQMLAB, ROOT  # noqa: E402

#: The case that made a user stop trusting the numbers: 20 Mb/s, 60 ms, buffer 300, PIE,
#: 8 CUBIC + 8 NewReno, 30 s, 5 s warm-up; a flow stuck behind a hole at the warm-up reported
#: goodput 0 and no RTT although it delivered data.
MIXED = {
    "duration": "30s",
    "warmup": "5s",
    "dumbbell": {"rate": "20Mbps", "rtt": "60ms", "buffer": 300},
    "aqm": {"type": "pie"},
    "flows": [{"count": 8, "cc": "cubic"}, {"count": 8, "cc": "newreno"}],
}


def check_against_flow_status(sc: dict, seed: int) -> dict:
    """Run ``sc``, reading flow_status at the warm-up and at the end; assert that every
    flow's goodput x window is the bytes delivered in between and that every TCP flow whose
    sender got new data acknowledged has RTT statistics. Returns the summary."""
    sim = Simulation(sc, seed=seed)
    sim.run_until(float(sim.scenario.normalized["warmup"]))
    n = sim.num_flows
    at0 = [sim.flow_status(i) for i in range(n)]
    sim.run()
    s = sim.result().summary
    for f in s["flows"]:
        i = f["id"]
        st1 = sim.flow_status(i)
        d0 = at0[i]["bytes_delivered"] if i < n else 0
        assert f["bytes_in_window"] == st1["bytes_delivered"] - d0, f
        # goodput x window within one packet of it (float seconds)
        assert abs(f["goodput_bps"] * f["window_s"] / 8 - f["bytes_in_window"]) < 1500, f
        acked0 = at0[i]["bytes_acked"] if i < n else 0
        if f["kind"] in ("tcp", "short_tcp") and st1["bytes_acked"] > acked0:
            assert f["rtt_samples"] > 0 and f["rtt_ms_mean"] is not None, f
            assert f["rtt_ms_p50"] <= f["rtt_ms_p99"], f
    return s


def test_the_mixed_cubic_newreno_case_adds_up():
    s = check_against_flow_status(MIXED, seed=1)
    assert all(f["goodput_bps"] > 0 for f in s["flows"])
    assert all(f["rtt_ms_mean"] is not None for f in s["flows"])
    # one-way delay sits between the propagation delay (30 ms) and the RTT
    for f in s["flows"]:
        assert 30.0 < f["owd_ms_mean"] < f["rtt_ms_mean"]


def test_many_random_scenarios_add_up():
    rng = random.Random(7)
    for case in range(30):
        sc = {
            "duration": f"{rng.uniform(2, 6):.3f}s",
            "warmup": f"{rng.uniform(0.2, 1.5):.3f}s",
            "dumbbell": {
                "rate": f"{rng.choice([2, 5, 10, 20])}Mbps",
                "rtt": f"{rng.choice([10, 40, 100, 200])}ms",
                "buffer": rng.choice([5, 20, 100, 300]),
                "loss": rng.choice([0.0, 0.0, 0.01, 0.03]),
            },
            "aqm": {"type": rng.choice(["droptail", "pie", "codel", "red", "fq_codel"])},
            "flows": [
                {
                    "count": rng.randint(1, 6),
                    "cc": rng.choice(["newreno", "cubic", "reno"]),
                    "sack": rng.random() < 0.5,
                    "delack": rng.random() < 0.5,
                },
                {"kind": "udp_cbr", "rate": f"{rng.uniform(0.1, 2):.2f}Mbps"},
                {"kind": "tcp_short", "arrival_rate": rng.uniform(1, 10), "mean_size": 30000},
            ],
        }
        check_against_flow_status(sc, seed=case)


def test_per_flow_and_group_queue_delay_under_fq_codel():
    # 20 CUBIC flows and a 10 Mb/s UDP flow on 50 Mb/s: the link's delay is the UDP queue's;
    # the TCP flows' own is what FQ-CoDel gives them
    sc = {
        "duration": "12s",
        "warmup": "4s",
        "dumbbell": {"rate": "50Mbps", "rtt": "40ms", "buffer": 1000},
        "aqm": {"type": "fq_codel"},
        "flows": [
            {"name": "tcp", "count": 20, "cc": "cubic"},
            {"name": "udp", "kind": "udp_cbr", "rate": "10Mbps"},
        ],
    }
    res = simulate(sc)
    s = res.summary
    link = s["links"]["bottleneck"]["queue_delay_ms"]
    tcp, udp = s["groups"]
    assert (tcp["name"], udp["name"]) == ("tcp", "udp")
    q_tcp, q_udp = tcp["queue_delay_ms"]["bottleneck"], udp["queue_delay_ms"]["bottleneck"]
    # CoDel's target is 5 ms: the TCP flows' p99 stays near it, the UDP queue is far above
    assert q_tcp["mean"] < 10 and q_tcp["p99"] < 30
    assert q_udp["mean"] > 10 * q_tcp["mean"]
    assert link["p99"] > 5 * q_tcp["p99"]
    # every packet of the link belongs to one group: the link's mean is their weighted mean
    flows = res.to_pandas("flows")
    assert (flows["queue_delay_link"] == "bottleneck").all()
    assert flows.loc[flows.kind == "tcp", "queue_delay_ms_mean"].max() < 10
    per = s["flows"][0]["queue_delay_by_link"]["bottleneck"]
    assert per["mean"] == pytest.approx(flows.loc[0, "queue_delay_ms_mean"])
    # one-way delay = propagation (20 ms) + serialisation + queueing
    assert tcp["owd_ms"]["mean"] == pytest.approx(20 + q_tcp["mean"], abs=2.0)


def test_class_timeseries_has_per_class_delay():
    sc = {
        "duration": "6s",
        "warmup": "1s",
        "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 200},
        "aqm": {
            "type": "drr",
            "classes": [{"name": "a", "weight": 1}, {"name": "b", "weight": 3}],
        },
        "flows": [
            {"name": "a", "count": 4, "class": "a"},
            {"name": "b", "count": 4, "class": "b"},
        ],
    }
    res = simulate(sc)
    cts = res.to_pandas("class_timeseries")
    assert "queue_delay_ms_mean" in cts.columns
    late = cts[cts.time_s > 2.0]
    assert late["queue_delay_ms_mean"].notna().all()
    # the class with the smaller weight drains slower: its packets wait longer
    by = late.groupby("class")["queue_delay_ms_mean"].mean()
    assert by["a"] > by["b"]
    # groups carry their class and their own Jain index
    ga, gb = res.summary["groups"]
    assert (ga["class"], gb["class"]) == ("a", "b")
    assert ga["jain"] is not None and ga["jain_flows"] == 4
    classes = res.summary["links"]["bottleneck"]["classes"]
    # a group is its class here: the group's sojourns are the class's, data and ACK-free link
    assert ga["queue_delay_ms"]["bottleneck"]["mean"] == pytest.approx(
        classes["a"]["queue_delay_ms"]["mean"], rel=1e-9
    )


def test_fairness_says_what_it_covers_and_is_null_without_tcp():
    res = simulate(
        {
            "duration": "3s",
            "dumbbell": {"rate": "10Mbps"},
            "flows": [{"kind": "udp_cbr", "rate": "1Mbps", "count": 2}],
        }
    )
    f = res.summary["fairness"]
    assert f["jain"] is None and f["flows"] == 0
    assert "TCP" in f["scope"]
    assert res.summary["groups"][0]["jain"] == pytest.approx(1.0, abs=1e-4)  # equal rates


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*AQMLAB, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )


def test_cli_shows_groups_and_an_explicit_topologys_aqm_links(tmp_path):
    f = tmp_path / "t.toml"
    f.write_text(
        """
duration = "3s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[nodes]]
name = "c"
[[links]]
name = "access"
src = "a"
dst = "b"
rate = "100Mbps"
delay = "5ms"
duplex = true
[[links]]
name = "narrow"
src = "b"
dst = "c"
rate = "5Mbps"
delay = "10ms"
duplex = true
aqm = {type = "codel"}
[[flows]]
name = "bulk"
count = 3
src = "a"
dst = "c"
[[flows]]
name = "voip"
kind = "udp_cbr"
rate = "100kbps"
src = "a"
dst = "c"
"""
    )
    p = cli("run", str(f), "--no-plots", "--out", str(tmp_path / "r"))
    assert p.returncode == 0, p.stderr
    rows = [ln for ln in p.stdout.splitlines() if "(codel)" in ln or "(droptail)" in ln]
    # the AQM links, both directions of the duplex one; not the drop-tail access link
    assert len(rows) == 2, p.stdout
    assert any("narrow (codel)" in r for r in rows) and any("c->b (codel)" in r for r in rows)
    assert "flow groups" in p.stdout and "voip" in p.stdout and "bulk" in p.stdout
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["flows"][0]["queue_delay_link"] == "narrow"
    q = cli("run", str(f), "--no-plots", "--quiet", "--out", str(tmp_path / "q"))
    assert q.returncode == 0 and q.stdout == "" and q.stderr == ""
    assert (tmp_path / "q" / "summary.json").exists()
    flows = pd.read_parquet(tmp_path / "r" / "flows.parquet")
    assert {"bytes_in_window", "owd_ms_p99", "queue_delay_ms_p99", "rtt_samples"} <= set(
        flows.columns
    )


def test_both_directions_of_a_duplex_link_are_in_the_summary():
    res = simulate(
        {
            "duration": "2s",
            "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"src": "a", "dst": "b", "rate": "10Mbps", "name": "fwd"}],
            "flows": [{"src": "a", "dst": "b", "count": 2}],
        }
    )
    links = res.summary["links"]
    assert set(links) == {"fwd", "b->a"}
    # the ACKs cross the reverse twin: it has its own queue and counters
    assert links["b->a"]["tx_packets"] > 0
    assert set(res.to_pandas("timeseries")["link"]) == {"fwd", "b->a"}
    by = res.summary["flows"][0]["queue_delay_by_link"]
    assert set(by) == {"fwd", "b->a"}
    assert res.summary["flows"][0]["queue_delay_link"] == "fwd"
