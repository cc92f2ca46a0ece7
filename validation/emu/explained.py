"""The grid's misses, each beside the one-change experiments that account for it.

The issue's bar is that every row of the grid meets every bar or has its miss explained by a
one-change experiment. This sets each row that misses a bar on the stored three-seed means
(``grid-seed*.jsonl``) beside the experiments run on it, and says for each missed bar which of
them brings it within the bar:

* ``counts``: the retransmission bar, where the two sides' counts cannot be told apart
  (``retx_counts.py``: conditional binomial test, p > 0.05);
* ``more seeds``: the bar is within on the means over the grid's seeds and those ``seeds.py``
  added on both sides (seeds 4-8); ``seed spread``: still over the bar on those seeds, but
  within the spread of the seeds (``seeds.spread_p``: Welch's test, or the counts' test for the
  retransmission rate; p > 0.05);
* ``jitter 100 µs``, ``jitter 50 µs``: the simulator with netem's delay jitter on both
  directions (``jitter.py``, ``jitter.jsonl``, ``jitter-50us.jsonl``), the same seeds;
* ``60 s window``: both sides measured over 60 s instead of the grid's 14 s (``window.py``);
* ``kernel without GSO``: the kernel's senders without GSO (``gso_off.py``), against the
  simulator on the same seeds.

A bar comes "within" under an experiment when the means over that experiment's runs of the row
meet it; other bars may move the other way (each experiment's own table says which). A row is
accounted for when each bar it misses has at least one experiment::

    .venv/bin/python validation/emu/explained.py        # the table (explained.md)
    .venv/bin/python validation/emu/explained.py --open # the rows still open, comma-separated
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grid  # noqa: E402
import retx_counts  # noqa: E402
import seeds  # noqa: E402

Runs = list[dict]


def _with_side(base: dict, runs: dict[str, Runs], side: str) -> Callable[[str], Runs]:
    """The runs of a row with ``side`` taken from an experiment's ``runs`` (same seeds)."""

    def get(name: str) -> Runs:
        return [
            {**base[(name, r["seed"])], side: r[side]}
            for r in runs.get(name, [])
            if (name, r["seed"]) in base
        ]

    return get


def _load(name: str) -> dict[str, Runs]:
    p = HERE / name
    return grid.runs_by_row(p) if p.exists() else {}


def experiments(base: dict, by_row: dict[str, Runs]) -> list[tuple[str, Callable[[str], Runs]]]:
    """Each experiment's label and the runs it gives a row (empty when not run on it)."""
    more = _load("seeds.jsonl")
    window = _load("window.jsonl")
    return [
        (
            "more seeds",
            lambda n: by_row.get(n, []) + more[n] if n in more else [],
        ),
        ("jitter 100 µs", _with_side(base, _load("jitter.jsonl"), "sim")),
        ("jitter 50 µs", _with_side(base, _load("jitter-50us.jsonl"), "sim")),
        ("60 s window", lambda n: window.get(n, [])),
        ("kernel without GSO", _with_side(base, _load("gso_off.jsonl"), "emu")),
    ]


def accounting() -> list[tuple[str, list[str], dict[str, list[str]]]]:
    """Each row missing a bar on three seeds: its name, its misses (with their distances) and,
    per missed bar, the experiments that bring it within."""
    base = grid.stored_runs()
    by_row = grid.stored_by_row()
    exps = experiments(base, by_row)
    out = []
    for name in [r["name"] for r in grid.rows()]:
        rs = by_row.get(name, [])
        missed = grid.misses(rs)
        if not missed:
            continue
        found: dict[str, list[str]] = {m.split()[0]: [] for m in missed}
        if "retx_rate" in found and retx_counts.p_value(rs) > retx_counts.ALPHA:
            found["retx_rate"].append("counts")
        for label, get in exps:
            runs = get(name)
            if not runs:
                continue
            still = {m.split()[0] for m in grid.misses(runs)}
            for bar in found:
                if bar not in still:
                    found[bar].append(label)
                elif label == "more seeds" and seeds.spread_p(runs, bar) > seeds.ALPHA:
                    found[bar].append("seed spread")
        out.append((name, missed, found))
    return out


def main() -> int:
    rows = accounting()
    if "--open" in sys.argv[1:]:
        print(",".join(n for n, _, found in rows if not all(found.values())))
        return 0
    print("| row | misses (three seeds) | accounted for by | open |")
    print("|---|---|---|---|")
    n_done = 0
    open_by_bar: dict[str, list[str]] = {}
    for name, missed, found in rows:
        left = [b for b, how in found.items() if not how]
        n_done += not left
        for b in left:
            open_by_bar.setdefault(b, []).append(name)
        how = "; ".join(f"{b}: {', '.join(h)}" for b, h in found.items() if h) or "-"
        print(f"| {name} | {', '.join(missed)} | {how} | {', '.join(left) or 'none'} |")
    print(
        f"\nRows missing a bar on three seeds: {len(rows)}; every missed bar accounted for: "
        f"{n_done}; open: {len(rows) - n_done}."
    )
    for b, names in open_by_bar.items():
        print(f"\nOpen on {b} ({len(names)}): " + ", ".join(f"`{n}`" for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
