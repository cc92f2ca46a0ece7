"""What an AQM's law reads and sets, and the windows the flows hold, in both simulators.

    .venv/bin/python validation/ns2/lawtrace.py [--case KTL8] [--seed 1]

For one case (CASES) and seed it runs

* ns-2 with two traces of ``dumbbell.tcl``: ``cfg(law_trace)``, the time, queue (packets),
  arrival rate of the last period (packets/s) and probability at every run of the Tcl law (for
  ns-2's own PI: its ``prob_`` sampled every ``1/w_``), and ``cfg(cwnd_trace)``, every
  long-lived flow's ``cwnd_`` every 0.1 s;
* aqmlab stepped to every run of its law (multiples of ``t_update``, PI's ``1/w``), reading the
  bottleneck's queue, its arrivals since the previous run and the AQM's probability, and every
  0.1 s each flow's ``cwnd``;

and prints, for the part after the case's start (CASES), the same summaries of both (mean, standard
deviation, 5 % and 95 % quantiles): what the law reads (q, r, and q's change from one run to
the next), what it sets (p, and how often it is clamped to 0), and how the flows answer (the
mean window, its spread over flows, and the sum of the windows against the pipe). It writes
``results/lawtrace-CASE-SEED.json`` with the summaries.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CWND_INTERVAL = 0.1


def _ktl8(h1: float | None = None) -> dict:
    from aqmlab.repro import ktl

    d, mem, red = ktl.CASES["A-redlike"]
    sc = ktl.scenario("A-redlike", ktl.aqm_for(d, mem, red, p1=8.0), d)
    if h1 is not None:
        sc = copy.deepcopy(sc)
        sc["aqm"]["h1"] = h1
    return sc


def _b_pi() -> dict:
    from aqmlab.repro import sfc

    return sfc.scenarios_b_c()["B-pi"]


#: name -> (what, scenario builder, start of the summarised part in s)
CASES = {
    "KTL8": ("KTL A-redlike at P1 = 8 s^-1 (the case)", _ktl8, 10.0),
    "KTL8-const": (
        "the same with h1 = 0: p = p_offset at every run, the law reads nothing (one change)",
        lambda: _ktl8(h1=0.0),
        10.0,
    ),
    "B-pi": ("SFC B, PI (ns-2's Queue/PI sampled every 1/w_ s)", _b_pi, 10.0),
}


def law_period(sc: dict) -> float:
    """The law's period (s): PD-LQ's t_update, PI's 1/w."""
    aqm = sc["aqm"]
    return float(aqm["t_update"]) if aqm["type"] == "pdlq" else 1.0 / float(aqm["w"])


def _stats(x: np.ndarray) -> dict[str, float]:
    x = np.asarray(x, dtype=float)
    return {
        "mean": float(x.mean()),
        "std": float(x.std()),
        "p05": float(np.quantile(x, 0.05)),
        "p95": float(np.quantile(x, 0.95)),
    }


def summarise(t, q, r, p, tw, w, warmup: float, marks: float) -> dict:
    """The summaries of one run: the law's series (t, q, r, p at each run), the windows ``w``
    (one row per sample time ``tw``, one column per flow) and marks per arrival; ``q_1s`` the
    queue's 1-s means from the start."""
    t, q, r, p = (np.asarray(a, dtype=float) for a in (t, q, r, p))
    sel = t >= warmup
    q_1s = [round(float(q[(t > k) & (t <= k + 1)].mean()), 1) for k in range(int(t.max()))]
    tw = np.asarray(tw, dtype=float)
    w = np.asarray(w, dtype=float)[tw >= warmup]
    return {
        "q": _stats(q[sel]),
        "dq": _stats(np.diff(q[sel])),
        "r": _stats(r[sel]),
        "p": _stats(p[sel]),
        "p_zero": float(np.mean(p[sel] <= 0.0)),
        "cwnd": _stats(w),
        "cwnd_flow_means_std": float(w.mean(axis=0).std()),
        "cwnd_sum": _stats(w.sum(axis=1)),
        "marks": marks,
        "q_1s": q_1s,
    }


def run_ns2(sc: dict, seed: int, start: float) -> dict:
    """ns-2 with the law and window traces; the summaries."""
    from aqmlab.repro.ns2 import run_scenario

    with tempfile.TemporaryDirectory(prefix="aqmlab-lawtrace-") as d:
        law, cw = Path(d) / "law.txt", Path(d) / "cwnd.txt"
        tcl = (
            f"set cfg(law_trace) {{{law}}}\nset cfg(cwnd_trace) {{{cw}}}\n"
            f"set cfg(cwnd_interval) {CWND_INTERVAL}\n"
        )
        res = run_scenario(sc, seed, tcl=tcl)
        lt = np.loadtxt(law, ndmin=2)
        ct = np.loadtxt(cw, ndmin=2)
    marks = res["marks"] / max(res["arrivals"], 1)
    return summarise(*lt.T, ct[:, 0], ct[:, 1:], start, marks)


def run_aqmlab(sc: dict, seed: int, start: float) -> dict:
    """aqmlab stepped to every run of the law; the summaries."""
    from aqmlab.sim import Simulation

    ts = law_period(sc)
    step = round(ts * 1e9)
    every = max(round(CWND_INTERVAL / ts), 1)
    sim = Simulation(sc, seed=seed)
    n = sim.num_flows
    n = n() if callable(n) else n
    rows, tw, w = [], [], []
    last = 0
    m0 = a0 = None
    for k in range(1, int(round(sc["duration"] / ts)) + 1):
        sim.run_until_ns(k * step)
        st = sim.link_status("bottleneck")
        arr = st["arrivals"]
        rows.append((k * ts, st["queue_pkts"], (arr - last) / ts, st["probability"]))
        last = arr
        if m0 is None and k * ts >= start:
            m0, a0 = st["marks"], arr
        if k % every == 0:
            tw.append(k * ts)
            w.append([sim.flow_status(i)["cwnd"] for i in range(n)])
    st = sim.link_status("bottleneck")
    marks = (st["marks"] - m0) / max(st["arrivals"] - a0, 1)
    t, q, r, p = np.array(rows).T
    return summarise(t, q, r, p, tw, w, start, marks)


def table(rec: dict) -> str:
    """Markdown: one row per quantity, aqmlab then ns-2 (mean, std, 5 % and 95 % quantiles)."""
    lines = [
        f"{rec['what']}, seed {rec['seed']} (from {rec['start']:g} s)",
        "",
        "| quantity | aqmlab mean / std / p05 / p95 | ns-2 mean / std / p05 / p95 |",
        "| --- | --- | --- |",
    ]
    a, b = rec["aqmlab"], rec["ns2"]
    for k in ("q", "dq", "r", "p", "cwnd", "cwnd_sum"):
        cells = [
            " / ".join(f"{s[x]:.4g}" for x in ("mean", "std", "p05", "p95")) for s in (a[k], b[k])
        ]
        lines.append(f"| {k} | {cells[0]} | {cells[1]} |")
    for k in ("p_zero", "cwnd_flow_means_std", "marks"):
        lines.append(f"| {k} | {a[k]:.4g} | {b[k]:.4g} |")
    first = [", ".join(f"{x:.0f}" for x in s["q_1s"][:5]) for s in (a, b)]
    lines.append(f"| q, 1-s means of the first 5 s | {first[0]} | {first[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="KTL8", help="one of: " + ", ".join(CASES))
    ap.add_argument("--seed", type=int, default=1, help="the seed (default 1)")
    a = ap.parse_args(argv)
    if a.case not in CASES:
        print(f"error: --case = {a.case}: one of {', '.join(CASES)}", file=sys.stderr)
        return 2
    if a.seed < 1:
        print(f"error: --seed = {a.seed}: must be at least 1", file=sys.stderr)
        return 2
    what, build, start = CASES[a.case]
    sc = build()
    rec = {
        "case": a.case,
        "what": what,
        "seed": a.seed,
        "start": start,
        "aqmlab": run_aqmlab(sc, a.seed, start),
        "ns2": run_ns2(sc, a.seed, start),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"lawtrace-{a.case}-{a.seed}.json").write_text(json.dumps(rec, indent=1) + "\n")
    print(table(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
