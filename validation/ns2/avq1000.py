"""A-1000-avq in both simulators: what keeps ns-2's 1000 flows off the link (RESULTS.md).

    .venv/bin/python validation/ns2/avq1000.py [--seeds 3] [--ns2 case,nosyn-rto1] [--aqmlab LABEL --what TEXT]
        [--duration 120 --warmup 60]

SFC's experiment A with k = 1000 ECN flows and AVQ (experiments.py's ``A-1000-avq``: 40 s,
statistics after 10 s), per seed, with every flow sampled every 0.2 s:

* ns-2 (``--ns2 VARIANT,...``, VARIANTS below: the case, or one ns-2 setting changed) runs
  ``dumbbell.tcl`` with a sampler added before its routes are set: the time, the bottleneck's
  arrivals and drops (the queue monitor's counters), and each long-lived flow's ``cwnd_``,
  ``backoff_`` (the retransmission timer's backoff multiplier, ``t_backoff_``) and ``ack_``;
* aqmlab (``--aqmlab LABEL``: the build on the path, e.g. a patched one, RESULTS.md "Patched
  builds") is stepped to the same instants and reads each flow's ``cwnd`` and acknowledged
  bytes and the bottleneck's counters.

Per run it reports the mean queue, utilisation, loss and marks per arrival, the share of flow
samples after the warm-up with a window below one segment (``stalled``: ns-2's ECN stall), with
a backed-off timer (ns-2 only), and of 0.2-s intervals in which a flow got no new ACK
(``idle``), and the bottleneck's drops per second after the warm-up. It prints a Markdown
table and writes ``results/avq1000-ns2-VARIANT.json`` / ``results/avq1000-aqmlab-LABEL.json``
(``...-120s-warmup60s.json`` with ``--duration 120 --warmup 60``: the same case, measured after
its start-up).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
INTERVAL = 0.2

#: ns-2 variant -> (what it changes, Tcl appended to the configuration)
VARIANTS = {
    "case": ("the case (dumbbell.tcl as the cross-check runs it)", ""),
    "nosyn-rto1": (
        "aqmlab's start: no SYN exchange (`syn_`, `delay_growth_` false: the initial window "
        "at the start time) and aqmlab's initial RTO of 1 s (`rtxcur_init_`)",
        "Agent/TCP set syn_ false\nAgent/TCP set delay_growth_ false\n"
        "Agent/TCP set rtxcur_init_ 1.0\n",
    ),
    "maxrto1": (
        "the backed-off retransmission timer capped at 1 s (`maxrto_` 1, default 60)",
        "Agent/TCP set maxrto_ 1.0\n",
    ),
}

SAMPLER = """
# per-flow sampler (validation/ns2/avq1000.py)
set fs_fh [open $cfg(flow_sample) w]
proc flow_sample {} {
    global ns tcps fs_fh cfg qmon
    set line "[$ns now] [$qmon set parrivals_] [$qmon set pdrops_]"
    foreach t $tcps { append line " " [$t set cwnd_] " " [$t set backoff_] " " [$t set ack_] }
    puts $fs_fh $line
    $ns at [expr {[$ns now] + $cfg(flow_interval)}] "flow_sample"
}
$ns at $cfg(flow_interval) "flow_sample"
"""


def scenario() -> dict:
    """experiments.py's A-1000-avq."""
    sys.path.insert(0, str(HERE))
    import experiments

    return experiments.EXPERIMENTS["A-1000-avq"][1]()


def _per_second(t: np.ndarray, cum: np.ndarray, t0: float) -> list[int]:
    """Increments of a cumulative counter sampled at t, per whole second from t0."""
    out = []
    for s in range(int(t0), int(t[-1])):
        a, b = np.searchsorted(t, [s - 1e-9, s + 1 - 1e-9])
        out.append(int(cum[b] - cum[a]))
    return out


def _flow_stats(t: np.ndarray, cwnd: np.ndarray, acked: np.ndarray, t0: float) -> dict:
    """Shares of the samples from t0 on (rows: instants, columns: flows) with a window below one
    segment, and of the intervals between them in which a flow's acknowledged count stood still."""
    m = t >= t0 - 1e-9
    prog = np.diff(acked[m], axis=0) > 0
    return {
        "stalled": float((cwnd[m] < 1).mean()),
        "idle": float(1 - prog.mean()),
        "flows_sampled": int(cwnd.shape[1]),
        "samples": int(len(t)),
    }


def _bottleneck(r: dict) -> dict:
    """The bottleneck's mean queue, utilisation, and loss and marks per arrival, from a run's
    measurements (ns-2's script and aqmlab's summary name them alike)."""
    arr = max(r["arrivals"], 1)
    return {
        "mean_queue_pkts": r["mean_queue_pkts"],
        "utilization": r["utilization"],
        "loss": r["drops"] / arr,
        "marks": r["marks"] / arr,
    }


def run_ns2(sc: dict, seed: int, tcl: str) -> dict:
    """One ns-2 run with the sampler; the script's measurements and the flow statistics."""
    from aqmlab.repro.ns2 import run_scenario, script_path

    text = script_path().read_text()
    anchor = "\nmanual_routes\n"
    assert text.count(anchor) == 1, "dumbbell.tcl: the call of manual_routes moved"
    with tempfile.TemporaryDirectory(prefix="aqmlab-avq1000-") as d:
        script = Path(d) / "dumbbell.tcl"
        script.write_text(text.replace(anchor, "\n" + SAMPLER + anchor))
        samples = Path(d) / "flows.txt"
        sampler = f"set cfg(flow_sample) {samples}\nset cfg(flow_interval) {INTERVAL}\n"
        r = run_scenario(sc, seed, tcl=tcl + sampler, script=script)
        rows = np.loadtxt(samples, ndmin=2)
    t, drops = rows[:, 0], rows[:, 2]
    cwnd, backoff, ack = rows[:, 3::3], rows[:, 4::3], rows[:, 5::3]
    t0 = float(sc["warmup"])
    m = t >= t0 - 1e-9
    return {
        **_bottleneck(r),
        **_flow_stats(t, cwnd, ack, t0),
        "backed_off": float((backoff[m] > 1).mean()),
        "backoff_p50": float(np.median(backoff[m])),
        "backoff_p90": float(np.quantile(backoff[m], 0.9)),
        "drops_per_s": _per_second(t, drops, t0),
    }


def run_aqmlab(sc: dict, seed: int) -> dict:
    """One aqmlab run stepped every INTERVAL s; the summary's and the flow statistics."""
    from aqmlab.sim import Simulation

    sim = Simulation(sc, seed=seed)
    n = sim.num_flows
    ts, cw, ack, drops = [], [], [], []
    for k in range(1, int(round(float(sc["duration"]) / INTERVAL)) + 1):
        sim.run_until(k * INTERVAL)
        st = [sim.flow_status(i) for i in range(n)]
        ts.append(k * INTERVAL)
        cw.append([s["cwnd"] for s in st])
        ack.append([s["bytes_acked"] for s in st])
        drops.append(sim.link_status("bottleneck")["drops"])
    t, t0 = np.array(ts), float(sc["warmup"])
    return {
        **_bottleneck(sim.result().summary["links"]["bottleneck"]),
        **_flow_stats(t, np.array(cw), np.array(ack), t0),
        "drops_per_s": _per_second(t, np.array(drops, dtype=float), t0),
    }


def _row(name: str, runs: list[dict]) -> str:
    keys = ["mean_queue_pkts", "utilization", "loss", "marks", "stalled", "idle", "backed_off"]
    cells = []
    for k in keys:
        v = [r[k] for r in runs if k in r]
        cells.append(f"{np.mean(v):.3f}" if v else "-")
    bursts = max(max(r["drops_per_s"], default=0) for r in runs)
    return f"| {name} | " + " | ".join(cells) + f" | {bursts} |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N (default 3)")
    ap.add_argument("--ns2", default="case", help="ns-2 variants, comma-separated ('' for none)")
    ap.add_argument(
        "--aqmlab", default="", help="label of the aqmlab build on the path ('' for none)"
    )
    ap.add_argument("--what", default="", help="what the aqmlab build is (written to its file)")
    ap.add_argument(
        "--duration", type=float, default=0.0, help="run length in s (default: the case's 40)"
    )
    ap.add_argument(
        "--warmup", type=float, default=0.0, help="warm-up in s (default: the case's 10)"
    )
    ap.add_argument("--workers", type=int, default=2, help="parallel runs (default 2)")
    a = ap.parse_args(argv)
    variants = [v for v in a.ns2.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            print(f"error: --ns2 = {v}: one of {', '.join(VARIANTS)}", file=sys.stderr)
            return 2
    if a.aqmlab and not a.aqmlab.replace("-", "").isalnum():
        print(f"error: --aqmlab = {a.aqmlab}: letters, digits and '-' only", file=sys.stderr)
        return 2
    sc = scenario()
    tag = ""
    if a.duration or a.warmup:
        sc["duration"] = a.duration or sc["duration"]
        sc["warmup"] = a.warmup or sc["warmup"]
        if not 0 < sc["warmup"] < sc["duration"] - 1:
            print(
                f"error: --warmup = {sc['warmup']:g}: must be below --duration - 1 s",
                file=sys.stderr,
            )
            return 2
        tag = f"-{sc['duration']:g}s-warmup{sc['warmup']:g}s"
    seeds = list(range(1, a.seeds + 1))
    jobs = [("ns2", v, s) for v in variants for s in seeds]
    if a.aqmlab:
        jobs += [("aqmlab", a.aqmlab, s) for s in seeds]

    def one(job: tuple[str, str, int]) -> dict:
        side, name, seed = job
        return run_ns2(sc, seed, VARIANTS[name][1]) if side == "ns2" else run_aqmlab(sc, seed)

    with ThreadPoolExecutor(max_workers=max(1, a.workers)) as ex:
        out = list(ex.map(one, jobs))
    RESULTS.mkdir(exist_ok=True)
    print(
        "| run | q | util | loss | marks | stalled | idle | backed off | most drops in 1 s |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    for side, name in dict.fromkeys((j[0], j[1]) for j in jobs):
        runs = [r for j, r in zip(jobs, out, strict=True) if j[:2] == (side, name)]
        what = VARIANTS[name][0] if side == "ns2" else f"aqmlab build: {a.what or name}"
        doc = {
            "case": "A-1000-avq",
            "duration_s": sc["duration"],
            "warmup_s": sc["warmup"],
            "side": side,
            "what": what,
            "seeds": seeds,
            "runs": runs,
        }
        out_file = RESULTS / f"avq1000-{side}-{name}{tag}.json"
        out_file.write_text(json.dumps(doc, indent=1) + "\n")
        print(_row(f"{side} {name}", runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
