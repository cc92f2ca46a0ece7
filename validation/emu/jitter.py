"""One-change experiment on the simulator's side: the emulated path's timing noise.

A packet through the emulator crosses the senders' and the receivers' kernels, two TUN
devices and the forwarder, each adding some tens of microseconds that vary from packet to
packet (the forwarder's own release error alone: a median of about 45 µs, RESULTS.md); the
simulator's packets arrive exactly when the model says. Most measures do not see this, but
BBR does: its bandwidth is the largest delivery-rate sample of the last ten round trips, and
the largest of noisy samples lies above the rate they measure. Through the emulator the
kernel's `bbr` estimates 9.67-9.77 Mb/s of payload on a 10 Mb/s bottleneck whose payload
capacity is 9.65 (`ss -tin` every 50 ms of seed 1 of `codel-10M-20ms-1xbbr`), so it paces
above the link and its queue grows between its probes; the simulator's BBR paces 1 % below
its exact estimate and its queue drains. Under CoDel that difference decides how often the
queue stays above the target for an interval: 42 drops in the window in the simulator on each
seed of that row, 123-127 in the kernel, with the same utilisation and mean delay.

The one change, on the simulator's side: both directions of the bottleneck get netem's delay
jitter, ``delay 100us 100us`` (uniform on [0, 200) µs, the order of the emulated path's
own, which ``--calibrate`` measures with an idle UDP ping on both sides). The rest of each row
as the grid has it; the kernel's side is the grid's stored runs::

    .venv/bin/python validation/emu/jitter.py                  # appends jitter.jsonl (minutes)
    .venv/bin/python validation/emu/jitter.py --summarise      # the table (jitter.md)
    .venv/bin/python validation/emu/jitter.py --dose codel-10M-20ms-1xbbr
    sudo .venv/bin/python validation/emu/jitter.py --calibrate

The run simulates every stored grid run (``grid-seed*.jsonl``) again with the jitter and
writes one JSON line per run (row, seed, the grid's measures of the simulated side).
``--summarise`` counts the rows within every bar with the simulator as the grid ran it and with
the jitter, by congestion control and by bar, and lists the rows whose verdict changes.
``--dose ROW`` prints that row's measures as the jitter grows. ``--calibrate`` sends a
100-byte UDP probe every 5 ms over the grid's 10 Mb/s, 20 ms dumbbell with nothing else
running, on both sides, and prints the round trips' percentiles.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402

#: The change: netem's delay jitter on the bottleneck and on the ACKs' path.
JITTER = "delay 100us 100us"


def scenario(row: dict, seed: int, jitter: str | None) -> dict:
    """The grid's simulated scenario of ``row``, with ``jitter`` on both directions."""
    d = grid.scenario_dict(row, seed, True)
    if jitter:
        d["dumbbell"]["netem"] = jitter
        d["dumbbell"]["reverse_netem"] = jitter
    return d


def _simulate(job: tuple[dict, int, str | None]) -> dict:
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    row, seed, jitter = job
    m = grid.measures(simulate(Scenario(scenario(row, seed, jitter))).summary)
    return {"row": row["name"], "seed": seed, "jitter": jitter, "sim": m}


def run(out: Path, jobs: int, jitter: str) -> None:
    """Simulates every stored grid run again with ``jitter``; writes ``out`` whole."""
    by_name = {r["name"]: r for r in grid.rows()}
    todo = [(by_name[n], s, jitter) for (n, s) in sorted(grid.stored_runs())]
    lines = []
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for i, r in enumerate(ex.map(_simulate, todo, chunksize=8), 1):
            lines.append(json.dumps(r))
            if i % 100 == 0 or i == len(todo):
                print(f"{i}/{len(todo)} runs simulated", flush=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(out)


def summarise(path: Path) -> None:
    """The rows within every bar with and without the jitter (kernel: the grid's runs)."""
    base = grid.stored_runs()
    jit: dict[tuple[str, int], dict] = {}
    jitter = JITTER
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            jitter = r["jitter"]
            jit[(r["row"], r["seed"])] = {**base[(r["row"], r["seed"])], "sim": r["sim"]}
    variants = {"as the grid ran": base, f"with `{jitter}`": jit}
    verdict: dict[str, dict[str, list[str]]] = {}
    print(f"Kernel: the grid's stored runs; simulator: as the grid ran it, and with `{jitter}` "
          "on both directions of the bottleneck.\n")  # fmt: skip
    print("| simulator | rows within every bar | reno | cubic | bbr | cubic+bbr |"
          " misses: util | delay | Jain | CUBIC share | retx |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, runs in variants.items():
        by_row: dict[str, list[dict]] = {}
        for (name, seed), r in runs.items():
            if (name, seed) in jit:
                by_row.setdefault(name, []).append(r)
        ok_cc: dict[str, list[int]] = {c: [0, 0] for c in grid.CCS}
        per_bar = {b[0]: 0 for b in grid.BARS}
        for name, rs in by_row.items():
            m = grid.misses(rs)
            verdict.setdefault(name, {})[label] = m
            cc = name.rsplit("x", 1)[1]
            ok_cc[cc][0] += not m
            ok_cc[cc][1] += 1
            for x in m:
                per_bar[x.split(" ")[0]] += 1
        n_ok = sum(v[0] for v in ok_cc.values())
        cells = " | ".join(f"{ok} of {n}" for ok, n in ok_cc.values())
        bars = " | ".join(str(v) for v in per_bar.values())
        print(f"| {label} | {n_ok} of {len(by_row)} | {cells} | {bars} |")
    a, b = variants
    came = [n for n, v in verdict.items() if v[a] and not v[b]]
    left = [n for n, v in verdict.items() if not v[a] and v[b]]
    print(f"\nWithin every bar only with the jitter ({len(came)}): "
          + ", ".join(f"`{n}` ({'; '.join(verdict[n][a])})" for n in came))  # fmt: skip
    print(f"\nWithin every bar only without it ({len(left)}): "
          + ", ".join(f"`{n}` ({'; '.join(verdict[n][b])})" for n in left))  # fmt: skip


def dose(name: str) -> None:
    """One row's means over the stored seeds as the jitter grows, beside the kernel's."""
    by_name = {r["name"]: r for r in grid.rows()}
    runs = {s: r for (n, s), r in grid.stored_runs().items() if n == name}
    if name not in by_name or not runs:
        print(f"error: row = {name!r}: not a stored grid row", file=sys.stderr)
        raise SystemExit(2)
    print(f"| {name} | util [%] | delay [ms] | drops + marks | retx per 1000 |")
    print("|---|---|---|---|---|")
    kernel = [r["emu"] for r in runs.values()]
    for us in (0, 25, 50, 100, 150):
        j = f"delay {us}us {us}us" if us else None
        ms = [_simulate((by_name[name], s, j))["sim"] for s in sorted(runs)]
        _dose_line(f"simulator, {j or 'no jitter'}", ms)
    _dose_line("kernel", kernel)


def _dose_line(label: str, ms: list[dict]) -> None:
    n = len(ms)
    util = sum(m["util"] for m in ms) / n
    delay = sum(m["delay_ms"] for m in ms) / n
    sig = sum(m["drops"] + m["marks"] for m in ms) / n
    retx = sum(m["retx_rate"] for m in ms) / n
    print(f"| {label} | {100 * util:.1f} | {delay:.2f} | {sig:.0f} | {1000 * retx:.2f} |")


def calibrate() -> None:
    """An idle UDP ping over the grid's 10 Mb/s, 20 ms dumbbell: round-trip percentiles."""
    from aqmlab.emu import emulate
    from aqmlab.scenario import Scenario
    from aqmlab.sim import simulate

    d = {"name": "calibrate", "seed": 1, "duration": 10.0, "warmup": 1.0,
         "dumbbell": {"rate": 10e6, "rtt": 0.02, "buffer": 50, "pkt_size": 1500},
         "aqm": {"type": "codel"}, "flows": [{"kind": "ping", "interval": 0.005, "size": 100}]}  # fmt: skip
    for side, f in (("simulator", simulate), ("kernel", emulate)):
        rtt = sorted(x for x in f(Scenario(d)).columns["pings"]["rtt_ms"] if x == x and x)
        pct = [rtt[min(len(rtt) - 1, int(q * len(rtt)))] for q in (0.01, 0.5, 0.99, 0.999)]
        print(f"{side}: {len(rtt)} probes, RTT p1 {pct[0]:.3f} ms, p50 {pct[1]:.3f}, "
              f"p99 {pct[2]:.3f}, p99.9 {pct[3]:.3f}")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "jitter.jsonl"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--jitter", default=JITTER, help=f"netem's delay and jitter ({JITTER!r})")
    ap.add_argument("--summarise", action="store_true")
    ap.add_argument("--dose", default=None, metavar="ROW")
    ap.add_argument("--calibrate", action="store_true", help="needs root: emulates")
    a = ap.parse_args()
    if a.summarise:
        summarise(Path(a.out))
    elif a.dose:
        dose(a.dose)
    elif a.calibrate:
        calibrate()
    else:
        run(Path(a.out), a.jobs, a.jitter)
    return 0


if __name__ == "__main__":
    sys.exit(main())
