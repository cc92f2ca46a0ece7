"""Run and step the Rust packet simulator from Python.

:func:`build_config` turns a validated :class:`~aqmlab.scenario.Scenario` into the simulator's
``SimConfig`` (``crates/netsim/SCHEMA.md``), :func:`simulate` runs it to the end and returns a
:class:`~aqmlab.results.SimResult`, and :class:`Simulation` runs it step by step so that a Python
controller can read link and flow state and re-parameterise AQMs between steps.

Link names: a dumbbell's bottleneck (``R1->R2`` in the core) is called ``bottleneck`` here and in
every result; a parking lot's bottlenecks are ``bottleneck0``, ``bottleneck1``, ... (``R{i}->R{i+1}``).
Other links keep the core's names (``S3->R1``, explicit topologies' own names).

Examples
--------
>>> from aqmlab.scenario import parse_scenario
>>> sc = parse_scenario({"duration": "5s", "dumbbell": {"rate": "10Mbps", "rtt": "50ms"},
...                      "aqm": {"type": "codel"}, "flows": [{"count": 4}]})
>>> res = simulate(sc)
>>> 0.0 < res.link("bottleneck")["utilization"] <= 1.0
True
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aqmlab import _core
from aqmlab.aqm import aqm_config
from aqmlab.results import SimResult, jain_index
from aqmlab.scenario import FlowGroup, Scenario, ScenarioError, load_scenario, parse_scenario

__all__ = ["SimConfigError", "build_config", "simulate", "Simulation", "link_aliases"]

SimConfigError = _core.SimConfigError


def link_aliases(sc: Scenario) -> dict[str, str]:
    """Map the core's link names to the names used in results (``R1->R2`` -> ``bottleneck``)."""
    if sc.dumbbell is not None:
        return {"R1->R2": "bottleneck"}
    if sc.parking_lot is not None:
        return {f"R{i}->R{i + 1}": f"bottleneck{i}" for i in range(sc.parking_lot.hops)}
    return {}


def _aqm(spec, key: str) -> dict[str, Any]:
    try:
        return aqm_config(spec.type, spec.params())
    except ValueError as e:
        raise ScenarioError(f"scenario key '{key}': {e}") from None


def _flow(i: int, g: FlowGroup, sc: Scenario, pkt_size: int) -> dict[str, Any]:
    common: dict[str, Any] = {"name": f"flows[{i}]"}
    if g.start is not None:
        common["start"] = g.start
    if g.start_jitter is not None:
        common["start_jitter"] = g.start_jitter
    if g.stop is not None:
        common["stop"] = g.stop
    if sc.links:
        common["src"], common["dst"] = g.src, g.dst
    else:
        if g.extra_delay:
            common["extra_delay"] = [g.extra_delay]
        if sc.parking_lot is not None and g.path is not None:
            hops = sc.parking_lot.hops
            if g.path == "long":
                common["path"] = [0, hops]
            elif isinstance(g.path, int) and 0 <= g.path < hops:
                common["path"] = [g.path, g.path + 1]
            else:
                raise ScenarioError(
                    f"scenario key 'flows[{i}].path' = {g.path!r}: 'long' or a hop index "
                    f"in 0..{hops - 1}"
                )
    size = int(g.packet_size or pkt_size)
    tcp = {"cc": g.cc, "ecn": g.ecn, "delayed_ack": g.delack, "packet_size": size}
    if g.kind == "tcp":
        out = {"kind": "tcp", "count": g.count, **tcp, **common}
        if g.size is not None:
            out["bytes"] = int(g.size)
        return out
    if g.kind == "tcp_short":
        return {
            "kind": "short_tcp",
            "arrival_rate": g.arrival_rate,
            "mean_size": int(g.mean_size),
            "pareto_shape": g.pareto_shape,
            **tcp,
            **common,
        }
    out = {"kind": g.kind, "count": g.count, "rate": g.rate, "packet_size": size, **common}
    if g.kind == "udp_onoff":
        out["on_mean"], out["off_mean"] = g.on_time, g.off_time
    return out


def build_config(sc: Scenario) -> dict[str, Any]:
    """The simulator's ``SimConfig`` for a scenario, validated by the core.

    Raises
    ------
    ScenarioError
        An AQM name or parameter, or a topology/flow value the core rejects (named in the message).
    """
    cfg: dict[str, Any] = {
        "scenario": sc.name,
        "seed": sc.seed,
        "duration": sc.duration,
        "warmup": sc.warmup,
        "sample_interval": sc.sample_interval,
    }
    pkt_size = 1000
    if sc.dumbbell is not None:
        d = sc.dumbbell
        pkt_size = d.pkt_size
        topo: dict[str, Any] = {
            "type": "dumbbell",
            "bottleneck_rate": d.rate,
            "rtt": d.rtt,
            "aqm": _aqm(sc.aqm, "aqm"),
            ("buffer_bytes" if d.buffer_bytes else "buffer_pkts"): d.buffer,
            "loss": d.loss,
        }
        if d.access_rate is not None:
            topo["access_rate"] = d.access_rate
    elif sc.parking_lot is not None:
        p = sc.parking_lot
        pkt_size = p.pkt_size
        topo = {
            "type": "parking_lot",
            "hops": p.hops,
            "bottleneck_rate": p.rate,
            "hop_delay": p.link_delay,
            "access_delay": p.access_delay,
            "aqm": _aqm(sc.aqm, "aqm"),
            "buffer_pkts": p.buffer,
        }
    else:
        links = []
        monitor = []
        for i, link in enumerate(sc.links):
            entry: dict[str, Any] = {
                "from": link.src,
                "to": link.dst,
                "rate": link.rate,
                "delay": link.delay,
                "loss": link.loss,
                ("limit_bytes" if link.buffer_bytes else "limit_pkts"): link.buffer,
                "duplex": link.duplex,
            }
            if link.aqm is not None:
                entry["aqm"] = _aqm(link.aqm, f"links[{i}].aqm")
            if link.name:
                entry["name"] = link.name
            links.append(entry)
            if link.monitor:
                monitor.append(link.name or f"{link.src}->{link.dst}")
        topo = {"type": "explicit", "nodes": [n.name for n in sc.nodes], "links": links}
        cfg["monitor"] = monitor
    cfg["topology"] = topo
    cfg["flows"] = [_flow(i, g, sc, pkt_size) for i, g in enumerate(sc.flows)]
    trace, next_id = [], 0
    for g in sc.flows:
        n = g.count if g.kind != "tcp_short" else 0
        if g.cwnd_trace:
            trace.extend(range(next_id, next_id + n))
        next_id += n
    if trace:
        cfg["cwnd_trace"] = trace
    try:
        _core.validate_sim_config(json.dumps(cfg))
    except ValueError as e:
        raise ScenarioError(f"scenario: {e}") from None
    return cfg


def _as_scenario(scenario: Scenario | dict | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return parse_scenario(scenario)
    return load_scenario(scenario)


class Simulation:
    """A steppable simulation.

    Parameters
    ----------
    scenario : Scenario, dict or path
        The scenario (validated on construction).
    seed : int, optional
        Overrides the scenario's seed.

    Examples
    --------
    >>> from aqmlab.scenario import parse_scenario
    >>> sim = Simulation(parse_scenario({"duration": "4s", "dumbbell": {"rate": "10Mbps"},
    ...                                  "aqm": {"type": "pi"}, "flows": [{"count": 5}]}))
    >>> sim.run_until(2.0)
    >>> sim.set_aqm_param("bottleneck", "q_ref", 20)
    >>> sim.run_until(4.0)
    >>> sim.aqm_param("bottleneck", "q_ref")
    20.0
    """

    def __init__(self, scenario: Scenario | dict | str | Path, seed: int | None = None):
        self.scenario = _as_scenario(scenario)
        if seed is not None:
            self.scenario = self.scenario.model_copy(update={"seed": seed})
        self.config = build_config(self.scenario)
        self._aliases = link_aliases(self.scenario)
        self._core_names = {v: k for k, v in self._aliases.items()}
        self._sim = _core.Simulation(json.dumps(self.config))
        self._wall = 0.0

    def _link(self, name: str) -> str:
        return self._core_names.get(name, name)

    @property
    def now(self) -> float:
        """Simulated time, seconds."""
        return self._sim.now

    @property
    def duration(self) -> float:
        return self.scenario.duration

    def run_until(self, t: float) -> None:
        """Advance to time ``t`` (seconds; at most the scenario's duration)."""
        t0 = time.perf_counter()
        self._sim.run_until(min(float(t), self.scenario.duration))
        self._wall += time.perf_counter() - t0

    def run(self, progress: Callable[[float], None] | None = None, steps: int = 100) -> None:
        """Run to the end, calling ``progress(now)`` after each of ``steps`` chunks."""
        dur = self.scenario.duration
        if progress is None:
            self.run_until(dur)
            return
        for k in range(1, steps + 1):
            self.run_until(dur * k / steps)
            progress(self.now)

    def link_names(self) -> list[str]:
        return [self._aliases.get(n, n) for n in self._sim.link_names()]

    def link_status(self, link: str) -> dict[str, Any]:
        """Queue (packets/bytes), AQM probability and counters of a link."""
        st = self._sim.link_status(self._link(link))
        st["name"] = link
        return st

    def flow_status(self, flow: int) -> dict[str, Any]:
        """cwnd (segments), ssthresh, srtt_s, bytes, retransmissions of a flow."""
        return self._sim.flow_status(int(flow))

    def set_aqm_param(self, link: str, key: str, value: Any) -> None:
        """Change one AQM parameter (names/units as ``aqmlab aqms``; ``"5ms"`` accepted)."""
        from aqmlab.aqm import convert_params

        aqm = self.link_status(link)["aqm"]
        val = convert_params(aqm, {key: value})[key]
        self._sim.set_aqm_param(self._link(link), key, val)

    def aqm_param(self, link: str, key: str) -> float | None:
        return self._sim.aqm_param(self._link(link), key)

    def set_aqm(self, link: str, name: str, params: dict[str, Any] | None = None) -> None:
        """Replace a link's AQM (the queued packets stay)."""
        self._sim.set_aqm(self._link(link), json.dumps(aqm_config(name, params)))

    def conservation(self) -> dict[str, int]:
        """Packets sent, delivered, dropped, lost and in flight (sent = the other four)."""
        return self._sim.conservation()

    def result(self) -> SimResult:
        """The results so far (statistics over ``[warmup, now]``)."""
        summary = json.loads(self._sim.summary_json())
        summary["wall_seconds"] = self._wall
        summary["links"] = {self._aliases.get(k, k): v for k, v in summary["links"].items()}
        if summary.get("fairness", {}).get("jain") is None:
            summary["fairness"]["jain"] = jain_index(
                f["goodput_bps"] for f in summary["flows"] if f["kind"] == "tcp"
            )
        summary["conservation"] = self.conservation()
        cols = self._sim.columns()
        ts = cols["timeseries"]
        ts["link"] = [self._aliases.get(n, n) for n in ts["link"]]
        flows: dict[str, list] = {}
        for row in summary["flows"]:
            for k, v in row.items():
                flows.setdefault(k, []).append(v)
        cols["flows"] = flows
        return SimResult(summary=summary, columns=cols)


def simulate(
    scenario: Scenario | dict | str | Path,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> SimResult:
    """Run a scenario to its end and return the results.

    Parameters
    ----------
    scenario : Scenario, dict or path
        The scenario (a TOML path is read and validated).
    seed : int, optional
        Overrides the scenario's seed.
    progress : callable, optional
        Called with the simulated time (s) about 100 times during the run.

    Returns
    -------
    SimResult
        Summary (DESIGN.md results contract), time series, per-flow rows, cwnd traces.
    """
    sim = Simulation(scenario, seed=seed)
    sim.run(progress=progress)
    return sim.result()
