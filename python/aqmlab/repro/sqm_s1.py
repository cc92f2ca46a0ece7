"""Ye et al. (2022), SQM: ns Scenario 1 (the paper's Fig. 4), on packets.

The network of :mod:`aqmlab.repro.sqm_net`. At the start 5 NewReno flows R5->R6 and 5 R6->R4;
then at each 5-s period a uniform {0..5} new NewReno R1->R4 flows arrive (within the first
second of the period), each offering data for a uniform 15-45 s ("different finishing times"),
until K = 40 flows have been created. RTTs uniform in 80-180 ms. The schedule and RTTs are
drawn from the seed (NumPy), the same for every case of a seed. Metrics per case (means over
seeds), all at ``l23``, the link the paper plots, after the warm-up:

* ``delay_std_ms``: standard deviation of the 10-ms delay samples (mean sojourn of the packets
  leaving in each 10 ms);
* ``delay_p99_ms``: their 99th percentile (the spikes);
* ``mean_delay_ms``: the per-packet mean queueing delay;
* ``utilization``.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)

import numpy as np

from aqmlab.repro import sqm_net as net
from aqmlab.repro._common import Repro, check, mean_std, timed

PAPER = "sqm-s1"
TITLE = "Ye et al. 2022, SQM: ns Scenario 1, queueing delay at l23 under a changing flow set"
LIFETIME = (15.0, 45.0)  # s, how long an arriving flow offers data
NEW_PER_PERIOD = 5  # largest number of arrivals in a period (uniform 0..5)


def flows_for(seed: int, duration: float) -> list[dict]:
    """The flow list (``sqm_net.scenario``'s ``flows``) of one seed.

    Parameters
    ----------
    seed : int
        The seed.
    duration : float
        Run length (s).

    Returns
    -------
    list of dict
    """
    rng = np.random.default_rng([20221, seed])
    out = []
    for group in ("R5->R6", "R6->R4"):
        for _ in range(5):
            out.append({"group": group, "cc": "newreno", "start": rng.uniform(0, 1)})
    k = 1
    while len(out) < net.K and k * net.PERIOD < duration - net.PERIOD:
        for _ in range(int(rng.integers(0, NEW_PER_PERIOD + 1))):
            if len(out) == net.K:
                break
            start = k * net.PERIOD + rng.uniform(0, 1)
            stop = start + rng.uniform(*LIFETIME)
            out.append(
                {
                    "group": "R1->R4",
                    "cc": "newreno",
                    "start": start,
                    "stop": stop if stop < duration else None,
                }
            )
        k += 1
    for f, rtt in zip(out, net.draw_rtts(rng, len(out)), strict=True):
        f["rtt"] = float(rtt)
    return out


def active_count(flows: list[dict], t: np.ndarray) -> np.ndarray:
    """Number of flows offering data at each time of ``t``.

    Parameters
    ----------
    flows : list of dict
        The flows (``start``, ``stop``).
    t : numpy.ndarray
        Times (s).

    Returns
    -------
    numpy.ndarray of int
    """
    n = np.zeros(len(t), dtype=int)
    for f in flows:
        stop = f.get("stop") or np.inf
        n += (t >= f["start"]) & (t < stop)
    return n


def _metrics(run) -> dict[str, float]:
    ts = run.ts["l23"]
    keep = ts["time_s"] > run.warmup_s
    d = ts["queue_delay_ms_mean"][keep]
    d = d[np.isfinite(d)]
    link = run.links["l23"]
    return {
        "delay_std_ms": float(np.std(d)),
        "delay_p99_ms": float(np.percentile(d, 99)),
        "mean_delay_ms": float(link["queue_delay_ms"]["mean"]),
        "utilization": float(link["utilization"]),
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
    duration = 60.0 if quick else 120.0
    warmup = 10.0
    flows = {s: flows_for(s, duration) for s in seeds}
    runs, scen = net.run_cases(PAPER, flows, duration, warmup)
    cases_run = net.CASES + net.EXTRA
    per = {c: [_metrics(r) for r in runs[c]] for c in cases_run}
    cases = {c: {k: mean_std(m[k] for m in per[c])[0] for k in per[c][0]} for c in cases_run}
    for c in cases_run:
        cases[c]["delay_std_ms_sd"] = mean_std(m["delay_std_ms"] for m in per[c])[1]
    checks = _checks(cases, per, seeds)
    figures = {"delay_l23.png": _figure(runs, flows[seeds[0]], seeds[0], warmup)}
    return Repro(
        paper=PAPER,
        title=TITLE,
        quick=quick,
        cases=cases,
        checks=checks,
        scenarios=scen,
        figures=figures,
        sections=[("Set-up", _setup(duration, warmup, flows))],
        seeds=seeds,
        runs=runs,
        reference=net.REFERENCE,
        rerun=(
            "Every case and seed is in `scenarios/CASE-seedN.toml` (the arrival schedule and "
            "RTTs are drawn per seed; `aqmlab run scenarios/sqm-seed1.toml --out DIR` reruns "
            "one; the sqm case runs the online controller from its `[sqm]` table)."
        ),
    )


def _setup(duration: float, warmup: float, flows: dict[int, list[dict]]) -> str:
    lines = [
        f"Duration {duration:g} s, warm-up {warmup:g} s, bottlenecks 50 Mb/s "
        f"({net.CAPACITY_PPS:.0f} packets/s of {net.PKT} B), buffer {net.BUFFER} packets, "
        f"AQM targets {net.TARGET * 1e3:g} ms, SQM K = {net.K}, period {net.PERIOD:g} s.",
        "",
    ]
    for s, fl in flows.items():
        late = [f for f in fl if f["group"] == "R1->R4"]
        t = np.arange(warmup, duration, 0.01)
        n = active_count(fl, t)
        lines.append(
            f"* seed {s}: {len(late)} R1->R4 arrivals; flows offering data "
            f"{n.min()}-{n.max()} (mean {n.mean():.1f}) after the warm-up."
        )
    return "\n".join(lines)


def _checks(cases, per, seeds) -> list[dict]:
    def f(c, k):
        return cases[c][k]

    n = len(seeds)
    sqm_std = f("sqm", "delay_std_ms")
    single = {c: f(c, "delay_std_ms") for c in ("codel", "pie")}
    # on average at most 0.6 of CoDel's and PIE's, and below both in every seed
    wins = sum(
        all(per["sqm"][i]["delay_std_ms"] < per[c][i]["delay_std_ms"] for c in single)
        for i in range(n)
    )
    steady = all(sqm_std <= 0.6 * v for v in single.values())
    out = [
        check(
            "SQM keeps the delay at l23 stable while CoDel and PIE fluctuate (Fig. 4)",
            "SQM stays stable; CoDel and PIE fluctuate",
            f"std of 10-ms delay samples: sqm {sqm_std:.2f} ms; "
            + ", ".join(f"{c} {v:.2f}" for c, v in single.items())
            + f" ms (sqm below both in {wins}/{n} seeds)",
            "reproduced" if steady and wins == n else "not reproduced",
            (
                "SQM's per-flow queues keep one flow's arrival or departure from moving the "
                "others' delay, and the controller retunes sigma every 5 s for the flows present"
                if steady and wins == n
                else "SQM's delay varies as much as a single-queue AQM's in some seed"
            )
            + "; sigma follows the Reno delay rule, not Theorem 3 (row 'Which sigma')",
            rule="standard deviation of the 10-ms delay samples at l23 after the warm-up; "
            "'stable' = on average at most 0.6 of CoDel's and PIE's and below both in every seed",
            id="sqm_most_stable",
            source=SOURCES["fig4"],
        )
    ]
    spikes = {c: f(c, "delay_p99_ms") for c in ("codel", "pie")}
    ok = all(v > f("sqm", "delay_p99_ms") for v in spikes.values())
    out.append(
        check(
            "CoDel and PIE show delay spikes when the flow count changes (Fig. 4)",
            "spikes above SQM's delay",
            f"p99 of the 10-ms samples: codel {spikes['codel']:.1f}, pie {spikes['pie']:.1f}, "
            f"sqm {f('sqm', 'delay_p99_ms'):.1f} ms",
            "reproduced" if ok else "not reproduced",
            "a burst of new flows fills the single queue before CoDel's or PIE's drop rate "
            "catches up, which shows in the 99th percentile"
            if ok
            else "a single-queue AQM's 99th percentile is not above SQM's",
            rule="p99 of the 10-ms delay samples (the size of the spikes) above SQM's for both",
            id="codel_pie_spikes",
            source=SOURCES["spikes"],
        )
    )
    sfq = ("sfq_codel", "delay_std_ms"), ("sfq_codel", "mean_delay_ms")
    ok = f(*sfq[0]) >= 1.5 * sqm_std and f(*sfq[1]) > f("sqm", "mean_delay_ms")
    out.append(
        check(
            "SFQ-CoDel fluctuates strongly with a larger mean delay than SQM (Fig. 4)",
            "larger fluctuation and mean than SQM",
            f"sfq_codel std {f(*sfq[0]):.2f} ms, mean {f(*sfq[1]):.2f} ms; "
            f"sqm std {sqm_std:.2f} ms, mean {f('sqm', 'mean_delay_ms'):.2f} ms",
            "reproduced" if ok else "not reproduced",
            "SFQ-CoDel's flows share the link as in SQM, but its static weights and CoDel's "
            "per-queue control swing more"
            if ok
            else "SFQ-CoDel isolates the flows as SQM does and runs CoDel per queue at the same "
            f"5 ms target: its standard deviation is {f(*sfq[0]) / sqm_std:.2f}× SQM's and its "
            f"mean {f(*sfq[1]) - f('sqm', 'mean_delay_ms'):+.2f} ms from SQM's; the paper's "
            "SFQ-CoDel settings beyond 'default' are not given",
            rule="standard deviation at least 1.5 times SQM's and a larger per-packet mean",
            id="sfq_codel_fluctuates",
            source=SOURCES["sfq"],
        )
    )
    ogd = cases.get("sqm_ogd")
    if ogd is not None:
        out.append(
            check(
                "SQM tuned by Algorithm 1's decision as written (case sqm_ogd)",
                "not separated in the paper",
                f"utilisation {ogd['utilization']:.3f}, delay std {ogd['delay_std_ms']:.2f} ms "
                f"(sqm: {f('sqm', 'utilization'):.3f}, {sqm_std:.2f} ms)",
                "not comparable",
                "Algorithm 1 with the paper's step size jumps between epsilon and the link "
                "capacity at operating rates (docs/online.md, Findings); sigma tuned for those "
                "rates starves the link. The sqm case tunes for the NUM optimum it tracks.",
                rule="no paper number: the paper does not run Algorithm 1 apart from Algorithm 2",
                id="sqm_ogd",
                source=SOURCES["alg1"],
            )
        )
    th3 = cases.get("sqm_theorem3")
    if th3 is not None:
        ok = f("sqm", "mean_delay_ms") <= 2 * net.TARGET * 1e3 < th3["mean_delay_ms"]
        out.append(
            check(
                "Which sigma gives the paper's behaviour (a queue near the 5 ms target)",
                "sigma from Theorem 3 (Algorithm 2)",
                f"mean delay at l23: Reno delay rule {f('sqm', 'mean_delay_ms'):.1f} ms, "
                f"Theorem 3 taken literally {th3['mean_delay_ms']:.0f} ms "
                f"(std {th3['delay_std_ms']:.0f} ms)",
                "not reproduced" if ok else "not comparable",
                "Theorem 3's sigma (~1e6-1e7 packets, fluid-model units) makes the law's "
                "probability vanish: the queues fill the buffer as under drop-tail. Only the "
                "Reno delay rule (sigma in real loss-rate units) holds the 5 ms target, so the "
                "paper's Fig. 4 cannot come from Theorem 3 used literally",
                rule="Theorem 3's case above twice the 5 ms target while the delay-rule case is "
                "within it",
                id="sigma_rule",
                source=SOURCES["theorem3"],
            )
        )
    util = {c: f(c, "utilization") for c in cases}
    out.append(
        check(
            "All AQMs keep l23 busy (the paper plots delay only)",
            "not reported",
            ", ".join(f"{c} {v:.3f}" for c, v in util.items()),
            "not comparable",
            "the paper gives no throughput for Scenario 1; shown so that a low delay cannot "
            "hide an idle link",
            rule="utilisation of l23 after the warm-up; no paper number",
            id="utilization",
            source=SOURCES["util"],
        )
    )
    return out


#: Where the paper says each claim (checked against the paper's text).
SOURCES = {
    "fig4": {
        "where": "§V-B, Fig. 4",
        "quote": "our SQM can consistently stabilize the queueing delay by properly tuning its "
        "control parameters",
    },
    "spikes": {
        "where": "§V-B, Fig. 4",
        "quote": "CoDel and PIE exhibit a number of notable spikes on the queueing delay when "
        "the number of flows changes",
    },
    "sfq": {
        "where": "§V-B, Fig. 4",
        "quote": "SFQ-CoDel suffers more and shows highly fluctuating queueing delay with a "
        "larger mean value",
    },
    "alg1": {
        "where": "§IV-B, Algorithm 1; §IV-C, Algorithm 2",
        "quote": "We now present our SQM algorithm based on the solution to the SNUM and the "
        "stability condition (23) in Algorithm 2.",
    },
    "theorem3": {
        "where": "§III-B, Theorem 3, eq. (23); §V-B",
        "quote": "Theorem 3 provides a guidance for choosing proper control parameters σ_il,t",
    },
    "util": {
        "where": "§V-B",
        "quote": "here we only present the results for the queueing delay at the more "
        "congested link l23",
    },
}


def _figure(runs, flows, seed, warmup):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(net.CASES) + 1, 1, figsize=(9, 10), sharex=True)
    for ax, case in zip(axes, net.CASES, strict=False):
        r = next(r for r in runs[case] if r.seed == seed)
        ts = r.ts["l23"]
        ax.plot(ts["time_s"], ts["queue_delay_ms_mean"], lw=0.5)
        ax.set_ylabel(f"{case}\ndelay [ms]")
        ax.axvline(warmup, color="grey", lw=0.5, ls=":")
    top = max(ax.get_ylim()[1] for ax in axes[:-1])
    for ax in axes[:-1]:
        ax.set_ylim(0, top)  # one scale for every AQM
    t = np.arange(0, runs[net.CASES[0]][0].sim_seconds, 0.1)
    axes[-1].step(t, active_count(flows, t), where="post")
    axes[-1].set_ylabel("flows")
    axes[-1].set_xlabel("time [s]")
    axes[0].set_title(f"Queueing delay at l23 (10-ms samples), seed {seed}")
    fig.tight_layout()
    return fig
