"""Run a reproduction's cases in ns-2.35 (Debian's ``ns2``): ``aqmlab repro NAME --ns2``.

An aqmlab dumbbell scenario (a reproduction's case) is translated into the configuration of the
project's ns-2 script ``validation/ns2/dumbbell.tcl`` (:func:`tcl_config`), run with ``ns``
(:func:`run_scenario`) and reduced to the reproduction's own metrics (:func:`ns2_cases`).
:func:`attach` adds the ns-2 column to a :class:`~aqmlab.repro._common.Repro`: every case ns-2
can host, over the same seeds, and for the checks listed in :data:`CHECKS` the verdict the same
rule gives on the ns-2 numbers. ``validation/ns2/README.md`` states every ns-2 option and why it
matches the aqmlab case; ``validation/ns2/RESULTS.md`` has the cross-check.

ns-2 hosts the baselines as its own queues (``red`` -> ``Queue/RED``, ``pi`` -> ``Queue/PI``,
``avq`` -> ``Queue/Vq``, ``rem`` -> ``Queue/REM``, ``droptail``) and the laws that are simple
functions of the queue (``pdlq``, ``sfc``) as an ECN marker driven from Tcl every period. Cases
ns-2 cannot host (other AQMs, other topologies) are left out, with the reason in
:func:`unsupported`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CHECKS",
    "attach",
    "available",
    "case_key",
    "ns2_cases",
    "run_scenario",
    "script_path",
    "tcl_config",
    "unsupported",
]

#: aqmlab AQM types ns-2 hosts (as its own queue or as a Tcl-driven marker)
AQMS = ("red", "pi", "avq", "rem", "droptail", "pdlq", "sfc")
#: short flows share this many host pairs (one agent pair per flow, created at its arrival)
SHORT_POOL = 20


def script_path() -> Path:
    """The ns-2 script: ``validation/ns2/dumbbell.tcl`` of the source tree (or
    ``$AQMLAB_NS2_SCRIPT``).

    Returns
    -------
    Path
    """
    env = os.environ.get("AQMLAB_NS2_SCRIPT")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "validation" / "ns2" / "dumbbell.tcl"


def available() -> str | None:
    """Why ns-2 cannot run here, or None when it can.

    Returns
    -------
    str or None
    """
    if shutil.which("ns") is None:
        return "ns-2 is not installed (`make ns2` installs Debian's ns2)"
    if not script_path().is_file():
        return f"the ns-2 script {script_path()} is missing (it comes with a source checkout)"
    return None


def unsupported(scenario: dict[str, Any]) -> str | None:
    """Why ns-2 cannot host this scenario, or None when it can.

    Parameters
    ----------
    scenario : dict
        An aqmlab scenario.

    Returns
    -------
    str or None
    """
    if "dumbbell" not in scenario:
        return "not a dumbbell (the ns-2 script builds the dumbbell only)"
    kind = scenario["aqm"].get("type", "droptail")
    if kind not in AQMS:
        return f"ns-2 has no {kind} queue"
    for g in scenario["flows"]:
        if g.get("kind", "tcp") not in ("tcp", "tcp_short"):
            return f"flow kind {g.get('kind')} is not modelled"
        if g.get("cc", "newreno") not in ("newreno", "reno"):
            return f"cc {g.get('cc')} is not modelled"
    return None


def _tcl(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return "{" + " ".join(_tcl(x) for x in v) + "}"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _bps(v: Any) -> float:
    from aqmlab.units import parse_rate

    return parse_rate(v)


def _pdlq_weights(aqm: dict[str, Any]) -> list[list[float]]:
    """The memory law's predictor weights (KTL §II-A), from the design's own functions."""
    from aqmlab.design.pd_lq import ktl_constants, ktl_state_space, predictor_weights

    c, n, tau, q_ref = aqm["capacity"], aqm["n_flows"], aqm["tau"], aqm["q_ref"]
    k = ktl_constants(c, n, tau - q_ref / c, q_ref)
    a, b = ktl_state_space(k, aqm["p1"])
    return predictor_weights(a, b, tau, aqm.get("t_update", 0.002)).tolist()


def _aqm_keys(aqm: dict[str, Any], rate_bps: float, pkt: int) -> dict[str, Any]:
    kind = aqm.get("type", "droptail")
    out: dict[str, Any] = {}
    if kind == "red":
        out = {
            "min_th": aqm.get("min_th", 5.0),
            "max_th": aqm.get("max_th", 15.0),
            "w_q": aqm.get("w_q", 0.002),
            "max_p": aqm.get("max_p", 0.1),
            "gentle": aqm.get("gentle", True),
            "wait": aqm.get("wait", True),
            # aqmlab marks every probabilistic early drop when ecn is set (docs/aqm/red.md);
            # ns-2's default use_mark_p_ = true would drop above p_b = mark_p_ instead
            "use_mark_p": False,
            "mark_p": 0.1,
            "mean_pkt_size": aqm.get("mean_pkt_size", pkt),
        }
    elif kind == "pi":
        out = {k: aqm[k] for k in ("a", "b", "w", "q_ref")}
    elif kind == "avq":
        out = {"gamma": aqm.get("gamma", 0.98)}
    elif kind == "rem":
        out = {k: aqm[k] for k in ("gamma", "phi") if k in aqm}
    elif kind == "pdlq":
        c = aqm.get("capacity") or rate_bps / 8 / pkt
        out = {k: aqm[k] for k in ("h1", "h2", "h3", "p1", "q_ref", "p_offset") if k in aqm} | {
            "t_update": aqm.get("t_update", 0.002),
            "capacity": c,
        }
        if aqm.get("memory"):
            out["weights"] = _pdlq_weights({**aqm, "capacity": c})
    elif kind == "sfc":
        out = {
            "k1": aqm.get("k1", 0.0005),
            "k2": aqm.get("k2", 0.2),
            "q_ref": aqm.get("q_ref", 50.0),
            "capacity": aqm.get("capacity") or rate_bps / 8 / pkt,
            "rate_window": aqm.get("rate_window", 0.01),
            "rate_weight": aqm.get("rate_weight", 0.5),
            "p_offset": aqm.get("p_offset", 0.0),
        }
    return out


def tcl_config(scenario: dict[str, Any], seed: int) -> str:
    """The ns-2 script's configuration (Tcl) for an aqmlab dumbbell scenario and seed.

    Parameters
    ----------
    scenario : dict
        An aqmlab dumbbell scenario that :func:`unsupported` accepts.
    seed : int
        The run's seed (ns-2's default RNG and the script's own stream).

    Returns
    -------
    str
    """
    why = unsupported(scenario)
    if why:
        raise ValueError(f"scenario = {scenario.get('name')}: {why}")
    db = scenario["dumbbell"]
    pkt = int(db.get("pkt_size", 1000))
    rate = _bps(db["rate"])
    aqm = scenario.get("aqm", {"type": "droptail"})
    cfg: dict[str, Any] = {
        "seed": int(seed),
        "pkt_size": pkt,
        "init_cwnd": 10,
        "rate_bps": rate,
        "access_bps": _bps(db["access_rate"]) if "access_rate" in db else 10 * rate,
        "rtt": float(db["rtt"]),
        "buffer": int(db.get("buffer", 100)),
        "aqm": aqm.get("type", "droptail"),
        "ecn": bool(aqm.get("ecn", False)),
        "duration": float(scenario["duration"]),
        "warmup": float(scenario.get("warmup", 0.0)),
        "sample_interval": float(scenario.get("sample_interval", 0.01)),
        "short_pool": SHORT_POOL,
    }
    for k, v in _aqm_keys(aqm, rate, pkt).items():
        cfg[f"aqm.{k}"] = v
    lines = ["array set cfg {"]
    lines += [f"    {k} {_tcl(v)}" for k, v in cfg.items()]
    lines.append("}")
    lines.append("set groups {}")
    for g in scenario["flows"]:
        kind = g.get("kind", "tcp")
        start_given = "start" in g
        grp: dict[str, Any] = {
            "kind": kind,
            "cc": g.get("cc", "newreno"),
            "ecn": 1 if g.get("ecn", False) else 0,
            "delack": 1 if g.get("delayed_ack", False) else 0,
            "start": float(g.get("start", 0.0)),
            "stop": float(g.get("stop", 0.0)),
        }
        if kind == "tcp":
            extra = g.get("extra_delay", [])
            grp |= {
                "count": int(g.get("count", 1)),
                "extra_delay": [float(x) for x in extra] or [0.0],
                "start_jitter": float(g.get("start_jitter", 0.0 if start_given else 1.0)),
            }
        else:
            grp |= {
                "arrival_rate": float(g["arrival_rate"]),
                "mean_size": float(g["mean_size"]),
                "pareto_shape": float(g.get("pareto_shape", 1.2)),
            }
        lines.append("lappend groups {" + " ".join(f"{k} {_tcl(v)}" for k, v in grp.items()) + "}")
    return "\n".join(lines) + "\n"


def run_scenario(
    scenario: dict[str, Any],
    seed: int,
    timeout: float = 1800.0,
    tcl: str = "",
    script: Path | None = None,
) -> dict[str, Any]:
    """Run one scenario and seed in ns-2; the script's measurements (``validation/ns2/README.md``).

    Parameters
    ----------
    scenario : dict
        An aqmlab dumbbell scenario.
    seed : int
        The seed.
    timeout : float
        Seconds before the ns-2 process is killed (a :class:`RuntimeError`).
    tcl : str
        Tcl appended to the configuration, run before the script builds anything (e.g.
        ``Agent/TCP set rtxcur_init_ 1.0`` for a one-change experiment,
        validation/ns2/gaps.py).
    script : Path, optional
        The Tcl script to run instead of :func:`script_path` (a copy with instrumentation
        added, validation/ns2/avq1000.py).

    Returns
    -------
    dict
        ``mean_queue_pkts``, ``utilization``, ``arrivals``, ``departures``, ``drops``,
        ``marks``, ``span_s``, ``short_flows``, ``sample_interval``, ``queue_series``.
    """
    why = available()
    if why:
        raise RuntimeError(why)
    with tempfile.TemporaryDirectory(prefix="aqmlab-ns2-") as d:
        conf = Path(d) / "config.tcl"
        conf.write_text(tcl_config(scenario, seed) + tcl)
        try:
            p = subprocess.run(
                ["ns", str(script or script_path()), str(conf)],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=d,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"ns-2 timed out after {timeout:.0f} s") from None
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"ns-2 failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    out = json.loads(lines[-1])
    out["queue_series"] = np.asarray(out["queue_series"], dtype=float)
    return out


def case_key(scenario: dict[str, Any], seed: int) -> str:
    """The key of one ns-2 run in a result cache: a hash of what ns-2 is given, the generated
    configuration (:func:`tcl_config`) and the script (:func:`script_path`).

    Parameters
    ----------
    scenario : dict
        An aqmlab dumbbell scenario.
    seed : int
        The seed.

    Returns
    -------
    str
        16 hexadecimal digits of the SHA-256 of the configuration and the script.
    """
    h = hashlib.sha256(tcl_config(scenario, seed).encode())
    h.update(script_path().read_bytes())
    return h.hexdigest()[:16]


# --- reductions to each reproduction's metrics ------------------------------------------------------
def _time(r: dict[str, Any]) -> np.ndarray:
    return np.arange(len(r["queue_series"])) * r["sample_interval"]


def _ktl(case: str, scen: dict, r: dict) -> dict[str, float]:
    return {"mean_queue_pkts": r["mean_queue_pkts"], "utilization": r["utilization"]}


def _sfc(case: str, scen: dict, r: dict) -> dict[str, float]:
    from aqmlab.repro._common import binned

    out = {
        "loss": r["drops"] / max(r["arrivals"], 1),
        "utilization": r["utilization"],
        "mean_queue_pkts": r["mean_queue_pkts"],
    }
    t, q = _time(r), r["queue_series"]
    if case.startswith("B-"):
        from aqmlab.repro.sfc import _settle

        out["settling_s"], out["overshoot_pkts"] = _settle(t, q, 100.0, scen["duration"])
    elif case.startswith("C-"):
        tb, qb = binned(t, q, 0.1)
        out["queue_std_30_60"] = float(qb[(tb >= 30) & (tb < 60)].std())
        out["queue_std_60_75"] = float(qb[(tb >= 60) & (tb < 75)].std())
    return out


def _edc(case: str, scen: dict, r: dict) -> dict[str, float]:
    db = scen["dumbbell"]
    pkt = db["pkt_size"]
    rate, access = _bps(db["rate"]), _bps(db["access_rate"])
    span = r["span_s"]
    dep_rate = r["departures"] / span
    # the bottleneck's mean queueing delay by Little's law (mean queue / departure rate); the
    # rest as EDC's _metrics: one-way propagation + transmission on the three links
    qdelay_ms = 1000 * r["mean_queue_pkts"] / dep_rate if dep_rate > 0 else float("nan")
    tx = pkt * 8 / rate + 2 * pkt * 8 / access
    return {
        "mean_queue_pkts": r["mean_queue_pkts"],
        "drops_per_s": r["drops"] / span,
        "utilization": r["utilization"],
        "mean_e2e_delay_ms": 1000 * (db["rtt"] / 2 + tx) + qdelay_ms,
    }


REDUCERS: dict[str, Callable[[str, dict, dict], dict[str, float]]] = {
    "ktl": _ktl,
    "sfc": _sfc,
    "edc": _edc,
}


def ns2_cases(
    paper: str,
    scenarios: dict[str, dict],
    seeds: dict[str, list[int]],
    workers: int | None = None,
    cache: Path | str | None = None,
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Run every case ns-2 can host over its seeds; means of the paper's metrics per case.

    With ``cache``, each run's metrics are stored as a small JSON file
    ``CACHE/PAPER/CASE-seedSEED-KEY.json`` (KEY: :func:`case_key`) as soon as the run ends, and a
    run whose file exists is read instead of run again: an interrupted set continues where it
    stopped, and a changed case or script (another key) runs again.

    Parameters
    ----------
    paper : str
        ``ktl``, ``sfc`` or ``edc``.
    scenarios : dict
        Case name to aqmlab scenario.
    seeds : dict
        Case name to the seeds aqmlab ran it with.
    workers : int, optional
        Parallel ns-2 processes (default: the cores).
    cache : Path or str, optional
        The folder of the per-run results (``validation/ns2/run_all.py`` keeps them in
        ``results/cases`` next to it); None runs everything.

    Returns
    -------
    tuple of dict
        ``({case: {metric: mean}}, {case: why it was left out}})``.
    """
    from aqmlab.repro._common import _workers, mean_std

    reduce = REDUCERS[paper]
    skipped = {c: why for c, sc in scenarios.items() if (why := unsupported(sc))}
    jobs = [(c, s) for c, sc in scenarios.items() if c not in skipped for s in seeds.get(c, [1])]

    def one(job: tuple[str, int]) -> dict[str, float]:
        case, seed = job
        sc = scenarios[case]
        if cache is None:
            return reduce(case, sc, run_scenario(sc, seed))
        key = case_key(sc, seed)
        path = Path(cache) / paper / f"{case}-seed{seed}-{key}.json"
        if path.is_file():
            return json.loads(path.read_text())["metrics"]
        r = run_scenario(sc, seed)
        rec = {
            "paper": paper,
            "case": case,
            "seed": seed,
            "key": key,
            "metrics": reduce(case, sc, r),
            "ns2": {k: v for k, v in r.items() if k != "queue_series"},
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_text(json.dumps(rec, indent=1) + "\n")
        tmp.replace(path)  # whole or absent: an interrupted write leaves no record
        return rec["metrics"]

    with ThreadPoolExecutor(max_workers=workers or _workers()) as ex:
        res = list(ex.map(one, jobs))
    per: dict[str, list[dict[str, float]]] = {}
    for (c, _), m in zip(jobs, res, strict=True):
        per.setdefault(c, []).append(m)
    cases = {
        c: {k: mean_std(row[k] for row in rows)[0] for k in rows[0]} for c, rows in per.items()
    }
    return cases, skipped


# --- the ns-2 verdicts --------------------------------------------------------------------------------
def _verdict(ok: bool | None) -> str:
    return "not comparable" if ok is None else ("reproduced" if ok else "not reproduced")


def _get(cases: dict, case: str, key: str) -> float | None:
    v = cases.get(case, {}).get(key)
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v


def _ktl_checks(cases: dict) -> dict[str, tuple[str, bool | None]]:
    from aqmlab.repro.ktl import PAPER_Q, PAPER_U, Q_REF

    out: dict[str, tuple[str, bool | None]] = {}
    tol_q, tol_u = 0.15, 0.03  # ktl.py's tolerances
    for c, pq in PAPER_Q.items():
        q = _get(cases, c, "mean_queue_pkts")
        if q is not None:
            out[f"{c}-queue"] = (f"{q:.1f} packets", abs(q - pq) / pq <= tol_q)
    r, p = _get(cases, "A-redlike", "mean_queue_pkts"), _get(cases, "A-pd", "mean_queue_pkts")
    if r is not None and p is not None:
        ok = r > p and abs(p - Q_REF) < abs(r - Q_REF)
        out["A-ordering"] = (f"{r:.1f} vs {p:.1f} packets", ok)
    for c, pu in PAPER_U.items():
        u = _get(cases, c, "utilization")
        if u is not None:
            out[f"{c}-util"] = (f"{u:.1%}", abs(u - pu) <= tol_u)
    bm, bl = (
        _get(cases, "B-memory", "mean_queue_pkts"),
        _get(cases, "B-memoryless", "mean_queue_pkts"),
    )
    if bm is not None and bl is not None:
        ok = abs(bm - Q_REF) < abs(bl - Q_REF) and abs(bm - Q_REF) / Q_REF <= tol_q
        out["B-memory-closer"] = (f"memory {bm:.1f}, memoryless {bl:.1f} packets", ok)
    return out


def _sfc_checks(cases: dict) -> dict[str, tuple[str, bool | None]]:
    out: dict[str, tuple[str, bool | None]] = {}
    ks = sorted({int(c.split("-")[1]) for c in cases if c.startswith("A-")})
    u = [_get(cases, f"A-{k}-sfc", "utilization") for k in ks]
    if u and None not in u:
        out["A-sfc-util"] = (f"{min(u):.1%}-{max(u):.1%}", min(u) >= 0.97)
    qs = [_get(cases, f"A-{k}-{s}", "mean_queue_pkts") for k in ks for s in ("sfc", "pi")]
    if qs and None not in qs:
        out["A-sfc-pi-target"] = (
            f"mean queues {min(qs):.0f}-{max(qs):.0f}",
            all(25 <= x <= 75 for x in qs),
        )
    du = [
        _get(cases, f"A-{k}-sfc", "utilization") - _get(cases, f"A-{k}-pi", "utilization")
        for k in ks
        if f"A-{k}-pi" in cases and f"A-{k}-sfc" in cases
    ]
    if du:
        out["headline-util"] = (f"{min(du):+.1%}..{max(du):+.1%} points", 0.05 <= max(du) <= 0.15)
    # SFC's loss against the competitors ns-2 has (RED, PI, AVQ; ns-2 has no SRED)
    rows = []
    for k in ks:
        full = [
            s
            for s in ("red", "pi", "avq")
            if (x := _get(cases, f"A-{k}-{s}", "utilization")) is not None and x >= 0.97
        ]
        if full and f"A-{k}-sfc" in cases:
            best = min(cases[f"A-{k}-{s}"]["loss"] for s in full)
            sl = cases[f"A-{k}-sfc"]["loss"]
            rows.append((k, sl / best if best > 0 else (0.0 if sl == 0 else math.inf), sl, best))
    if rows:
        ok = all(r[1] <= 1 for r in rows) and min(r[1] for r in rows) <= 0.7
        shown = ", ".join(
            f"k={k}: SFC {sl:.2%} vs best {b:.2%} (RED, PI, AVQ)" for k, _, sl, b in rows
        )
        out["A-sfc-loss"] = (shown, ok)
    if "B-sfc" in cases and "B-pi" in cases:
        # not settled: inf in a live run, null once stored (results/*.json)
        s_sfc, s_pi = (
            math.inf if (v := cases[c]["settling_s"]) is None else v for c in ("B-sfc", "B-pi")
        )
        o_sfc, o_pi = cases["B-sfc"]["overshoot_pkts"], cases["B-pi"]["overshoot_pkts"]

        def _s(v: float) -> str:
            return f"{v:.1f} s" if math.isfinite(v) else "not settled"

        out["B-settling"] = (
            f"settling {_s(s_sfc)} vs {_s(s_pi)}; overshoot {o_sfc:.0f} vs {o_pi:.0f} packets",
            s_sfc < s_pi and o_sfc <= o_pi,
        )
    if all(f"C-{s}" in cases for s in ("sfc", "pi", "red")):
        st = {s: cases[f"C-{s}"]["queue_std_60_75"] for s in ("sfc", "pi", "red")}
        pre = cases["C-sfc"]["queue_std_30_60"]
        ok = st["sfc"] < st["pi"] and st["sfc"] < st["red"] and st["sfc"] <= 1.5 * pre
        shown = ", ".join(f"{s.upper()} {v:.1f}" for s, v in st.items())
        out["C-disturbance"] = (f"queue std in [60, 75] s: {shown} (SFC before: {pre:.1f})", ok)
    return out


def _edc_checks(cases: dict) -> dict[str, tuple[str, bool | None]]:
    out: dict[str, tuple[str, bool | None]] = {}
    tol = 0.25  # edc.py's tolerance
    for net, pv in (("LL", 30), ("HH", 350)):
        d = _get(cases, f"{net}-red", "drops_per_s")
        if d is not None:
            out[f"{net}-red-activations-as-drops"] = (f"{d:.1f} drops/s", abs(d - pv) <= tol * pv)
    q = _get(cases, "LL-pi", "mean_queue_pkts")
    if q is not None:
        out["LL-pi-queue"] = (f"{q:.1f} packets", abs(q - 200) <= tol * 200)
    q = _get(cases, "LL-red", "mean_queue_pkts")
    if q is not None:
        out["LL-red-queue"] = (f"{q:.1f} packets", 150 <= q <= 300)
    return out


#: paper -> function of the ns-2 cases giving ``{check id: (ns-2 figure, ok)}``: the checks whose
#: inputs ns-2 has, with the rule of the reproduction's own check
CHECKS: dict[str, Callable[[dict], dict[str, tuple[str, bool | None]]]] = {
    "ktl": _ktl_checks,
    "sfc": _sfc_checks,
    "edc": _edc_checks,
}


def ns2_version() -> str:
    """The installed ns-2's version (Tcl's ``ns-version``), or ``"unknown"``.

    Returns
    -------
    str
    """
    try:
        with tempfile.TemporaryDirectory(prefix="aqmlab-ns2-") as d:
            f = Path(d) / "version.tcl"
            f.write_text("puts [ns-version]\n")
            p = subprocess.run(["ns", str(f)], capture_output=True, text=True, timeout=30)
        return p.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def attach(rep, workers: int | None = None, cache: Path | str | None = None) -> None:
    """Add the ns-2 column to a reproduction: ``rep.ns2`` (``repro.json``'s ``ns2``), an
    ``ns2`` entry in each check ns-2 can judge and the report's ns-2 section.

    Parameters
    ----------
    rep : Repro
        A reproduction of ``ktl``, ``sfc`` or ``edc``.
    workers : int, optional
        Parallel ns-2 processes.
    cache : Path or str, optional
        The folder of the per-run results (:func:`ns2_cases`).
    """
    if rep.paper not in REDUCERS:
        raise ValueError(f"NAME = {rep.paper!r}: no ns-2 cases (ns-2 runs ktl, sfc and edc)")
    scen = {c: s for c, s in rep.scenarios.items() if c in rep.cases}
    # the seeds each case ran with (a case that reused another's runs: the report's seeds)
    seeds = {c: [r.seed for r in rep.runs.get(c, []) if r.case == c] or rep.seeds for c in scen}
    cases, skipped = ns2_cases(rep.paper, scen, seeds, workers, cache)
    judged = CHECKS[rep.paper](cases)
    for chk in rep.checks:
        if chk["id"] in judged:
            fig, ok = judged[chk["id"]]
            chk["ns2"] = {"ns2": fig, "verdict": _verdict(ok)}
    rep.ns2 = {
        "version": ns2_version(),
        "cases": {
            c: {k: (None if not math.isfinite(v) else v) for k, v in m.items()}
            for c, m in cases.items()
        },
        "skipped": skipped,
        "seeds": {c: seeds[c] for c in cases},
    }
    rows = ["| case | metric | aqmlab | ns-2 |", "| --- | --- | --- | --- |"]
    for c, m in cases.items():
        for k, v in m.items():
            ours = rep.cases.get(c, {}).get(k)
            rows.append(f"| {c} | {k} | {_fmt(ours)} | {_fmt(v)} |")
    left = "".join(f"\n* {c}: {why}" for c, why in skipped.items())
    rep.sections.append(
        (
            "ns-2 cross-check",
            "\nThe cases ns-2.35 can host, run with `validation/ns2/dumbbell.tcl` over the same "
            "seeds (means). The checks table's ns-2 column applies each check's rule to the ns-2 "
            "numbers. validation/ns2/README.md states the ns-2 options.\n\n"
            + "\n".join(rows)
            + ("\n\nLeft out:" + left if left else ""),
        )
    )


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.4g}"
