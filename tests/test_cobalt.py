"""COBALT and FQ-COBALT from Python: ``aqmlab.aqm.Queue`` and the simulator run the core's
``cobalt`` and ``fq_cobalt`` (docs/aqm/cobalt.md, docs/aqm/fq_cobalt.md)."""

import pytest
from aqmlab.aqm import Queue, aqm_config, aqm_names
from aqmlab.sim import simulate


def test_listed_with_their_parameters():
    names = aqm_names()
    assert "cobalt" in names
    cfg = aqm_config("cobalt", {"target": "4ms", "p_inc": 0.5})
    assert cfg["target"] == 4_000_000 and cfg["p_inc"] == 0.5
    assert aqm_config("fq_cobalt", {})["blue_threshold"] == 400_000_000


def test_queue_marks_as_ns3_mark_test():
    """ns-3's COBALT mark test (case 2) through ``Queue``: 20 ECT packets at 0, ECN on, the
    BLUE threshold off; dequeues at 10, 210, 210 and 420 ms carry 0, 1, 2 and 3 marks in all
    (crates/aqm/tests/ns3_cobalt.rs derives the schedule)."""
    q = Queue("cobalt", {"ecn": True, "blue_threshold": 0}, limit_pkts=500, link_rate_bps=10e6)
    for _ in range(20):
        assert q.enqueue(0.0, 1000, ecn="ect0") == "queued"
    ce = [q.dequeue_info(t)[2] for t in (0.010, 0.210, 0.210, 0.420)]
    assert ce == [False, True, True, True]
    s = q.stats()
    assert s["marked"] == 3 and s["dropped_dequeue"] == 0


def test_queue_overflow_raises_blue():
    """A tail drop 10 ms after the start (more than target) raises BLUE's p_drop by 1/256."""
    q = Queue("cobalt", {}, limit_pkts=5, link_rate_bps=10e6)
    fates = [q.enqueue(0.010, 1500) for _ in range(6)]
    assert fates == ["queued"] * 5 + ["dropped"]
    assert q.probability == pytest.approx(1 / 256, abs=1e-15)


def test_fq_cobalt_isolates_flows():
    """Flow 1 keeps a standing queue (one arrival per ms, served every other ms); flow 2 sends
    one packet per 2 ms, served at once. COBALT drops only flow 1's packets."""
    q = Queue("fq_cobalt", {"ecn": False}, limit_pkts=10_000, link_rate_bps=10e6)
    served = {1: 0, 2: 0}
    for t in range(400):
        q.enqueue(t / 1000, 1000, flow=1)
        if t % 2 == 0:
            q.enqueue(t / 1000, 1000, flow=2)
        p = q.dequeue_packet(t / 1000)
        if p is not None:
            served[p["flow"]] += 1
    assert q.stats()["dropped_dequeue"] > 0
    assert served[2] == 200  # every packet of the sparse flow got through


@pytest.mark.parametrize("aqm", ["cobalt", "fq_cobalt"])
def test_dumbbell_keeps_delay_low(aqm):
    """Ten TCP flows over 10 Mb/s, 100 ms: both keep the mean sojourn near target at near-full
    utilization (60 s, 5 seeds in validation/ns3/RESULTS.md: aqmlab 6.7 and 3.3 ms, ns-3's
    CobaltQueueDisc and FqCobaltQueueDisc 7.7 and 9.1 ms); a full 200-packet drop-tail buffer
    would hold 160 ms."""
    res = simulate(
        {
            "duration": "20s",
            "warmup": "5s",
            "dumbbell": {"rate": "10Mbps", "rtt": "100ms", "buffer": 200},
            "aqm": {"type": aqm},
            "flows": [{"count": 10}],
        }
    )
    link = res.link("bottleneck")
    assert link["utilization"] > 0.9
    assert link["queue_delay_ms"]["mean"] < 15.0
