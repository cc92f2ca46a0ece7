"""One-change experiment on the grid's rows at 100 ms: a longer measurement window.

At 100 ms a loss-based flow's cycle is long. One CUBIC flow at 50 Mb/s behind a 2 BDP drop-tail
buffer backs off from about 1,250 packets and takes about 10 s (CUBIC's `K`) to return; one
Reno flow at 50 Mb/s under an AQM that drops a packet regains half a window of about 200
packets at one packet per round trip, 20 s. The grid measures 14 s (20 s runs, 6 s of
warm-up), so a row's mean delay or utilisation depends on where in the cycle the window falls,
and the shares of a few such flows on which of them lost last. The one change, on both sides:
80 s runs with 20 s of warm-up, a window of 60 s, the rest of each row as the grid has it::

    sudo .venv/bin/python validation/emu/window.py --seeds 1,2,3 --jobs 2   # appends window.jsonl
    .venv/bin/python validation/emu/window.py --summarise                  # the table (window.md)
    .venv/bin/python validation/emu/window.py --resim    # after a simulator change: its side again

The rows (``ROWS``, or ``--rows``): the 100 ms rows of loss-based flows that miss the
utilisation, delay or Jain bar and whose cycle is longer than about half the window. Each run
appends one JSON line (row, seed, both sides' measures, as the grid's runs); ``--summarise``
sets them beside the grid's runs of the same rows and seeds and gives each variant's misses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402

#: The change: (duration, warm-up) in seconds.
WINDOW = (80.0, 20.0)

#: The 100 ms rows of loss-based flows with cycles longer than about half the window.
ROWS = [
    "droptail-50M-100ms-1xcubic",
    "droptail-10M-100ms-4xcubic",
    "droptail-50M-100ms-4xcubic",
    "codel-50M-100ms-1xreno",
    "pie-50M-100ms-1xreno",
    "dualpi2-50M-100ms-1xreno",
    "codel-50M-100ms-1xcubic",
    "fq_codel-50M-100ms-1xcubic",
    "droptail-50M-100ms-20xcubic",
]


def _run(job: tuple[str, int]) -> dict:
    name, seed = job
    row = {r["name"]: r for r in grid.rows()}[name]
    return {**grid.run_one(row, seed, WINDOW), "window": list(WINDOW)}


def run(names: list[str], seeds: list[int], out: Path, jobs: int) -> None:
    """Runs ``names`` with the long window on both sides, appending to ``out``."""
    todo = [(n, s) for s in seeds for n in names]
    grid.append_runs(_run, todo, out, jobs)


def summarise(path: Path) -> None:
    """The long-window runs beside the grid's runs of the same rows and seeds."""
    long = grid.runs_by_row(path)
    base = grid.stored_runs()
    print("| row | window | seeds | delay sim / emu [ms] | Jain sim / emu | "
          "retx per 1000 sim / emu | misses |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, rs in long.items():
        seeds = sorted({r["seed"] for r in rs})
        grid_runs = [base[(name, s)] for s in seeds if (name, s) in base]
        for label, runs in (("14 s (grid)", grid_runs), ("60 s", rs)):
            n = len(runs)

            def mean(side: str, key: str, runs: list[dict] = runs, n: int = n) -> float:
                return sum(r[side][key] for r in runs) / n

            print(f"| {name} | {label} | {n} | {mean('sim', 'delay_ms'):.1f} / "
                  f"{mean('emu', 'delay_ms'):.1f} | {mean('sim', 'jain'):.2f} / "
                  f"{mean('emu', 'jain'):.2f} | {1000 * mean('sim', 'retx_rate'):.2f} / "
                  f"{1000 * mean('emu', 'retx_rate'):.2f} | "
                  f"{', '.join(grid.misses(runs)) or 'none'} |")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=1, help="emulations at once")
    ap.add_argument("--out", default=str(HERE / "window.jsonl"))
    ap.add_argument("--summarise", action="store_true")
    ap.add_argument("--resim", action="store_true", help="simulate the stored runs again")
    a = ap.parse_args()
    if a.resim:
        grid.resim([a.out], WINDOW)
        return 0
    if a.summarise:
        summarise(Path(a.out))
        return 0
    names = a.rows.split(",")
    known = {r["name"] for r in grid.rows()}
    bad = [n for n in names if n not in known]
    if bad:
        print(f"error: rows = {bad[0]!r}: not a grid row (grid.py --list)", file=sys.stderr)
        return 2
    run(names, [int(s) for s in a.seeds.split(",")], Path(a.out), a.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
