"""CAKE's speed against CoDel in the same run (docs/aqm/cake.md).

Runs the simulator's bench example on its 1 Gb/s x 1000 CUBIC x 5 s dumbbell with CoDel
(``dumbbell_1G_1000cubic_5s``) and with CAKE at its Linux defaults
(``dumbbell_1G_1000cubic_5s_cake``: unlimited, diffserv3, triple-isolate), alternating,
``--repeat`` times each (default 3), and prints the fastest run of each, their packets over the
bottleneck per wall-second and per CPU-second, the ratio CAKE/CoDel (bar: at least 0.5, as for
FQ-CoDel) and CAKE's qdisc memory.

    python benches/bench_cake.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = {"codel": "dumbbell_1G_1000cubic_5s", "cake": "dumbbell_1G_1000cubic_5s_cake"}
RATIO_BAR = 0.5


def run_once(name: str) -> dict:
    """Run one scenario of the bench example; returns its JSON row.

    Parameters
    ----------
    name : str
        The scenario's exact name in ``crates/netsim/examples/bench_sim.rs``.

    Returns
    -------
    dict
        The row: ``bottleneck_pkts_per_wall_s``, ``cpu_seconds``, ``queue_memory_bytes``, ...
    """
    out = subprocess.run(
        ["cargo", "run", "-q", "--release", "-p", "netsim", "--example", "bench_sim", "--"]
        + ["--json", "--only", name],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = json.loads(out[out.index("{") :])["netsim"]
    return next(r for r in rows if r["scenario"] == name)


def main() -> int:
    """Measure and print the CAKE/CoDel ratio.

    Returns
    -------
    int
        0 if the ratio meets the bar, 1 otherwise.
    """
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="alternating runs of each (default 3)")
    p.add_argument("--json", action="store_true", help="also print the rows as JSON")
    a = p.parse_args()
    best: dict[str, dict] = {}
    for _ in range(max(1, a.repeat)):
        for key, name in NAMES.items():
            r = run_once(name)
            if (
                key not in best
                or r["bottleneck_pkts_per_wall_s"] > best[key]["bottleneck_pkts_per_wall_s"]
            ):
                best[key] = r
    c, k = best["codel"], best["cake"]
    for label, r in (("CoDel", c), ("CAKE", k)):
        per_cpu = r["bottleneck_packets"] / r["cpu_seconds"] if r.get("cpu_seconds") else 0.0
        print(
            f"{label:6s} {r['bottleneck_pkts_per_wall_s'] / 1e6:6.3f} M pkts/wall-s  "
            f"{per_cpu / 1e6:6.3f} M pkts/cpu-s  wall {r['wall_seconds']:.2f} s  "
            f"utilization {r['utilization']:.3f}  qdisc memory "
            f"{r['queue_memory_bytes'] / 1024:.0f} KiB"
        )
    ratio = k["bottleneck_pkts_per_wall_s"] / c["bottleneck_pkts_per_wall_s"]
    cpu_ratio = (
        (k["bottleneck_packets"] / k["cpu_seconds"]) / (c["bottleneck_packets"] / c["cpu_seconds"])
        if k.get("cpu_seconds") and c.get("cpu_seconds")
        else 0.0
    )
    ok = ratio >= RATIO_BAR
    print(
        f"ratio CAKE/CoDel (packets per wall-second): {ratio:.2f}; by CPU time "
        f"{cpu_ratio:.2f} (bar {RATIO_BAR}) {'PASS' if ok else 'FAIL'}"
    )
    if a.json:
        print(json.dumps(best, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
