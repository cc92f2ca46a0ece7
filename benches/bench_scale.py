"""Scale: memory per flow and nanoseconds per event as flows grow (the scale issue's table).

The dumbbell: 10 Gb/s, rtt 20 ms, long-lived CUBIC flows, CoDel with a one-BDP buffer, every
flow with its own host pair and access links (the standard dumbbell, ``access = "link"``)
and, for comparison, with hosts on the bottleneck (``access = "none"``, htsim's dumbbell).
Each run is a child process of the Rust example ``bench_scale`` (so its resident memory is its
own, and no Python object is counted).

* Memory per flow: ``(peak RSS(50k flows) - peak RSS(1k flows)) / 49k``, from runs of 0.2 s.
* Nanoseconds per event at 100, 1 000 and 10 000 flows (1 s, 0.5 s warm-up); ``--big`` adds
  100 000 and 1 000 000 flows (minutes and gigabytes). Each row is the fastest of
  ``--repeat`` runs (5), the counts interleaved so that a slow spell of a shared machine
  falls on all of them; a single run on a virtual machine varies by up to half.
* ``--big`` also runs the million-flow dumbbell: 1 000 000 flows on the standard dumbbell at
  100 Gb/s and rtt 200 ms for 2 s (1 s warm-up), and prints its peak RSS.

* Short flows: a web-like ``tcp_short`` workload on the same dumbbell (10 000 Poisson
  arrivals/s of Pareto-sized CUBIC flows, mean 20 kB) for 5 s and 20 s (50 000 and 200 000
  flows). A finished flow gives its slot in the flow table back and keeps a record of its
  summary row, so the memory they add per finished flow is the record's, and the flow
  table's slots stay at the peak concurrency (a flow holds its slot while it runs and while
  packets of it are still in the network; ``hold``: the longest a completed flow held it). ``--big`` adds 10 000 000 flows (1000 s).
  ``--short`` runs only these rows.

Bars (the scale issue): at most 4 KB per flow on the standard dumbbell; ns/event at 10 000
(and 100 000) flows within 1.5x of the 100-flow figure; the million-flow run under 4 GB;
short flows: at most 0.4 KB of peak RSS per finished flow between 50 000 and 200 000 flows
(the record, 224 bytes, and its queue-delay entry), slots within 1.25x of the 50 000-flow
run (they would grow 4x with the flows; the peak of about 300 flows running at once is the
maximum of a count that fluctuates by about its square root, 17, and a four times longer run
reaches about one such step higher), the 10-million-flow run under 4 GB. Exit status 1 if a bar is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEM_BAR_KB = 4.0
MILLION_BAR_GB = 4.0
FLAT_BAR = 1.5
SHORT_BAR_KB = 0.4
SLOTS_BAR = 1.25
SHORT_RATE = 10_000


def build() -> Path:
    subprocess.run(
        ["nice", "cargo", "build", "--release", "-q", "-p", "netsim", "--example", "bench_scale"],
        cwd=ROOT, check=True,
    )  # fmt: skip
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "examples" / "bench_scale"


def run(
    exe: Path, flows: int, access: str, duration: float, warmup: float, extra: tuple = ()
) -> dict:
    out = subprocess.run(
        [str(exe), "--flows", str(flows), "--access", access, "--duration", str(duration),
         "--warmup", str(warmup), *extra],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


def short_flows(exe: Path, big: bool) -> bool:
    """The short-flow rows: RSS and pool slots as finished flows grow; True if every bar is
    met.

    Parameters
    ----------
    exe : Path
        The ``bench_scale`` example.
    big : bool
        Also the 10-million-flow run.

    Returns
    -------
    bool
        True if every bar is met.
    """
    ok = True
    extra = ("--short", str(SHORT_RATE))
    print(f"\nshort flows ({SHORT_RATE} arrivals/s, mean 20 kB, 10 Gb/s, rtt 20 ms):")
    print(f"{'flows':>10} {'finished':>10} {'slots':>7} {'hold [ms]':>9} {'RSS [MB]':>9} "
          f"{'wall [s]':>9}")  # fmt: skip
    rows = []
    for seconds in (5.0, 20.0) + ((1000.0,) if big else ()):
        r = run(exe, 1, "link", seconds, 0.1, extra)
        rows.append(r)
        print(f"{r['short_flows']:>10} {r['finished']:>10} {r['peak_slots']:>7} "
              f"{r['longest_hold_s'] * 1e3:>9.1f} "
              f"{r['peak_rss_bytes'] / 1e6:>9.1f} {r['wall_seconds']:>9.1f}")  # fmt: skip
    a, b = rows[0], rows[1]
    per_flow = (b["peak_rss_bytes"] - a["peak_rss_bytes"]) / (b["finished"] - a["finished"])
    good = per_flow / 1024 <= SHORT_BAR_KB
    ok &= good
    print(f"peak RSS per finished flow, 50k -> 200k: {per_flow:.0f} bytes  "
          f"<= {SHORT_BAR_KB} KB: {'ok' if good else 'MISSED'}")  # fmt: skip
    for r in rows[1:]:
        good = r["peak_slots"] <= SLOTS_BAR * a["peak_slots"]
        ok &= good
        print(f"slots at {r['short_flows']} flows: {r['peak_slots']} (50k: {a['peak_slots']})  "
              f"<= {SLOTS_BAR}x: {'ok' if good else 'MISSED'}")  # fmt: skip
    if big:
        gb = rows[2]["peak_rss_bytes"] / 1e9
        good = gb < MILLION_BAR_GB
        ok &= good
        print(f"{rows[2]['short_flows']} short flows: peak RSS {gb:.2f} GB  "
              f"< {MILLION_BAR_GB:.0f} GB: {'ok' if good else 'MISSED'}")  # fmt: skip
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="also 100 000 and 1 000 000 flows")
    ap.add_argument("--short", action="store_true", help="only the short-flow rows")
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="interleaved runs per ns/event row, the fastest reported (default 5)",
    )
    args = ap.parse_args()
    exe = build()
    if args.short:
        return 0 if short_flows(exe, args.big) else 1
    ok = True

    print("memory per flow (peak RSS, 0.2 s runs):")
    print(f"{'access':<8} {'RSS 1k [MB]':>12} {'RSS 50k [MB]':>13} {'per flow [KB]':>14}  bar")
    for access in ("link", "none"):
        small = run(exe, 1_000, access, 0.2, 0.1)["peak_rss_bytes"]
        large = run(exe, 50_000, access, 0.2, 0.1)["peak_rss_bytes"]
        per_flow = (large - small) / 49_000 / 1024
        bar = ""
        if access == "link":
            good = per_flow <= MEM_BAR_KB
            ok &= good
            bar = f"<= {MEM_BAR_KB:.0f} KB: {'ok' if good else 'MISSED'}"
        print(f"{access:<8} {small / 1e6:>12.1f} {large / 1e6:>13.1f} {per_flow:>14.2f}  {bar}")

    counts = [100, 1_000, 10_000] + ([100_000, 1_000_000] if args.big else [])
    reps = max(1, args.repeat)
    print(
        f"\nnanoseconds per event (1 s, 0.5 s warm-up; fastest of {reps} interleaved runs, "
        "median in brackets; 1 000 000 flows once):"
    )
    print(f"{'access':<8} {'flows':>9} {'events':>12} {'wall [s]':>9} {'ns/event':>9} "
          f"{'(median)':>9} {'x 100 flows':>11} {'util':>6}  bar")  # fmt: skip
    for access in ("link", "none"):
        runs: dict[int, list[dict]] = {n: [] for n in counts}
        for rep in range(reps):
            for n in counts:
                if n < 1_000_000 or rep == 0:
                    runs[n].append(run(exe, n, access, 1.0, 0.5))
        base = None
        for n in counts:
            rs = sorted(runs[n], key=lambda r: r["ns_per_event"])
            r, med = rs[0], rs[len(rs) // 2]["ns_per_event"]
            base = base or r["ns_per_event"]
            ratio = r["ns_per_event"] / base
            bar = ""
            if access == "link" and n >= 10_000 and n <= 100_000:
                good = ratio <= FLAT_BAR
                ok &= good
                bar = f"<= {FLAT_BAR}x: {'ok' if good else 'MISSED'}"
            print(f"{access:<8} {n:>9} {r['events']:>12} {r['wall_seconds']:>9.2f} "
                  f"{r['ns_per_event']:>9.1f} {med:>9.1f} {ratio:>11.2f} {r['utilization']:>6.3f}  {bar}")  # fmt: skip
    if args.big:
        r = run(exe, 1_000_000, "link", 2.0, 1.0, ("--rate", "100e9", "--rtt", "0.2"))
        gb = r["peak_rss_bytes"] / 1e9
        good = gb < MILLION_BAR_GB
        ok &= good
        print(f"\n1 000 000 flows, 100 Gb/s, rtt 200 ms, 2 s: peak RSS {gb:.2f} GB, "
              f"wall {r['wall_seconds']:.0f} s, util {r['utilization']:.3f}  "
              f"< {MILLION_BAR_GB:.0f} GB: {'ok' if good else 'MISSED'}")  # fmt: skip
    ok &= short_flows(exe, args.big)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
