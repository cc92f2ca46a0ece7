"""validation/ns2/avq1000.py: A-1000-avq's flows sampled in both simulators (RESULTS.md)."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
from aqmlab.repro import ns2 as n2
from aqmlab.repro import sfc

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "validation" / "ns2" / "avq1000.py"
spec = importlib.util.spec_from_file_location("avq1000", SCRIPT)
avq1000 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(avq1000)


def _small() -> dict:
    # 20 ECN flows under AVQ, 3 s, statistics after 1 s (the case's shape, small)
    return sfc.dumbbell(
        "avq-20", sfc.aqm("avq", n_min=20), [sfc._flows(20, 0.1, 0.3)], 3.0, 1.0, 0.1
    )


def test_per_second_increments_and_flow_shares():
    t = np.round(np.arange(1, 21) * 0.2, 6)  # 0.2 .. 4.0 s
    cum = np.floor(t * 10)  # 2 per sample: 10 per second
    assert avq1000._per_second(t, cum, 1.0) == [10, 10, 10]
    cwnd = np.array([[0.5, 2.0], [1.0, 0.5], [0.25, 3.0]])
    acked = np.array([[0, 5], [0, 7], [1, 7]])
    st = avq1000._flow_stats(np.array([1.0, 1.2, 1.4]), cwnd, acked, 1.0)
    assert st["stalled"] == pytest.approx(3 / 6)
    assert st["idle"] == pytest.approx(2 / 4)  # flow 0 still then moves, flow 1 moves then still
    assert (st["flows_sampled"], st["samples"]) == (2, 3)


@pytest.mark.skipif(n2.available() is not None, reason=f"needs ns-2: {n2.available()}")
def test_ns2_sampler_reads_every_flow():
    sc = _small()
    r = avq1000.run_ns2(sc, 1, "")
    plain = n2.run_scenario(sc, 1)
    # the sampler is added before the routes: every flow, every 0.2 s until the end
    assert r["flows_sampled"] == 20 and 14 <= r["samples"] <= 15
    # and it changes nothing simulated
    assert r["mean_queue_pkts"] == plain["mean_queue_pkts"]
    assert r["loss"] == plain["drops"] / max(plain["arrivals"], 1)
    assert 0 <= r["stalled"] <= 1 and 0 <= r["backed_off"] <= 1 and r["backoff_p50"] >= 1
    assert len(r["drops_per_s"]) == 1


def test_aqmlab_sampler_reads_every_flow():
    r = avq1000.run_aqmlab(_small(), 1)
    assert r["flows_sampled"] == 20 and r["samples"] == 15
    assert r["stalled"] == 0  # aqmlab's windows never fall below one segment
    assert 0 < r["utilization"] <= 1 and 0 <= r["idle"] < 1
