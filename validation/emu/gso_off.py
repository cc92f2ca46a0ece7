"""One-change experiment on the grid's rows with a small queue: the kernel without GSO.

In 28 rows the simulator's mean queue delay is under 10 ms and the kernel's more than 20 %
above it (most of them one Reno or CUBIC flow under CoDel, FQ-CoDel, PIE or DualPI2 with 0.1
to 2.6 ms of queue; RESULTS.md, section 4, "Sub-2 ms delays"). The kernel's sender hands its
device GSO packets of several segments, which leave back to back at the sender's line rate and
queue at the bottleneck together; the simulator's unpaced senders send a segment per ACK'd
segment. The one change, on the kernel's side only: the senders' device takes GSO packets of
one segment (``gso_max_segs 1``, as ``slowstart.py --gso-max-segs 1``), so the kernel sends
segment by segment, the rest of the row as the grid has it::

    sudo .venv/bin/python validation/emu/gso_off.py --seeds 1,2       # appends gso_off.jsonl
    .venv/bin/python validation/emu/gso_off.py --summarise validation/emu/gso_off.jsonl

Each run appends one JSON line (row, seed, the grid's measures of the emulated run).
``--summarise`` sets the kernel without GSO beside the kernel as the grid ran it and the
simulator (``grid-seed*.jsonl``, the same seeds) and counts the rows within the delay bar.
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
import slowstart  # noqa: E402

#: The rows: the simulator's delay under this (ms) and the kernel's above it by the bar.
SMALL_MS = 10.0


def rows() -> list[str]:
    """The grid rows with a small queue in the simulator and 20 % more in the kernel (means
    over the stored seeds)."""
    by_row = grid.stored_by_row()
    out = []
    for r in grid.rows():
        rs = by_row.get(r["name"])
        if not rs:
            continue
        s, e = grid._mean(rs, "sim", "delay_ms"), grid._mean(rs, "emu", "delay_ms")
        if s < SMALL_MS and e > s * (1 + 0.20):
            out.append(r["name"])
    return out


def run(names: list[str], seeds: list[int], out: Path) -> None:
    """Emulates ``names`` without GSO on the senders, appending to ``out``."""
    by_name = {r["name"]: r for r in grid.rows()}
    todo = [(n, s) for s in seeds for n in names]
    with out.open("a") as f:
        for i, (name, seed) in enumerate(todo, 1):
            t0 = time.time()
            d = grid.scenario_dict(by_name[name], seed, False)
            e = grid.measures(slowstart.emulate_gso(d, 1).summary)
            f.write(json.dumps({"row": name, "seed": seed, "gso_max_segs": 1, "emu": e}) + "\n")
            f.flush()
            print(
                f"[{i}/{len(todo)}] {name} seed {seed}: delay {e['delay_ms']:.2f} ms, util "
                f"{100 * e['util']:.1f} % ({time.time() - t0:.0f} s)",
                flush=True,
            )


def summarise(path: Path) -> None:
    """The kernel without GSO beside the grid's runs of the same rows and seeds."""
    off = grid.runs_by_row(path)
    base = grid.stored_runs()
    print(
        "| row | seeds | delay sim [ms] | kernel [ms] | kernel, no GSO [ms] | util sim / kernel /"
        " no GSO [%] | delay bar: kernel, no GSO |"
    )
    print("|---|---|---|---|---|---|---|")
    within = [0, 0]
    for name, rs in off.items():
        grid_runs = [base[(name, r["seed"])] for r in rs if (name, r["seed"]) in base]
        s = grid._mean(grid_runs, "sim", "delay_ms")
        e = grid._mean(grid_runs, "emu", "delay_ms")
        g = grid._mean(rs, "emu", "delay_ms")
        us = grid._mean(grid_runs, "sim", "util")
        ue = grid._mean(grid_runs, "emu", "util")
        ug = grid._mean(rs, "emu", "util")
        ok = [grid._check("rel", 0.20, s, x)[1] for x in (e, g)]
        within[0] += bool(ok[0])
        within[1] += bool(ok[1])
        mark = " / ".join("within" if o else "misses" for o in ok)
        print(
            f"| {name} | {len(rs)} | {s:.2f} | {e:.2f} | {g:.2f} | {100 * us:.1f} / "
            f"{100 * ue:.1f} / {100 * ug:.1f} | {mark} |"
        )
    print(
        f"\nrows within the delay bar: kernel {within[0]} of {len(off)}, kernel without GSO "
        f"{within[1]} of {len(off)}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--rows", default=None, help="comma-separated row names (default: all)")
    ap.add_argument("--out", default=str(HERE / "gso_off.jsonl"))
    ap.add_argument("--summarise", default=None)
    ap.add_argument("--list", action="store_true", help="print the rows and stop")
    a = ap.parse_args()
    if a.summarise:
        summarise(Path(a.summarise))
        return 0
    names = a.rows.split(",") if a.rows else rows()
    if a.list:
        print("\n".join(names))
        return 0
    run(names, [int(s) for s in a.seeds.split(",")], Path(a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
