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


# One connection's segments (flow 1), each with a distinct size so that the survivors show
# which were dropped: (size, tcp_flags, ack_seq, ts, sack, payload).
ACKS = [
    (41, "A", 1000, (1, 1), None, 0),
    (42, "A", 2000, (2, 2), None, 0),
    (43, "A", 3000, (3, 3), None, 0),
    (44, "A", 4000, (4, 4), None, 0),
    (1045, "PA", 4000, (5, 5), None, 1000),  # data: never eligible
    (46, "AE", 5000, (6, 6), None, 0),  # ECE set from here on
    (47, "AE", 6000, (7, 7), None, 0),
    (48, "AE", 6000, (8, 8), [(7000, 8000)], 0),  # same ACK, more SACKed
    (49, "A", 9000, (5, 5), None, 0),  # an older timestamp than those queued
    (50, "SA", 9000, (9, 9), None, 0),  # SYN: not a trigger
]


def _ack_run(mode):
    q = Queue("cake", {"diffserv": "besteffort", "ack_filter": mode}, limit_pkts=100)
    for i, (size, flags, ack, ts, sack, payload) in enumerate(ACKS):
        q.enqueue(
            i * 1e-6, size, flow=1, tcp_flags=flags, ack_seq=ack, ts=ts, sack=sack, payload=payload
        )
    left = []
    while (p := q.dequeue(1e-3)) is not None:
        left.append(p)
    return left, q.stats()["dropped_victim"]


def test_ack_filter_follows_linux_by_hand():
    # Linux cake_ack_filter, worked by hand over ACKS (the new packet at the tail, the queue
    # walked from the head; an earlier pure ACK is eligible if its timestamps are not newer,
    # its ACK not beyond the new one's and the new one covers its SACK; an ECE/CWR change
    # forgets the eligible one; the first eligible is dropped once a second is found):
    #   41, 42 queued; 43 finds 41, 42 -> drops 41; 44 drops 42; 1045 (data) finds 43 only;
    #   46 finds 43, 44 -> drops 43; 47: 44 eligible, 46's ECE forgets it, 46 alone -> keep;
    #   48: 44, then 46 (after the ECE reset) and 47 (same ACK, less SACK) -> drops 46;
    #   49: 44 eligible, 47's ECE forgets it, 47 and 48 have newer timestamps -> keep; 50 SYN.
    left, drops = _ack_run("ack-filter")
    assert left == [44, 1045, 47, 48, 49, 50]
    assert drops == 4
    # ack-filter-aggressive also drops a single eligible ACK right before the new one with
    # the same ECE/CWR flags: 42 drops 41, 43 42, 44 43; 1045 has 44's ACK number (not
    # eligible); 46: 44 eligible but not next to it; 47 drops 46, 48 drops 47; 49: 48 newer.
    left, drops = _ack_run("ack-filter-aggressive")
    assert left == [44, 1045, 48, 49, 50]
    assert drops == 5
    left, drops = _ack_run("no-ack-filter")
    assert left == [a[0] for a in ACKS]
    assert drops == 0


def test_ack_filter_needs_tcp_fields():
    # Without tcp_flags a packet is not TCP: the filter leaves it alone (the old behaviour).
    q = Queue("cake", {"diffserv": "besteffort", "ack_filter": "ack-filter"}, limit_pkts=100)
    for i in range(5):
        q.enqueue(i * 1e-6, 40, flow=1)
    assert q.stats()["dropped_victim"] == 0
    assert q.len_pkts == 5
