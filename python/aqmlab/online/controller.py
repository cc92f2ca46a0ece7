"""SQM's period controller over the steppable simulator (docs/online.md).

Every ``period`` seconds of simulated time :func:`run_controller`

1. measures each flow's goodput over the period (``bytes_delivered`` differences, in packets/s)
   and the flow set (flows that delivered data in the period);
2. runs Algorithm 1 (:func:`aqmlab.online.ogd_step`) on all tracked flows;
3. runs Algorithm 2 (:func:`aqmlab.online.link_tuning`) per controlled link on the present
   flows crossing it, and writes the weights (and sigma, beta when the target has them) into
   the link's queue discipline through a :class:`ParamMapping`;
4. computes the alpha-fair NUM optimum of the present flows (the reference) and logs it all.

The mapping is the only piece that knows the queue discipline: ``drr`` class weights
(``classes.NAME.weight``, one class per flow group, the weights of the class's flows summed,
:meth:`ParamMapping.drr_classes`), or the ``sqm`` qdisc's per-flow queues
(:class:`SqmMapping`: each period it asks the link which flow holds which elephant slot and
writes ``queues.N.weight`` (and ``queues.N.sigma`` if asked) for the flows holding one; the
flows in the reserved queue get nothing).

Examples
--------
>>> from aqmlab.sim import Simulation
>>> sim = Simulation({"duration": "10s", "dumbbell": {"rate": "10Mbps", "rtt": "40ms"},
...     "aqm": {"type": "drr", "classes": [{"name": "a"}, {"name": "b"}]},
...     "flows": [{"count": 1, "class": "a"}, {"count": 3, "class": "b"}]})
>>> r = run_controller(sim, period=5.0)
>>> [round(w, 3) for w in r.periods[-1]["written"].values()]
[1.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aqmlab.online._checks import check_real
from aqmlab.online.num import num_optimum
from aqmlab.online.ogd import ogd_bounds, ogd_step, project
from aqmlab.online.tuning import SIGMA_RULES, link_tuning
from aqmlab.protocol import Result, deprecated, json_ready, new_axes, plotted

__all__ = ["ControllerResult", "ParamMapping", "SqmMapping", "run_controller"]

#: largest weight the drr scheduler accepts
MAX_WEIGHT = 1e6


class ParamMapping:
    """Where a flow's weight, sigma and beta are written in a link's queue discipline.

    Parameters
    ----------
    keys : mapping flow number -> str
        the queue (class) of each controlled flow; flows sharing a key share a queue.
    weight : str
        path template of a queue's weight (``{key}`` is replaced), e.g. ``classes.{key}.weight``.
    sigma, beta : str, optional
        path templates of a queue's slope and offset (None: not written, e.g. DRR classes).
    normalize : bool
        scale the weights so that the smallest written is 1 (DRR: quantum = weight x MTU,
        weights in (0, 1e6]); otherwise write ``Q = x`` (packets/s) as in the paper.
    """

    def __init__(
        self,
        keys: Mapping[int, str],
        weight: str = "classes.{key}.weight",
        sigma: str | None = None,
        beta: str | None = None,
        normalize: bool = True,
    ):
        if not isinstance(keys, Mapping) or not keys:
            raise ValueError(f"keys must map flow numbers to queue names, got {keys!r}")
        for tpl, name in ((weight, "weight"), (sigma, "sigma"), (beta, "beta")):
            if tpl is not None and (not isinstance(tpl, str) or "{key}" not in tpl):
                raise ValueError(f"{name} must be a path template containing {{key}}, got {tpl!r}")
        self.keys = {int(f): str(k) for f, k in keys.items()}
        self.weight, self.sigma, self.beta, self.normalize = weight, sigma, beta, normalize
        if sigma is not None or beta is not None:
            seen: dict[str, int] = {}
            for f, k in self.keys.items():
                if k in seen:
                    raise ValueError(
                        f"keys: flows {seen[k]} and {f} share queue {k!r}; sigma and beta "
                        "are per flow (one queue per flow)"
                    )
                seen[k] = f

    @classmethod
    def drr_classes(cls, sim) -> ParamMapping:
        """One DRR class per flow group: each static flow's key is its group's ``class``.

        Parameters
        ----------
        sim : aqmlab.sim.Simulation
            The simulation (its scenario's flow groups).

        Returns
        -------
        ParamMapping
        """
        groups = sim.scenario.normalized["flows"]
        keys = {}
        for f, g in enumerate(sim.flow_groups()):
            name = groups[g].get("class")
            if name is None:
                raise ValueError(f"flows[{g}] has no class: give every flow group a DRR class")
            keys[f] = name
        return cls(keys)

    def writes(self, flows: list[int], tuning) -> dict[str, float]:
        """``{path: value}`` for a link's :class:`~aqmlab.online.tuning.LinkTuning` of ``flows``.

        Parameters
        ----------
        flows : list of int
            The flows of the link, in the order of ``tuning``'s entries.
        tuning : LinkTuning
            Algorithm 2's result for them.

        Returns
        -------
        dict of str to float
        """
        w: dict[str, float] = {}
        for f, q in zip(flows, tuning.weights, strict=True):
            if f in self.keys:
                k = self.keys[f]
                w[k] = w.get(k, 0.0) + float(q)
        if not w:
            return {}
        scale = 1.0 / min(w.values()) if self.normalize else 1.0
        out = {self.weight.format(key=k): float(min(MAX_WEIGHT, v * scale)) for k, v in w.items()}
        for tpl, vals in ((self.sigma, tuning.sigma), (self.beta, tuning.beta)):
            if tpl is not None:
                for f, v in zip(flows, vals, strict=True):
                    if f in self.keys:
                        out[tpl.format(key=self.keys[f])] = float(v)
        return out


class SqmMapping(ParamMapping):
    """The ``sqm`` qdisc of link ``link`` (docs/aqm/sqm.md): the flows holding an elephant
    slot at write time, queue ``N`` = their slot, paths ``queues.N.weight`` and, with
    ``sigma=True``, ``queues.N.sigma``.

    With ``sigma=True`` the mapping writes ``queues.N.sigma`` and ``queues.N.beta`` (Algorithm
    2's slope and the offset it was computed for), so the queue's law is the one tuned. Only the
    ``"reno"`` sigma rule is in the units of the qdisc's law (real drop probabilities);
    :func:`run_controller` turns sigma on for it and for ``"theorem3"`` (the paper's Algorithm
    2 taken literally: slopes of ~1e6-1e7 packets, shown by ``aqmlab repro sqm-s1``), and off
    for the fluid-unit ``"delay"`` rule. Off, the qdisc keeps its own ``sigma`` (packets) and
    automatic beta (the 5 ms target at the queue's share).

    Parameters
    ----------
    sim : aqmlab.sim.Simulation
        the simulation (asked for the slots at each write).
    link : str
        the link running ``sqm``.
    sigma : bool
        also write ``queues.N.sigma`` and ``queues.N.beta``.
    normalize : bool
        as :class:`ParamMapping` (smallest weight written is 1).

    Attributes
    ----------
    keys : dict
        flow number -> slot (as str) of the flows holding a slot at the last write.
    """

    def __init__(self, sim, link: str, sigma: bool = False, normalize: bool = True):
        if sim.sqm_slots(link) is None:
            raise ValueError(f"link {link!r} does not run sqm")
        self.sim, self.link = sim, link
        self.keys = {}
        self.weight = "queues.{key}.weight"
        self.sigma = "queues.{key}.sigma" if sigma else None
        self.beta = "queues.{key}.beta" if sigma else None
        self.normalize = normalize

    def writes(self, flows: list[int], tuning) -> dict[str, float]:
        slots = self.sim.sqm_slots(self.link)
        self.keys = {f: str(i) for i, f in enumerate(slots) if f is not None}
        return super().writes(flows, tuning)


#: The per-period per-flow series of a ControllerResult (``result[key]``).
SERIES = ("measured_pps", "ogd_pps", "num_pps", "tuned_pps")


@dataclass(repr=False)
class ControllerResult(Result):
    """Result of :func:`run_controller`; ``result["ogd_pps"]`` is one per-period per-flow
    series as an array of shape (periods, K).

    Attributes
    ----------
    periods : list of dict
        one entry per period: ``t_end``, ``present`` (flow numbers), ``measured_pps`` (K,),
        ``ogd_pps`` (the new decision x_{t+1}, K), ``num_pps`` (NUM optimum of the present
        flows, K, 0 for absent), ``written`` ({path: value} per link merged), ``tuning``
        (LinkTuning.to_dict per link).
    flows : list of int
        the tracked flow numbers (index of the per-flow arrays).
    links, capacity_pps, routing
        the controlled links, their capacities (packets/s) and the flow-link routing matrix.
    D, G : float
        Algorithm 1's diameter and gradient bounds.
    extra : dict
        Further records.
    """

    periods: list[dict[str, Any]]
    flows: list[int]
    links: list[str]
    capacity_pps: np.ndarray
    routing: np.ndarray
    D: float
    G: float
    extra: dict = field(default_factory=dict)

    def __getitem__(self, key: str) -> np.ndarray:
        """A per-period per-flow series (``measured_pps``, ``ogd_pps``, ``num_pps``,
        ``tuned_pps``) as an array of shape (periods, K)."""
        if key not in SERIES:
            raise KeyError(f"key = {key!r}: one of {', '.join(SERIES)}")
        return np.array([p[key] for p in self.periods], dtype=float)

    def array(self, key: str) -> np.ndarray:
        """Deprecated alias of ``result[key]``, kept for one release.

        Parameters
        ----------
        key : str
            One of ``measured_pps``, ``ogd_pps``, ``num_pps``, ``tuned_pps``.

        Returns
        -------
        numpy.ndarray, shape (periods, K)
        """
        deprecated("ControllerResult.array(key)", "ControllerResult[key]")
        return self[key]

    def _figures(self) -> dict:
        last = self.periods[-1] if self.periods else {}
        return {
            "periods": len(self.periods),
            "t_end": last.get("t_end", 0.0),
            "flows": len(self.flows),
            "links": list(self.links),
            "present": len(last.get("present", [])),
            "measured_pps": float(np.sum(last.get("measured_pps", []))),
        }

    def to_pandas(self):
        """One row per period and tracked flow: ``period``, ``t_end`` (s), ``flow``,
        ``present`` and the series ``measured_pps``, ``ogd_pps``, ``num_pps``,
        ``tuned_pps`` (packets/s).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        rows = []
        for i, p in enumerate(self.periods):
            present = set(p["present"])
            for j, f in enumerate(self.flows):
                rows.append(
                    {
                        "period": i,
                        "t_end": p["t_end"],
                        "flow": f,
                        "present": f in present,
                        **{k: p[k][j] for k in SERIES if k in p},
                    }
                )
        cols = ["period", "t_end", "flow", "present", *SERIES]
        return pd.DataFrame(rows, columns=cols)

    def to_dict(self) -> dict:
        """JSON-ready: ``periods`` (as recorded), ``flows``, ``links``, ``capacity_pps``,
        ``routing``, ``D``, ``G``.

        Returns
        -------
        dict
        """
        return json_ready(
            {
                "periods": self.periods,
                "flows": self.flows,
                "links": self.links,
                "capacity_pps": self.capacity_pps,
                "routing": self.routing,
                "D": self.D,
                "G": self.G,
            }
        )

    def plot(self, ax=None):
        """Measured goodput and Algorithm 1's decision per flow over the periods, with the
        NUM optimum dotted.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        fig, axes = new_axes(ax, figsize=(7, 3.5))
        t = [p["t_end"] for p in self.periods]
        meas, ogd, num = self["measured_pps"], self["ogd_pps"], self["num_pps"]
        for j, f in enumerate(self.flows):
            (line,) = axes.plot(t, meas[:, j], lw=1, label=f"flow {f}")
            axes.plot(t, ogd[:, j], lw=0.8, ls="--", color=line.get_color())
            axes.plot(t, num[:, j], lw=0.8, ls=":", color=line.get_color())
        axes.set_xlabel("time (s)")
        axes.set_ylabel("rate (packets/s)")
        axes.set_title("measured (solid), OGD decision (dashed), NUM optimum (dotted)", fontsize=8)
        if len(self.flows) <= 10:
            axes.legend(fontsize=7, ncol=2)
        return plotted(fig, ax)

    def key_shares(self, key: str, mapping: ParamMapping) -> list[dict[str, float]]:
        """Per period, each queue's share of the sum of ``key`` (e.g. measured goodput).

        Parameters
        ----------
        key : str
            A per-flow series (``measured_pps``, ...).
        mapping : ParamMapping
            Which queue each flow is in (its ``keys``).

        Returns
        -------
        list of dict
            Per period, queue key to share.
        """
        out = []
        for p in self.periods:
            v: dict[str, float] = {}
            for i, f in enumerate(self.flows):
                if f in mapping.keys:
                    v[mapping.keys[f]] = v.get(mapping.keys[f], 0.0) + p[key][i]
            tot = sum(v.values()) or 1.0
            out.append({k: x / tot for k, x in v.items()})
        return out


def _default_links(sim) -> dict[str, float]:
    """The controlled links when none are given: a dumbbell's ``bottleneck``, else every link
    running the ``sqm`` qdisc; capacities in packets/s of the largest packet of the flows."""
    d = sim.scenario.normalized.get("dumbbell")
    if d:
        return {"bottleneck": float(d["rate"]) / (8.0 * float(d["pkt_size"]))}
    names = [n for n in sim.link_names() if sim.sqm_slots(n) is not None]
    if not names:
        raise ValueError(
            "links must be given: the topology is not a dumbbell and no link runs the sqm qdisc"
        )
    groups = sim.scenario.normalized["flows"]
    pkt = max(float(groups[g].get("packet_size", 1000)) for g in sim.flow_groups())
    return {n: sim.link_status(n)["rate_bps"] / (8.0 * pkt) for n in names}


def run_controller(
    sim,
    period: float = 5.0,
    until: float | None = None,
    links: Mapping[str, float] | None = None,
    routes: Mapping[int, list[str]] | None = None,
    mapping: ParamMapping | Mapping[str, ParamMapping] | None = None,
    alpha: float = 2.0,
    epsilon: float = 1.0,
    sigma_rule: str = "reno",
    delay_target: float = 0.005,
    beta=0.0,
    absent: str = "pin",
    D: float | None = None,
    G: float | None = None,
    state: str = "ogd",
    progress=None,
) -> ControllerResult:
    """Run SQM's online tuning every ``period`` seconds over a :class:`~aqmlab.sim.Simulation`.

    Parameters
    ----------
    sim : aqmlab.sim.Simulation
        the simulation (stepped from its current time).
    period : float
        control period, s (SQM: 5 s).
    until : float, optional
        stop time (default the scenario's duration).
    links : mapping link name -> capacity (packets/s), optional
        the controlled links (default: a dumbbell's ``bottleneck`` at rate / (8 pkt_size);
        in other topologies every link running the ``sqm`` qdisc, at its rate over the largest
        packet size of the flow groups).
    routes : mapping flow number -> list of link names, optional
        the controlled links each flow crosses (default: the links of the flow's route,
        :meth:`~aqmlab.sim.Simulation.flow_path`, that are controlled).
    mapping : ParamMapping or {link: ParamMapping}, optional
        where weights (and sigma) go (default: :class:`SqmMapping` when every controlled link
        runs ``sqm``, writing sigma and beta with the ``"reno"`` and ``"theorem3"`` rules, else
        :meth:`ParamMapping.drr_classes`).
    alpha, epsilon, absent, D, G
        Algorithm 1 (:func:`aqmlab.online.ogd_step`).
    sigma_rule, delay_target, beta
        Algorithm 2 (:func:`aqmlab.online.link_tuning`; default ``"reno"``, the delay rule in
        real loss-rate units); sigma is only written when the mapping has a sigma path.
    state : {"ogd", "measured", "num"}
        the rates Algorithm 2 tunes for. ``"ogd"``: Algorithm 1's decision, stepping from its
        own previous decision (default: Algorithm 1 as written, the measurements give the flow
        set); ``"measured"``: Algorithm 1's decision stepping from the measured goodputs
        projected onto X (the paper calls x_t "the equilibrium (or average) rates" of the
        period); ``"num"``: the alpha-fair NUM optimum of the present flows, the point
        Algorithm 1's regret bound says its average approaches (Algorithm 1 still runs and is
        recorded). ``tuned_pps`` in each period's record is what Algorithm 2 used.
    progress : callable, optional
        called with the simulated time after each period.

    Returns
    -------
    ControllerResult
    """
    period = check_real("period", period, positive=True)
    end = sim.duration if until is None else check_real("until", until, positive=True)
    if sigma_rule not in SIGMA_RULES:
        raise ValueError(f"sigma_rule must be one of {', '.join(SIGMA_RULES)}, got {sigma_rule!r}")
    if state not in ("ogd", "measured", "num"):
        raise ValueError(f"state must be 'ogd', 'measured' or 'num', got {state!r}")
    if links is None:
        links = _default_links(sim)
    link_names = list(links)
    for name in link_names:
        if name not in sim.link_names():
            raise ValueError(f"links: {name!r} is not a link ({', '.join(sim.link_names())})")
    cap = np.array([check_real(f"links[{n!r}]", links[n], positive=True) for n in link_names])
    flows = list(range(len(sim.flow_groups())))
    if not flows:
        raise ValueError("the scenario has no static flows to control")
    R = np.zeros((len(flows), len(link_names)))
    for i, f in enumerate(flows):
        path = sim.flow_path(f) if routes is None else routes.get(f, [])
        for name in path:
            if name not in link_names:
                if routes is None:
                    continue  # an uncontrolled link of the flow's route
                raise ValueError(f"routes[{f}]: {name!r} is not a controlled link")
            R[i, link_names.index(name)] = 1.0
    crossing = R.any(axis=1)
    if not crossing.all():  # flows that cross no controlled link are not controlled
        flows = [f for f, c in zip(flows, crossing, strict=True) if c]
        R = R[crossing]
    if not flows:
        raise ValueError("no static flow crosses a controlled link")
    if mapping is None:
        # An sqm link: its flows' elephant slots; otherwise one DRR class per flow group.
        if all(sim.sqm_slots(n) is not None for n in link_names):
            write = sigma_rule in ("reno", "theorem3")  # the delay rule's sigma is a fluid price's
            mapping = {n: SqmMapping(sim, n, sigma=write) for n in link_names}
        else:
            mapping = ParamMapping.drr_classes(sim)
    maps = mapping if isinstance(mapping, Mapping) else {n: mapping for n in link_names}
    groups = sim.scenario.normalized["flows"]
    gid = sim.flow_groups()
    pkt = np.array([float(groups[gid[f]].get("packet_size", 1500)) for f in flows])
    D0, G0 = ogd_bounds(R, cap, epsilon, alpha)
    D = D0 if D is None else check_real("D", D, positive=True)
    G = G0 if G is None else check_real("G", G, positive=True)

    x = np.full(len(flows), float(epsilon))
    last = np.array([sim.flow_status(f)["bytes_delivered"] for f in flows], dtype=float)
    # times in integer nanoseconds (the simulator's one rounding rule), so the loop ends
    # exactly at the end whatever the period's decimal value
    from aqmlab.units import to_ns

    period_ns, end_ns = to_ns("period", period), min(to_ns("until", end), sim.end_ns)
    if period_ns < 1:
        raise ValueError(f"period = {period!r}: must be at least 1 ns")
    t_prev = sim.now_ns
    periods: list[dict[str, Any]] = []
    t = 0
    while sim.now_ns < end_ns:
        sim.run_until_ns(min(end_ns, sim.now_ns + period_ns))
        dt = (sim.now_ns - t_prev) / 1e9
        t_prev = sim.now_ns
        status = [sim.flow_status(f) for f in flows]
        now_b = np.array([s["bytes_delivered"] for s in status], dtype=float)
        meas = (now_b - last) / pkt / max(dt, 1e-12)
        last = now_b
        present = meas > 0
        t += 1
        if state == "measured":
            x = project(np.maximum(meas, epsilon), R, cap, epsilon).x
        x = ogd_step(x, present, t, R, cap, alpha, epsilon, D, G, absent)
        num = np.zeros(len(flows))
        if present.any():
            num[present] = num_optimum(R[present], cap, alpha).x
        tuned = num if state == "num" else x
        rtts = np.array([s["srtt_s"] or 0.1 for s in status])
        written: dict[str, dict[str, float]] = {}
        tunings: dict[str, dict] = {}
        for j, name in enumerate(link_names):
            on = [i for i in range(len(flows)) if R[i, j] > 0 and present[i]]
            if not on:
                continue
            tu = link_tuning(
                tuned[on],
                rtts[on],
                capacity=cap[j],
                alpha=alpha,
                sigma_rule=sigma_rule,
                delay_target=delay_target,
                beta=beta,
            )
            w = maps[name].writes([flows[i] for i in on], tu)
            for path, v in w.items():
                sim.set_aqm_param(name, path, v)
            written[name] = w
            tunings[name] = tu.to_dict()
        periods.append(
            {
                "t_end": sim.now,
                "present": [flows[i] for i in np.nonzero(present)[0]],
                "measured_pps": meas.tolist(),
                "ogd_pps": x.tolist(),
                "num_pps": num.tolist(),
                "tuned_pps": tuned.tolist(),
                "written": {p: v for w in written.values() for p, v in w.items()},
                "tuning": tunings,
            }
        )
        if progress is not None:
            progress(sim.now)
    return ControllerResult(periods, flows, link_names, cap, R, D, G)
