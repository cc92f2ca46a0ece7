"""DSCP on flow groups (``flows[i].dscp``, docs/scenario.md): the simulator stamps each group's
packets, data and ACKs (UDP datagrams too), and the pcapng capture (link and host sides)
carries it in the IPv4 DS field (RFC 2474 §3).

References: the codepoint values are the RFCs' (EF = 46, RFC 3246; CS1 = 8, RFC 2474; AF41 =
34, RFC 2597); the capture is read back by this file's own decoder and, when installed, by
Debian's tshark (``ip.dsfield.dscp``). Counts are exact: every packet of a group carries the
group's codepoint.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from collections import Counter

import pytest
from aqmlab.pcap import read_pcapng
from aqmlab.sim import simulate

SCENARIO = {
    "name": "dscp",
    "duration": "1s",
    "warmup": "0s",
    "seed": 3,
    "dumbbell": {"rate": "10Mbps", "rtt": "20ms", "buffer": 50},
    "flows": [
        {"count": 1, "start": "0s", "dscp": "EF"},
        {"count": 1, "start": "0s", "dscp": 8},
        {"count": 1, "start": "0s"},
        {"kind": "udp_cbr", "rate": "1Mbps", "start": "0s", "dscp": "af41"},
    ],
    "pcap": {"links": ["bottleneck"], "hosts": True},
}


def _ports_and_dscp(path) -> Counter:
    """(sender port, DSCP) of every IPv4 packet of the capture (TCP/UDP ports after the
    Ethernet and IPv4 headers; the sender's port is the one below 5001)."""
    out = Counter()
    for _, _, data, _ in read_pcapng(path).packets:
        assert data[12:14] == b"\x08\x00"
        tos = data[15]
        sport, dport = struct.unpack("!HH", data[34:38])
        out[(min(sport, dport), tos >> 2)] += 1
    return out


def test_each_group_carries_its_dscp_in_the_capture(tmp_path):
    f = tmp_path / "c.pcapng"
    simulate(SCENARIO, pcap=f)
    got = _ports_and_dscp(f)
    # flow i's sender port is 1024 + i (docs/pcap.md)
    want = {1024: 46, 1025: 8, 1026: 0, 1027: 34}
    for (port, dscp), n in got.items():
        assert dscp == want[port], (port, dscp, n)
    assert {p for p, _ in got} == set(want)
    if shutil.which("tshark"):
        p = subprocess.run(
            ["tshark", "-r", str(f), "-T", "fields", "-e", "ip.dsfield.dscp", "-e", "tcp.srcport",
             "-e", "tcp.dstport", "-e", "udp.srcport", "-e", "udp.dstport"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        seen = set()
        for line in p.stdout.splitlines():
            dscp, *ports = line.split("\t")
            port = min(int(x) for x in ports if x)
            seen.add(port)
            assert int(dscp) == want[port], line
        assert seen == set(want)


def test_bad_dscp_is_one_line_and_exit_2(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('duration = "1s"\n[dumbbell]\nrate = "10Mbps"\n[[flows]]\ndscp = "XX"\n')
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", str(tmp_path / "o")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2
    last = p.stderr.strip().splitlines()[-1]
    assert 'flows[0].dscp = "XX": not a DSCP name (BE, CS0' in last, p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value", ["64", "-3", "2.5", "true"])
def test_bad_dscp_numbers(value, tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(f'duration = "1s"\n[dumbbell]\nrate = "10Mbps"\n[[flows]]\ndscp = {value}\n')
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", str(tmp_path / "o")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2
    assert f"flows[0].dscp = {value}: " in p.stderr.strip().splitlines()[-1], p.stderr
    assert "Traceback" not in p.stderr
