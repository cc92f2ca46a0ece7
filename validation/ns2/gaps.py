"""Per-seed runs of the ns-2 cross-check's rows that one seed could not settle (RESULTS.md).

    .venv/bin/python validation/ns2/gaps.py [--seeds 3] [--only B,C,KTL8]

Each group runs cases of a reproduction, unchanged (the same scenario the reproduction builds),
in both simulators over seeds 1..N, and applies one reduction to both queue traces (the
reproduction's own measure: SFC's settling time and overshoot, the queue's standard deviation
in [30, 60] and [60, 75] s, the mean queue). The groups B, C and KTL8 are the cases as the
reproductions run them; the others are one-change experiments on them (GROUPS). It prints a Markdown table per group (per seed,
then the mean and the seed-to-seed range) and writes ``results/gaps-GROUP.json`` with the
per-seed figures and the queue of every run in 1-s bins (0.5-s bins in [55, 80] s for C).
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _sfc_cases(group: str) -> dict[str, dict]:
    from aqmlab.repro import sfc

    return {c: sc for c, sc in sfc.scenarios_b_c().items() if c.startswith(group)}


def _no_ecn(cases: dict[str, dict], keep: tuple[str, ...]) -> dict[str, dict]:
    """The same cases without ECN (the AQM drops where it marked; the flows are not ECN-capable)."""
    out = {}
    for c in keep:
        sc = copy.deepcopy(cases[c])
        sc["aqm"]["ecn"] = False
        for g in sc["flows"]:
            g["ecn"] = False
        out[f"{c}-noecn"] = sc
    return out


def _droptail(cases: dict[str, dict], case: str) -> dict[str, dict]:
    """One case with its AQM replaced by a drop-tail queue (ECN flows then see drops only)."""
    sc = copy.deepcopy(cases[case])
    sc["aqm"] = {"type": "droptail"}
    return {f"{case[:2]}droptail": sc}


def _min_rto(cases: dict[str, dict], min_rto: float) -> dict[str, dict]:
    """The same cases with aqmlab's RTO floor ``min_rto`` on every flow group (ns-2's script
    keeps its own, ``minrto_`` 0.2 s: its side of these cases is the base cases' run again)."""
    out = {}
    for c, sc in cases.items():
        sc = copy.deepcopy(sc)
        for g in sc["flows"]:
            g["min_rto"] = min_rto
        out[f"{c}-minrto{min_rto:g}"] = sc
    return out


def _min_rto_same_names(cases: dict[str, dict], min_rto: float) -> dict[str, dict]:
    """:func:`_min_rto` with the case names kept, so the ns-2 side is the base group's runs
    (ns-2's script keeps its own RTO floor)."""
    return {c[: -len(f"-minrto{min_rto:g}")]: sc for c, sc in _min_rto(cases, min_rto).items()}


def _law_period(cases: dict[str, dict], period: float) -> dict[str, dict]:
    """The same cases with SFC's law run once per ``period`` s and p held in between
    (``law_period``, docs/aqm/sfc.md), as the ns-2 script's Tcl marker runs it; the case names
    are kept, so the ns-2 side is the base group's runs."""
    out = {}
    for c, sc in cases.items():
        sc = copy.deepcopy(sc)
        sc["aqm"]["law_period"] = period
        out[c] = sc
    return out


def _h1_zero(sc: dict) -> dict:
    """A PD-LQ case with h1 = 0: its RED-like law then sets p = p_offset at every run, whatever
    the queue and arrivals it reads."""
    sc = copy.deepcopy(sc)
    sc["aqm"]["h1"] = 0.0
    return sc


def _ktl_cases() -> dict[str, dict]:
    from aqmlab.repro import ktl

    d, mem, red = ktl.CASES["A-redlike"]
    return {
        "sens-A-redlike-P1=8": ktl.scenario("A-redlike", ktl.aqm_for(d, mem, red, p1=8.0), d),
        "A-redlike": ktl.scenario("A-redlike", ktl.aqm_for(d, mem, red), d),
    }


#: ns-2's initial RTO set to aqmlab's (RFC 6298's 1 s; ns-2.35's default rtxcur_init_ is 3 s)
RTO1 = "Agent/TCP set rtxcur_init_ 1.0\n"

#: ns-2's one-way TCP without its model of the SYN exchange: by default (``syn_`` and
#: ``delay_growth_`` true since 2001) a flow first sends a 40-byte SYN with a window of one and
#: opens its initial window when the SYN is acknowledged; aqmlab's flows send the initial window
#: at the start time
NOSYN = "Agent/TCP set syn_ false\nAgent/TCP set delay_growth_ false\n"
#: ns-2's Limited Transmit off (``singledup_``, on by default since 2001: a new segment on each
#: of the first two duplicate ACKs, RFC 3042; aqmlab's classic NewReno has none)
NOLT = "Agent/TCP set singledup_ 0\n"

#: name -> (what, cases, Tcl for the ns-2 side, the group whose runs it shares): with Tcl ("" too)
#: ns-2 runs and aqmlab's runs are the shared group's; with None (an aqmlab-only change) the
#: ns-2 runs are the shared group's and aqmlab runs
GROUPS = {
    "B": ("SFC experiment B (settling to q_ref = 100)", lambda: _sfc_cases("B"), "", None),
    "C": (
        "SFC experiment C (50 flows pause at 60 s, 50 new at 70 s)",
        lambda: _sfc_cases("C"),
        "",
        None,
    ),
    "KTL8": ("KTL A-redlike at P1 = 8 s^-1 (and the default P1 = 1)", _ktl_cases, "", None),
    "C-noecn": (
        "C without ECN (one change: drops instead of marks)",
        lambda: _no_ecn(_sfc_cases("C"), ("C-sfc", "C-pi")),
        "",
        None,
    ),
    "C-droptail": (
        "C with a drop-tail queue (one change: no AQM; the buffer overflows as under SFC)",
        lambda: _droptail(_sfc_cases("C"), "C-sfc"),
        "",
        None,
    ),
    "C-minrto": (
        "C (SFC and drop-tail) with aqmlab's min_rto 0.05 s (one change, aqmlab's side)",
        lambda: _min_rto(
            {**_droptail(_sfc_cases("C"), "C-sfc"), "C-sfc": _sfc_cases("C")["C-sfc"]}, 0.05
        ),
        "",
        None,
    ),
    "KTL8-noecn": (
        "KTL A-redlike at P1 = 8 s^-1 without ECN (one change)",
        lambda: _no_ecn(_ktl_cases(), ("sens-A-redlike-P1=8",)),
        "",
        None,
    ),
    "KTL8-minrto": (
        "KTL A-redlike at P1 = 8 s^-1 with aqmlab's min_rto 0.05 s (one change, aqmlab's side)",
        lambda: _min_rto({"sens-A-redlike-P1=8": _ktl_cases()["sens-A-redlike-P1=8"]}, 0.05),
        "",
        None,
    ),
    "KTL8-const": (
        "KTL A-redlike at P1 = 8 s^-1 with h1 = 0: p = p_offset always, the law reads nothing "
        "(one change, both simulators)",
        lambda: {"sens-A-redlike-P1=8-h1=0": _h1_zero(_ktl_cases()["sens-A-redlike-P1=8"])},
        "",
        None,
    ),
    "B-minrto": (
        "B-pi with aqmlab's min_rto 0.05 s (one change, aqmlab's side)",
        lambda: _min_rto({"B-pi": _sfc_cases("B")["B-pi"]}, 0.05),
        "",
        None,
    ),
    "C-sfc-law10ms": (
        "C-sfc with aqmlab's SFC law run every 10 ms, p held in between (one change, aqmlab's side)",
        lambda: _law_period({"C-sfc": _sfc_cases("C")["C-sfc"]}, 0.01),
        None,
        "C",
    ),
    "B-rto1": ("B with ns-2's initial RTO 1 s (one change)", lambda: _sfc_cases("B"), RTO1, "B"),
    "C-rto1": ("C with ns-2's initial RTO 1 s (one change)", lambda: _sfc_cases("C"), RTO1, "C"),
    "B-nosyn": (
        "B with ns-2's flows starting without the SYN exchange (one change)",
        lambda: _sfc_cases("B"),
        NOSYN,
        "B",
    ),
    "C-nosyn": (
        "C with ns-2's flows starting without the SYN exchange (one change)",
        lambda: _sfc_cases("C"),
        NOSYN,
        "C",
    ),
    "C-nolt": (
        "C with ns-2's Limited Transmit off (one change)",
        lambda: _sfc_cases("C"),
        NOLT,
        "C",
    ),
    # aqmlab's side only, the ns-2 side the base group's runs: for the patched builds (RESULTS.md,
    # "Patched builds"), whose aqmlab columns are the figures of the -lt files
    "C-sfc-aqmlab": (
        "C-sfc, aqmlab's side (a patched build's; ns-2's side the C runs)",
        lambda: {"C-sfc": _sfc_cases("C")["C-sfc"]},
        None,
        "C",
    ),
    "C-sfc-aqmlab-minrto": (
        "C-sfc with aqmlab's min_rto 0.05 s, aqmlab's side (ns-2's side the C runs)",
        lambda: _min_rto_same_names({"C-sfc": _sfc_cases("C")["C-sfc"]}, 0.05),
        None,
        "C",
    ),
    "C-droptail-aqmlab": (
        "C with a drop-tail queue, aqmlab's side (ns-2's side the C-droptail runs)",
        lambda: _droptail(_sfc_cases("C"), "C-sfc"),
        None,
        "C-droptail",
    ),
    "C-droptail-aqmlab-minrto": (
        "C with a drop-tail queue and aqmlab's min_rto 0.05 s, aqmlab's side (ns-2's side the "
        "C-droptail runs)",
        lambda: _min_rto_same_names(_droptail(_sfc_cases("C"), "C-sfc"), 0.05),
        None,
        "C-droptail",
    ),
    "C-droptail-nolt": (
        "C with a drop-tail queue and ns-2's Limited Transmit off (one change to C-droptail)",
        lambda: _droptail(_sfc_cases("C"), "C-sfc"),
        NOLT,
        "C-droptail",
    ),
}


def reduce(case: str, sc: dict, t: np.ndarray, q: np.ndarray, link: dict) -> dict:
    """The reproduction's metrics of one run from its queue trace and link counters; the same
    function for both simulators."""
    from aqmlab.repro._common import binned
    from aqmlab.repro.sfc import _settle

    arr = max(link["arrivals"], 1)
    out = {
        "mean_queue_pkts": float(link["mean_queue_pkts"]),
        "utilization": float(link["utilization"]),
        "loss": link["drops"] / arr,
        "marks": link["marks"] / arr,
    }
    if case.startswith("B-"):
        out["settling_s"], out["overshoot_pkts"] = _settle(t, q, 100.0, sc["duration"])
    elif case.startswith("C-"):
        tb, qb = binned(t, q, 0.1)
        out["queue_std_30_60"] = float(qb[(tb >= 30) & (tb < 60)].std())
        out["queue_std_60_75"] = float(qb[(tb >= 60) & (tb < 75)].std())
    tb, qb = binned(t, q, 1.0)
    out["queue_1s"] = [round(float(x), 1) for x in qb]
    if case.startswith("C-"):
        sel = (t >= 55) & (t < 80)
        tb, qb = binned(t[sel] - 55.0, q[sel], 0.5)
        out["queue_0.5s_55_80"] = [round(float(x), 1) for x in qb]
    return out


def _aqmlab(job) -> dict:
    from aqmlab.sim import simulate

    case, sc, seed = job
    res = simulate(sc, seed=seed)
    link = res.summary["links"]["bottleneck"]
    cols = res.columns["timeseries"]
    sel = np.asarray(cols["link"]) == "bottleneck"
    t = np.asarray(cols["time_s"])[sel]
    q = np.asarray(cols["queue_pkts"])[sel]
    return reduce(case, sc, t, q, link)


def _ns2(job) -> dict:
    from aqmlab.repro.ns2 import run_scenario

    case, sc, seed, tcl = job
    r = run_scenario(sc, seed, tcl=tcl)
    t = np.arange(len(r["queue_series"])) * r["sample_interval"]
    return reduce(case, sc, t, r["queue_series"], r)


def run_group(name: str, seeds: list[int], workers: int) -> dict:
    """Both simulators over ``seeds`` for every case of group ``name``; the JSON record."""
    what, build, tcl, shared = GROUPS[name]
    cases = build()
    jobs = [(c, sc, s) for c, sc in cases.items() for s in seeds]
    base = RESULTS / f"gaps-{shared}.json"
    reuse = (
        shared and base.exists() and json.loads(base.read_text())["seeds"][: len(seeds)] == seeds
    )
    old = json.loads(base.read_text())["cases"] if reuse else {}
    if reuse and tcl is not None:
        # aqmlab's side is unchanged by an ns-2 option: reuse the base group's runs
        a = [old[c]["aqmlab"][str(s)] for c, _, s in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as ex:
            a = list(ex.map(_aqmlab, jobs))
    if reuse and tcl is None:
        # ns-2's side is unchanged by an aqmlab option: reuse the base group's runs
        b = [old[c]["ns2"][str(s)] for c, _, s in jobs]
    else:
        with ThreadPoolExecutor(max_workers=workers) as ex:
            b = list(ex.map(_ns2, [(*j, tcl or "") for j in jobs]))
    rec = {"group": name, "what": what, "ns2_tcl": tcl, "seeds": seeds, "cases": {}}
    for (c, _, s), ra, rb in zip(jobs, a, b, strict=True):
        rec["cases"].setdefault(c, {"aqmlab": {}, "ns2": {}})
        rec["cases"][c]["aqmlab"][str(s)] = ra
        rec["cases"][c]["ns2"][str(s)] = rb
    return rec


def table(rec: dict) -> str:
    """Per case and metric: each seed's figure in both simulators, the mean and the range."""
    lines = [
        f"{rec['what']}, seeds {', '.join(map(str, rec['seeds']))}",
        "",
        "| case | metric | sim | "
        + " | ".join(f"seed {s}" for s in rec["seeds"])
        + " | mean | range |",
        "| --- | --- | --- | " + "--- | " * len(rec["seeds"]) + "--- | --- |",
    ]
    for c, by in rec["cases"].items():
        keys = [k for k in by["aqmlab"][str(rec["seeds"][0])] if not k.startswith("queue_")]
        first = by["aqmlab"][str(rec["seeds"][0])]
        keys += [k for k in ("queue_std_30_60", "queue_std_60_75") if k in first]
        for k in keys:
            for sim in ("aqmlab", "ns2"):
                v = np.array([by[sim][str(s)][k] for s in rec["seeds"]], dtype=float)
                cells = [f"{x:.4g}" if np.isfinite(x) else "not settled" for x in v]
                fin = v[np.isfinite(v)]
                m = f"{fin.mean():.4g} | {fin.min():.4g}-{fin.max():.4g}" if fin.size else "- | -"
                lines.append(f"| {c} | {k} | {sim} | " + " | ".join(cells) + f" | {m} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N (default 3)")
    ap.add_argument("--only", default="", help="comma-separated groups: " + ", ".join(GROUPS))
    ap.add_argument("--workers", type=int, default=2, help="parallel runs (default 2)")
    ap.add_argument("--table-only", action="store_true", help="print the tables of results/")
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(GROUPS)
    for n in names:
        if n not in GROUPS:
            print(f"error: --only = {n}: one of {', '.join(GROUPS)}", file=sys.stderr)
            return 2
    if a.seeds < 1:
        print(f"error: --seeds = {a.seeds}: must be at least 1", file=sys.stderr)
        return 2
    for n in names:
        path = RESULTS / f"gaps-{n}.json"
        if a.table_only:
            if not path.exists():
                print(f"error: --only = {n}: no {path.name} (run the group first)", file=sys.stderr)
                return 2
            rec = json.loads(path.read_text())
        else:
            rec = run_group(n, list(range(1, a.seeds + 1)), a.workers)
            RESULTS.mkdir(exist_ok=True)
            path.write_text(json.dumps(rec, allow_nan=True) + "\n")
        print(table(rec) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
