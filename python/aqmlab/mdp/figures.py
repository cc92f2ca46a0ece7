"""The figures of PAQMAN's evaluation (PAQ §VI, docs/paqman.md) at model level.

``fig5_policies.png`` (drop regions, two service rates, negligible RTT), ``fig6_rtt_policies.png``
(low / high RTT), ``fig7_negligible_rtt.png``, ``fig8_rtt_low.png``, ``fig9_rtt_high.png`` (state
trajectories coloured by time for PAQMAN, CoDel, drop-tail) and ``fig11_boxes.png`` (per-run
stationary delay and throughput per RTT), plus ``figures_summary.json``. The paper's values of
these settings did not survive in its text (PAQ §VI); the defaults are ours (docs/paqman.md):
5 and 10 Mbit/s, 1500-byte packets, d = 5 ms, RTTs 1 and 10 ms.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from aqmlab.mdp.evaluate import _save_fig, evaluate
from aqmlab.mdp.model import negligible_rtt_model
from aqmlab.mdp.policy_io import atomic_write
from aqmlab.mdp.rtt import rtt_model
from aqmlab.mdp.solver import solve

__all__ = ["paper_figures"]


def paper_figures(
    out_dir: str | os.PathLike,
    service_low_bps: float = 5e6,
    service_high_bps: float = 10e6,
    rtts_s: tuple[float, ...] = (0.001, 0.01),
    target_s: float = 0.005,
    pkt_size: float = 1500,
    buffer: int = 200,
    runs: int = 10,
    arrivals: int = 20_000,
    seed: int = 0,
) -> dict:
    """Solve the policies, run the model-level comparisons and write the figures.

    Parameters
    ----------
    out_dir : path
        Created if missing.
    service_low_bps, service_high_bps : float
        Service rates of Fig. 5(a) and 5(b) (bit/s); the high one is used for Fig. 6-11.
    rtts_s : tuple of float
        The first two are Fig. 6's low and high RTT; all appear in Fig. 11 (with 0).
    target_s, pkt_size, buffer, runs, arrivals, seed
        Scenario and evaluation sizes.

    Returns
    -------
    dict
        The content of ``figures_summary.json``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"policies": {}, "evaluations": {}}

    def pps(bps: float) -> float:
        return bps / (8 * pkt_size)

    def solved(model):
        pol = solve(model)
        pol.meta["pkt_size_bytes"] = pkt_size
        return pol

    neg = {
        name: solved(negligible_rtt_model(pps(bps), target_s, buffer))
        for name, bps in (("low", service_low_bps), ("high", service_high_bps))
    }
    rtt_pols = {r: solved(rtt_model(pps(service_high_bps), target_s, r, buffer)) for r in rtts_s}
    for label, pol in [*(("neg_" + k, p) for k, p in neg.items()),
                       *((f"rtt_{r * 1e3:g}ms", p) for r, p in rtt_pols.items())]:  # fmt: skip
        summary["policies"][label] = {
            "gain_per_s": pol.gain,
            "iterations": pol.iterations,
            "first_drop_queue_by_rate": pol.drop_threshold().tolist(),
        }

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (name, pol) in zip(axes, neg.items(), strict=True):
        pol.plot(ax=ax, qmax=12, title=f"Fig. 5({'a' if name == 'low' else 'b'}): "
                 f"service {pol.meta['service_pps'] * 8 * pkt_size / 1e6:g} Mbit/s")  # fmt: skip
    fig.tight_layout()
    _save_fig(fig, out / "fig5_policies.png")
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, r in zip(axes, rtts_s[:2], strict=True):
        rtt_pols[r].plot(ax=ax, qmax=12, title=f"Fig. 6: RTT {r * 1e3:g} ms")
    fig.tight_layout()
    _save_fig(fig, out / "fig6_rtt_policies.png")
    plt.close(fig)

    evs = {0.0: evaluate(neg["high"], runs, arrivals, seed=seed)}
    for r, pol in rtt_pols.items():
        evs[r] = evaluate(pol, runs, arrivals, seed=seed)
    names = {0.0: "fig7_negligible_rtt.png"}
    if len(rtts_s) >= 2:
        names[rtts_s[0]] = "fig8_rtt_low.png"
        names[rtts_s[1]] = "fig9_rtt_high.png"
    for r, ev in evs.items():
        summary["evaluations"][f"{r * 1e3:g}ms"] = ev.summary()
        if r in names:
            fig = ev.plot()
            fig.suptitle(f"RTT {r * 1e3:g} ms: run-averaged state, colour = time", fontsize=9)
            _save_fig(fig, out / names[r])
            plt.close(fig)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    keys = list(evs)
    labels = [f"{r * 1e3:g}" for r in keys]
    for off, aqm, col in ((-0.18, "paqman", "tab:blue"), (0.18, "codel", "tab:orange")):
        pos = np.arange(len(keys)) + off
        for ax, attr in ((ax1, "mean_delay_ms"), (ax2, "throughput_pkts_per_s")):
            data = [[getattr(x, attr) for x in evs[r].runs[aqm]] for r in keys]
            bp = ax.boxplot(data, positions=pos, widths=0.3, patch_artist=True)
            for b in bp["boxes"]:
                b.set_facecolor(col)
            ax.plot([], [], color=col, lw=6, label=aqm)
    for ax, lab in ((ax1, "stationary delay (ms)"), (ax2, "throughput (packets/s)")):
        ax.set_xticks(range(len(keys)), labels)
        ax.set_xlabel("RTT (ms)")
        ax.set_ylabel(lab)
        ax.legend(fontsize=8)
    ax1.set_yscale("log")
    fig.suptitle("Fig. 11: per-run stationary delay and throughput per RTT", fontsize=9)
    fig.tight_layout()
    _save_fig(fig, out / "fig11_boxes.png")
    plt.close(fig)
    atomic_write(out / "figures_summary.json", json.dumps(summary, indent=1) + "\n")
    return summary
