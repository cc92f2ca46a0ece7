"""CAKE through ``aqmlab.aqm.Queue``: the shaper's wait and the tins (docs/aqm/cake.md)."""

import pytest
from aqmlab.aqm import Queue


def test_shaped_cake_waits_for_its_send_time():
    # bandwidth 20 Mbit/s, overhead 18, ATM: a 1500-byte packet takes 1696 x 400 ns = 678.4 us
    # (Linux cake_advance_shaper), so the second packet may leave 678.4 us after the first.
    q = Queue(
        "cake",
        {"bandwidth": 20e6, "overhead": 18, "atm": "atm", "diffserv": "besteffort"},
        limit_pkts=100,
    )
    assert q.ready_at() is None
    for _ in range(3):
        assert q.enqueue(1.0, 1500, flow=1, ecn=True) == "queued"
    assert q.dequeue(1.0) == 1500
    assert q.dequeue(1.0) is None
    assert q.ready_at() == pytest.approx(1.0 + 678.4e-6, abs=1e-9)
    assert q.dequeue(q.ready_at()) == 1500


def test_dscp_chooses_the_tin():
    # Shaped at 10 Mbit/s: ten CS1 packets then one EF packet at the same time. Under
    # diffserv3 the EF packet is in the Voice tin, which goes first while it meets its own
    # schedule (Linux cake_dequeue: the highest eligible tin); under besteffort it waits for
    # the CS1 flow's first quantum (both are new flows, CS1's came first).
    first = {}
    for mode in ("diffserv3", "besteffort"):
        q = Queue("cake", {"bandwidth": 10e6, "diffserv": mode}, limit_pkts=100)
        for _ in range(10):
            q.enqueue(0.0, 1000, flow=1, dscp="CS1")
        q.enqueue(0.0, 200, flow=2, dscp=46)
        first[mode] = q.dequeue_packet(0.0)["flow"]
    assert first == {"diffserv3": 2, "besteffort": 1}
    with pytest.raises(ValueError, match="dscp"):
        q.enqueue(0.0, 200, dscp="XX")
    with pytest.raises(ValueError, match="dscp"):
        q.enqueue(0.0, 200, dscp=64)
