"""One-change experiment on the grid's short-path rows: the kernel without RACK.

At 10 Mb/s and 20 ms with 20 Reno or CUBIC flows the kernel retransmitted 1.4-2.0 times as many
segments per packet as the simulator (RESULTS.md, section 4). This runs those rows' emulated
side again with ``net.ipv4.tcp_recovery = 0`` on the senders (Linux's RACK loss detection off:
loss is then inferred from duplicate ACKs and SACKed bytes, RFC 6675) and beside it with the
default (RACK on), in the same session, so that both see the same machine load::

    sudo .venv/bin/python validation/emu/rack_off.py [--seeds 1,2] [--out rack_off.jsonl]

Each run appends one JSON line (row, seed, variant, the grid's measures of the emulated run).
``--summarise FILE`` prints the table of means per row and variant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402

ROWS = [f"{a}-10M-20ms-20x{cc}" for a in ("codel", "pie", "dualpi2") for cc in ("reno", "cubic")]
VARIANTS = {"rack": {}, "norack": {"net.ipv4.tcp_recovery": "0"}}


def run(seeds: list[int], out: Path) -> None:
    from aqmlab.emu import emulate
    from aqmlab.scenario import Scenario

    by_name = {r["name"]: r for r in grid.rows()}
    todo = [(r, s, v) for s in seeds for r in ROWS for v in VARIANTS]
    with out.open("a") as f:
        for i, (row, seed, v) in enumerate(todo, 1):
            t0 = time.time()
            sc = Scenario(grid.scenario_dict(by_name[row], seed, False))
            e = grid.measures(emulate(sc, sysctls=VARIANTS[v]).summary)
            f.write(json.dumps({"row": row, "seed": seed, "variant": v, "emu": e}) + "\n")
            f.flush()
            print(
                f"[{i}/{len(todo)}] {row} seed {seed} {v}: retx per 1000 "
                f"{1000 * e['retx_rate']:.1f}, util {100 * e['util']:.1f} %, delay "
                f"{e['delay_ms']:.1f} ms ({time.time() - t0:.0f} s)",
                flush=True,
            )


def summarise(path: Path) -> None:
    runs: dict[tuple[str, str], list[dict]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            runs.setdefault((r["row"], r["variant"]), []).append(r["emu"])
    print("| row | variant | seeds | retx per 1000 | drops per 1000 | util [%] | delay [ms] |")
    print("|---|---|---|---|---|---|---|")
    for row in ROWS:
        for v in VARIANTS:
            rs = runs.get((row, v), [])
            if not rs:
                continue
            n = len(rs)
            retx = sum(1000 * r["retx_rate"] for r in rs) / n
            drops = sum(1000 * r["drops"] / max(r["arrivals"], 1) for r in rs) / n
            util = sum(100 * r["util"] for r in rs) / n
            delay = sum(r["delay_ms"] for r in rs) / n
            print(f"| {row} | {v} | {n} | {retx:.1f} | {drops:.1f} | {util:.1f} | {delay:.1f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--out", default=str(HERE / "rack_off.jsonl"))
    ap.add_argument("--summarise", default=None)
    a = ap.parse_args()
    if a.summarise:
        summarise(Path(a.summarise))
        return 0
    run([int(s) for s in a.seeds.split(",")], Path(a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
