"""The grid's retransmission misses that the counts cannot tell apart.

The retransmission bar is relative (within 30 %), and many rows retransmit a handful of
segments per run: `droptail-50M-20ms-1xreno` retransmits 3 segments over its three seeds in
the simulator and 5 in the kernel, 67 % apart. For each row that misses that bar, this asks
whether the two sides' rates differ by more than chance: given the retransmissions of both
sides summed over the seeds, ``k_sim + k_emu``, the simulator's share is binomial with the
simulator's share of the packets arriving at the bottleneck if the rates are equal (the
conditional test of two Poisson rates). Drops come in bursts, so the counts vary more than a
Poisson count does, and a difference this test calls significant may not be: the rows it
calls not significant are the ones the counts certainly cannot separate::

    .venv/bin/python validation/emu/retx_counts.py      # the table (retx_counts.md)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grid  # noqa: E402

#: Rows whose difference has a p-value above this are "not distinguishable".
ALPHA = 0.05


def counts(rs: list[dict]) -> tuple[list[int], list[int]]:
    """Retransmissions and packets at the bottleneck over the runs ``rs``, summed over the
    seeds: ``([sim, emu], [sim, emu])``."""
    k = [sum(r[side]["retransmits"] for r in rs) for side in ("sim", "emu")]
    a = [sum(r[side]["arrivals"] for r in rs) for side in ("sim", "emu")]
    return k, a


def p_value(rs: list[dict]) -> float:
    """The p-value of the two sides' retransmission rates over the runs ``rs`` (one row,
    several seeds) being equal: the conditional binomial test above."""
    from scipy.stats import binomtest

    k, a = counts(rs)
    return binomtest(k[0], sum(k), a[0] / sum(a)).pvalue if sum(k) else 1.0


def main() -> int:
    by_row = grid.stored_by_row()
    order = [r["name"] for r in grid.rows()]
    print("| row | retransmitted sim / emu (seeds summed) | packets sim / emu | p | other misses |")
    print("|---|---|---|---|---|")
    n_miss = n_same = n_only = 0
    for name in order:
        rs = by_row.get(name)
        misses = grid.misses(rs) if rs else []
        if not any(m.startswith("retx_rate") for m in misses):
            continue
        n_miss += 1
        k, a = counts(rs)
        p = p_value(rs)
        if p <= ALPHA:
            continue
        n_same += 1
        others = [m for m in misses if not m.startswith("retx_rate")]
        n_only += not others
        print(f"| {name} | {k[0]} / {k[1]} | {a[0]} / {a[1]} | {p:.2f} | "
              f"{', '.join(others) or 'none'} |")  # fmt: skip
    print(f"\nRows missing the retransmission bar: {n_miss}; the counts cannot tell the two "
          f"rates apart (p > {ALPHA}) in {n_same}, {n_only} of which miss no other bar.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
