"""The simulator against real Linux TCP: the same dumbbells simulated (aqmlab's TCP) and
emulated (kernel TCP through the emulator's bottleneck running the same aqm code).

Each row: utilization and mean queueing delay of the bottleneck in both, with the checks of
the validation's bar (utilization within 5 points, mean queue delay within 30 %). The simulator runs with
the TCP options closest to Linux's: SACK loss recovery, delayed ACKs (b = 2), initial window
10, minimum RTO 200 ms, 1500-byte packets. The kernel settings pinned on the emulator's side are
listed in docs/emulate.md and recorded in every result (``emulation.sysctls``).

Needs root. Usage: ``sudo .venv/bin/python validation/emu/compare.py [--rows 0,3] [--seed N]
[--out F]``; prints a Markdown table and writes the raw figures as JSON (default
``validation/emu/compare-seedN.json``). ``--summarise F1 F2 ...`` prints the table of the means
over several such files (runs with different seeds: start times, AQM randomness).
``--sysctl KEY=VALUE`` (repeatable) sets a kernel setting in the emulator's senders' namespace
(e.g. ``net.ipv4.tcp_recovery=0``: RACK off), and ``--prr`` gives the simulated flows RFC 6937's
proportional rate reduction; both are recorded in the JSON (``emu_sysctls``, ``sim_prr``). Such
runs answer a question about one row; keep them out of ``--summarise``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from aqmlab.emu import emulate
from aqmlab.scenario import Scenario
from aqmlab.sim import simulate

#: (aqm, ecn, rate Mb/s, rtt ms, flows, cc, buffer packets)
ROWS = [
    ("droptail", False, 10, 40, 10, "cubic", 100),
    ("droptail", False, 10, 40, 10, "reno", 100),
    ("codel", False, 10, 40, 10, "cubic", 100),
    ("codel", True, 10, 40, 10, "cubic", 100),
    ("pie", False, 20, 60, 10, "cubic", 200),
    ("pie", True, 20, 60, 10, "reno", 200),
    ("fq_codel", False, 20, 20, 5, "cubic", 200),
    ("fq_codel", True, 50, 100, 20, "cubic", 600),
    ("droptail", False, 50, 100, 50, "reno", 400),
    ("codel", False, 50, 20, 2, "reno", 200),
    # The grid's corners (rows 10-16): every AQM with CUBIC and Reno, with and without ECN
    # (ECN only where the AQM marks), and 2 / 50 flows, 10 / 50 Mb/s, 20 / 100 ms each under
    # several AQMs.
    ("codel", True, 10, 100, 2, "reno", 200),
    ("pie", True, 50, 100, 50, "cubic", 600),
    ("fq_codel", False, 10, 20, 2, "reno", 100),
    ("fq_codel", True, 50, 20, 50, "reno", 400),
    ("pie", False, 10, 20, 2, "reno", 100),
    ("codel", False, 50, 100, 50, "cubic", 600),
    ("droptail", False, 10, 20, 2, "cubic", 50),
    # BBR (rows 17-21): the simulator's tcp_bbr.c port against the kernel's bbr, alone, several
    # flows, under AQMs, and half BBR / half CUBIC ("bbr+cubic": two groups; the BBR group's
    # share of the goodput is printed after the row).
    ("droptail", False, 10, 40, 1, "bbr", 100),
    ("droptail", False, 20, 40, 4, "bbr", 200),
    ("codel", False, 20, 40, 4, "bbr", 200),
    ("droptail", False, 20, 40, 2, "bbr+cubic", 500),
    ("codel", False, 20, 40, 2, "bbr+cubic", 500),
]
DURATION, WARMUP = 25.0, 7.0


def scenario(row, sim: bool, seed: int = 1, prr: bool = False) -> Scenario:
    aqm, ecn, rate, rtt, flows, cc, buf = row
    ccs = cc.split("+")
    groups = [
        {"count": flows // len(ccs) + (i < flows % len(ccs)), "cc": c, "ecn": ecn}
        for i, c in enumerate(ccs)
    ]
    for group in groups:
        if sim:
            # classic: the figures in RESULTS.md were measured with it (prr only with --prr)
            group.update(
                {
                    "profile": "classic",
                    "sack": True,
                    "delack": True,
                    "init_cwnd": 10,
                    "min_rto": 0.2,
                }
            )
            if prr:
                group["prr"] = True
    return Scenario(
        {
            "name": f"{aqm}{'-ecn' if ecn else ''}-{rate}M-{rtt}ms-{flows}x{cc}",
            "seed": seed,
            "duration": DURATION,
            "warmup": WARMUP,
            "dumbbell": {"rate": rate * 1e6, "rtt": rtt / 1e3, "buffer": buf, "pkt_size": 1500},
            "aqm": {"type": aqm},
            "flows": groups,
        }
    )


def measures(summary: dict) -> dict:
    link = summary["links"]["bottleneck"]
    return {
        "util": link["utilization"],
        "delay_ms": link["queue_delay_ms"]["mean"],
        "p99_ms": link["queue_delay_ms"]["p99"],
        "drops": link["drops"],
        "marks": link["marks"],
        "arrivals": link["arrivals"],
        "jain": summary["fairness"]["jain"],
        "retransmits": sum(f.get("retransmits") or 0 for f in summary["flows"]),
        "first_group_share": _share(summary),
    }


def _share(summary: dict) -> float | None:
    """The first group's share of the goodput (rows with two groups), else None."""
    gp = [0.0] * (1 + max(f["group"] for f in summary["flows"]))
    for f in summary["flows"]:
        gp[f["group"]] += f["goodput_bps"]
    return gp[0] / sum(gp) if len(gp) > 1 and sum(gp) > 0 else None


def _mean(rs: list[dict], side: str, key: str) -> float:
    return sum(r[side][key] for r in rs) / len(rs)


def summarise(files: list[str]) -> None:
    """The table of means (and ranges) over the runs in ``files``; a later file's run of the
    same row and seed replaces an earlier one (reruns after a settings change)."""
    latest: dict[tuple[int, int], dict] = {}
    for f in files:
        for r in json.loads(Path(f).read_text()):
            latest[(r["row"], r["seed"])] = r
    runs: dict[int, list[dict]] = {}
    for (row, _), r in sorted(latest.items()):
        runs.setdefault(row, []).append(r)
    print(
        "| # | scenario | runs | util sim / emu [%] | Δ [pt] | mean delay sim / emu [ms]"
        " (emu range) | Δ [%] | checks |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for i in sorted(runs):
        rs = runs[i]
        su, eu = _mean(rs, "sim", "util"), _mean(rs, "emu", "util")
        sd, ed = _mean(rs, "sim", "delay_ms"), _mean(rs, "emu", "delay_ms")
        lo = min(r["emu"]["delay_ms"] for r in rs)
        hi = max(r["emu"]["delay_ms"] for r in rs)
        du, dd = 100 * (eu - su), 100 * (ed - sd) / max(sd, 1e-9)
        print(
            f"| {i} | {rs[0]['scenario']} | {len(rs)} | {100 * su:.1f} / {100 * eu:.1f} | "
            f"{du:+.1f} | {sd:.1f} / {ed:.1f} ({lo:.1f}-{hi:.1f}) | {dd:+.0f} | "
            f"util {'ok' if abs(du) <= 5 else 'GAP'}, delay {'ok' if abs(dd) <= 30 else 'GAP'} |"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default=",".join(str(i) for i in range(len(ROWS))))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--summarise", nargs="+", default=None)
    ap.add_argument("--sysctl", action="append", default=[])
    ap.add_argument("--prr", action="store_true")
    a = ap.parse_args()
    sysctls = dict(kv.split("=", 1) for kv in a.sysctl)
    if a.summarise:
        summarise(a.summarise)
        return 0
    out = a.out or str(Path(__file__).with_name(f"compare-seed{a.seed}.json"))
    results = []
    print(
        "| # | scenario | util sim / emu [%] | Δ [pt] | mean delay sim / emu [ms] | Δ [%] |"
        " drops+marks per 1000 pkts sim / emu | Jain sim / emu | release error p99 / max [µs] |"
        " checks |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i in (int(x) for x in a.rows.split(",")):
        row = ROWS[i]
        s = measures(simulate(scenario(row, True, a.seed, a.prr)).summary)
        e_sum = emulate(scenario(row, False, a.seed), sysctls=sysctls).summary
        e = measures(e_sum)
        du = 100 * (e["util"] - s["util"])
        dd = 100 * (e["delay_ms"] - s["delay_ms"]) / max(s["delay_ms"], 1e-9)
        ok_u = abs(du) <= 5
        ok_d = abs(dd) <= 30
        sig = lambda m: 1000 * (m["drops"] + m["marks"]) / max(m["arrivals"], 1)  # noqa: E731
        name = scenario(row, False, a.seed).name
        late = e_sum["emulation"]["timing"]["forward"]
        print(
            f"| {i} | {name} | {100 * s['util']:.1f} / {100 * e['util']:.1f} | {du:+.1f} | "
            f"{s['delay_ms']:.1f} / {e['delay_ms']:.1f} | {dd:+.0f} | "
            f"{sig(s):.1f} / {sig(e):.1f} | {s['jain']:.2f} / {e['jain']:.2f} | "
            f"{late['p99_us']:.0f} / {late['max_us']:.0f} | "
            f"util {'ok' if ok_u else 'GAP'}, delay {'ok' if ok_d else 'GAP'} |",
            flush=True,
        )
        if s["first_group_share"] is not None:
            print(
                f"  row {i}: {row[5].split('+')[0]} share of the goodput sim / emu: "
                f"{s['first_group_share']:.3f} / {e['first_group_share']:.3f}",
                flush=True,
            )
        results.append(
            {
                "row": i,
                "seed": a.seed,
                "scenario": name,
                "sim": s,
                "emu": e,
                "emu_timing": e_sum["emulation"]["timing"],
                "emu_traffic_realtime": e_sum["emulation"].get("traffic_realtime"),
                "emu_sysctls": sysctls,
                "sim_prr": a.prr,
            }
        )
    Path(out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
