"""Ye et al. (2022), SQM: ns Scenario 2 (the paper's Fig. 5), on packets.

The network of :mod:`aqmlab.repro.sqm_net`. 5 NewReno flows R5->R6 and 5 NewReno R6->R4 from
0 s (starts spread over the first second); 2 CUBIC flows R1->R4 start at 30 s and 3 more at
50 s (ours: §V-B's sentence on the "three more CUBIC flows" lost its start time). RTTs uniform
in 80-180 ms, drawn from the seed. Throughput over [10, 80] s. Metrics per case (means over
seeds):

* ``flow_goodput_bps``: each flow's goodput (payload, bit/s) over its own part of [10, 80] s,
  in flow order (the summary's ``flows[].goodput_bps`` with a 10-s warm-up);
* ``num_optimum_bps``: the alpha-fair (alpha = 2) NUM optimum of the same flows and links,
  recomputed for each flow set ([10, 30), [30, 50), [50, 80] s) and averaged over each flow's
  same window, in payload bit/s;
* ``cubic_share``: mean CUBIC flow goodput / (mean CUBIC + mean R5->R6 NewReno flow goodput),
  the per-flow split at l23 where they meet (0.5: equal rates); ``cubic_share_num`` the same
  for the NUM optimum;
* ``jain_vs_num``: Jain's index of goodput / NUM optimum over all flows (1: the NUM split).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)

import numpy as np

from aqmlab.online import num_optimum
from aqmlab.repro import sqm_net as net
from aqmlab.repro._common import Repro, check, mean_std, timed
from aqmlab.results import jain_index

PAPER = "sqm-s2"
TITLE = "Ye et al. 2022, SQM: ns Scenario 2, NewReno and CUBIC flows sharing two bottlenecks"
DURATION = 80.0
WARMUP = 10.0
CUBIC_STARTS = (30.0, 30.0, 50.0, 50.0, 50.0)
ALPHA = 2.0
PAYLOAD = (net.PKT - 40) / net.PKT  # goodput counts the TCP payload of each 1500-B packet


def flows_for(seed: int) -> list[dict]:
    """The flow list of one seed (flow order: R5->R6, R6->R4 NewReno, then the CUBIC flows).

    Parameters
    ----------
    seed : int
        The seed.

    Returns
    -------
    list of dict
    """
    rng = np.random.default_rng([20222, seed])
    out = []
    for group in ("R5->R6", "R6->R4"):
        for _ in range(5):
            out.append({"group": group, "cc": "newreno", "start": rng.uniform(0, 1)})
    for t in CUBIC_STARTS:
        out.append({"group": "R1->R4", "cc": "cubic", "start": t})
    for f, rtt in zip(out, net.draw_rtts(rng, len(out)), strict=True):
        f["rtt"] = float(rtt)
    return out


def num_reference(flows: list[dict], duration: float, warmup: float) -> np.ndarray:
    """Each flow's alpha-fair NUM rate (payload bit/s) averaged over its window
    ``[max(start, warmup), duration]``; the flow set changes at the flows' start times.

    Parameters
    ----------
    flows : list of dict
        The flows (``start``).
    duration, warmup : float
        Run length and warm-up (s).

    Returns
    -------
    numpy.ndarray
        bit/s per flow.
    """
    R, cap = net.routing(flows)
    starts = np.array([max(f["start"], warmup) for f in flows])
    edges = sorted(set(starts.tolist()) | {duration})
    acc = np.zeros(len(flows))
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        on = starts <= a
        x = np.zeros(len(flows))
        x[on] = num_optimum(R[on], cap, ALPHA).x
        acc += x * (b - a)
    window = duration - starts
    return acc / window * 8 * net.PKT * PAYLOAD


def cubic_share(flows: list[dict], rates) -> float:
    """The mean CUBIC flow's share of the mean CUBIC plus the mean R5->R6 NewReno rate.

    Parameters
    ----------
    flows : list of dict
        The flows (``cc``, ``group``).
    rates : array_like
        Each flow's rate.

    Returns
    -------
    float
    """
    rates = np.asarray(rates, dtype=float)
    cubic = [i for i, f in enumerate(flows) if f["cc"] == "cubic"]
    reno = [i for i, f in enumerate(flows) if f["group"] == "R5->R6"]
    c, r = rates[cubic].mean(), rates[reno].mean()
    return float(c / (c + r))


def _metrics(run, flows, ref) -> dict:
    g = np.array([f["goodput_bps"] for f in run.flows if f["kind"] == "tcp"])
    return {
        "flow_goodput_bps": g.tolist(),
        "cubic_share": cubic_share(flows, g),
        "jain_vs_num": float(jain_index(g / ref)),
        "utilization_l23": float(run.links["l23"]["utilization"]),
        "utilization_l34": float(run.links["l34"]["utilization"]),
    }


def run(quick: bool = False) -> Repro:
    """Run the reproduction (see the module docstring).

    Parameters
    ----------
    quick : bool
        The reduced run (fewer seeds, shorter runs).

    Returns
    -------
    Repro
    """
    return timed(lambda: _run(quick))


def _run(quick: bool) -> Repro:
    seeds = [1] if quick else [1, 2, 3, 4, 5]
    cases = net.CASES + net.EXTRA
    flows = {s: flows_for(s) for s in seeds}
    refs = {s: num_reference(flows[s], DURATION, WARMUP) for s in seeds}
    runs, scen = net.run_cases(PAPER, flows, DURATION, WARMUP)
    out: dict[str, dict] = {}
    for c in cases:
        per = [_metrics(r, flows[r.seed], refs[r.seed]) for r in runs[c]]
        row = {k: mean_std(m[k] for m in per)[0] for k in per[0] if k != "flow_goodput_bps"}
        row["flow_goodput_bps"] = np.mean([m["flow_goodput_bps"] for m in per], axis=0).tolist()
        row["num_optimum_bps"] = np.mean([refs[s] for s in seeds], axis=0).tolist()
        row["cubic_share_num"] = float(np.mean([cubic_share(flows[s], refs[s]) for s in seeds]))
        out[c] = row
    return Repro(
        paper=PAPER,
        title=TITLE,
        quick=quick,
        cases=out,
        checks=_checks(out),
        scenarios=scen,
        figures={"throughput.png": _figure(out, flows[seeds[0]])},
        sections=[("Set-up", _setup(flows))],
        seeds=seeds,
        runs=runs,
        reference=net.REFERENCE,
        rerun=(
            "Every case and seed is in `scenarios/CASE-seedN.toml` (RTTs are drawn per seed; "
            "the sqm cases run the online controller from their `[sqm]` table)."
        ),
    )


def _setup(flows) -> str:
    return (
        f"Duration {DURATION:g} s, goodput over [{WARMUP:g}, {DURATION:g}] s, bottlenecks 50 Mb/s, "
        f"buffer {net.BUFFER} packets, AQM targets {net.TARGET * 1e3:g} ms, SQM K = {net.K}, "
        f"period {net.PERIOD:g} s. CUBIC starts: {', '.join(f'{t:g}' for t in CUBIC_STARTS)} s. "
        "`sqm` tunes for the NUM optimum of the present flows (controller state `num`); "
        "`sqm_ogd` for Algorithm 1's decision as written (state `ogd`); both write sigma by "
        "the Reno delay rule (docs/online.md). The NUM reference uses alpha = 2 for every flow."
    )


def _checks(cases) -> list[dict]:
    share = {c: cases[c]["cubic_share"] for c in cases}
    ref = cases["sqm"]["cubic_share_num"]
    greedy = all(share[c] > 0.5 for c in ("codel", "pie"))
    fair = {c: share[c] for c in ("sqm", "sfq_codel")}
    within = all(abs(v - ref) <= 0.1 or abs(v - 0.5) <= 0.1 for v in fair.values())
    return [
        check(
            "Under CoDel and PIE the CUBIC flows take most of the bandwidth (Fig. 5)",
            "CUBIC flows take most of the bandwidth from NewReno",
            f"cubic_share codel {share['codel']:.2f}, pie {share['pie']:.2f} "
            f"(NUM optimum {ref:.2f}, equal rates 0.50)",
            "reproduced" if greedy else "not reproduced",
            "a CUBIC flow gets more than a NewReno flow under both"
            if greedy
            else "a flow's window here is ~50 packets (5 Mb/s at 80-180 ms), where CUBIC's "
            "TCP-friendly region makes it grow like Reno (RFC 8312 §4.2: at RTT 0.1 s CUBIC's "
            "average window matches Reno's down to loss rates near 1e-3, about 40 packets); "
            "and the CUBIC flows cross both bottlenecks, so they see more drops",
            rule="per-flow split at l23 between CUBIC and the R5->R6 NewReno flows (cubic_share) "
            "above 0.5 for both",
            id="cubic_dominates_single_queue",
            source=SOURCES["greedy"],
        ),
        check(
            "SQM and SFQ-CoDel allocate fairly (Fig. 5)",
            "fair allocation",
            f"cubic_share sqm {fair['sqm']:.2f}, sfq_codel {fair['sfq_codel']:.2f}; "
            f"Jain vs NUM sqm {cases['sqm']['jain_vs_num']:.3f}, "
            f"sfq_codel {cases['sfq_codel']['jain_vs_num']:.3f}",
            "reproduced" if within else "not reproduced",
            "per-flow queues keep CUBIC from taking a NewReno flow's share: SQM's weights "
            "follow the α-fair NUM optimum of the flows present, SFQ-CoDel's equal weights give "
            "near-equal rates"
            if within
            else "a fair-queueing scheme's split is away from both the NUM split and equal rates",
            rule=f"within 0.1 of the NUM split ({ref:.2f}) or of equal rates (0.50) for both",
            id="fq_fair",
            source=SOURCES["fair"],
        ),
    ]


#: Where the paper says each claim (checked against the paper's text).
SOURCES = {
    "greedy": {
        "where": "§V-B, Fig. 5",
        "quote": "the CUBIC flows aggressively acquire much higher throughput while "
        "substantially lowering the throughput of the NewReno flows",
    },
    "fair": {
        "where": "§V-B, Fig. 5",
        "quote": "In contrast, SQM and SFQ-CoDel can provide fair rate allocation for different "
        "flows.",
    },
}


def _figure(cases, flows):
    import matplotlib.pyplot as plt

    labels = [f"{f['group']}\n{f['cc']}" for f in flows]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    names = list(cases)
    w = 0.8 / (len(names) + 1)
    x = np.arange(len(flows))
    for k, c in enumerate(names):
        ax.bar(x + k * w, np.array(cases[c]["flow_goodput_bps"]) / 1e6, w, label=c)
    ax.bar(
        x + len(names) * w,
        np.array(cases[names[0]]["num_optimum_bps"]) / 1e6,
        w,
        label="NUM optimum",
        color="k",
        alpha=0.4,
    )
    ax.set_xticks(x + 0.4 - w / 2)
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("goodput over [10, 80] s [Mb/s]")
    ax.legend(fontsize=7, ncol=3)
    ax.set_title("Scenario 2: average goodput per flow")
    fig.tight_layout()
    return fig
