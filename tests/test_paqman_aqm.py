"""The packet-level PAQMAN AQM (crates/aqm/src/paqman.rs, docs/aqm/paqman.md).

1. Cross-check of the Rust runtime against the model-level Python pieces it ports: for the same
   arrival times and queue states, the AQM's admit/drop sequence equals a reference built from
   ``aqmlab.mdp.inference.RateFilter`` (posterior mode) and the solved table (exact equality: the
   same floating-point operations in the same order up to summation, and the mode only changes
   where two posteriors differ by more than rounding).
2. The simulator runs it from a policy file (scenario and ``--aqm-param policy=FILE``), and on one
   TCP Reno flow it keeps the queue far below drop-tail's.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from aqmlab.aqm import Queue, aqm_config
from aqmlab.mdp import negligible_rtt_model, rtt_model, solve
from aqmlab.mdp.inference import RateFilter

MU = 10e6 / (1500 * 8)  # 10 Mb/s in 1500-byte packets per second


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    d = tmp_path_factory.mktemp("policies")
    out = {}
    for name, model in {
        "p0": negligible_rtt_model(MU, 0.005, buffer=60, grid=20),
        "p10": rtt_model(MU, 0.005, 0.010, buffer=60, grid=20),
    }.items():
        pol = solve(model)
        path = d / f"{name}.json"
        pol.save(path)
        out[name] = (pol, path)
    return out


@pytest.mark.parametrize("mix", [0.0, 0.01])
def test_decisions_match_the_python_rate_filter(policies, mix):
    pol, path = policies["p0"]
    alpha = float(pol.meta.get("alpha") or 1.0)
    # A link so fast that a dequeued packet is gone at once (the runtime counts the packet in
    # service in q; the reference has no service), arrivals 0.3-3 ms apart.
    q = Queue("paqman", {"policy": str(path), "mix": mix}, limit_pkts=1000, link_rate_bps=1e12)
    filt = RateFilter(pol.grid, alpha, mix=mix)
    rng = np.random.default_rng(7)
    t, backlog, prev = 0.0, 0, None
    table = pol.policy
    decisions, drops = 0, 0
    for n in range(3000):
        t += float(rng.uniform(0.0003, 0.003))
        if backlog and rng.random() < 0.45:
            assert q.dequeue(t) is not None
            backlog -= 1
            t += 1e-6
        if prev is not None:
            filt.observe(t - prev)
        prev = t
        ref_drop = backlog >= pol.buffer or bool(table[filt.index() - 1, backlog])
        filt.act(1 if ref_drop else 0)
        verdict = q.enqueue(t, 1500)
        assert (verdict == "dropped") == ref_drop, f"arrival {n} at q={backlog}: {verdict}"
        decisions += 1
        drops += ref_drop
        backlog += not ref_drop
    assert q.stats()["activations"] == decisions
    # Both actions occur, so the comparison is not vacuous.
    assert 50 < drops < decisions - 50


def test_policy_file_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "aqmlab-paqman-policy", "version": 7}))
    with pytest.raises(ValueError, match="policy"):
        aqm_config("paqman", {"policy": str(tmp_path / "missing.json")})
    with pytest.raises(ValueError, match="not a PAQMAN policy file"):
        aqm_config("paqman", {"policy": str(bad)})
    with pytest.raises(ValueError, match="required"):
        aqm_config("paqman", {"mix": 0.02})


def _run(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args], cwd=cwd, capture_output=True, text=True
    )


def _bottleneck(out):
    return json.loads((out / "summary.json").read_text())["links"]["bottleneck"]


def test_paqman_on_tcp_reno_from_a_scenario_file(policies, tmp_path):
    """One Reno flow, 10 Mb/s, 10 ms: PAQMAN holds a queue of a few ms where drop-tail fills
    its 60-packet buffer (about 70 ms). The policy file is named relative to the scenario."""
    _, p10 = policies["p10"]
    sc = tmp_path / "sc"
    sc.mkdir()
    (sc / "p10.json").write_text(p10.read_text())
    common = (
        'duration = "30s"\n[dumbbell]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = 60\n'
        'pkt_size = 1500\n[[flows]]\nkind = "tcp"\ncount = 1\ncc = "reno"\n'
    )
    (sc / "paqman.toml").write_text(common + '[aqm]\ntype = "paqman"\npolicy = "p10.json"\n')
    (sc / "droptail.toml").write_text(common)
    res = {}
    for name in ("paqman", "droptail"):
        r = _run(["run", str(sc / f"{name}.toml"), "--out", str(tmp_path / name)], tmp_path)
        assert r.returncode == 0, r.stderr
        res[name] = _bottleneck(tmp_path / name)
    pq, dt = res["paqman"], res["droptail"]
    assert dt["queue_delay_ms"]["mean"] > 40
    assert pq["queue_delay_ms"]["mean"] < dt["queue_delay_ms"]["mean"] / 4
    assert pq["utilization"] > 0.85  # 0.89 measured: the policy trades a little throughput
    assert pq["aqm_activations"] > 0 and pq["drops"] > 0


def test_paqman_from_the_command_line(policies, tmp_path):
    _, p0 = policies["p0"]
    r = _run(
        ["dumbbell", "--flows", "1", "--rtt", "10ms", "--buffer", "60", "--pkt-size", "1500",
         "--duration", "20s", "--aqm", "paqman", "--aqm-param", f"policy={p0}",
         "--out", str(tmp_path / "o"), "--quiet"],
        tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    b = _bottleneck(tmp_path / "o")
    assert b["aqm_activations"] > 0
    # The negligible-RTT policy decides at every arrival: a short queue.
    assert b["queue_delay_ms"]["mean"] < 10
