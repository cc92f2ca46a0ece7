#!/usr/bin/env python3
"""Run the same dumbbell scenarios in ns-3 and in aqmlab and write a side-by-side table.

Scenarios: fifo, red, pie and codel, each with 10 and 100 long-lived NewReno flows over a
10 Mbps bottleneck, two-way propagation delay 100 ms, 1000-byte packets, a 200-packet bottleneck
buffer (1.6 x BDP at 10 Mbps x 100 ms = 125 packets), 60 s simulated with the first 10 s
excluded, averaged over several seeds.

ns-3 runs ``validation/ns3/build/ns3-dumbbell`` (built by ``make ns3``); aqmlab runs
``.venv/bin/aqmlab dumbbell ... --out DIR`` and reads ``DIR/summary.json``. Both print the same
keys (see README.md). Loss is drops / arrivals at the bottleneck queue.

With ``--ecn``: the ECN scenarios instead. RED, PIE and CoDel mark instead of dropping (aqmlab
``--ecn --aqm-param ecn=true``, ns-3 ``--ecn``: UseEcn on the sockets and the queue disc), 10 and
100 flows, delayed ACKs off and on, 3 seeds by default; ns-3 runs TcpLinuxReno (per-segment
congestion avoidance as aqmlab's Reno law; TcpNewReno grows per ACK, which halves its growth with
delayed ACKs). ``--before DIR`` adds the aqmlab runs of an earlier tree, saved there with
``--dump DIR``, as a "before" column.

With ``--fq``: the FQ-CoDel scenarios. The same dumbbell with fq_codel (aqmlab's
``fq_codel`` with its Linux defaults, the limit being the buffer; ns-3's ``FqCoDelQueueDisc``
with the same values, see README.md), 10 and 100 flows, 5 seeds, no ECN, no delayed ACKs, ns-3
TcpLinuxReno (per-segment growth, as aqmlab and Linux).

With ``--cobalt``: COBALT and FQ-COBALT on the same dumbbell as ``--fq`` (aqmlab ``cobalt`` and
``fq_cobalt`` with their defaults, which are ns-3's; ns-3's ``CobaltQueueDisc`` and
``FqCobaltQueueDisc`` with theirs, the limit being the buffer), 10 and 100 flows, 5 seeds.

Usage::

    .venv/bin/python validation/ns3/compare.py             # both simulators
    .venv/bin/python validation/ns3/compare.py --ns3-only  # ns-3 columns only, aqmlab "pending"
    .venv/bin/python validation/ns3/compare.py --ecn --dump DIR     # on the old tree
    .venv/bin/python validation/ns3/compare.py --ecn --before DIR   # on the new tree
    .venv/bin/python validation/ns3/compare.py --fq        # FQ-CoDel, 10 and 100 flows
    .venv/bin/python validation/ns3/compare.py --cobalt    # COBALT and FQ-COBALT

The tables go to validation/ns3/RESULTS.md, laid out as: default table, ``<!-- ecn -->``, ECN
table, ``<!-- fq -->``, FQ-CoDel table, ``<!-- cobalt -->``, COBALT table, ``<!-- notes -->``,
hand-written notes. Each mode
replaces its own part; everything else (the other tables, the notes) is kept.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NS3_BIN = HERE / "build" / "ns3-dumbbell"
AQMLAB = ROOT / ".venv" / "bin" / "aqmlab"
RESULTS = HERE / "RESULTS.md"
NOTES_MARK = "<!-- notes -->"
ECN_MARK = "<!-- ecn -->"
FQ_MARK = "<!-- fq -->"
COBALT_MARK = "<!-- cobalt -->"
COBALT_AQMS = ("cobalt", "fq_cobalt")

AQMS = ("fifo", "red", "pie", "codel", "fq_codel", "cobalt", "fq_cobalt")
PLAIN_AQMS = ("fifo", "red", "pie", "codel")
FLOWS = (10, 100)
ECN_AQMS = ("red", "pie", "codel")
ECN_SEEDS = (1, 2, 3)
# aqmlab's name for each ns-3 queue disc.
AQMLAB_NAME = {
    "fifo": "droptail",
    "red": "red",
    "pie": "pie",
    "codel": "codel",
    "fq_codel": "fq_codel",
    "cobalt": "cobalt",
    "fq_cobalt": "fq_cobalt",
}

# (column title, extractor, format, relative gap is meaningful)
METRICS = (
    ("mean queue (pkts)", lambda s: _link(s)["mean_queue_pkts"], "{:.1f}"),
    ("mean delay (ms)", lambda s: _link(s)["queue_delay_ms"]["mean"], "{:.1f}"),
    ("p99 delay (ms)", lambda s: _link(s)["queue_delay_ms"]["p99"], "{:.1f}"),
    ("utilization", lambda s: _link(s)["utilization"], "{:.3f}"),
    ("loss (%)", lambda s: 100.0 * _loss(_link(s)), "{:.2f}"),
    ("Jain", lambda s: s["fairness"]["jain"], "{:.3f}"),
    # Sum of goodputs / C: below utilization x (S-40)/S when capacity is spent on retransmissions.
    ("goodput/C", lambda s: sum(f["goodput_bps"] for f in s["flows"]) / RATE_BPS, "{:.3f}"),
    (
        "RTOs/flow",
        lambda s: statistics.fmean(f.get("timeouts", math.nan) for f in s["flows"]),
        "{:.1f}",
    ),
)
# ECN table: per run, counted after the warm-up.
ECN_METRICS = (
    ("mean queue (pkts)", lambda s: _link(s)["mean_queue_pkts"], "{:.1f}"),
    ("mean delay (ms)", lambda s: _link(s)["queue_delay_ms"]["mean"], "{:.1f}"),
    ("p99 delay (ms)", lambda s: _link(s)["queue_delay_ms"]["p99"], "{:.1f}"),
    ("utilization", lambda s: _link(s)["utilization"], "{:.3f}"),
    ("marks/s", lambda s: _link(s)["marks"] / _measured_s(s), "{:.1f}"),
    ("loss (%)", lambda s: 100.0 * _loss(_link(s)), "{:.2f}"),
    (
        "retx/flow",
        lambda s: statistics.fmean(f.get("retransmits", math.nan) for f in s["flows"]),
        "{:.1f}",
    ),
    ("Jain", lambda s: s["fairness"]["jain"], "{:.3f}"),
)
GAP = 0.20
RATE_BPS = 10e6  # set from --rate in main()
NS3_VERSION = "?"  # from the runs' "simulator" key


def _rate_bps(text: str) -> float:
    units = {"gbps": 1e9, "mbps": 1e6, "kbps": 1e3, "bps": 1.0}
    t = text.strip().lower()
    for u, m in units.items():
        if t.endswith(u):
            return float(t[: -len(u)]) * m
    return float(t)


def _link(summary: dict) -> dict:
    links = summary["links"]
    return links["bottleneck"] if "bottleneck" in links else next(iter(links.values()))


def _measured_s(summary: dict) -> float:
    return float(summary["sim_seconds"]) - float(summary["warmup_s"])


def _loss(link: dict) -> float:
    arrivals = link.get("arrivals")
    if arrivals is None:  # older summaries: arrivals = enqueued + drops before enqueue
        arrivals = link["enqueued"] + link["drops"]
    return link["drops"] / arrivals if arrivals else 0.0


def common_args(a: argparse.Namespace, aqm: str, flows: int, seed: int, delack: bool) -> list[str]:
    args = [
        "--flows", str(flows), "--rate", a.rate, "--rtt", a.rtt, "--buffer", str(a.buffer),
        "--aqm", aqm, "--pkt-size", "1000",
        "--duration", a.duration, "--warmup", a.warmup, "--seed", str(seed),
    ]  # fmt: skip
    if a.ecn:
        args.append("--ecn")
    if delack:
        args.append("--delack")
    if a.sack:
        args.append("--sack")
    return args


def run_ns3(a: argparse.Namespace, aqm: str, flows: int, seed: int, delack: bool) -> dict:
    cmd = ["nice", "-n", "10", str(a.ns3_bin), *common_args(a, aqm, flows, seed, delack)]
    cmd += ["--cc", a.ns3_cc, "--json"]
    if a.ecn:
        cmd.append("--tcp-stats")  # per-flow retransmitted segments
    cmd += a.ns3_arg
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_aqmlab(a: argparse.Namespace, aqm: str, flows: int, seed: int, delack: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="aqmlab-cmp-") as tmp:
        out = Path(tmp) / "run"
        cmd = [
            "nice", "-n", "10", str(a.aqmlab), "dumbbell",
            *common_args(a, AQMLAB_NAME[aqm], flows, seed, delack), "--cc", a.aqmlab_cc,
            "--profile", "classic",
            "--out", str(out), "--no-plots", "--quiet",
        ]  # fmt: skip
        if a.ecn:
            # Explicit, as in ns-3 (UseEcn on the queue disc); with --ecn the scenario's default
            # would make the AQM mark anyway.
            cmd += ["--aqm-param", "ecn=true"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise RuntimeError(f"exit {proc.returncode}: {tail[0]}")
        return json.loads((out / "summary.json").read_text())


def aqmlab_available(a: argparse.Namespace) -> tuple[bool, str]:
    if not Path(a.aqmlab).exists():
        return False, f"{a.aqmlab} not found (run `make build`)"
    proc = subprocess.run([str(a.aqmlab), "dumbbell", "--help"], capture_output=True, text=True)
    if proc.returncode != 0:
        return False, "`aqmlab dumbbell --help` failed"
    return True, ""


def tree_rev() -> str:
    proc = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    return proc.stdout.strip() or "unknown"


def mean_sd(values: list[float]) -> tuple[float, float]:
    if not values:
        return math.nan, math.nan
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def cell(values: list[float] | None, fmt: str) -> str:
    if values is None:
        return "pending"
    if not values:
        return "failed"
    m, sd = mean_sd(values)
    return fmt.format(m) + (f" ±{fmt.format(sd)}" if len(values) > 1 else "")


def dump_name(side: str, aqm: str, flows: int, delack: bool, seed: int, ecn: bool) -> str:
    if ecn:
        return f"{side}-ecn-{aqm}-{flows}-{'delack' if delack else 'nodelack'}-{seed}.json"
    return f"{side}-{aqm}-{flows}-{seed}.json"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--ns3-only", action="store_true", help="run ns-3 only; aqmlab columns pending")
    p.add_argument(
        "--ecn",
        action="store_true",
        help="ECN scenarios (RED, PIE, CoDel marking; delayed ACKs off and on)",
    )
    p.add_argument(
        "--fq", action="store_true", help="FQ-CoDel scenarios (10 and 100 flows, ns-3 linuxreno)"
    )
    p.add_argument(
        "--cobalt", action="store_true", help="COBALT and FQ-COBALT (as --fq, ns-3's defaults)"
    )
    p.add_argument("--seeds", type=int, nargs="+", help="default 1-5 (--ecn: 1-3)")
    p.add_argument("--buffer", type=int, default=200, help="bottleneck buffer, packets")
    p.add_argument("--rate", default="10Mbps")
    p.add_argument("--rtt", default="100ms")
    p.add_argument("--duration", default="60s")
    p.add_argument("--warmup", default="10s")
    p.add_argument(
        "--aqms",
        nargs="+",
        choices=AQMS,
        help="default: fifo red pie codel (--ecn: red pie codel; --fq: fq_codel)",
    )
    p.add_argument("--flows", type=int, nargs="+", default=list(FLOWS))
    p.add_argument(
        "--delack", choices=("off", "on", "both"), help="delayed ACKs (default: off; --ecn: both)"
    )
    p.add_argument(
        "--ns3-cc", help="ns-3 congestion control (default newreno; --ecn, --fq: linuxreno)"
    )
    p.add_argument(
        "--aqmlab-cc", default="newreno", help="aqmlab congestion control (default newreno)"
    )
    p.add_argument("--sack", action="store_true", help="SACK on in both (ns-3's TcpBbr needs it)")
    p.add_argument("--ns3-bin", default=str(NS3_BIN))
    p.add_argument("--aqmlab", default=str(AQMLAB))
    p.add_argument("--out", default=str(RESULTS))
    p.add_argument("--dump", help="also save every run's summary JSON in this directory")
    p.add_argument("--before", help="--ecn: directory of an earlier --dump whose aqmlab runs "
                   "fill a 'before' column")  # fmt: skip
    p.add_argument("--before-tree", default="?", help="--ecn: name of the tree of --before")
    p.add_argument(
        "--ns3-arg",
        action="append",
        default=[],
        help="extra ns3-dumbbell option, e.g. --ns3-arg=--rto-restart (repeatable)",
    )
    a = p.parse_args()
    if a.ecn + a.fq + a.cobalt > 1:
        p.error("--ecn, --fq and --cobalt are separate tables; give one")
    a.seeds = a.seeds or list(ECN_SEEDS if a.ecn else (1, 2, 3, 4, 5))
    a.aqms = a.aqms or list(
        ECN_AQMS if a.ecn else ("fq_codel",) if a.fq else COBALT_AQMS if a.cobalt else PLAIN_AQMS
    )
    a.delack = a.delack or ("both" if a.ecn else "off")
    a.ns3_cc = a.ns3_cc or ("linuxreno" if a.ecn or a.fq or a.cobalt else "newreno")
    delacks = {"off": [False], "on": [True], "both": [False, True]}[a.delack]
    global RATE_BPS
    RATE_BPS = _rate_bps(a.rate)
    dump = Path(a.dump) if a.dump else None
    if dump:
        dump.mkdir(parents=True, exist_ok=True)
    before = Path(a.before) if a.before else None
    metrics = ECN_METRICS if a.ecn else METRICS

    if not Path(a.ns3_bin).exists():
        print(f"error: {a.ns3_bin} not built; run `make ns3` first", file=sys.stderr)
        return 2
    use_aqmlab = not a.ns3_only
    why_pending = "--ns3-only"
    if use_aqmlab:
        ok, why = aqmlab_available(a)
        if not ok:
            print(f"aqmlab side unavailable: {why}; filling ns-3 columns only", file=sys.stderr)
            use_aqmlab, why_pending = False, why

    # (aqm, flows, delack, {metric: (ns3 values, aqmlab values|None, before values|None)},
    #  errors, ns-3 wall)
    rows = []
    for aqm in a.aqms:
        for flows in a.flows:
            for delack in delacks:
                ns3_runs, aq_runs, old_runs, errors = [], [], [], []
                for seed in a.seeds:
                    t0 = time.time()
                    ns3_runs.append(run_ns3(a, aqm, flows, seed, delack))
                    if dump:
                        name = dump_name("ns3", aqm, flows, delack, seed, a.ecn)
                        (dump / name).write_text(json.dumps(ns3_runs[-1]))
                    msg = f"{aqm:6s} {flows:4d} flows{' delack' if delack else ''} seed {seed}: "
                    msg += f"ns-3 {time.time() - t0:5.1f}s"
                    if use_aqmlab:
                        t0 = time.time()
                        try:
                            aq_runs.append(run_aqmlab(a, aqm, flows, seed, delack))
                            if dump:
                                name = dump_name("aqmlab", aqm, flows, delack, seed, a.ecn)
                                (dump / name).write_text(json.dumps(aq_runs[-1]))
                            msg += f", aqmlab {time.time() - t0:5.1f}s"
                        except (RuntimeError, OSError, ValueError, KeyError) as e:
                            errors.append(f"seed {seed}: {e}")
                            msg += f", aqmlab FAILED ({e})"
                    if before:
                        f = before / dump_name("aqmlab", aqm, flows, delack, seed, a.ecn)
                        if f.exists():
                            old_runs.append(json.loads(f.read_text()))
                        else:
                            errors.append(f"seed {seed}: no 'before' run {f.name}")
                    print(msg, flush=True)
                vals = {}
                for title, get, _fmt in metrics:
                    ns = [get(s) for s in ns3_runs]
                    aq = [get(s) for s in aq_runs] if use_aqmlab else None
                    old = [get(s) for s in old_runs] if before else None
                    vals[title] = (ns, aq, old)
                wall = statistics.fmean(s["wall_seconds"] for s in ns3_runs)
                rows.append((aqm, flows, delack, vals, errors, wall))
                global NS3_VERSION
                NS3_VERSION = ns3_runs[0].get("simulator", "ns-3").replace("ns-3 ", "")

    cmdline = (
        "`validation/ns3/compare.py"
        + (" --ecn" if a.ecn else "")
        + (" --fq" if a.fq else "")
        + (" --cobalt" if a.cobalt else "")
        + (" --ns3-only" if a.ns3_only else "")
        + (" --before DIR" if before else "")
        + "".join(f" --ns3-arg={x}" for x in a.ns3_arg)
        + "`"
    )
    if a.ecn:
        lines = render_ecn(a, rows, use_aqmlab, why_pending, before is not None, cmdline)
    else:
        lines = render_plain(a, rows, use_aqmlab, why_pending, cmdline)

    out = Path(a.out)
    old = out.read_text() if out.exists() else ""
    notes = old[old.index(NOTES_MARK) :] if NOTES_MARK in old else ""
    if not notes:
        notes = NOTES_MARK + "\n\n## Notes\n\n(Hand-written explanations of the gaps go here.)\n"
    # Layout: plain table, ECN_MARK, ECN table, FQ_MARK, FQ table, NOTES_MARK, notes; each mode
    # replaces its part and keeps the rest.
    body = old[: old.index(NOTES_MARK)] if NOTES_MARK in old else old
    cobalt = body[body.index(COBALT_MARK) :] if COBALT_MARK in body else ""
    body = body[: body.index(COBALT_MARK)] if COBALT_MARK in body else body
    fq = body[body.index(FQ_MARK) :] if FQ_MARK in body else ""
    body = body[: body.index(FQ_MARK)] if FQ_MARK in body else body
    plain, ecn = body, ""
    if ECN_MARK in body:
        plain, ecn = body[: body.index(ECN_MARK)], body[body.index(ECN_MARK) :]
    text = "\n".join(lines) + "\n"
    if a.ecn:
        ecn = ECN_MARK + "\n\n" + text
    elif a.fq:
        fq = FQ_MARK + "\n\n" + text
    elif a.cobalt:
        cobalt = COBALT_MARK + "\n\n" + text
    else:
        plain = text
    out.write_text(plain + ecn + fq + cobalt + notes)
    print(f"wrote {os.path.relpath(out)}")
    return 0


def gap_of(ns: list[float], aq: list[float]) -> float:
    m_ns, m_aq = mean_sd(ns)[0], mean_sd(aq)[0]
    ref = max(abs(m_ns), abs(m_aq))
    return abs(m_aq - m_ns) / ref if ref > 0 else 0.0


def render_plain(a, rows, use_aqmlab, why_pending, cmdline) -> list[str]:
    title = (
        "## FQ-CoDel scenarios"
        if a.fq
        else "## COBALT and FQ-COBALT scenarios"
        if a.cobalt
        else "# ns-3 vs aqmlab: dumbbell cross-check"
    )
    lines = [
        title,
        "",
        f"Generated by {cmdline}; do not edit above the notes marker. ns-3 "
        + NS3_VERSION
        + (f", aqmlab tree {tree_rev()}" if use_aqmlab else "")
        + ".",
        "",
        f"Scenario: {a.rate} bottleneck, two-way propagation delay {a.rtt}, buffer {a.buffer} "
        f"packets, 1000-byte packets (MSS 960), long-lived TCP NewReno flows starting uniformly "
        f"in [0, 1 s] (ns-3: {a.ns3_cc}), no ECN, no delayed ACKs, {a.duration} simulated, "
        f"first {a.warmup} excluded. Values are the mean over seeds {', '.join(map(str, a.seeds))}"
        + (" ± the standard deviation across seeds." if len(a.seeds) > 1 else "."),
        "Queue and delay are those of the bottleneck queue (disc): mean of 10 ms samples, "
        "per-packet sojourn time. Loss = drops / arrivals at the bottleneck queue. goodput/C = "
        "sum of the flows' goodputs (payload bytes delivered to the receiver) / C; it is at most "
        "utilization x 960/1000, less when capacity goes to retransmitted segments. RTOs/flow = "
        "retransmission timeouts per flow after the warm-up (ns-3: entries into CA_LOSS).",
        "",
    ]
    if a.fq:
        lines[-1:-1] = [
            "FQ-CoDel: aqmlab `--aqm fq_codel` (Linux sch_fq_codel defaults: 1024 flows, quantum "
            "1500 B, drop batch 64, target 5 ms, interval 100 ms, ECN on, limit = the buffer); "
            "ns-3 `FqCoDelQueueDisc` with the same values and a hash perturbation derived from "
            "the seed. The queue is the whole qdisc's (all flow queues); Jain is over the flows' "
            "goodputs."
        ]
    if a.cobalt:
        lines[-1:-1] = [
            "COBALT: aqmlab `--aqm cobalt` and `--aqm fq_cobalt` with their defaults, which are "
            "ns-3's (target 5 ms, interval 100 ms, p_inc 1/256, p_dec 1/4096, blue_threshold "
            "400 ms; ECN off for cobalt, on for fq_cobalt; fq_cobalt: 1024 flows, quantum 1500 B, "
            "drop batch 64); the limit is the buffer. ns-3 `CobaltQueueDisc` and "
            "`FqCobaltQueueDisc` with the same values (and a hash perturbation derived from the "
            "seed). The queue is the whole qdisc's."
        ]
    if not use_aqmlab:
        lines += [f"aqmlab columns: pending ({why_pending}).", ""]
    head = "| AQM | flows |"
    sep = "|---|---:|"
    for title, _get, _fmt in METRICS:
        head += f" {title} ns-3 | aqmlab |"
        sep += "---:|---:|"
    lines += [head, sep]
    gaps = []
    for aqm, flows, _delack, vals, errors, _wall in rows:
        line = f"| {aqm} | {flows} |"
        for title, _get, fmt in METRICS:
            ns, aq, _old = vals[title]
            ns_cell, aq_cell = cell(ns, fmt), cell(aq, fmt)
            if aq:
                rel = gap_of(ns, aq)
                if rel > GAP:
                    aq_cell = f"**{aq_cell}**"
                    gaps.append(
                        f"- {aqm}, {flows} flows, {title}: ns-3 {fmt.format(mean_sd(ns)[0])}, "
                        f"aqmlab {fmt.format(mean_sd(aq)[0])} ({100 * rel:.0f}% of the larger)"
                    )
            line += f" {ns_cell} | {aq_cell} |"
        lines.append(line)
        for e in errors:
            gaps.append(f"- {aqm}, {flows} flows: aqmlab run failed: {e}")
    lines += [
        "",
        "ns-3 wall seconds per run (Simulator::Run only): "
        + ", ".join(f"{aqm}/{flows}: {wall:.2f}" for aqm, flows, _d, _v, _e, wall in rows),
        "",
    ]
    if use_aqmlab:
        level = "###" if a.fq or a.cobalt else "##"
        lines += [f"{level} Gaps larger than {int(GAP * 100)}% (bold above)", ""]
        lines += gaps or ["None."]
        lines.append("")
    return lines


def render_ecn(a, rows, use_aqmlab, why_pending, has_before, cmdline) -> list[str]:
    cols = "ns-3 / aqmlab before / aqmlab after" if has_before else "ns-3 / aqmlab"
    lines = [
        "## ECN scenarios",
        "",
        f"Generated by {cmdline}; ns-3 {NS3_VERSION}"
        + (f", aqmlab tree {tree_rev()}" if use_aqmlab else "")
        + (f" (before: tree {a.before_tree})" if has_before else "")
        + ".",
        "",
        f"Same dumbbell ({a.rate}, {a.rtt}, buffer {a.buffer} packets, 1000-byte packets, "
        f"{a.duration} simulated, first {a.warmup} excluded), every sender ECN-capable and the "
        f"AQM marking instead of dropping (aqmlab `--ecn --aqm-param ecn=true`, ns-3 `--ecn`: "
        f"UseEcn on TcpSocketBase and on the queue disc). aqmlab NewReno, ns-3 {a.ns3_cc} with "
        f"classic recovery. Delayed ACKs: off = an ACK per segment, on = every second segment "
        f"(aqmlab 40 ms timer, ns-3 200 ms). Mean over seeds {', '.join(map(str, a.seeds))}.",
        f"Each cell: {cols}. marks/s = CE marks per second at the bottleneck; loss = drops / "
        "arrivals (RED still drops above 2 max_th, PIE above 10% probability); retx/flow = "
        "retransmitted segments per flow. Bold: the last aqmlab value differs from ns-3 by more "
        f"than {int(GAP * 100)}% of the larger.",
        "",
    ]
    if not use_aqmlab:
        lines += [f"aqmlab columns: pending ({why_pending}).", ""]
    head = "| AQM | flows | delack |"
    sep = "|---|---:|---|"
    for title, _get, _fmt in ECN_METRICS:
        head += f" {title} |"
        sep += "---:|"
    lines += [head, sep]
    errs = []
    for aqm, flows, delack, vals, errors, _wall in rows:
        line = f"| {aqm} | {flows} | {'on' if delack else 'off'} |"
        for title, _get, fmt in ECN_METRICS:
            ns, aq, old = vals[title]
            parts = [fmt.format(mean_sd(ns)[0])]
            if has_before:
                parts.append(fmt.format(mean_sd(old)[0]) if old else "-")
            if use_aqmlab:
                last = fmt.format(mean_sd(aq)[0]) if aq else "failed"
                if aq and gap_of(ns, aq) > GAP:
                    last = f"**{last}**"
                parts.append(last)
            line += " " + " / ".join(parts) + " |"
        lines.append(line)
        errs += [f"- {aqm}, {flows} flows, delack {delack}: {e}" for e in errors]
    lines.append("")
    if errs:
        lines += ["Failed or missing runs:", "", *errs, ""]
    return lines


if __name__ == "__main__":
    sys.exit(main())
