#!/usr/bin/env python3
"""aqmlab against htsim (Broadcom/csg-htsim) on htsim's dumbbell, when an htsim build is present.

Scenarios (aqmlab's ``bench_sim`` example defines them as ``htsim_*``; ``benches/htsim/
dumbbell.cpp`` builds the same network in htsim):

  H1. 1 Gb/s bottleneck, 100 NewReno flows, 10 s simulated, drop-tail with 1000 packets
  H2. 10 Gb/s bottleneck, 1000 NewReno flows, 5 s simulated, drop-tail with 10 000 packets

both with a 20 ms two-way propagation delay, 1500-byte packets, flows starting uniformly in the
first second, and no access links (aqmlab's ``access = "none"``: senders straight into the
bottleneck queue, ACKs straight into a reverse queue of the same rate; the bottleneck's pipe is
10 ms each way in both).

What each models that the other does not: aqmlab's TCP has SACK, delayed ACKs, ECN, CUBIC and
the other congestion controls, RFC 6298 timers armed per flow (a lazily re-armed event each) and
an infinite initial slow-start threshold; htsim's TcpSrc is NewReno-style with a 10-segment
initial window (its initial ssthresh is set unlimited here to match aqmlab), and its
retransmission timers are checked by one scanner every 10 ms (so its RTO fires up to 10 ms late
and costs one event per 10 ms for all flows). aqmlab also keeps per-link statistics (queue-delay
histogram, 10 ms time series) during the run; the htsim driver logs nothing. Their TCP details
differ, so the bottleneck carries slightly different packet counts; speed is compared per
delivered packet, not per run.

Measured: packets sent over the bottleneck per wall-second of the event loop only (aqmlab:
``Simulation::run``; htsim: the ``doNextEvent`` loop), events per bottleneck packet and
nanoseconds per event. The two run alternately ``--repeat`` times (default 3) under the same
niceness; medians are reported.

htsim: set ``HTSIM_DIR`` to the ``sim/`` folder of a csg-htsim checkout where
``make -C sim libhtsim.a`` ran; the driver is compiled against it into a temporary folder.
Without ``HTSIM_DIR`` the bench says so and exits 0 (skipped).

Bar: aqmlab's packets per wall-second >= htsim's on both scenarios. Exit status 0 = PASS (or
skipped), 1 = FAIL, 2 = cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benches" / "htsim" / "dumbbell.cpp"
# name in bench_sim -> htsim driver arguments (flows, rate Mb/s, rtt ms, buffer, seconds, bytes)
SCENARIOS = {
    "htsim_1G_100newreno_10s": (100, 1000, 20, 1000, 10, 1500),
    "htsim_10G_1000newreno_5s": (1000, 10000, 20, 10000, 5, 1500),
}


def build_aqmlab() -> Path | None:
    r = subprocess.run(
        ["nice", "cargo", "build", "--release", "-p", "netsim", "--example", "bench_sim"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if r.returncode != 0:
        print(r.stderr[-2000:])
        return None
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "examples" / "bench_sim"


def build_htsim(
    htsim_dir: Path,
    out: Path,
    driver: Path = DRIVER,
    name: str = "htsim_dumbbell",
    extra: tuple[str, ...] = (),
) -> Path | None:
    """Compile ``driver`` against ``htsim_dir``'s ``libhtsim.a`` into ``out/name`` (``extra``:
    further compiler arguments, e.g. include folders and sources); None, said why, if it
    cannot."""
    lib = htsim_dir / "libhtsim.a"
    if not lib.exists():
        print(
            f"{lib} does not exist: HTSIM_DIR must be the sim/ folder of a csg-htsim "
            "checkout, built with `make -C sim libhtsim.a`"
        )
        return None
    cxx = os.environ.get("CXX", "g++")
    exe = out / name
    cmd = ["nice", cxx, "-O3", "-std=c++17", f"-I{htsim_dir}", *extra, str(driver), str(lib),
           "-o", str(exe)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("compiling the htsim driver failed:\n" + r.stderr[-2000:])
        return None
    return exe


def last_json(text: str) -> dict:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line")


def run_aqmlab(binary: Path, name: str) -> dict:
    out = subprocess.run(
        ["nice", "-n", "10", str(binary), "--json", "--only", name],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    row = json.loads(out)["netsim"][0]
    return {"events": row["events"], "packets": row["bottleneck_packets"],
            "wall": row["wall_seconds"]}  # fmt: skip


def run_htsim(exe: Path, args: tuple) -> dict:
    out = subprocess.run(
        ["nice", "-n", "10", str(exe), *map(str, args), "1"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    row = last_json(out)
    return {"events": row["events"], "packets": row["bottleneck_packets"],
            "wall": row["wall_seconds"]}  # fmt: skip


def summarize(runs: list[dict]) -> dict:
    pps = statistics.median(r["packets"] / r["wall"] for r in runs)
    r0 = runs[0]
    return {
        "pps": pps,
        "wall": statistics.median(r["wall"] for r in runs),
        "events": r0["events"],
        "packets": r0["packets"],
        "ev_per_pkt": r0["events"] / max(1, r0["packets"]),
        "ns_per_event": statistics.median(r["wall"] * 1e9 / r["events"] for r in runs),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    htsim = os.environ.get("HTSIM_DIR")
    if not htsim:
        print("SKIPPED: HTSIM_DIR is not set (point it at the sim/ folder of a Broadcom/csg-htsim "
              "checkout after `make -C sim libhtsim.a`)")  # fmt: skip
        return 0
    binary = build_aqmlab()
    if binary is None:
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="aqmlab-htsim-"))
    try:
        exe = build_htsim(Path(htsim), tmp)
        if exe is None:
            return 2
        ok = True
        print(f"{'scenario':<26} {'sim':<7} {'events':>10} {'bott. pkts':>10} {'ev/pkt':>7} "
              f"{'ns/event':>9} {'wall s':>7} {'pkts/wall-s':>12}")  # fmt: skip
        for name, hargs in SCENARIOS.items():
            a_runs, h_runs = [], []
            for _ in range(max(1, args.repeat)):  # alternate, so that load hits both alike
                a_runs.append(run_aqmlab(binary, name))
                h_runs.append(run_htsim(exe, hargs))
            a, h = summarize(a_runs), summarize(h_runs)
            for label, s in (("aqmlab", a), ("htsim", h)):
                print(f"{name:<26} {label:<7} {s['events']:>10} {s['packets']:>10} "
                      f"{s['ev_per_pkt']:>7.2f} {s['ns_per_event']:>9.1f} {s['wall']:>7.3f} "
                      f"{s['pps'] / 1e6:>10.2f} M")  # fmt: skip
            ratio = a["pps"] / h["pps"]
            verdict = "PASS" if ratio >= 1.0 else "FAIL"
            ok &= ratio >= 1.0
            print(f"{name:<26} aqmlab / htsim packets per wall-second: {ratio:.2f} "
                  f"(bar >= 1.0, medians of {args.repeat}) {verdict}")  # fmt: skip
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
