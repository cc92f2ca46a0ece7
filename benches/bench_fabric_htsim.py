#!/usr/bin/env python3
"""aqmlab against htsim (Broadcom/csg-htsim) on htsim's home ground: a DCTCP permutation on a
k-ary fat tree, when an htsim build is present.

Network and traffic, the same in both: a k-ary fat tree (htsim's ``FatTreeTopology``,
aqmlab's ``[fat_tree]``) at 10 Gb/s with 1 us per link, switch queues of 150 000 bytes (htsim's
100 packets: its queues count bytes, so an ACK takes little room; aqmlab's ``buffer_bytes``),
1500-byte packets, ECN marking at a 15-packet threshold (htsim's fat tree marks at dequeue when more than
15 packets are queued; aqmlab's DualPI2 L queue marks a packet whose sojourn exceeds 15 packet
times, 18 us), DCTCP senders with a 10-segment initial window and a 250 ms minimum RTO (htsim's
floor), an ACK per segment, a random permutation of flows of ``PKTS`` full packets each
(every host sends one flow and receives one), all starting at 0, each flow on one random
shortest path (htsim: chosen at the source; aqmlab: the per-flow ECMP hash), its ACKs back
through the queues (htsim: the reverse of its path; aqmlab: the ACK direction's own hash).

Compared: FCT slowdown (FCT / (8 x payload / 10 Gb/s + 2 x hops x 1 us), docs/fabric.md) at
p50 and p99 over every flow of ``--seeds`` seeds (a flow unfinished at the end counts as an
infinite slowdown), and data packets delivered per wall-second of
the event loop (aqmlab: ``Simulation.run``; htsim: the ``doNextEvent`` loop), the two
alternating seed by seed under the same niceness. Bars: slowdowns
within 15 % at p50 and p99; aqmlab's packets per wall-second at least htsim's.

What each models that the other does not. htsim: its own TCP (NewReno-style recovery, no SACK,
initial ssthresh 100 segments, RTO checked by one scanner every 10 ms), a host NIC queue
(``FairPriorityQueue``, 1000 packets) that never marks, ECN marking on the queue length at
dequeue, packets without headers (1500 bytes carry 1500 bytes), ACKs on the reverse of the data
path, path choice from the C library's ``rand()``. aqmlab: its TCP (DCTCP per RFC 8257 with
the ``classic`` profile: no SACK, no delayed ACKs, no timestamps; unlimited initial ssthresh,
RFC 6298 timers per flow), headers (1500-byte packets carry 1460 payload bytes: the flows have
the same packet count, the payload is 2.7 % smaller), a drop-tail host NIC queue (1000 packets
as htsim's), marking on sojourn time (DualPI2's L queue step) with ACKs (not ECN-capable) in
its C queue, hash-based ECMP whose ACK path is chosen independently of the data path, per-flow
statistics (RTT, one-way delay) recorded during the run (link monitoring is off:
``monitor = "none"``; htsim logs nothing either).

htsim: set ``HTSIM_DIR`` to the ``sim/`` folder of a csg-htsim checkout where
``make -C sim libhtsim.a`` ran; the driver ``benches/htsim/fattree.cpp`` is compiled against
it (with the fat-tree sources of ``sim/datacenter/``) into a temporary folder. Without
``HTSIM_DIR`` the bench says so and exits 0 (skipped). Exit status 0 = PASS (or skipped),
1 = FAIL, 2 = cannot run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_htsim  # the sibling script (this folder is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benches" / "htsim" / "fattree.cpp"
RATE = 10e9
DELAY = 1e-6
BUFFER = 100
HOST_BUFFER = 1000  # htsim's FEEDER_BUFFER (sim/datacenter/main.h)
PKT = 1500
MARK_PKTS = 15


def build_htsim(htsim_dir: Path, out: Path) -> Path | None:
    """The fat-tree driver, built as bench_htsim.py builds its dumbbell driver, with htsim's
    fat-tree sources from its ``datacenter/`` folder."""
    dc = htsim_dir / "datacenter"
    srcs = [str(dc / f) for f in ("fat_tree_topology.cpp", "fat_tree_switch.cpp",
                                  "firstfit.cpp", "connection_matrix.cpp")]  # fmt: skip
    return bench_htsim.build_htsim(
        htsim_dir, out, DRIVER, "htsim_fattree", ("-w", f"-I{dc}", *srcs)
    )


def ideal(pkts: int, hops: int) -> float:
    """The ideal FCT of ``pkts`` full segments over ``hops`` links each way (docs/fabric.md)."""
    return pkts * (PKT - 40) * 8 / RATE + 2 * hops * DELAY


def run_htsim(exe: Path, k: int, pkts: int, duration: float, seed: int) -> dict:
    out = subprocess.run(
        [str(exe), str(k), str(RATE / 1e9), str(BUFFER), str(pkts * PKT),
         str(PKT), str(duration), str(seed)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    row = next(json.loads(ln) for ln in reversed(out.splitlines()) if ln.startswith("{"))
    slow = [
        math.inf if f is None else f / ideal(pkts, h)
        for f, h in zip(row["fct_s"], row["hops"], strict=True)
    ]
    return {"slowdowns": slow, "unfinished": row["fct_s"].count(None), "packets": row["packets"],
            "wall": row["wall_seconds"], "events": row["events"]}  # fmt: skip


def scenario(k: int, pkts: int, duration: float, seed: int) -> dict:
    step = MARK_PKTS * PKT * 8 / RATE
    return {
        "name": "htsim_fat_tree", "seed": seed, "duration": duration, "profile": "classic",
        # htsim's queues hold bytes (memFromPkt: BUFFER x 1500), so an ACK takes 40 of them
        "fat_tree": {"k": k, "rate": RATE, "delay": DELAY, "buffer": BUFFER * PKT,
                     "buffer_bytes": True, "host_buffer": HOST_BUFFER * PKT, "pkt_size": PKT,
                     "monitor": "none",
                     "aqm": {"host": {"type": "droptail"}}},
        "aqm": {"type": "dualpi2", "ecn_mask": 3, "l": {"step_thresh": step}},
        "flows": [{"pattern": "permutation", "cc": "dctcp", "size": pkts * (PKT - 40),
                   "start": 0, "start_jitter": 0, "delack": False, "init_cwnd": 10,
                   "min_rto": 0.25}],
    }  # fmt: skip


def run_aqmlab(k: int, pkts: int, duration: float, seed: int) -> dict:
    from aqmlab.sim import Simulation

    sim = Simulation(scenario(k, pkts, duration, seed))
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    s = sim.result().summary
    slow, unfinished, delivered = [], 0, 0
    for f in s["flows"]:
        delivered += f["bytes_delivered"] // (PKT - 40)
        if f["fct_s"] is None:
            unfinished += 1
            slow.append(math.inf)
            continue
        hops = len(sim.flow_path(f["id"]))
        slow.append(f["fct_s"] / ideal(pkts, hops))
    return {"slowdowns": slow, "unfinished": unfinished, "packets": delivered, "wall": wall,
            "events": s["events"]}  # fmt: skip


def quantile(v: list[float], p: float) -> float:
    """Nearest rank, as aqmlab's summary."""
    v = sorted(v)
    return v[max(1, math.ceil(p * len(v))) - 1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=8, help="fat-tree k (default 8: 128 hosts)")
    ap.add_argument("--pkts", type=int, default=1000, help="full packets per flow")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument(
        "--duration",
        type=float,
        default=0.3,
        help="simulated seconds per run (enough for a 250 ms RTO)",
    )
    args = ap.parse_args()
    htsim = os.environ.get("HTSIM_DIR")
    if not htsim:
        print("SKIPPED: HTSIM_DIR is not set (point it at the sim/ folder of a Broadcom/csg-htsim "
              "checkout after `make -C sim libhtsim.a`)")  # fmt: skip
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="aqmlab-htsim-"))
    try:
        exe = build_htsim(Path(htsim), tmp)
        # both under one niceness: aqmlab runs in this process, htsim as its child
        os.nice(10)
        if exe is None:
            return 2
        res = {"aqmlab": [], "htsim": []}
        for seed in range(1, args.seeds + 1):  # alternate, so that load hits both alike
            res["aqmlab"].append(run_aqmlab(args.k, args.pkts, args.duration, seed))
            res["htsim"].append(run_htsim(exe, args.k, args.pkts, args.duration, seed))
        rows = {}
        for name, runs in res.items():
            slow = [x for r in runs for x in r["slowdowns"]]
            rows[name] = {
                "flows": len(slow),
                "unfinished": sum(r["unfinished"] for r in runs),
                "p50": quantile(slow, 0.5),
                "p99": quantile(slow, 0.99),
                "pps": sum(r["packets"] for r in runs) / sum(r["wall"] for r in runs),
                "ns_per_event": 1e9 * sum(r["wall"] for r in runs) / sum(r["events"] for r in runs),
            }
        print(f"fat tree k = {args.k}, {args.pkts}-packet DCTCP permutation, {args.seeds} seeds")
        print(f"{'sim':<7} {'flows':>6} {'unfin.':>6} {'p50':>7} {'p99':>7} {'pkts/wall-s':>12} "
              f"{'ns/event':>9}")  # fmt: skip
        for name, r in rows.items():
            print(f"{name:<7} {r['flows']:>6} {r['unfinished']:>6} {r['p50']:>7.3f} "
                  f"{r['p99']:>7.3f} {r['pps'] / 1e6:>10.2f} M {r['ns_per_event']:>9.1f}")  # fmt: skip
        a, h = rows["aqmlab"], rows["htsim"]
        ok = True
        for q in ("p50", "p99"):
            d = a[q] / h[q] - 1
            good = abs(d) <= 0.15
            ok &= good
            print(f"slowdown {q}: aqmlab / htsim - 1 = {100 * d:+.1f} % (bar: within 15 %) "
                  f"{'PASS' if good else 'FAIL'}")  # fmt: skip
        ratio = a["pps"] / h["pps"]
        ok &= ratio >= 1.0
        print(f"packets per wall-second: aqmlab / htsim = {ratio:.2f} (bar >= 1.0) "
              f"{'PASS' if ratio >= 1.0 else 'FAIL'}")  # fmt: skip
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
