"""Kar, Alt, Koeppl & Rizk, PAQMAN (arXiv 2202.10352): the comparisons of §VI (Figs. 7-11).

TCP Reno over a 10 Mb/s bottleneck of 1500-byte packets (833.3 packets/s), delay target
d = 5 ms, buffer 200 packets; PAQMAN runs a policy the reproduction solves itself
(:func:`aqmlab.mdp.solve`) and writes next to the scenarios (``scenarios/NAME.policy.json``, a
path relative to the scenario file), against CoDel (target = d, interval 100 ms) and drop-tail.

* ``paqman``, ``codel``, ``droptail``: Fig. 7 (negligible RTT): the negligible-RTT policy
  (gamma shape 2) on one flow with the smallest RTT we run, 1 ms. Paper: same throughput as
  CoDel, much shorter queue; drop-tail near full utilisation with a long delay.
* ``{paqman,codel,droptail}-rtt{R}ms`` (full run: R = 1, 5, 10, 20 ms; quick: 1 and 10 ms):
  Figs. 8, 9 and 11, one flow, PAQMAN with the policy of the RTT model solved for R. Paper:
  as Fig. 7; a larger RTT lowers both delay and throughput.
* ``{paqman,codel,droptail}-3flows``: Fig. 10, three flows with RTTs 1, 5 and 10 ms, started
  together. ``paqman-3flows`` is the single-flow stand-in: the RTT-model policy for the middle
  RTT (5 ms) on the aggregate. Paper: PAQMAN ≈ CoDel throughput with a lower delay.
* ``paqman-dqn-3flows``: the same case with the paper's multi-flow policy (§V-B): a Q-network
  learned by a DQN from trajectories of the multi-flow model (:mod:`aqmlab.mdp.dqn`), run per
  flow by the ``paqman`` AQM (policy model ``"multiflow"``).
* ``sens-...`` (one seed): the estimator's ``mix``, the penalty P and the drop projection of the
  rate grid (docs/paqman.md, "The policy islands") at R = 10 ms.

Metrics per case: ``mean_delay_ms`` (mean queueing delay at the bottleneck), ``throughput_bps``
(bottleneck utilisation × link rate), ``utilization``, ``mean_queue_pkts``, ``goodput_bps``
(sum over the flows).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=False)

from aqmlab.mdp import load_policy
from aqmlab.repro._common import Job, Repro, check, mean_std, run_jobs, timed

PAPER = "paqman"
TITLE = "Kar, Alt, Koeppl & Rizk, PAQMAN (arXiv 2202.10352), §VI: PAQMAN vs CoDel vs drop-tail"
RATE_BPS = 10e6
PKT = 1500
MU = RATE_BPS / (8 * PKT)  # packets/s
TARGET = 0.005
BUFFER = 200
BASE_RTT = 0.001
RTTS_FULL = (0.001, 0.005, 0.01, 0.02)
RTTS_QUICK = (0.001, 0.01)
RTTS_3FLOWS = (0.001, 0.005, 0.01)
MIX = 0.01  # the AQM's default (docs/aqm/paqman.md, decision 2)
QUICK_GRID = (20, 60)  # G and B of the policies in quick mode
# Tolerances of the verdicts.
TOL_TPUT = 0.10  # PAQMAN's throughput within 10 % of CoDel's
TOL_FULL = 0.95  # drop-tail "near full utilisation": at least 95 %
LONG_DELAY = 5.0  # drop-tail's delay "long": at least 5 x CoDel's
SHORTER = 0.5  # PAQMAN's queue "much shorter": mean delay at most half CoDel's
# The multi-flow DQN's training budget (aqmlab.mdp.dqn.fit_dqn_policy) and its model-level
# evaluation (decisions per run; the queue thresholds it is compared with).
DQN_QUICK = {"n_decisions": 6000, "rounds": 3, "restarts": 2, "iters": 20, "epochs": 1}
DQN_FULL = {"n_decisions": 20000, "rounds": 4, "restarts": 3, "iters": 30, "epochs": 1}
DQN_EVAL = 10000
DQN_THRESHOLDS = (2, 3, 4, 6, 8)


DQN_KEY = "paqman-dqn-3flows"
DQN_PENALTY = (
    0.5  # the single-flow policies' P (the stand-in's), so the two differ in the model only
)


def train_dqn(quick: bool, grid: int, buffer: int, seed: int = 1) -> dict:
    """Learn the multi-flow policy of the 3-flow case (PAQ §V-B) and evaluate it in the model.

    Parameters
    ----------
    quick : bool
        The quick training budget (``DQN_QUICK``) instead of ``DQN_FULL``.
    grid, buffer : int
        ``G`` and ``B`` of the model (as the single-flow policies').
    seed : int
        Seed of the training.

    Returns
    -------
    dict
        ``text`` (the policy file), ``parameters``, ``bytes``, ``train_seconds``, ``budget``,
        ``history`` and ``model`` (``{policy name: evaluate() figures}``, the DQN and the
        queue thresholds ``DQN_THRESHOLDS``, each over ``DQN_EVAL`` decisions of seed 1000).
    """
    from aqmlab.mdp.dqn import evaluate, fit_dqn_policy
    from aqmlab.mdp.multiflow import MultiflowConfig, threshold_policy

    cfg = MultiflowConfig(MU, TARGET, RTTS_3FLOWS, buffer=buffer, grid=grid, penalty=DQN_PENALTY)
    budget = DQN_QUICK if quick else DQN_FULL
    pol = fit_dqn_policy(cfg, seed=seed, **budget)
    model = {"dqn": evaluate(cfg, pol, DQN_EVAL, seed=1000)}
    for k in DQN_THRESHOLDS:
        model[f"threshold {k}"] = evaluate(cfg, threshold_policy(k), DQN_EVAL, seed=1000)
    return {
        "text": json.dumps(pol.to_dict(PKT), allow_nan=False) + "\n",
        "parameters": pol.parameters(),
        "bytes": pol.nbytes(),
        "train_seconds": pol.train_seconds,
        "budget": budget,
        "history": pol.history,
        "restart_rates": pol.meta["restart_rates"],
        "model": model,
    }


def _ms(rtt: float) -> str:
    return f"{rtt * 1e3:g}ms"


def solve_policy(rtt: float | None, grid: int, buffer: int, **kw) -> str:
    """Solve a PAQMAN policy for the set-up (``rtt=None``: the negligible-RTT model) and
    return the policy file's text.

    Parameters
    ----------
    rtt : float or None
        RTT of the RTT model (s); None for the negligible-RTT model (gamma shape 2).
    grid, buffer : int
        ``G`` and ``B`` of the model.
    **kw
        Passed to the model (``penalty``, ``drop_projection``).

    Returns
    -------
    str
        The policy file's JSON text (docs/paqman_policy_format.md).
    """
    from aqmlab.mdp import negligible_rtt_model, rtt_model, solve

    if rtt is None:
        model = negligible_rtt_model(MU, TARGET, buffer=buffer, grid=grid, **kw)
    else:
        model = rtt_model(MU, TARGET, rtt, buffer=buffer, grid=grid, **kw)
    pol = solve(model)
    pol.meta["pkt_size_bytes"] = PKT
    return json.dumps(pol.to_dict(), indent=1, allow_nan=False) + "\n"


def _solve_one(args) -> tuple[str, str]:
    name, rtt, grid, buffer, kw = args
    kw = dict(kw)  # a spec may set its own grid and buffer
    return name, solve_policy(rtt, kw.pop("grid", grid), kw.pop("buffer", buffer), **kw)


def solve_policies(specs: dict[str, tuple], grid: int, buffer: int) -> dict[str, str]:
    """Solve every policy of ``specs`` (``{name: (rtt or None, model kwargs)}``; the kwargs may
    override ``grid`` and ``buffer``), in worker processes when there are several; returns
    ``{name: policy file text}``.

    Parameters
    ----------
    specs : dict
        ``{name: (rtt or None, model kwargs)}``.
    grid : int
        Rate-grid size ``G`` (unless a spec's kwargs give one).
    buffer : int
        Buffer ``B`` (unless a spec's kwargs give one).

    Returns
    -------
    dict of str to str
    """
    from concurrent.futures import ProcessPoolExecutor

    from aqmlab.repro._common import _workers

    args = [(n, rtt, grid, buffer, kw) for n, (rtt, kw) in specs.items()]
    n = min(_workers(), len(args))
    if n <= 1:
        return dict(map(_solve_one, args))
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn")) as ex:
        return dict(ex.map(_solve_one, args))


def scenario(case: str, aqm: dict, rtts: tuple[float, ...], duration: float, warmup: float):
    """One case's scenario: a dumbbell at 10 Mb/s with one Reno flow per RTT in ``rtts``.

    Parameters
    ----------
    case : str
        Case name (the scenario's name is ``paqman-CASE``).
    aqm : dict
        The ``[aqm]`` table.
    rtts : tuple of float
        Two-way propagation delay of each flow (s); flows beyond the smallest RTT get an extra
        one-way delay of half the difference on their access link.
    duration, warmup : float
        Run length and warm-up (s).

    Returns
    -------
    dict
    """
    rtt = min(rtts)
    flows = [{"kind": "tcp", "count": len(rtts), "cc": "reno"}]
    if len(set(rtts)) > 1:  # per-flow RTTs: one-way extra delay (each way) on the access link
        flows[0]["extra_delay"] = [round((r - rtt) / 2, 9) for r in rtts]
        # started together (Fig. 10 starts from equal shares), so the flows' first packets
        # reach the bottleneck in the order of their RTTs: the multi-flow policy's slots
        flows[0]["start"] = 0.0
    return {
        "name": f"paqman-{case}",
        "seed": 1,
        # TCP pinned to the classic profile, the model this reproduction was validated with
        "profile": "classic",
        "duration": duration,
        "warmup": warmup,
        "sample_interval": 0.01,
        "dumbbell": {"rate": "10Mbps", "rtt": rtt, "buffer": BUFFER, "pkt_size": PKT},
        "aqm": aqm,
        "flows": flows,
    }


def _metrics(runs) -> dict[str, float]:
    link = [r.links["bottleneck"] for r in runs]
    d, _ = mean_std(x["queue_delay_ms"]["mean"] for x in link)
    u, _ = mean_std(x["utilization"] for x in link)
    q, _ = mean_std(x["mean_queue_pkts"] for x in link)
    g, _ = mean_std(sum(r.goodputs_bps) for r in runs)
    return {
        "mean_delay_ms": d,
        "throughput_bps": u * RATE_BPS,
        "utilization": u,
        "mean_queue_pkts": q,
        "goodput_bps": g,
    }


def run(quick: bool = False) -> Repro:
    """Solve the policies, run every case and compare with the paper (module docstring).

    Parameters
    ----------
    quick : bool
        Reduced run for tests and CI: coarse policies (G = 20, B = 60), 2 seeds, 20-s runs,
        RTTs 1 and 10 ms.

    Returns
    -------
    Repro
    """
    return timed(lambda: _run(quick))


def _policy_name(key: str) -> str:
    return f"{key}.policy.json"


def _run(quick: bool) -> Repro:
    seeds = [1, 2] if quick else list(range(1, 11))
    duration, warmup = (20.0, 5.0) if quick else (60.0, 10.0)
    grid, buffer = QUICK_GRID if quick else (50, BUFFER)
    rtts = RTTS_QUICK if quick else RTTS_FULL
    mid = RTTS_3FLOWS[1]
    # Policies: {name: (rtt or None, model kwargs)}
    specs: dict[str, tuple] = {"paqman": (None, {})}
    for r in sorted({*rtts, mid}):
        specs[f"paqman-rtt{_ms(r)}"] = (r, {})
    sens_rtt = 0.01
    specs["sens-P=1"] = (sens_rtt, {"penalty": 1.0})
    specs["sens-floor"] = (sens_rtt, {"drop_projection": "floor"})
    # Reno's window grows by one packet per RTT: +1/R packets/s per decision of the RTT model,
    # i.e. a grid unit mu/G = 1/R, G = mu R (the bandwidth-delay product in packets)
    g_bdp = max(1, round(MU * sens_rtt))
    specs["sens-G=bdp"] = (sens_rtt, {"grid": g_bdp})
    if not quick:  # the quick mode's coarse policy in the full run
        specs["sens-coarse"] = (sens_rtt, {"grid": QUICK_GRID[0], "buffer": QUICK_GRID[1]})
    texts = solve_policies(specs, grid, buffer)
    dqn = train_dqn(quick, grid, buffer)

    # case -> (aqm, rtts of the flows, policy key or None)
    plan: dict[str, tuple[dict, tuple, str | None]] = {}

    def add(suffix: str, flows: tuple, policy: str, extra: dict | None = None):
        plan[f"paqman{suffix}"] = ({"type": "paqman", "mix": MIX, **(extra or {})}, flows, policy)
        plan[f"codel{suffix}"] = ({"type": "codel", "target": TARGET, "interval": 0.1}, flows, None)
        plan[f"droptail{suffix}"] = ({"type": "droptail"}, flows, None)

    add("", (BASE_RTT,), "paqman")
    for r in rtts:
        add(f"-rtt{_ms(r)}", (r,), f"paqman-rtt{_ms(r)}")
    add("-3flows", RTTS_3FLOWS, f"paqman-rtt{_ms(mid)}")
    plan["paqman-dqn-3flows"] = ({"type": "paqman"}, RTTS_3FLOWS, DQN_KEY)
    sens = {
        "sens-mix=0": ({"mix": 0.0}, f"paqman-rtt{_ms(sens_rtt)}"),
        "sens-mix=0.05": ({"mix": 0.05}, f"paqman-rtt{_ms(sens_rtt)}"),
        "sens-P=1": ({}, "sens-P=1"),
        "sens-floor": ({}, "sens-floor"),
    }
    sens["sens-G=bdp"] = ({}, "sens-G=bdp")
    if "sens-coarse" in specs:
        sens["sens-coarse"] = ({}, "sens-coarse")
    for name, (extra, key) in sens.items():
        plan[f"{name}-rtt{_ms(sens_rtt)}"] = (
            {"type": "paqman", "mix": MIX, **extra},
            (sens_rtt,),
            key,
        )

    scen: dict[str, dict] = {}
    jobs: list[Job] = []
    files: dict[str, str] = {}
    same: dict[str, str] = {}  # case -> an earlier case with the same scenario (run once)
    seen: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="aqmlab-paqman-") as tmp:
        summaries = {}
        for key, text in texts.items():
            (Path(tmp) / _policy_name(key)).write_text(text)
            files[_policy_name(key)] = text
            summaries[key] = load_policy(Path(tmp) / _policy_name(key)).summary()
        (Path(tmp) / _policy_name(DQN_KEY)).write_text(dqn["text"])
        files[_policy_name(DQN_KEY)] = dqn["text"]
        for case, (aqm, flows, key) in plan.items():
            written = dict(aqm)
            run_aqm = dict(aqm)
            if key is not None:
                written["policy"] = _policy_name(key)  # relative to the scenario file
                run_aqm["policy"] = str(Path(tmp) / _policy_name(key))
            scen[case] = scenario(case, written, flows, duration, warmup)
            sc_run = scenario(case, run_aqm, flows, duration, warmup)
            fingerprint = json.dumps({**sc_run, "name": ""}, sort_keys=True)
            if fingerprint in seen:
                same[case] = seen[fingerprint]
                continue
            seen[fingerprint] = case
            for s in seeds if not case.startswith("sens-") else seeds[:1]:
                jobs.append(Job(case, s, sc_run))
        runs = run_jobs(jobs, "paqman")
    for case, twin in same.items():
        runs[case] = runs[twin]
    cases = {c: _metrics(runs[c]) for c in scen}
    checks = _checks(cases, rtts)
    checks.append(_dqn_check(cases))
    sections = _sections(quick, grid, buffer, rtts, duration, warmup, summaries, cases, sens_rtt)
    sections.append(("Fig. 10 with the learned multi-flow policy", _dqn_section(cases, dqn)))
    sections.append(("Reading the results", _reading(cases, grid, g_bdp, sens_rtt)))
    figures = {"fig_delay_throughput.png": _fig(cases, rtts)}
    fields = (PAPER, TITLE, quick, cases, checks, scen, figures, sections)
    return Repro(*fields, seeds=seeds, files=files, runs=runs, reference=REFERENCE)


REFERENCE = (
    'S. Kar, B. Alt, H. Koeppl, A. Rizk, "Optimal Decision Making in Active Queue Management" '
    "(PAQMAN), arXiv:2202.10352, 2022"
)
#: Where the paper says each claim (checked against the paper's text).
SOURCES = {
    "base": {
        "where": "§VI-A, Fig. 7",
        "quote": "PAQMAN yields equivalent stationary throughput while keeping the delay much "
        "shorter",
    },
    "rtt": {
        "where": "§VI-B, Figs. 8-9",
        "quote": "PAQMAN achieves shorter delay than CoDel while yielding comparable stationary "
        "throughput",
    },
    "3flows": {
        "where": "§VI-B, Fig. 10",
        "quote": "PAQMAN achieves similar throughput to CoDel, while keeping the delay "
        "considerably low here as well",
    },
    "droptail": {
        "where": "§VI-A, Fig. 7(c)",
        "quote": "the droptail policy in Fig. 7(c) generates near-perfect utilization at the "
        "cost of a longer delays",
    },
    "rtt-trend": {
        "where": "§VI-B, Figs. 7-9 and 11",
        "quote": "the stationary delay and the stationary throughput tend to diminish as the RTT "
        "increases",
    },
}


def _checks(cases: dict, rtts: tuple) -> list[dict]:
    out = []
    sets = [("", "Fig. 7 (negligible RTT; flow RTT 1 ms)")]
    sets += [(f"-rtt{_ms(r)}", f"Figs. 8-9 (RTT {_ms(r)})") for r in rtts]
    sets += [("-3flows", "Fig. 10 (3 flows, RTTs 1, 5, 10 ms)")]
    for sfx, where in sets:
        p, c, d = cases[f"paqman{sfx}"], cases[f"codel{sfx}"], cases[f"droptail{sfx}"]
        ratio = p["throughput_bps"] / c["throughput_bps"]
        ok_t = abs(ratio - 1) <= TOL_TPUT
        # "much shorter queue" (Figs. 7-9): at most half CoDel's delay; "lower delay" (Fig. 10)
        short = SHORTER if sfx != "-3flows" else 1.0
        ok_d = p["mean_delay_ms"] < short * c["mean_delay_ms"]
        ok = ok_t and ok_d
        tag = sfx.strip("-") or "base"
        src = SOURCES["3flows" if sfx == "-3flows" else ("base" if not sfx else "rtt")]
        if ok:
            why = (
                f"PAQMAN's policy drops early enough to hold {p['mean_delay_ms']:.1f} ms against "
                f"CoDel's {c['mean_delay_ms']:.1f} ms at {ratio:.0%} of its throughput"
            )
        elif sfx == "-3flows":
            why = (
                f"PAQMAN's mean delay is {p['mean_delay_ms']:.1f} ms against CoDel's "
                f"{c['mean_delay_ms']:.1f} ms"
                + ("" if ok_t else f" and its throughput {ratio:.0%} of CoDel's")
                + ": PAQMAN runs the single-flow RTT-5 ms policy on the aggregate of three "
                "flows (the learned multi-flow policy is the check 3flows-dqn-vs-codel)"
            )
        else:
            why = (
                f"PAQMAN's mean delay is {p['mean_delay_ms']:.1f} ms against CoDel's "
                f"{c['mean_delay_ms']:.1f} ms"
                + ("" if ok_t else f" and its throughput {ratio:.0%} of CoDel's")
                + ": the policy's rate grid G (not given by the paper; ours 50, quick 20) "
                "decides how early it drops, and G = μR moves the result (section 'Reading the "
                "results')"
            )
        if sfx == "-3flows" and ok:
            why += (
                "; PAQMAN runs the single-flow RTT-5 ms policy (the learned multi-flow policy "
                "is the check 3flows-dqn-vs-codel)"
            )
        out.append(
            check(
                f"{where}: PAQMAN's throughput ≈ CoDel's, with a shorter queue",
                "same throughput as CoDel, much shorter queue (figure only)"
                if sfx != "-3flows"
                else "PAQMAN ≈ CoDel throughput, lower delay (figure only)",
                f"throughput {ratio:.1%} of CoDel's; delay {p['mean_delay_ms']:.2f} vs "
                f"{c['mean_delay_ms']:.2f} ms",
                "reproduced" if ok else "not reproduced",
                why,
                rule=f"throughput within ±{TOL_TPUT:.0%} of CoDel's and mean delay below "
                + (f"{short:g}× CoDel's" if short != 1.0 else "CoDel's"),
                id=f"{tag}-paqman-vs-codel",
                source=src,
            )
        )
        ok_full = d["utilization"] >= TOL_FULL
        ok_long = d["mean_delay_ms"] >= LONG_DELAY * c["mean_delay_ms"]
        out.append(
            check(
                f"{where}: drop-tail near full utilisation with a long delay",
                "drop-tail ≈ full utilisation, long delay (figure only)",
                f"utilisation {d['utilization']:.1%}, delay {d['mean_delay_ms']:.1f} ms "
                f"(CoDel {c['mean_delay_ms']:.1f} ms)",
                "reproduced" if ok_full and ok_long else "not reproduced",
                f"drop-tail drops only at the full {BUFFER}-packet buffer, so Reno keeps it "
                "near full: the link never idles and every packet waits behind a full queue"
                if ok_full and ok_long
                else "drop-tail's queue does not stay full in our run",
                rule=f"utilisation ≥ {TOL_FULL:.0%} and delay ≥ {LONG_DELAY:g}× CoDel's",
                id=f"{tag}-droptail",
                source=SOURCES["droptail"],
            )
        )
    # Larger RTT lowers both delay and throughput (Figs. 8-9, 11).
    lo, hi = cases[f"paqman-rtt{_ms(rtts[0])}"], cases[f"paqman-rtt{_ms(rtts[-1])}"]
    lower_d = hi["mean_delay_ms"] < lo["mean_delay_ms"]
    lower_t = hi["throughput_bps"] < lo["throughput_bps"]
    series = ", ".join(
        f"{_ms(r)}: {cases[f'paqman-rtt{_ms(r)}']['mean_delay_ms']:.2f} ms / "
        f"{cases[f'paqman-rtt{_ms(r)}']['utilization']:.1%}"
        for r in rtts
    )
    out.append(
        check(
            "Figs. 8-9, 11: a larger RTT lowers PAQMAN's delay and throughput",
            "delay and throughput decrease with RTT (box plots, no numbers)",
            series,
            "reproduced" if lower_d and lower_t else "not reproduced",
            (
                "each RTT's policy, solved for that RTT, holds a shorter queue and a lower rate"
                if lower_d and lower_t
                else "with the policy solved for each RTT"
                + ("" if lower_d else ", the delay does not fall")
                + ("" if lower_t else ", the throughput does not fall")
                + f" from {_ms(rtts[0])} to {_ms(rtts[-1])}: the model's additive increase "
                "(μ/G per RTT) is slower than Reno's at small RTTs, so the policy's margin "
                "changes with the RTT (section 'Reading the results')"
            ),
            rule=f"RTT {_ms(rtts[-1])} against {_ms(rtts[0])}, each with the policy solved for "
            "its RTT: both mean delay and throughput lower",
            id="rtt-trend",
            source=SOURCES["rtt-trend"],
        )
    )
    return out


def _dqn_check(cases: dict) -> dict:
    p, c = cases["paqman-dqn-3flows"], cases["codel-3flows"]
    ratio = p["throughput_bps"] / c["throughput_bps"]
    ok_t = abs(ratio - 1) <= TOL_TPUT
    ok_d = p["mean_delay_ms"] < c["mean_delay_ms"]
    ok = ok_t and ok_d
    why = (
        f"the learned multi-flow policy holds {p['mean_delay_ms']:.1f} ms against CoDel's "
        f"{c['mean_delay_ms']:.1f} ms at {ratio:.0%} of its throughput"
    )
    if not ok:
        why += (
            ": "
            + ("" if ok_d else "its delay is not below CoDel's")
            + ("" if ok_t or ok_d else " and ")
            + ("" if ok_t else "its throughput is outside ±10 % of CoDel's")
            + " (section 'Fig. 10 with the learned multi-flow policy': the model-level "
            "figures and what the packet level adds)"
        )
    return check(
        "Fig. 10 (3 flows, the learned multi-flow policy): PAQMAN's throughput ≈ CoDel's, "
        "with a lower delay",
        "PAQMAN ≈ CoDel throughput, lower delay (figure only)",
        f"throughput {ratio:.1%} of CoDel's; delay {p['mean_delay_ms']:.2f} vs "
        f"{c['mean_delay_ms']:.2f} ms",
        "reproduced" if ok else "not reproduced",
        why,
        rule=f"throughput within ±{TOL_TPUT:.0%} of CoDel's and mean delay below CoDel's",
        id="3flows-dqn-vs-codel",
        source=SOURCES["3flows"],
    )


def _dqn_section(cases: dict, dqn: dict) -> str:
    rows = ["| case | policy | mean delay [ms] | utilisation | goodput [Mb/s] |"]
    rows.append("| --- | --- | --- | --- | --- |")
    for case, label in [
        ("paqman-dqn-3flows", "learned multi-flow policy (DQN, §V-B)"),
        ("paqman-3flows", "single-flow stand-in (RTT-5 ms table on the aggregate)"),
        ("codel-3flows", "CoDel, target 5 ms, interval 100 ms"),
        ("droptail-3flows", "drop-tail"),
    ]:
        m = cases[case]
        rows.append(
            f"| `{case}` | {label} | {m['mean_delay_ms']:.2f} | {m['utilization']:.1%} | "
            f"{m['goodput_bps'] / 1e6:.2f} |"
        )
    model = ["| policy (model level) | reward [1/s] | throughput [pkt/s] | mean queue [pkts] |"]
    model.append("| --- | --- | --- | --- |")
    for name, f in dqn["model"].items():
        model.append(
            f"| {name} | {f['reward_rate']:.1f} | {f['throughput_pps']:.1f} | "
            f"{f['mean_queue']:.2f} |"
        )
    b = dqn["budget"]
    hist = ", ".join(f"{h['greedy_reward_rate']:.1f}" for h in dqn["history"])
    restarts = ", ".join(f"{x:.1f}" for x in dqn["restart_rates"])
    return f"""
The paper learns the 3-flow policy offline from simulated trajectories of its multi-flow SMDP
with a DQN (§V-B) and evaluates it in Fig. 10. Here (`aqmlab.mdp.dqn`, docs/paqman.md): the
§V-B trajectory simulator (`aqmlab.mdp.multiflow.simulate`, RTTs 1, 5 and 10 ms, P =
{DQN_PENALTY}, the stand-in's G and B), a NumPy network of {dqn["parameters"]} parameters
({dqn["bytes"]} bytes as 8-byte floats: two hidden layers of 32 ReLU units, a dueling head),
trained by experience replay with a target network refreshed per fitted-Q iteration under the
SMDP's average-reward criterion ({b["n_decisions"]} decisions per round, {b["rounds"]} rounds,
{b["iters"]} iterations per round, {b["restarts"]} restarts from seed 1) in
**{dqn["train_seconds"]:.1f} s** of wall-clock time (simulation and restarts included).
Best greedy reward rate of each restart: {restarts} per second (the best is kept); of the kept
one after each round: {hist} (its best round is kept).
The Rust `paqman` AQM evaluates the network at each flow's decision epochs (policy file
`{_policy_name(DQN_KEY)}`, model `"multiflow"`); flows take the policy's RTT slots in the order
of their first packets, so the three flows start together (also in the other 3-flow cases).

Packet level (TCP Reno, mean of the seeds):

{chr(10).join(rows)}

Model level (the §V-B model itself, {DQN_EVAL} decisions, one seed): the learned policy
against fixed queue thresholds (drop a decision packet iff the queue is at least k):

{chr(10).join(model)}

In the model the learned policy delivers {dqn["model"]["dqn"]["throughput_pps"] / MU:.0%} of
μ (the best threshold's reward comes with
{max(dqn["model"].values(), key=lambda f: f["reward_rate"])["throughput_pps"] / MU:.0%}): with
P = {DQN_PENALTY} the multi-flow model's optimum gives up throughput for delay, more than the
single-flow policies do at packet level. What the packet level adds to the model: Reno's window and its once-per-RTT halving after
three duplicate ACKs, not the model's Poisson sender whose rate is set at the next decision
epoch; the rates the network reads are estimated from each flow's packets in its last
window (averaged with gain 0.25, docs/aqm/paqman.md), not known.
"""


def _sections(quick, grid, buffer, rtts, duration, warmup, summaries, cases, sens_rtt):
    g_bdp = max(1, round(MU * sens_rtt))
    pol_rows = ["| policy | model | gain [1/s] | drop region | threshold-like | reversals |"]
    pol_rows.append("| --- | --- | --- | --- | --- | --- |")
    for key, s in summaries.items():
        model = "negligible RTT, α = 2" if key == "paqman" else f"RTT {key.rsplit('rtt', 1)[-1]}"
        if key.startswith("sens-"):
            model = f"RTT {_ms(sens_rtt)}, " + {
                "sens-P=1": "P = 1",
                "sens-floor": "floor projection",
                "sens-coarse": f"G = {QUICK_GRID[0]}, B = {QUICK_GRID[1]}",
                "sens-G=bdp": f"G = μR = {g_bdp}",
            }.get(key, key)
        pol_rows.append(
            f"| `{_policy_name(key)}` | {model} | {s['gain_per_s']:.1f} | "
            f"{s['drop_fraction']:.1%} of states | {s['threshold_like']} | "
            f"{s['threshold_reversals']} |"
        )
    r10 = f"rtt{_ms(sens_rtt)}"
    sens = ["| variant (RTT 10 ms) | mean delay [ms] | utilisation | mean queue [pkts] |"]
    sens.append("| --- | --- | --- | --- |")
    rows = [
        (f"default (mix {MIX}, P = 0.5, split projection; mean of the seeds)", f"paqman-{r10}"),
        ("mix = 0", f"sens-mix=0-{r10}"),
        ("mix = 0.05", f"sens-mix=0.05-{r10}"),
        ("P = 1", f"sens-P=1-{r10}"),
        ("floor projection (the policy islands)", f"sens-floor-{r10}"),
        (
            f"coarse policy G = {QUICK_GRID[0]}, B = {QUICK_GRID[1]} (quick mode's)",
            f"sens-coarse-{r10}",
        ),
        (f"grid matched to Reno's increase, G = μR = {g_bdp}", f"sens-G=bdp-{r10}"),
        ("CoDel, for reference", f"codel-{r10}"),
    ]
    for label, case in rows:
        if case not in cases:
            continue
        m = cases[case]
        sens.append(
            f"| {label} | {m['mean_delay_ms']:.2f} | {m['utilization']:.1%} | "
            f"{m['mean_queue_pkts']:.2f} |"
        )
    mode = (
        f"quick: policies with G = {grid}, B = {buffer} (coarser than the full run's 50 and "
        f"200), {duration:.0f}-s runs"
        if quick
        else f"full: policies with G = {grid}, B = {buffer}, {duration:.0f}-s runs"
    )
    setup = f"""
* Dumbbell, bottleneck 10 Mb/s of {PKT}-byte packets (μ = {MU:.1f} packets/s), buffer
  {BUFFER} packets, access links 100 Mb/s; TCP Reno (no SACK, no delayed ACKs), long-lived,
  seeded start in the first second; statistics over [{warmup:.0f} s, {duration:.0f} s]
  ({mode}).
* **Lost in the paper** (Kar et al. §VI: the values of d, P, the service rates, the arrival-rate
  range, the gamma shape, the RTTs and the number and length of runs did not survive in its
  text), our choices: service rate 10 Mb/s (a third-party copy of the arXiv v1 figures, not
  checked against the original, captions the comparisons with 10 Mbit/s), target d = 5 ms
  (CoDel's default target), penalty
  P = 0.5 (the project's default reward, docs/paqman.md; P = 1 in the sensitivity), buffer
  B = 200, rate grid G = 50 (unit μ/50, rates up to 2μ), gamma shape α = 2 for the
  negligible-RTT model (α = 1 in the RTT model, as the paper), RTTs 1 ms ("low") and 10 ms
  ("much higher", the same third-party copy), plus 5 and 20 ms in the full run; the 3-flow case
  uses RTTs 1, 5 and 10 ms; 10 seeds instead of the paper's unknown number of runs.
* "Negligible RTT" cannot be simulated with TCP: Fig. 7's cases run the negligible-RTT policy
  on a flow whose propagation RTT is {_ms(BASE_RTT)}.
* PAQMAN runs the packet-level `paqman` AQM (docs/aqm/paqman.md): the rate is estimated online
  by the ported `RateFilter` with `mix` = {MIX} (our choice; sensitivity below), decisions every
  arrival (negligible-RTT policy) or once per RTT of the policy (RTT policies).
* The paper's metric is time-averaged trajectories of (queue, arrival rate); we report the mean
  queueing delay at the bottleneck and its throughput (utilisation × 10 Mb/s), which are the
  stationary points of those trajectories.
* Fig. 10 (3 flows): `paqman-3flows` runs the RTT-model policy of the middle RTT (5 ms) on
  the aggregate (a single-flow stand-in); `paqman-dqn-3flows` runs the multi-flow policy
  learned by a DQN (section "Fig. 10 with the learned multi-flow policy"). The three flows
  start together at 0 s in every 3-flow case.
* CoDel: target = d = 5 ms, interval 100 ms (defaults otherwise), as the paper.
* Policies are solved by this run (`aqmlab.mdp.solve`) and written next to the scenarios:
  `aqmlab run scenarios/paqman-rtt10ms.toml --out r` reruns a case with its policy.
"""
    return [
        ("Set-up and decisions", setup),
        ("Policies", "\n".join(pol_rows)),
        (
            "Sensitivity (one seed)",
            "\n".join(sens)
            + "\n\nThe floor projection is the rate-grid projection used before the policy-islands "
            'investigation (docs/paqman.md). "reversals" in the policy table counts how often '
            "the first drop queue turns between rising and falling with the rate (0: a "
            "staircase); a split policy that is not threshold-like has admits only near the "
            "full buffer, in states it never reaches (docs/paqman.md).",
        ),
    ]


def _fig(cases: dict, rtts: tuple):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    marks = {"paqman": "o", "codel": "s", "droptail": "^"}
    colors = {"paqman": "tab:blue", "codel": "tab:orange", "droptail": "tab:grey"}
    sfx = [("", "neg.")] + [(f"-rtt{_ms(r)}", _ms(r)) for r in rtts]
    sfx.append(("-3flows", "3 flows"))
    m = cases["paqman-dqn-3flows"]
    ax.scatter(m["mean_delay_ms"], m["throughput_bps"] / 1e6, marker="*", s=80,
               color="tab:green", label="paqman-dqn")  # fmt: skip
    ax.annotate("3 flows", (m["mean_delay_ms"], m["throughput_bps"] / 1e6), fontsize=6)
    for aqm in marks:
        for s, label in sfx:
            m = cases[f"{aqm}{s}"]
            ax.scatter(
                m["mean_delay_ms"],
                m["throughput_bps"] / 1e6,
                marker=marks[aqm],
                color=colors[aqm],
                label=aqm if s == "" else None,
            )
            ax.annotate(label, (m["mean_delay_ms"], m["throughput_bps"] / 1e6), fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("mean queueing delay [ms] (log)")
    ax.set_ylabel("throughput [Mb/s]")
    ax.axhline(RATE_BPS / 1e6, color="grey", ls="--", lw=0.7)
    ax.axvline(TARGET * 1e3, color="tab:red", ls=":", lw=0.7, label="target d")
    ax.legend(fontsize="small", loc="lower right")
    ax.set_title(
        "PAQMAN vs CoDel vs drop-tail, TCP Reno, 10 Mb/s (neg. = negligible-RTT policy, 1 ms)",
        fontsize=8,
    )
    fig.tight_layout()
    return fig


def _reading(cases, grid, g_bdp, sens_rtt) -> str:
    r10 = f"rtt{_ms(sens_rtt)}"
    p, c = cases[f"paqman-{r10}"], cases[f"codel-{r10}"]
    b, q1 = cases[f"sens-G=bdp-{r10}"], cases[f"sens-P=1-{r10}"]
    slower = (1 / sens_rtt) / (MU / grid)
    earlier = "the policy drops earlier"
    if b["mean_delay_ms"] >= p["mean_delay_ms"]:
        earlier = "the policy does not drop earlier"
    return f"""
* The grid unit is PAQMAN's additive increase: an admit raises the model sender's rate by μ/G
  packets/s per decision, i.e. per RTT in the RTT model. Reno raises its window by one packet
  per RTT, i.e. its rate by 1/R = {1 / sens_rtt:.0f} packets/s per RTT at R = {_ms(sens_rtt)},
  against μ/G = {MU / grid:.1f} packets/s with this run's G = {grid}: the model's sender grows
  {slower:.1f}× more slowly than Reno. With G = μR = {g_bdp} (the model's increase matched to
  Reno's) {earlier}: PAQMAN's delay goes from {p["mean_delay_ms"]:.2f} to
  {b["mean_delay_ms"]:.2f} ms and its utilisation from {p["utilization"]:.1%} to
  {b["utilization"]:.1%} (CoDel: {c["mean_delay_ms"]:.2f} ms, {c["utilization"]:.1%}). G is not
  given by the paper (§III's value iteration needs a finite rate grid whose unit the text does
  not state); the report keeps the project's default (G = 50;
  20 in quick mode) and shows the dependence rather than tuning G to the claims.
* The penalty P sets the model's operating load (docs/paqman.md): P = 1 gives
  {q1["mean_delay_ms"]:.2f} ms at {q1["utilization"]:.1%} (one seed).
* Fig. 10: a single-flow table applied to the aggregate of three flows treats three senders as
  one and decides once per policy RTT; the multi-flow policy of the paper (§V-B) is the case
  `paqman-dqn-3flows` (section "Fig. 10 with the learned multi-flow policy").
"""
