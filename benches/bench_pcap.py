"""Packet-capture cost: a 1 Gb/s dumbbell with 100 flows for 10 s, without and with
``[pcap] links = ["bottleneck"]`` (both directions of the bottleneck captured).

Each run is a child process (so its peak resident memory is its own), alternating plain and
captured runs, ``--repeat`` times (default 2); the fastest of each counts. Prints the wall
times and their ratio, the capture's size per packet (Ethernet headers, the default, and raw
IPv4 with ``ethernet = false``) and the peak RSS of each run. Bars (docs/pcap.md): wall time
with the capture at most 2x without, capture file under 100 bytes per packet (checked for the
raw-IPv4 capture; the Ethernet capture's size is reported), peak RSS of the captured run within
64 MB of the plain run's (the taps hold at most a batch).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SCENARIO = {
    "name": "bench-pcap",
    "duration": "10s",
    "warmup": "1s",
    "dumbbell": {"rate": "1Gbps", "rtt": "20ms", "buffer": 1000, "pkt_size": 1500},
    "aqm": {"type": "droptail"},
    "flows": [{"count": 100, "cc": "cubic"}],
}
RATIO_BAR = 2.0
BYTES_BAR = 100.0
RSS_BAR_MB = 64.0

CHILD = r"""
import json, resource, sys, time
from aqmlab.sim import simulate
sc, path = json.loads(sys.argv[1]), sys.argv[2]
t0 = time.perf_counter()
res = simulate(sc, pcap=path or None, force=True)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "rss_mb": rss,
                  "tx": res.summary["links"]["bottleneck"]["tx_packets"]}))
"""


def run(sc: dict, path: str = "") -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(sc), path],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(p.stdout.strip().splitlines()[-1])


def packets(path: Path) -> int:
    from aqmlab.pcap import read_pcapng

    return len(read_pcapng(path).packets)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    eth = {**SCENARIO, "pcap": {"links": ["bottleneck"]}}
    raw = {**SCENARIO, "pcap": {"links": ["bottleneck"], "ethernet": False}}
    plain, cap = [], []
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "c.pcapng"
        for _ in range(args.repeat):
            plain.append(run(SCENARIO))
            cap.append(run(eth, str(f)))
        size_eth, n = f.stat().st_size, packets(f)
        run(raw, str(f))
        size_raw, n_raw = f.stat().st_size, packets(f)
    a = min(plain, key=lambda r: r["wall"])
    b = min(cap, key=lambda r: r["wall"])
    ratio = b["wall"] / a["wall"]
    per_eth, per_raw = size_eth / n, size_raw / n_raw
    rss_plain = max(r["rss_mb"] for r in plain)
    rss_cap = max(r["rss_mb"] for r in cap)
    print(f"plain: {a['wall']:.2f} s   pcap: {b['wall']:.2f} s   ratio pcap/plain = {ratio:.2f}")
    print(
        f"capture: {n:,} packets, {size_eth / 1e6:.1f} MB, {per_eth:.1f} bytes/packet "
        f"(Ethernet); raw IPv4 {per_raw:.1f} bytes/packet"
    )
    print(f"peak RSS: plain {rss_plain:.0f} MB, pcap {rss_cap:.0f} MB")
    ok = ratio <= RATIO_BAR and per_raw < BYTES_BAR and rss_cap - rss_plain <= RSS_BAR_MB
    print(
        f"-> {'PASS' if ok else 'FAIL'} (ratio <= {RATIO_BAR}, raw bytes/packet < {BYTES_BAR}, "
        f"RSS within {RSS_BAR_MB:.0f} MB)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
