"""One-change experiments behind the gaps between ns-2 and aqmlab (validation/ns2/RESULTS.md).

    .venv/bin/python validation/ns2/experiments.py [--seeds 2] [--only NAME]

Each experiment is a reproduction's case with exactly one change, run in both simulators over
the same seeds; the table printed (Markdown) has the mean queue, utilisation, loss and marks
per arrival of each. The experiments and what each one tests are in EXPERIMENTS below.
"""

from __future__ import annotations

import argparse
import copy
import sys


def _sfc_a(
    scheme: str, k: int = 200, ecn: bool = True, k1: float | None = None, law_period: float = 0.0
) -> dict:
    from aqmlab.repro import sfc

    aqm = sfc.aqm(scheme, n_min=k) if k1 is None else sfc.aqm(scheme, n_min=k, k1=k1)
    if law_period:
        aqm["law_period"] = law_period
    sc = sfc.dumbbell(f"A-{k}-{scheme}", aqm, [sfc._flows(k, 0.1, 0.3)], 40.0, 10.0, 0.1)
    if not ecn:
        sc = copy.deepcopy(sc)
        sc["aqm"]["ecn"] = False
        for g in sc["flows"]:
            g["ecn"] = False
    return sc


def _min_rto(sc: dict, min_rto: float) -> dict:
    sc = copy.deepcopy(sc)
    for g in sc["flows"]:
        g["min_rto"] = min_rto
    return sc


def _sfc_d(scheme: str, k: int) -> dict:
    from aqmlab.repro import sfc

    aqm = sfc.aqm(scheme, n_min=200, rtt_max=0.8)
    return sfc.dumbbell(f"D-{k}-{scheme}", aqm, [sfc._flows(k, 0.2, 0.8)], 40.0, 10.0, 0.2)


#: name -> (what it tests, scenario builder)
EXPERIMENTS = {
    "A-200-pi": ("SFC A, k = 200, PI (the case)", lambda: _sfc_a("pi")),
    "A-200-pi-noecn": (
        "the same without ECN (drops instead of marks)",
        lambda: _sfc_a("pi", ecn=False),
    ),
    "A-100-pi": ("the same with k = 100 flows", lambda: _sfc_a("pi", k=100)),
    "A-200-avq": ("SFC A, k = 200, AVQ (the case)", lambda: _sfc_a("avq")),
    "A-200-avq-noecn": ("the same without ECN", lambda: _sfc_a("avq", ecn=False)),
    "A-100-avq": ("the same with k = 100 flows", lambda: _sfc_a("avq", k=100)),
    "A-200-sfc-k1=0.02": (
        "SFC A, k = 200, k1 = 0.02 (the sensitivity row's gain)",
        lambda: _sfc_a("sfc", k1=0.02),
    ),
    "A-1000-avq": ("SFC A, k = 1000, AVQ (the full set's row)", lambda: _sfc_a("avq", k=1000)),
    "D-600-red": ("SFC D, k = 600, RED (the full set's row)", lambda: _sfc_d("red", 600)),
    "A-200-sfc-k1=0.02-law10ms": (
        "the same with aqmlab's law run every 10 ms, p held in between (law_period, as the "
        "Tcl marker; ns-2 unchanged)",
        lambda: _sfc_a("sfc", k1=0.02, law_period=0.01),
    ),
    "A-200-sfc-k1=0.02-minrto": (
        "the same with aqmlab's min_rto 0.05 s (ns-2's minrto_ stays 0.2 s)",
        lambda: _min_rto(_sfc_a("sfc", k1=0.02), 0.05),
    ),
    "A-1000-avq-minrto": (
        "A-1000-avq with aqmlab's min_rto 0.05 s (ns-2's minrto_ stays 0.2 s)",
        lambda: _min_rto(_sfc_a("avq", k=1000), 0.05),
    ),
}


def row(name: str, seeds: list[int]) -> str:
    import numpy as np
    from aqmlab.repro.ns2 import run_scenario
    from aqmlab.sim import simulate

    what, build = EXPERIMENTS[name]
    sc = build()
    cols = {"aqmlab": [], "ns-2": []}
    for s in seeds:
        a = simulate(sc, seed=s).summary["links"]["bottleneck"]
        b = run_scenario(sc, s)
        for key, r in (("aqmlab", a), ("ns-2", b)):
            arr = max(r["arrivals"], 1)
            cols[key].append(
                (r["mean_queue_pkts"], r["utilization"], r["drops"] / arr, r["marks"] / arr)
            )
    cells = []
    for key in ("aqmlab", "ns-2"):
        q, u, loss, marks = np.mean(cols[key], axis=0)
        cells.append(f"{q:.1f} / {u:.3f} / {loss:.4f} / {marks:.3f}")
    return f"| {name} | {what} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=2, help="seeds 1..N (default 2)")
    ap.add_argument("--only", default="", help="comma-separated experiment names")
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(EXPERIMENTS)
    for n in names:
        if n not in EXPERIMENTS:
            print(f"error: --only = {n}: one of {', '.join(EXPERIMENTS)}", file=sys.stderr)
            return 2
    print("| experiment | change | aqmlab q / util / loss / marks | ns-2 q / util / loss / marks |")
    print("| --- | --- | --- | --- |")
    for n in names:
        print(row(n, list(range(1, a.seeds + 1))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
