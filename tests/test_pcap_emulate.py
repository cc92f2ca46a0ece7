"""``aqmlab emulate --pcap``: the real packets at both TUN devices in ``capture.pcapng``.

Needs root, /dev/net/tun and Debian's tshark; skipped with the reason otherwise. References:
tshark (Wireshark) reads the file without a malformed packet or an expert error, and its
per-device, per-direction packet counts equal the forwarder's own counters exactly (what it
read from the senders = the bottleneck's arrivals; what it wrote to the receivers and to the
senders = its release counts), with the warm-up at 0 so that the counters cover the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import AQMLAB, ROOT  # noqa: E402

if os.geteuid() != 0:
    pytest.skip("emulation needs root (network namespaces, TUN devices)", allow_module_level=True)
if not Path("/dev/net/tun").exists():
    pytest.skip("emulation needs /dev/net/tun", allow_module_level=True)
if shutil.which("tshark") is None:
    pytest.skip(
        "tshark not installed (Debian package tshark; scripts/install-debian-packages.sh)",
        allow_module_level=True,
    )

ENV = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python"))


def test_emulator_capture_matches_the_forwarder_counters(tmp_path):
    from aqmlab.pcap import read_pcapng

    out = tmp_path / "res"
    p = subprocess.run(
        [*AQMLAB, "emulate", "--flows", "2", "--rate", "8Mbps", "--rtt", "30ms",
         "--duration", "3s", "--warmup", "0s", "--pcap", "--out", str(out), "--quiet",
         "--no-plots"],
        capture_output=True, text=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert not list(tmp_path.glob(".*aqmlab-tmp*")), "the temporary capture was moved"
    f = out / "capture.pcapng"
    cap = read_pcapng(f)
    assert [i["name"] for i in cap.interfaces] == ["senders", "receivers"]
    # Ethernet synthesised before the TUN's raw IPv4, so that libpcap's tools read the file
    assert {i["linktype"] for i in cap.interfaces} == {1}
    s = json.loads((out / "summary.json").read_text())
    e = s["emulation"]
    assert e["captured"] == {"senders": len([q for q in cap.packets if q[0] == 0]),
                             "receivers": len([q for q in cap.packets if q[0] == 1])}  # fmt: skip
    expert = subprocess.run(
        ["tshark", "-r", str(f), "-o", "ip.check_checksum:TRUE", "-q", "-z", "expert,error"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "Errors" not in expert, expert
    rows = subprocess.run(
        ["tshark", "-r", str(f), "-o", "ip.check_checksum:TRUE", "-T", "fields",
         "-e", "frame.interface_name", "-e", "ip.src", "-e", "ip.checksum.status",
         "-e", "_ws.malformed"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(rows) == len(cap.packets)
    fields = [r.split("\t") for r in rows]
    assert all(r[2] == "1" and r[3] == "" for r in fields), "IPv4 checksums good, none malformed"
    # senders are 10.203.0.x (docs/emulate.md); every packet they send crosses the forwarder
    by = Counter((r[0], r[1].startswith("10.203.0.")) for r in fields)
    link = s["links"]["bottleneck"]
    assert by[("senders", True)] == link["arrivals"]  # read from the senders' device
    assert by[("receivers", True)] == e["timing"]["forward"]["packets"]  # written to receivers
    assert by[("senders", False)] == e["timing"]["reverse"]["packets"]  # ACKs written back
    # ACKs read from the receivers' device: released, or still in the reverse delay line
    assert 0 <= by[("receivers", False)] - e["timing"]["reverse"]["packets"] < 100
    assert link["arrivals"] > 1000
    # Debian's tcptrace (libpcap; installed with tshark by scripts/install-debian-packages.sh)
    # reads the two-interface file: every packet, and the two flows' connections
    tt = subprocess.run(["tcptrace", "-n", str(f)], capture_output=True, text=True)
    assert tt.returncode == 0, tt.stderr
    assert f"{len(cap.packets)} packets seen, {len(cap.packets)} TCP packets traced" in tt.stdout
    conns = [ln for ln in tt.stdout.splitlines() if ln.strip()[:2] in ("1:", "2:", "3:")]
    assert len(conns) == 2 and all(":5201 " in c for c in conns), tt.stdout
