#!/usr/bin/env python3
"""Simulator speed: aqmlab (crates/netsim) against ns-3 on the same three dumbbell scenarios, and
FQ-CoDel against CoDel on aqmlab's 1 Gb/s scenario.

Scenarios (aqmlab's ``bench_sim`` example defines them; the ns-3 side mirrors whatever
parameters the example reports, else the defaults below):

  A. 10 Mbps bottleneck, 100 TCP NewReno flows, 60 s simulated, drop-tail, buffer one BDP
     (125 packets)
  B. 1 Gbps bottleneck, 1000 TCP CUBIC flows, 5 s simulated, CoDel, buffer one BDP
     (12 500 packets)
  D. 32 Mbps bottleneck, 100 TCP NewReno flows, 40 s simulated, CoDel, buffer one BDP
     (400 packets)
  E. scenario D with Linux-like TCP on both sides: aqmlab's ``linux`` profile (SACK, RACK-TLP,
     PRR, timestamps, Linux's delayed ACK) against ns-3 with its own defaults for these
     (``ns3-dumbbell --linux``: SACK, timestamps, PRR recovery, limited transmit, DelAckCount 2)

all with a 100 ms two-way propagation delay and 1000-byte packets.

aqmlab: ``cargo run --release -p netsim --example bench_sim -- --json`` (the example is built
first, then its binary is run directly so that cargo's own memory does not count).
ns-3: ``validation/ns3/build/ns3-dumbbell`` (``make ns3``), one scenario at a time, under nice.

Speed is packets sent over the bottleneck per wall-clock second (ns-3: wall time of
``Simulator::Run`` only, which favours ns-3 slightly); events per wall-second are shown too but
are not comparable one-to-one (the two simulators schedule different events). Peak RSS is the
child's ru_maxrss.

Bars: aqmlab >= 20x ns-3 in packets per wall-second on A, >= 100x on B and D (the
standard dumbbell, CoDel, timed around the event loop in both), >= 80x on E, and aqmlab's peak memory
< 1 GiB on scenario B. Exit status 0 = PASS, 1 = FAIL, 2 = cannot run (e.g. example missing).

FQ-CoDel, aqmlab only:

  C. scenario B with FQ-CoDel (Linux defaults, limit = the 12 500-packet buffer) instead of CoDel.

Bar: C's packets per wall-second >= 0.5 x B's. B and C are run alternately ``--fq-repeat`` times
(default 3; each run is a fresh process running B then C) and the fastest run of each counts, so
that a busy machine penalises both alike; the ratio of their CPU times (per-thread, from the
example) is printed too. Memory: C's peak RSS measured alone, its qdisc's own memory (packet
pool, bucket records, per-flow CoDel state) and its pool size, which must not exceed the buffer
plus one packet (memory bounded by the buffer, not by the 1000 flows' history).

Options: ``--ns3-only`` measures only ns-3 (no bar); ``--skip-ns3`` only aqmlab (the ns-3 ratios
are then not judged; the memory and FQ-CoDel bars are).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NS3_BIN = ROOT / "validation" / "ns3" / "build" / "ns3-dumbbell"
RATIO_BAR = 20.0
RSS_BAR = 1 << 30  # bytes
FQ_RATIO_BAR = 0.5
FQ_BUFFER = 12_500
NAME_B = "dumbbell_1G_1000cubic_5s"
NAME_C = "dumbbell_1G_1000cubic_5s_fq_codel"

SCENARIOS = {
    "A": dict(label="10Mbps x 100 NewReno x 60s", rate="10Mbps", flows=100, cc="newreno",
              aqm="fifo", buffer=125, rtt="100ms", duration="60s", warmup="10s"),
    "B": dict(label="1Gbps x 1000 CUBIC x 5s CoDel", rate="1Gbps", flows=1000, cc="cubic",
              aqm="codel", buffer=12500, rtt="100ms", duration="5s", warmup="1s"),
    "D": dict(label="32Mbps x 100 NewReno x 40s CoDel", rate="32Mbps", flows=100, cc="newreno",
              aqm="codel", buffer=400, rtt="100ms", duration="40s", warmup="8s"),
    "E": dict(label="D, linux TCP both sides", rate="32Mbps", flows=100, cc="newreno",
              aqm="codel", buffer=400, rtt="100ms", duration="40s", warmup="8s",
              ns3_args=["--linux"]),
}  # fmt: skip
#: The speed bar (100x ns-3) on its two standard-dumbbell scenarios; A keeps the earlier 20x;
#: E (Linux-like TCP on both sides) 80x.
SPEED_BAR = {"A": RATIO_BAR, "B": 100.0, "D": 100.0, "E": 80.0}
#: aqmlab's bench example names the scenarios above start with.
AQMLAB_ROWS = ["dumbbell_", "linux_32M_100newreno_40s_codel"]


def run_with_rss(cmd: list[str], cwd: Path = ROOT) -> tuple[str, int, float, int, str, float]:
    """Run cmd; returns (stdout, rc, wall s, peak RSS bytes, stderr tail, CPU s of the child)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read pipes fully before reaping with wait4 (which gives this child's own rusage).
    out_b, err_b = proc.stdout.read(), proc.stderr.read()
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = err_b.decode(errors="replace").strip().splitlines()
    return (
        out_b.decode(errors="replace"),
        proc.returncode,
        wall,
        ru.ru_maxrss * 1024,
        err[-1] if err else "",
        ru.ru_utime + ru.ru_stime,
    )


def last_json(text: str):
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                return json.loads(line)
            except ValueError:
                continue
    raise ValueError("no JSON object in output")


# ---------------------------------------------------------------------------------------------
# aqmlab side
# ---------------------------------------------------------------------------------------------


def _first(d: dict, *keys, default=None):
    for k in keys:
        if k in d and d[k] is not None:
            return d[k]
    return default


def _rate_bps(v) -> float | None:
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip().lower().replace("bps", "").replace("bit/s", "")
    mult = {"k": 1e3, "m": 1e6, "g": 1e9}.get(s[-1:], 1.0)
    try:
        return float(s[:-1] if mult != 1.0 else s) * mult
    except ValueError:
        return None


def parse_aqmlab(report) -> dict[str, dict]:
    """Map aqmlab's bench JSON to {"A": {...}, "B": {...}} with pps, eps, rss and parameters."""
    entries = report
    peak_top = None
    if isinstance(report, dict):
        peak_top = _first(report, "peak_rss_bytes")
        if peak_top is None and "peak_rss_mib" in report:
            peak_top = report["peak_rss_mib"] * (1 << 20)
        entries = _first(report, "netsim", "scenarios", "results", "benches", default=None)
        if entries is None:
            entries = [report]
        if isinstance(entries, dict):
            entries = [dict(v, name=k) for k, v in entries.items()]
    out: dict[str, dict] = {}
    for i, e in enumerate(entries):
        rate = _rate_bps(_first(e, "rate_bps", "rate", "bottleneck_bps"))
        name = str(_first(e, "name", "scenario", default=""))
        # bench_htsim.py's and bench_cake.py's scenarios
        if name.startswith("htsim_") or name.endswith("_cake"):
            continue
        if name.startswith("linux_"):
            key = "E"
        elif "fq_codel" in name:
            key = "C"
        elif "32M" in name:
            key = "D"
        elif rate is not None:
            key = "B" if rate >= 1e8 else "A"
        elif "1g" in name.lower():
            key = "B"
        else:
            key = "A" if i == 0 else "B"
        # Packets over the bottleneck (netsim's "packets_forwarded" counts every hop).
        pkts = _first(e, "bottleneck_packets", "packets_over_bottleneck")
        wall = _first(e, "wall_seconds", "wall_s", "wall")
        pps = _first(e, "bottleneck_pkts_per_wall_s", "packets_per_wall_s")
        if pps is None and pkts and wall:
            pps = pkts / wall
        eps = _first(e, "events_per_wall_s", "events_per_sec", "events_per_second")
        if eps is None and _first(e, "events") and wall:
            eps = e["events"] / wall
        rss = _first(e, "peak_rss_bytes")
        if rss is None and _first(e, "peak_rss_mib") is not None:
            rss = e["peak_rss_mib"] * (1 << 20)
        if rss is None and _first(e, "peak_rss_kb", "peak_rss_kib") is not None:
            rss = _first(e, "peak_rss_kb", "peak_rss_kib") * 1024
        if rss is None:
            rss = peak_top
        params = {}
        for k_src, k_dst in (("flows", "flows"), ("cc", "cc"), ("aqm", "aqm"), ("rtt", "rtt"),
                             ("buffer", "buffer"), ("buffer_pkts", "buffer"),
                             ("duration", "duration"), ("rate", "rate")):  # fmt: skip
            if k_src in e and isinstance(e[k_src], (str, int)):
                params[k_dst] = e[k_src]
        out[key] = dict(pps=pps, eps=eps, rss=rss, wall=wall, packets=pkts, params=params,
                        cpu=_first(e, "cpu_seconds"), qmem=_first(e, "queue_memory_bytes"),
                        slots=_first(e, "queue_pool_slots"))  # fmt: skip
    return out


def run_aqmlab(repeat: int = 1) -> tuple[dict[str, dict] | None, str]:
    """Best (highest packets per wall-second) of `repeat` runs of the example, per scenario."""
    best: dict[str, dict] | None = None
    for _ in range(max(1, repeat)):
        res, why = run_aqmlab_once(AQMLAB_ROWS)
        if res is None:
            return None, why
        if best is None:
            best = res
            continue
        for k, r in res.items():
            if k not in best or (r.get("pps") or 0) > (best[k].get("pps") or 0):
                rss = max(r.get("rss") or 0, (best.get(k) or {}).get("rss") or 0)
                best[k] = dict(r, rss=rss)
    return best, ""


def run_aqmlab_once(only: list[str] | None = None) -> tuple[dict[str, dict] | None, str]:
    ex = ROOT / "crates" / "netsim" / "examples" / "bench_sim.rs"
    if not ex.exists():
        return (
            None,
            f"aqmlab's bench example is missing ({ex.relative_to(ROOT)} does not exist yet)",
        )
    build = subprocess.run(
        ["cargo", "build", "--release", "-p", "netsim", "--example", "bench_sim"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if build.returncode != 0:
        tail = "\n".join(build.stderr.strip().splitlines()[-5:])
        return None, f"`cargo build --release -p netsim --example bench_sim` failed:\n{tail}"
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = target / "release" / "examples" / "bench_sim"
    extra = ["--only", ",".join(only)] if only else []
    print("running aqmlab: cargo run --release -p netsim --example bench_sim -- --json",
          *extra, flush=True)  # fmt: skip
    # Same niceness as the ns-3 runs, so that both see the same share of a busy machine.
    out, rc, _wall, rss, err, _cpu = run_with_rss(
        ["nice", "-n", "10", str(binary), "--json", *extra]
    )
    if rc != 0:
        return None, f"bench_sim exited with {rc}: {err}"
    try:
        res = parse_aqmlab(last_json(out))
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        return None, f"could not read bench_sim --json output ({e})"
    for r in res.values():
        if r["rss"] is None:  # both scenarios ran in one process: its peak bounds each
            r["rss"] = rss
            r["rss_note"] = "process peak"
    return res, ""


# ---------------------------------------------------------------------------------------------
# ns-3 side
# ---------------------------------------------------------------------------------------------


def run_fq(repeat: int) -> tuple[dict | None, str]:
    """FQ-CoDel (C) against CoDel (B): fastest of `repeat` alternating runs of each, C's peak RSS
    measured alone, its qdisc memory and pool size."""
    best: dict[str, dict] = {}
    for _ in range(max(1, repeat)):
        res, why = run_aqmlab_once([NAME_B, NAME_C])
        if res is None:
            return None, why
        for k in ("B", "C"):
            r = res.get(k)
            if r is None:
                return None, f"bench_sim reported no scenario {k}"
            if k not in best or (r.get("pps") or 0) > (best[k].get("pps") or 0):
                best[k] = r
    alone, why = run_aqmlab_once([NAME_C])
    if alone is None:
        return None, why
    best["C"]["rss_alone"] = alone["C"]["rss"]
    return best, ""


def run_ns3(sc: dict, repeat: int = 1) -> dict:
    """Best (fastest Simulator::Run) of `repeat` runs; the runs are deterministic."""
    runs = [run_ns3_once(sc) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall"])
    best["repeats"] = repeat
    best["rss"] = max(r["rss"] for r in runs)
    return best


def run_ns3_once(sc: dict) -> dict:
    cmd = [
        "nice", "-n", "10", str(NS3_BIN),
        "--flows", str(sc["flows"]), "--rate", str(sc["rate"]), "--rtt", str(sc["rtt"]),
        "--buffer", str(sc["buffer"]), "--aqm", str(sc["aqm"]), "--cc", str(sc["cc"]),
        "--pkt-size", "1000", "--duration", str(sc["duration"]), "--warmup", str(sc["warmup"]),
        "--seed", "1", "--json", *sc.get("ns3_args", []),
    ]  # fmt: skip
    print("running ns-3:", " ".join(cmd[3:]), flush=True)
    out, rc, wall, rss, err, cpu = run_with_rss(cmd)
    if rc != 0:
        raise RuntimeError(f"ns3-dumbbell exited with {rc}: {err}")
    s = last_json(out)
    run_wall = s["wall_seconds"]
    return dict(
        pps=s["packets_forwarded"] / run_wall,
        eps=s["events"] / run_wall,
        rss=rss,
        wall=run_wall,
        process_wall=wall,
        process_cpu=cpu,
        packets=s["packets_forwarded"],
        events=s["events"],
        utilization=s["links"]["bottleneck"]["utilization"],
    )


# ---------------------------------------------------------------------------------------------


def fmt_rate(v) -> str:
    if v is None:
        return "n/a"
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} k"


def fmt_kib(v) -> str:
    return "n/a" if v is None else f"{v / 1024:.0f} KiB"


def fmt_mib(v) -> str:
    return "n/a" if v is None or v < 0 else f"{v / (1 << 20):.0f} MiB"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--ns3-only", action="store_true", help="measure ns-3 only (no bar)")
    p.add_argument("--skip-ns3", action="store_true", help="measure aqmlab only (no ratio)")
    p.add_argument("--json", action="store_true", help="also print the results as JSON")
    p.add_argument(
        "--fq-repeat",
        type=int,
        default=3,
        help="alternating runs of CoDel and FQ-CoDel for the FQ-CoDel ratio (default 3)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each simulator N times and keep the fastest run (default 1)",
    )
    a = p.parse_args()

    aq: dict[str, dict] | None = None
    if not a.ns3_only:
        aq, why = run_aqmlab(a.repeat)
        if aq is None:
            print(f"bench_sim: {why}", file=sys.stderr)
            print("bench_sim: cannot compare against ns-3 without aqmlab's numbers (exit 2)",
                  file=sys.stderr)  # fmt: skip
            return 2

    fq: dict | None = None
    if not a.ns3_only:
        fq, why = run_fq(a.fq_repeat)
        if fq is None:
            print(f"bench_sim: FQ-CoDel runs failed: {why}", file=sys.stderr)
            return 2
        if aq is not None:
            aq.pop("C", None)

    scenarios = {k: dict(v) for k, v in SCENARIOS.items()}
    if aq:  # mirror the parameters aqmlab reports, where it reports them
        for k, r in aq.items():
            if k in scenarios:
                scenarios[k].update(r.get("params", {}))
                if scenarios[k]["aqm"] == "droptail":
                    scenarios[k]["aqm"] = "fifo"

    ns: dict[str, dict] = {}
    if not a.skip_ns3:
        if not NS3_BIN.exists():
            print(f"bench_sim: {NS3_BIN.relative_to(ROOT)} not built (run `make ns3`); "
                  "reporting aqmlab only", file=sys.stderr)  # fmt: skip
        else:
            for k, sc in scenarios.items():
                ns[k] = run_ns3(sc, a.repeat)

    print()
    hdr = (f"{'scenario':32s} {'sim':7s} {'pkts/wall-s':>12s} {'events/wall-s':>14s} "
           f"{'wall s':>8s} {'peak RSS':>10s}")  # fmt: skip
    print(hdr)
    print("-" * len(hdr))
    verdicts = []
    for k, sc in scenarios.items():
        for sim, r in (("aqmlab", (aq or {}).get(k)), ("ns-3", ns.get(k))):
            if r is None:
                continue
            wall = f"{r['wall']:.2f}" if r.get("wall") else "n/a"
            print(f"{sc['label']:32s} {sim:7s} {fmt_rate(r['pps']):>12s} "
                  f"{fmt_rate(r['eps']):>14s} {wall:>8s} {fmt_mib(r['rss']):>10s}")  # fmt: skip
        r_aq, r_ns = (aq or {}).get(k), ns.get(k)
        if r_ns and r_ns.get("process_cpu"):
            print(f"{'':32s} ns-3 process CPU {r_ns['process_cpu']:.2f} s: "
                  f"{fmt_rate(r_ns['packets'] / r_ns['process_cpu'])} packets per CPU-second "
                  "(on a busy machine, wall time overstates ns-3's cost)")  # fmt: skip
        if r_aq and r_ns and r_aq.get("pps"):
            ratio = r_aq["pps"] / r_ns["pps"]
            bar = SPEED_BAR[k]
            ok = ratio >= bar
            verdicts.append(ok)
            print(f"{'':32s} ratio aqmlab/ns-3 (packets per wall-second): {ratio:.1f}x "
                  f"(bar {bar:.0f}x) {'PASS' if ok else 'FAIL'}")  # fmt: skip
        elif r_aq and not a.skip_ns3:
            verdicts.append(False)
            print(f"{'':32s} no ratio (missing aqmlab packets/s or ns-3 run)")
        if k == "B" and r_aq:
            rss = r_aq.get("rss")
            ok = rss is not None and 0 <= rss < RSS_BAR
            verdicts.append(ok)
            note = f" ({r_aq['rss_note']})" if r_aq.get("rss_note") else ""
            print(f"{'':32s} aqmlab peak memory {fmt_mib(rss)}{note} (bar < 1 GiB) "
                  f"{'PASS' if ok else 'FAIL'}")  # fmt: skip
    if fq:
        b, c = fq["B"], fq["C"]
        print()
        print("FQ-CoDel against CoDel, 1 Gb/s x 1000 CUBIC x 5 s, buffer 12 500 packets "
              f"(fastest of {a.fq_repeat} alternating runs)")  # fmt: skip
        for label, r in (("CoDel", b), ("FQ-CoDel", c)):
            cpu = f"{r['cpu']:.2f}" if r.get("cpu") else "n/a"
            print(f"  {label:9s} {fmt_rate(r['pps']):>10s} pkts/wall-s  wall {r['wall']:.2f} s  "
                  f"cpu {cpu} s  qdisc memory {fmt_kib(r.get('qmem'))}")  # fmt: skip
        ratio = c["pps"] / b["pps"] if b.get("pps") else 0.0
        ok = ratio >= FQ_RATIO_BAR
        verdicts.append(ok)
        cpu_ratio = b["cpu"] / c["cpu"] if b.get("cpu") and c.get("cpu") else None
        cpu_note = f"; by CPU time {cpu_ratio:.2f}" if cpu_ratio else ""
        print(f"  ratio FQ-CoDel/CoDel (packets per wall-second): {ratio:.2f} "
              f"(bar {FQ_RATIO_BAR}){cpu_note} {'PASS' if ok else 'FAIL'}")  # fmt: skip
        slots = c.get("slots")
        ok_mem = slots is not None and slots <= FQ_BUFFER + 1
        verdicts.append(ok_mem)
        print(f"  FQ-CoDel peak RSS alone {fmt_mib(c.get('rss_alone'))}; packet pool {slots} slots "
              f"(bound: buffer + 1 = {FQ_BUFFER + 1}), qdisc memory {fmt_kib(c.get('qmem'))} "
              f"{'PASS' if ok_mem else 'FAIL'}")  # fmt: skip
    if a.json:
        print(json.dumps({"aqmlab": aq, "ns3": ns, "scenarios": scenarios, "fq_codel": fq},
                         indent=1, default=str))  # fmt: skip
    if a.ns3_only:
        return 0
    ok = bool(verdicts) and all(verdicts)
    print(f"\nbench_sim: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
