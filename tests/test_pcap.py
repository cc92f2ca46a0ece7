"""Packet captures of the simulator ([pcap], --pcap, docs/pcap.md), read by tools nobody here
wrote: Debian's tshark (Wireshark 4) and tcptrace.

References and tolerances:

* tshark: no malformed packet and no expert item of severity error with checksum validation
  on; the IPv4 header checksum of every packet and the TCP checksum of every packet captured
  whole (pure ACKs; a data segment's payload is not stored, so tshark cannot verify it and
  says "unverified") are good. Counts are exact: frames per interface against the link's
  and the hosts' counters of summary.json, per flow frames and payload bytes against
  trace.parquet (aqmlab's own per-packet record of the same link), retransmissions seen at
  the sender (tshark's `tcp.analysis.retransmission` or, for one sent within 3 ms of the
  previous segment, `tcp.analysis.out_of_order`) against the flow's `retransmits`, the
  receiver's last cumulative ACK against `bytes_delivered`.
* tcptrace: per-connection throughput and average RTT at the senders' interface within 2 % of
  aqmlab's goodput and mean RTT. Not exact by definition: tcptrace's throughput is the unique
  bytes sent over first-to-last packet of the capture (aqmlab: bytes delivered in order over
  the flow's window; they differ by the data in flight at the end, about a BDP plus the queue,
  and by the first RTT), its RTT leaves out duplicate ACKs and ACKs of retransmitted segments
  (Karn), which aqmlab's RTT samples include.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from aqmlab.pcap import read_pcapng
from aqmlab.sim import simulate

DATA = Path(__file__).resolve().parent / "data"

needs_tshark = pytest.mark.skipif(
    shutil.which("tshark") is None,
    reason="tshark not installed (Debian package tshark; scripts/install-debian-packages.sh)",
)
needs_tcptrace = pytest.mark.skipif(
    shutil.which("tcptrace") is None,
    reason="tcptrace not installed (Debian package tcptrace; scripts/install-debian-packages.sh)",
)

# drop-tail with losses, SACK, ECN with RED marks, AccECN, a UDP flow: every header feature
MIXED = {
    "name": "pcap-mixed",
    "duration": "4s",
    "warmup": "0s",
    "seed": 5,
    "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 40},
    "aqm": {"type": "red", "ecn": True, "min_th": 5, "max_th": 15},
    "flows": [
        {"count": 2, "start": "0s", "delack": False},
        {"count": 1, "ecn": True, "start": "0s"},
        {"count": 1, "cc": "prague", "start": "0s"},
        {"kind": "udp_cbr", "rate": "1Mbps", "start": "0s"},
    ],
    "pcap": {"links": ["bottleneck"], "hosts": True, "batch": 500},
    "trace": {"links": ["bottleneck"]},
}


def tshark(*args: str) -> str:
    p = subprocess.run(
        ["tshark", "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
         "-o", "udp.check_checksum:TRUE", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return p.stdout


def fields(path: Path, *names: str, filt: str | None = None) -> list[list[str]]:
    args = ["-r", str(path), "-T", "fields", "-E", "separator=\t"]
    if filt:
        args += ["-Y", filt]
    for n in names:
        args += ["-e", n]
    return [line.split("\t") for line in tshark(*args).splitlines()]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    d = tmp_path_factory.mktemp("pcap")
    res = simulate(MIXED, pcap=d / "capture.pcapng", trace=d / "trace.parquet")
    return d, res.summary


def test_capture_is_pcapng_with_one_interface_per_direction_and_host_side(mixed):
    d, _ = mixed
    cap = read_pcapng(d / "capture.pcapng")
    names = [i["name"] for i in cap.interfaces]
    assert names == ["bottleneck:fwd", "bottleneck:rev", "senders", "receivers"]
    assert {i["linktype"] for i in cap.interfaces} == {1}  # Ethernet
    assert {i["tsresol"] for i in cap.interfaces} == {9}  # ns
    # headers only: Ethernet + IPv4 + TCP with options (or UDP), never the payload
    assert max(len(p[2]) for p in cap.packets) <= 14 + 20 + 60
    times = [p[1] for p in cap.packets]
    assert times == sorted(times), "records are merged in time order"


@needs_tshark
def test_tshark_reads_every_packet_without_error(mixed):
    d, _ = mixed
    f = d / "capture.pcapng"
    expert = tshark("-r", str(f), "-q", "-z", "expert,error")
    assert "Errors" not in expert, expert
    rows = fields(
        f, "frame.len", "frame.cap_len", "ip.checksum.status", "tcp.checksum.status",
        "udp.checksum.status", "_ws.malformed",
    )  # fmt: skip
    assert len(rows) == len(read_pcapng(f).packets)
    for flen, clen, ipc, tcpc, udpc, malformed in rows:
        assert malformed == "", "malformed packet"
        assert ipc == "1", "IPv4 header checksum good"
        if tcpc:
            # whole packets (pure ACKs) are verified and good; truncated ones unverified (2)
            assert tcpc == ("1" if flen == clen else "2")
        if udpc:
            assert udpc == "2"  # datagrams are truncated: unverified
    assert any(r[3] == "1" for r in rows), "some TCP checksums were verified"


@needs_tshark
def test_tshark_counts_equal_aqmlab_counters(mixed):
    d, s = mixed
    f = d / "capture.pcapng"
    rows = fields(
        f, "frame.interface_name", "ip.src", "tcp.srcport", "udp.srcport", "tcp.dstport",
        "tcp.len", "tcp.flags.ack", "tcp.ack", "tcp.analysis.retransmission", "udp.length",
        "tcp.analysis.out_of_order",
    )  # fmt: skip
    per_iface = Counter(r[0] for r in rows)
    link = s["links"]["bottleneck"]
    # a packet is captured when its transmission starts: at most one more than completed
    assert 0 <= per_iface["bottleneck:fwd"] - link["tx_packets"] <= 1
    cons = s["conservation"]
    # at the hosts: data leaving senders + ACKs leaving receivers = every packet sent;
    # data reaching receivers + ACKs reaching senders = every packet delivered
    sender_ports = {str(1024 + f["id"]) for f in s["flows"]}

    def from_sender(r):
        return (r[2] or r[3]) in sender_ports

    sent = sum(1 for r in rows if r[0] == "senders" and from_sender(r)) + sum(
        1 for r in rows if r[0] == "receivers" and not from_sender(r)
    )
    delivered = sum(1 for r in rows if r[0] == "receivers" and from_sender(r)) + sum(
        1 for r in rows if r[0] == "senders" and not from_sender(r)
    )
    assert sent == cons["sent"]
    assert delivered == cons["delivered"]

    # per flow at the bottleneck: frames and payload bytes against trace.parquet's dequeues
    t = pq.read_table(d / "trace.parquet").to_pandas()
    deq = t[t["kind"] == "dequeue"]
    for fl in s["flows"]:
        port = str(1024 + fl["id"])
        mine = [r for r in rows if r[0] == "bottleneck:fwd" and (r[2] or r[3]) == port]
        rows_f = deq[deq["flow"] == fl["id"]]
        assert len(mine) == len(rows_f), fl["id"]
        if fl["kind"] == "udp_cbr":
            assert sum(int(r[9]) - 8 for r in mine) == int((rows_f["size"] - 28).sum())
            continue
        assert sum(int(r[5]) for r in mine) == int((rows_f["size"] - 40).sum())
        # every retransmission leaves the sender, below the highest sequence sent: tshark
        # flags it a retransmission, or out-of-order when it follows the previous segment
        # closely (its 3 ms heuristic; there is no reordering at the sender)
        retx = [r for r in rows if r[0] == "senders" and r[2] == port and "1" in (r[8], r[10])]
        assert len(retx) == fl["retransmits"], fl["id"]
        # the receiver's last cumulative ACK (relative) - 1 is what it delivered in order;
        # with delayed ACKs (flows 2, 3) up to two segments may still wait for their ACK
        acks = [r for r in rows if r[0] == "receivers" and r[4] == port and r[6] == "1"]
        held = fl["bytes_delivered"] - (int(acks[-1][7]) - 1)
        assert held == 0 if fl["id"] < 2 else 0 <= held < 2 * 960, fl["id"]
    assert sum(fl["retransmits"] for fl in s["flows"]) > 0, "the scenario must lose packets"


@needs_tshark
def test_ecn_bits_in_ip_and_tcp(mixed):
    d, s = mixed
    rows = fields(
        d / "capture.pcapng", "frame.interface_name", "ip.dsfield.ecn", "tcp.flags.ece",
        "tcp.flags.cwr", "tcp.flags.ae", "tcp.srcport", "tcp.len",
        filt="tcp",
    )  # fmt: skip
    ecn = Counter((r[5], r[1]) for r in rows if r[6] != "0")
    # the ECN flow's data are ECT(0), CE after a RED mark; Prague's ECT(1); others Not-ECT
    assert ecn[("1024", "0")] > 0 and ecn[("1024", "2")] == 0
    assert ecn[("1026", "2")] > 0 and ecn[("1026", "3")] > 0
    assert ecn[("1027", "1")] > 0 and ecn[("1027", "3")] > 0
    assert s["links"]["bottleneck"]["marks"] > 0
    # classic ECN feedback: ECE on ACKs, CWR on data; AccECN: the ACE field varies
    assert any(r[2] == "1" for r in rows if r[5] == "5001" and r[6] == "0")
    assert any(r[3] == "1" for r in rows if r[5] == "1026")
    ace = {(r[4], r[3], r[2]) for r in rows if r[6] == "0" and r[0] == "receivers"}
    assert len(ace) > 2


@needs_tshark
@needs_tcptrace
def test_tcptrace_throughput_and_rtt_within_2_percent(tmp_path):
    sc = {
        "name": "pcap-tcptrace",
        "duration": "20s",
        "warmup": "0s",
        "seed": 3,
        "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 60},
        "flows": [{"count": 2, "delack": False, "start": "0s"}],
        "pcap": {"links": ["bottleneck"], "hosts": True},
    }
    f = tmp_path / "c.pcapng"
    s = simulate(sc, pcap=f).summary
    senders = tmp_path / "senders.pcapng"
    subprocess.run(
        ["tshark", "-r", str(f), "-Y", 'frame.interface_name == "senders"', "-w", str(senders)],
        capture_output=True, check=True,
    )  # fmt: skip
    out = subprocess.run(
        ["tcptrace", "-l", "-r", str(senders)], capture_output=True, text=True, check=True
    ).stdout
    conns = re.split(r"\nTCP connection \d+:", out)[1:]
    assert len(conns) == 2
    for c in conns:
        port = int(re.search(r"host \w+:\s+[\d.]+:(\d+)", c).group(1))
        fl = s["flows"][port - 1024]
        thr = float(re.search(r"throughput:\s+(\d+) Bps", c).group(1)) * 8
        rtt = float(re.search(r"RTT avg:\s+([\d.]+) ms", c).group(1))
        assert thr == pytest.approx(fl["goodput_bps"], rel=0.02)
        assert rtt == pytest.approx(fl["rtt_ms_mean"], rel=0.02)


# -- golden capture: a tiny scenario, parsed here (not by tshark) field by field -------------

GOLDEN = {
    "name": "pcap-golden",
    "duration": "0.2s",
    "warmup": "0s",
    "seed": 1,
    "dumbbell": {"rate": "10Mbps", "rtt": "20ms", "buffer": 20},
    "flows": [{"count": 2, "start": "0s", "ecn": True}],
    "aqm": {"type": "red", "ecn": True, "min_th": 2, "max_th": 6},
    "pcap": {"links": ["bottleneck"]},
}


def checksum(b: bytes) -> int:
    """RFC 1071 Internet checksum of ``b`` (0 when ``b`` includes a correct checksum)."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def decode(data: bytes, orig: int) -> dict:
    """The header fields of one synthesised Ethernet/IPv4/TCP record."""
    assert data[12:14] == b"\x08\x00"
    ip = data[14:34]
    ver_ihl, tos, tot, ident, frag, ttl, proto, _, src, dst = struct.unpack("!BBHHHBBH4s4s", ip)
    assert (ver_ihl, ident, frag, ttl, proto) == (0x45, 0, 0x4000, 64, 6)
    assert checksum(ip) == 0, "IPv4 header checksum"
    assert tot + 14 == orig, "IP total length = original length - Ethernet"
    tcp = data[34:]
    sport, dport, seq, ack, off_flags, win, _, urg = struct.unpack("!HHIIHHHH", tcp[:20])
    hl = (off_flags >> 12) * 4
    assert hl == len(tcp), "captured bytes = headers"
    payload = tot - 20 - hl
    pseudo = src + dst + struct.pack("!BBH", 0, 6, hl + payload)
    assert checksum(pseudo + tcp + bytes(payload)) == 0, "TCP checksum over a zero payload"
    opts, i, sack = tcp[20:], 0, []
    ts = None
    while i < len(opts):
        kind = opts[i]
        if kind == 1:
            i += 1
            continue
        n = opts[i + 1]
        if kind == 8:
            ts = struct.unpack("!II", opts[i + 2 : i + 10])
        elif kind == 5:
            sack = [struct.unpack("!II", opts[j : j + 8]) for j in range(i + 2, i + n, 8)]
        i += n
    return {
        "src": ".".join(map(str, src)), "dst": ".".join(map(str, dst)), "sport": sport,
        "dport": dport, "seq": seq, "ack": ack, "flags": off_flags & 0x1FF, "win": win,
        "ecn": tos & 3, "len": payload, "ts": ts, "sack": sack, "urg": urg,
    }  # fmt: skip


def golden_rows(path: Path) -> list[dict]:
    cap = read_pcapng(path)
    rows = []
    for iface, t, data, orig in cap.packets:
        r = decode(data, orig)
        r["iface"] = cap.interfaces[iface]["name"]
        r["t_ns"] = t
        r["ts"] = list(r["ts"]) if r["ts"] else None
        r["sack"] = [list(b) for b in r["sack"]]
        rows.append(r)
    return rows


def test_golden_capture_field_by_field(tmp_path):
    f = tmp_path / "g.pcapng"
    simulate(GOLDEN, pcap=f)
    rows = golden_rows(f)
    # invariants of the synthesis, per flow: data segments start at ISN + 1 + k * mss
    mss = 960
    for port in (1024, 1025):
        data = [r for r in rows if r["sport"] == port and r["len"] > 0]
        isn1 = min(r["seq"] for r in data)
        assert all((r["seq"] - isn1) % mss == 0 for r in data)
        acks = [r for r in rows if r["dport"] == port and r["len"] == 0]
        assert all((r["ack"] - isn1) % mss == 0 for r in acks)
        assert {r["flags"] & 0x10 for r in data + acks} == {0x10}
    expected = json.loads((DATA / "pcap_golden.json").read_text())
    assert len(rows) == expected["packets"]
    for i, (got, want) in enumerate(zip(rows, expected["rows"], strict=False)):
        assert got == want, f"packet {i}"
    assert Counter(r["ecn"] for r in rows) == {int(k): v for k, v in expected["ecn"].items()}


def write_golden() -> None:  # pragma: no cover - run by hand when the synthesis changes
    """Regenerate tests/data/pcap_golden.json (`python tests/test_pcap.py`)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "g.pcapng"
        simulate(GOLDEN, pcap=f)
        rows = golden_rows(f)
    doc = {
        "packets": len(rows),
        "ecn": {str(k): v for k, v in sorted(Counter(r["ecn"] for r in rows).items())},
        "rows": rows[:60],
    }
    lines = ",\n".join(json.dumps(r, separators=(",", ":")) for r in doc["rows"])
    head = json.dumps({k: v for k, v in doc.items() if k != "rows"})[:-1]
    (DATA / "pcap_golden.json").write_text(f'{head}, "rows": [\n{lines}\n]}}\n')


# -- errors ---------------------------------------------------------------------------------


def test_unknown_link_is_refused_with_exit_2(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(
        'duration = "1s"\n[dumbbell]\nrate = "10Mbps"\n[[flows]]\ncount = 1\n'
        '[pcap]\nlinks = ["nope"]\n'
    )
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", str(tmp_path / "o")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2
    assert (
        p.stderr.strip()
        .splitlines()[-1]
        .endswith('pcap.links = "nope": no such link (links: bottleneck)')
    ), p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()


def test_dumbbell_pcap_option_and_bounded_memory(tmp_path):
    out = tmp_path / "r"
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "dumbbell", "--flows", "3", "--duration", "3s",
         "--pcap", "--quiet", "--no-plots", "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    cap = read_pcapng(out / "capture.pcapng")
    assert [i["name"] for i in cap.interfaces] == ["bottleneck:fwd", "bottleneck:rev"]
    s = json.loads((out / "summary.json").read_text())
    assert len(cap.packets) > s["links"]["bottleneck"]["tx_packets"]
    # a batch smaller than the run: the taps keep their preallocated capacity
    from aqmlab.sim import Simulation

    sim = Simulation({**MIXED, "pcap": {"links": ["bottleneck"], "batch": 100}})
    sim.start_pcap(tmp_path / "m.pcapng")
    caps = [t["capacity"] for t in sim.pcap_taps()]
    sim.run()
    assert [t["capacity"] for t in sim.pcap_taps()] == caps
    sim.close_pcap()
    assert len(read_pcapng(tmp_path / "m.pcapng").packets) > 10 * 100


if __name__ == "__main__":  # pragma: no cover
    write_golden()


def test_capturing_does_not_change_the_run(tmp_path):
    """The captured links take the out-of-line path and the hosts' tap a branch: the results
    are those of the run without a capture (and the capture is deterministic). Only the event
    count differs: a captured link has an event per transmission, where the idle-link fast
    path (crates/netsim/src/link.rs) skips some."""
    plain = simulate({k: v for k, v in MIXED.items() if k not in ("pcap", "trace")}).summary
    a = simulate(MIXED, pcap=tmp_path / "a.pcapng").summary
    b = simulate(MIXED, pcap=tmp_path / "b.pcapng").summary
    for s in (plain, a, b):
        s.pop("wall_seconds")
        s.pop("meta")
        s.pop("scenario")
    assert a["events"] >= plain["events"]
    a["events"] = b["events"] = plain["events"]
    assert a == plain
    assert (tmp_path / "a.pcapng").read_bytes() == (tmp_path / "b.pcapng").read_bytes()
