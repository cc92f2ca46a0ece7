"""The simulator's ``linux`` TCP profile against real Linux TCP, over a grid of dumbbells.

Each dumbbell is simulated (aqmlab's TCP, ``profile = "linux"``: SACK, RACK-TLP, PRR,
timestamps, Linux's delayed ACK, initial window 10, CUBIC with HyStart; BBR as tcp_bbr.c) and
emulated (the kernel's TCP, default settings plus the pins of docs/emulate.md, through the
emulator's bottleneck running the same AQM code). The grid:

* congestion control: ``reno``, ``cubic``, ``bbr``, and ``cubic+bbr`` (half the flows each;
  not with 1 flow);
* AQM: drop-tail, CoDel, PIE, FQ-CoDel, DualPI2 (the classic queue: these senders set ECT(0)),
  each marking AQM with and without ECN;
* 1, 4 and 20 flows; 10 and 50 Mb/s; 20 and 100 ms base RTT; buffer 2 BDP (at least 50
  packets); 1500-byte packets;
* 20 s runs with 6 s of warm-up at 100 ms, 12 s with 4 s at 20 ms.

Bars, on the mean over the seeds of each row: utilisation within 2 points, mean queue delay
within 20 %, Jain's index within 0.1, the CUBIC group's share of the goodput (``cubic+bbr``)
within 0.1, retransmission rate (retransmitted segments per data packet arriving at the
bottleneck) within 30 %.

Needs root. Usage::

    sudo .venv/bin/python validation/emu/grid.py --seed 1 [--jobs 2] [--only PATTERN]
    .venv/bin/python validation/emu/grid.py --summarise grid-seed1.jsonl grid-seed2.jsonl ...

Each run appends one JSON line to ``validation/emu/grid-seedN.jsonl`` (``--out``); rows
already there are skipped, so an interrupted grid resumes where it stopped. ``--summarise``
prints the Markdown table of the means and the bars; ``--resim F ...`` simulates the stored
runs again (after a simulator change) and keeps their emulated side.
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent

CCS = ["reno", "cubic", "bbr", "cubic+bbr"]
AQMS = [("droptail", False)] + [
    (a, e) for a in ("codel", "pie", "fq_codel", "dualpi2") for e in (False, True)
]
FLOWS = [1, 4, 20]
RATES = [10, 50]
RTTS = [20, 100]

#: Bars: (measure, kind, tolerance); kind "abs" compares differences, "rel" relative ones.
BARS = [
    ("util", "abs", 0.02),
    ("delay_ms", "rel", 0.20),
    ("jain", "abs", 0.10),
    ("cubic_share", "abs", 0.10),
    ("retx_rate", "rel", 0.30),
]


def rows() -> list[dict]:
    """The grid, in a fixed order; each row has a stable ``name``."""
    out = []
    for rate, rtt, flows, (aqm, ecn), cc in itertools.product(RATES, RTTS, FLOWS, AQMS, CCS):
        if cc == "cubic+bbr" and flows < 2:
            continue
        name = f"{aqm}{'-ecn' if ecn else ''}-{rate}M-{rtt}ms-{flows}x{cc}"
        out.append(
            {
                "name": name,
                "aqm": aqm,
                "ecn": ecn,
                "rate": rate,
                "rtt": rtt,
                "flows": flows,
                "cc": cc,
            }
        )
    return out


def scenario_dict(
    row: dict, seed: int, sim: bool, window: tuple[float, float] | None = None
) -> dict:
    """The scenario of ``row`` (the simulator's with ``sim``); ``window``: ``(duration,
    warmup)`` in seconds instead of the grid's."""
    ccs = row["cc"].split("+")
    n = row["flows"]
    groups = [
        {"count": n // len(ccs) + (i < n % len(ccs)), "cc": c, "ecn": row["ecn"]}
        for i, c in enumerate(ccs)
    ]
    if sim:
        for g in groups:
            g["profile"] = "linux"
    bdp = row["rate"] * 1e6 * row["rtt"] / 1e3 / (8 * 1500)
    long = row["rtt"] >= 100
    duration, warmup = window or ((20.0, 6.0) if long else (12.0, 4.0))
    return {
        "name": row["name"],
        "seed": seed,
        "duration": duration,
        "warmup": warmup,
        "dumbbell": {
            "rate": row["rate"] * 1e6,
            "rtt": row["rtt"] / 1e3,
            "buffer": max(50, round(2 * bdp)),
            "pkt_size": 1500,
        },
        "aqm": {"type": row["aqm"]},
        "flows": groups,
    }


def measures(summary: dict) -> dict:
    link = summary["links"]["bottleneck"]
    gp: dict[int, float] = {}
    for f in summary["flows"]:
        gp[f["group"]] = gp.get(f["group"], 0.0) + f["goodput_bps"]
    total = sum(gp.values())
    retx = sum(f.get("retransmits") or 0 for f in summary["flows"])
    return {
        "util": link["utilization"],
        "delay_ms": link["queue_delay_ms"]["mean"],
        "p99_ms": link["queue_delay_ms"]["p99"],
        "drops": link["drops"],
        "marks": link["marks"],
        "arrivals": link["arrivals"],
        "jain": summary["fairness"]["jain"],
        "retransmits": retx,
        "retx_rate": retx / max(link["arrivals"], 1),
        "cubic_share": gp.get(0, 0.0) / total if len(gp) > 1 and total > 0 else None,
    }


def run_one(row: dict, seed: int, window: tuple[float, float] | None = None) -> dict:
    from aqmlab.emu import emulate
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    t0 = time.time()
    s = measures(simulate(Scenario(scenario_dict(row, seed, True, window))).summary)
    e_sum = emulate(Scenario(scenario_dict(row, seed, False, window))).summary
    e = measures(e_sum)
    return {
        "row": row["name"],
        "seed": seed,
        "sim": s,
        "emu": e,
        "emu_timing": e_sum["emulation"]["timing"]["forward"],
        "wall_s": round(time.time() - t0, 1),
    }


def append_runs(job, todo: list, out: Path, jobs: int) -> None:
    """Runs ``job`` (a module-level function returning a run: row, seed, both sides'
    measures) on each item of ``todo`` in ``jobs`` processes, appending each run to ``out``
    as one JSON line as it comes, with a progress line."""
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=jobs) as ex, out.open("a") as f:
        for i, r in enumerate(ex.map(job, todo), 1):
            f.write(json.dumps(r) + "\n")
            f.flush()
            s, e = r["sim"], r["emu"]
            left = (time.time() - t0) / i * (len(todo) - i) / 60
            print(f"[{i}/{len(todo)}] {r['row']} seed {r['seed']}: util {100 * s['util']:.1f} / "
                  f"{100 * e['util']:.1f} %, delay {s['delay_ms']:.2f} / {e['delay_ms']:.2f} ms, "
                  f"Jain {s['jain']:.2f} / {e['jain']:.2f} ({left:.0f} min left)", flush=True)  # fmt: skip


def resim(files: list[str], window: tuple[float, float] | None = None) -> None:
    """Simulate again every run stored in ``files`` and rewrite their ``sim`` figures (the
    emulated side is kept): after a change to the simulator, the grid costs seconds, not hours.
    ``window``: the runs' ``(duration, warmup)`` if not the grid's."""
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    by_name = {r["name"]: r for r in rows()}
    for f in files:
        p = Path(f)
        out = []
        for line in p.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            sc = Scenario(scenario_dict(by_name[r["row"]], r["seed"], True, window))
            r["sim"] = measures(simulate(sc).summary)
            out.append(json.dumps(r))
        tmp = p.with_suffix(".tmp")
        tmp.write_text("\n".join(out) + "\n")
        tmp.replace(p)
        print(f"{p.name}: {len(out)} runs simulated again", flush=True)


def _load(files: list[str]) -> dict[tuple[str, int], dict]:
    latest: dict[tuple[str, int], dict] = {}
    for f in files:
        p = Path(f)
        if not p.exists():
            continue
        for line in p.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                latest[(r["row"], r["seed"])] = r
    return latest


def stored_runs() -> dict[tuple[str, int], dict]:
    """The grid's stored runs beside this script (``grid-seed*.jsonl``), by (row, seed)."""
    return _load(sorted(str(p) for p in HERE.glob("grid-seed*.jsonl")))


def stored_by_row() -> dict[str, list[dict]]:
    """The grid's stored runs (``grid-seed*.jsonl``) by row, in seed order."""
    out: dict[str, list[dict]] = {}
    for (name, _), r in sorted(stored_runs().items()):
        out.setdefault(name, []).append(r)
    return out


def runs_by_row(path: Path) -> dict[str, list[dict]]:
    """The runs of a one-change experiment's file (one JSON line each), by row, in the
    file's order."""
    out: dict[str, list[dict]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            out.setdefault(r["row"], []).append(r)
    return out


def _mean(rs: list[dict], side: str, key: str) -> float | None:
    xs = [r[side][key] for r in rs if r[side][key] is not None]
    return sum(xs) / len(xs) if xs else None


def _check(kind: str, tol: float, s: float | None, e: float | None) -> tuple[str, bool | None]:
    if s is None or e is None:
        return "", None
    if kind == "abs":
        d = e - s
        return f"{d:+.2f}", abs(d) <= tol + 1e-12
    if s == 0 and e == 0:
        return "0", True
    if s == 0:
        # no relative distance from 0: the other side's value instead
        return f"0 against {e:.3g}", False
    d = (e - s) / abs(s)
    return f"{100 * d:+.0f}%", abs(d) <= tol


def misses(rs: list[dict]) -> list[str]:
    """The bars the means of runs ``rs`` (one row, several seeds) miss, each with its
    distance."""
    out = []
    for key, kind, tol in BARS:
        label, ok = _check(kind, tol, _mean(rs, "sim", key), _mean(rs, "emu", key))
        if ok is False:
            out.append(f"{key} {label}")
    return out


def summarise(files: list[str]) -> None:
    """Print the table of means over the seeds and the count of rows within every bar."""
    runs: dict[str, list[dict]] = {}
    for (row, _), r in sorted(_load(files).items()):
        runs.setdefault(row, []).append(r)
    order = [r["name"] for r in rows()]
    print(
        "| scenario | seeds | util sim / emu [%] | delay sim / emu [ms] | Jain sim / emu |"
        " CUBIC share sim / emu | retx per 1000 sim / emu | misses |"
    )
    print("|---|---|---|---|---|---|---|---|")
    n_ok = n_rows = 0
    misses_by_bar: dict[str, int] = {b[0]: 0 for b in BARS}
    by_cc: dict[str, list[int]] = {}
    for name in order:
        rs = runs.get(name)
        if not rs:
            continue
        n_rows += 1
        m = {k: (_mean(rs, "sim", k), _mean(rs, "emu", k)) for k, _, _ in BARS}
        misses = []
        for key, kind, tol in BARS:
            label, ok = _check(kind, tol, *m[key])
            if ok is False:
                misses.append(f"{key} {label}")
                misses_by_bar[key] += 1
        n_ok += not misses
        cc_ok = by_cc.setdefault(name.rsplit("x", 1)[1], [0, 0])
        cc_ok[0] += not misses
        cc_ok[1] += 1

        def pair(key: str, scale: float = 1.0, fmt: str = ".1f", m: dict = m) -> str:
            s, e = m[key]
            if s is None or e is None:
                return "-"
            return f"{scale * s:{fmt}} / {scale * e:{fmt}}"

        print(
            f"| {name} | {len(rs)} | {pair('util', 100)} | {pair('delay_ms', 1, '.2f')} | "
            f"{pair('jain', 1, '.2f')} | {pair('cubic_share', 1, '.2f')} | "
            f"{pair('retx_rate', 1000, '.2f')} | {', '.join(misses) or 'none'} |"
        )
    print()
    print(f"rows within every bar: {n_ok} of {n_rows}")
    print("rows missing each bar: " + ", ".join(f"{k} {v}" for k, v in misses_by_bar.items()))
    print(
        "within every bar, by congestion control: "
        + ", ".join(f"{cc} {ok} of {n}" for cc, (ok, n) in by_cc.items())
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--jobs", type=int, default=1, help="emulations at once")
    ap.add_argument("--only", default="*", help="glob on the row names")
    ap.add_argument("--list", action="store_true", help="print the rows and exit")
    ap.add_argument("--summarise", nargs="+", default=None)
    ap.add_argument(
        "--resim", nargs="+", default=None, help="recompute the simulated side of these files"
    )
    a = ap.parse_args()
    if a.summarise:
        summarise(a.summarise)
        return 0
    if a.resim:
        resim(a.resim)
        return 0
    todo = [r for r in rows() if fnmatch.fnmatch(r["name"], a.only)]
    if a.list:
        for r in todo:
            print(r["name"])
        print(f"{len(todo)} rows", file=sys.stderr)
        return 0
    out = Path(a.out or HERE / f"grid-seed{a.seed}.jsonl")
    done = {row for row, seed in _load([str(out)]) if seed == a.seed}
    todo = [r for r in todo if r["name"] not in done]
    print(f"{len(todo)} rows to run ({len(done)} already in {out.name})", flush=True)
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=a.jobs) as pool, out.open("a") as f:
        futures = {pool.submit(run_one, r, a.seed): r for r in todo}
        for i, fut in enumerate(futures, 1):
            r = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # one broken row must not lose the others
                print(f"[{i}/{len(todo)}] {r['name']}: FAILED {exc}", flush=True)
                continue
            f.write(json.dumps(res) + "\n")
            f.flush()
            s, e = res["sim"], res["emu"]
            eta = (time.time() - t0) / i * (len(todo) - i)
            print(
                f"[{i}/{len(todo)}] {r['name']}: util {100 * s['util']:.1f}/{100 * e['util']:.1f}"
                f" delay {s['delay_ms']:.2f}/{e['delay_ms']:.2f} ms  ({res['wall_s']} s,"
                f" {eta / 60:.0f} min left)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
