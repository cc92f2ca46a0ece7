"""One-change experiment on the grid's fairness misses: five more seeds.

Jain's index of a few flows and the CUBIC group's share of a mixed run are decided by which
flow lost when, and with three seeds their mean moves by more than the bar's 0.1 from seed to
seed on several rows (`droptail-10M-100ms-4xbbr`: the simulator gave 0.66, 0.96 and 0.83 on
seeds 1-3). So a row whose three-seed means are 0.1 apart may be a row whose sides do not
differ, or one whose sides differ consistently. The one change: seeds 4 to 8 on both sides, the
rest of each row as the grid has it::

    sudo .venv/bin/python validation/emu/seeds.py --jobs 2      # appends seeds.jsonl
    .venv/bin/python validation/emu/seeds.py --summarise        # the table (seeds.md)
    .venv/bin/python validation/emu/grid.py --resim validation/emu/seeds.jsonl  # simulator changed

The rows (``--rows``; by default those the stored three-seed means put over the Jain or the
CUBIC-share bar; ``seeds.jsonl`` also holds, run with ``--rows``, every row the other
experiments had left open, ``explained.py --open``). Each run appends one JSON line (row, seed, both sides' measures, as the
grid's runs). ``--summarise`` sets the eight-seed means beside the three-seed ones, with each
side's seed-to-seed spread, and says of each row whether the sides still differ by more than
the bar and by more than the spread of their means (Welch's t-test on the eight seeds of each
side, two-sided, 5 %).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402
import retx_counts  # noqa: E402

#: The bars of the default rows.
KEYS = ("jain", "cubic_share")
#: Welch's test: a difference with a p-value above this is "within the seeds' spread".
ALPHA = 0.05


def fairness_misses() -> list[str]:
    """The rows whose three-seed means (the stored grid) miss the Jain or CUBIC-share bar."""
    by_row = grid.stored_by_row()
    return [
        r["name"]
        for r in grid.rows()
        if any(m.split()[0] in KEYS for m in grid.misses(by_row.get(r["name"], [])))
    ]


def _run(job: tuple[str, int]) -> dict:
    name, seed = job
    row = {r["name"]: r for r in grid.rows()}[name]
    return grid.run_one(row, seed)


def run(names: list[str], seeds: list[int], out: Path, jobs: int) -> None:
    """Runs ``names`` with ``seeds`` on both sides, appending to ``out`` (runs already there
    are skipped)."""
    done = {(r["row"], r["seed"]) for rs in grid.runs_by_row(out).values() for r in rs} if (
        out.exists()) else set()  # fmt: skip
    todo = [(n, s) for s in seeds for n in names if (n, s) not in done]
    grid.append_runs(_run, todo, out, jobs)


def spread_p(runs: list[dict], key: str) -> float:
    """The p-value of the two sides' ``key`` over ``runs`` (one row, several seeds) being the
    same: Welch's two-sided test on the runs' values, and for the retransmission rate the
    test of the counts (``retx_counts.p_value``)."""
    from scipy.stats import ttest_ind

    if key == "retx_rate":
        return retx_counts.p_value(runs)
    a, b = ([r[side][key] for r in runs if r[side][key] is not None] for side in ("sim", "emu"))
    if len(set(a)) < 2 and len(set(b)) < 2:
        return 0.0 if a[0] != b[0] else 1.0
    return float(ttest_ind(a, b, equal_var=False).pvalue)


#: How each bar's measure is shown: (scale, format).
SHOW = {
    "util": (100, ".1f"),
    "delay_ms": (1, ".2f"),
    "jain": (1, ".2f"),
    "cubic_share": (1, ".2f"),
    "retx_rate": (1000, ".2f"),
}


def summarise(path: Path) -> None:
    """The eight-seed means beside the grid's three-seed means, per row and missed bar."""
    more = grid.runs_by_row(path)
    base = grid.stored_by_row()
    print("| row | bar | seeds | sim: mean (sd) | kernel: mean (sd) | 3 seeds | "
          "all seeds | p |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    n = {"rows": 0, "all": 0, "spread": 0, "either": 0}
    for name in [r["name"] for r in grid.rows() if r["name"] in more]:
        first = base.get(name, [])
        runs = first + more[name]
        miss3 = {m.split()[0] for m in grid.misses(first)}
        miss8 = {m.split()[0] for m in grid.misses(runs)}
        if not miss3:
            continue
        n["rows"] += 1
        row_ok = row_noise = True
        for key, _, _ in grid.BARS:
            if key not in miss3 | miss8:
                continue
            scale, fmt = SHOW[key]
            xs = [
                [scale * r[side][key] for r in runs if r[side][key] is not None]
                for side in ("sim", "emu")
            ]
            m = [sum(x) / len(x) for x in xs]
            sd = [
                (sum((v - mu) ** 2 for v in x) / (len(x) - 1)) ** 0.5
                for x, mu in zip(xs, m, strict=True)
            ]
            p = spread_p(runs, key)
            row_ok &= key not in miss8
            row_noise &= key not in miss8 or p > ALPHA
            print(f"| {name} | {key} | {len(runs)} | {m[0]:{fmt}} ({sd[0]:{fmt}}) | "
                  f"{m[1]:{fmt}} ({sd[1]:{fmt}}) | "
                  f"{'misses' if key in miss3 else 'within'} | "
                  f"{'misses' if key in miss8 else 'within'} | {p:.2f} |")  # fmt: skip
        n["all"] += row_ok
        n["spread"] += row_noise and not row_ok
        n["either"] += row_noise
    print(
        f"\nRows missing a bar on three seeds: {n['rows']}. With the added seeds, {n['all']} of "
        f"them are within every bar, and in {n['spread']} more each bar still missed is within "
        f"the spread of the seeds (p > {ALPHA}: Welch's test, or the counts' test for the "
        f"retransmission rate); {n['rows'] - n['either']} differ by more than a bar and the "
        "spread."
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default=None, help="comma-separated row names (default: above)")
    ap.add_argument("--seeds", default="4,5,6,7,8")
    ap.add_argument("--jobs", type=int, default=1, help="emulations at once")
    ap.add_argument("--out", default=str(HERE / "seeds.jsonl"))
    ap.add_argument("--summarise", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the rows and stop")
    a = ap.parse_args()
    if a.summarise:
        summarise(Path(a.out))
        return 0
    names = a.rows.split(",") if a.rows else fairness_misses()
    if a.list:
        print("\n".join(names))
        return 0
    run(names, [int(s) for s in a.seeds.split(",")], Path(a.out), a.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
