"""Run and step the Rust packet simulator from Python.

:func:`simulate` runs a scenario to the end and returns a :class:`~aqmlab.results.SimResult`;
:class:`Simulation` runs it step by step so that a Python controller can read link and flow state
and re-parameterise AQMs between steps. A scenario is parsed and validated once, by the core's
schema (:class:`~aqmlab.scenario.Scenario`), and built once per run.

Link names: a dumbbell's bottleneck (``R1->R2`` in the core) is called ``bottleneck`` here and in
every result; a parking lot's bottlenecks are ``bottleneck0``, ``bottleneck1``, ... (``R{i}->R{i+1}``).
Other links keep the core's names (``S3->R1``, explicit topologies' own names).

Examples
--------
>>> res = simulate({"duration": "5s", "dumbbell": {"rate": "10Mbps", "rtt": "50ms"},
...                 "aqm": {"type": "codel"}, "flows": [{"count": 4}]})
>>> 0.0 < res.link("bottleneck")["utilization"] <= 1.0
True
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aqmlab import _core
from aqmlab.protocol import HTML_ROWS, html_result, one_line
from aqmlab.provenance import meta, now_utc
from aqmlab.results import SimResult, flow_columns
from aqmlab.scenario import Scenario, load_scenario
from aqmlab.units import to_ns

__all__ = ["ArgumentError", "simulate", "Simulation", "to_ns"]

ArgumentError = _core.ArgumentError

#: Wall-clock seconds between returns to Python during a long run, so that Ctrl-C and SIGTERM
#: are handled promptly (the core releases the GIL and cannot see signals itself).
_SLICE_WALL_S = 0.2


def _as_scenario(scenario: Scenario | Mapping | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario(scenario)
    if isinstance(scenario, str | Path):
        return load_scenario(scenario)
    raise ArgumentError(
        f"scenario = {scenario!r}: give a Scenario, a dict or the path of a TOML file"
    )


class Simulation:
    """A steppable simulation.

    Parameters
    ----------
    scenario : Scenario, dict or path
        The scenario (validated on construction).
    seed : int, optional
        Overrides the scenario's seed.

    Raises
    ------
    ScenarioError
        The scenario does not fit the schema, or a flow cannot be routed.

    Examples
    --------
    >>> from aqmlab.scenario import parse_scenario
    >>> sim = Simulation({"duration": "4s", "dumbbell": {"rate": "10Mbps"},
    ...                   "aqm": {"type": "pi"}, "flows": [{"count": 5}]})
    >>> sim.run_until(2.0)
    >>> sim.set_aqm_param("bottleneck", "q_ref", 20)
    >>> sim.run_until(4.0)
    >>> sim.aqm_param("bottleneck", "q_ref")
    20.0
    """

    def __init__(self, scenario: Scenario | Mapping | str | Path, seed: int | None = None):
        self.scenario = _as_scenario(scenario)
        self._aliases = self.scenario.link_aliases()
        self._core_names = {v: k for k, v in self._aliases.items()}
        self._sim = _core.Simulation(self.scenario._core, seed)
        self._wall = 0.0
        self._started = now_utc()
        self._trace = None  # TraceWriter while a trace is being written
        self._trace_target: Path | None = None
        self._pcap: tuple[Path, Path] | None = None  # (temporary, target) of an open capture
        #: SQM's online-controller record (``{"period_s", "periods"}``) after :meth:`run` of a
        #: scenario with an ``[sqm]`` table; None otherwise.
        self.controller: dict[str, Any] | None = None

    # -- what a console and a notebook show (aqmlab.protocol) ---------------------------------
    def _figures(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "now_s": self.now,
            "duration_s": self.duration,
            "links": len(self._sim.link_names()),
            "flows": self.num_flows,
            "events": self._sim.events,
        }

    def __repr__(self) -> str:
        return one_line("Simulation", self._figures())

    def _repr_html_(self) -> str:
        import pandas as pd

        keys = ("aqm", "queue_pkts", "probability", "arrivals", "drops", "marks", "tx_pkts")
        links = pd.DataFrame(
            [
                {"link": name, **{k: self.link_status(name)[k] for k in keys}}
                for name in self.link_names()
            ]
        )
        n = self.num_flows
        shown = range(min(n, HTML_ROWS))
        fkeys = ("kind", "cwnd", "srtt_s", "bytes_delivered", "retransmits")
        flows = pd.DataFrame(
            [{"flow": i, **{k: self._sim.flow_status(i)[k] for k in fkeys}} for i in shown]
        )
        label = f"flows (the first {len(shown)} of {n})" if n > len(shown) else "flows"
        return html_result("Simulation", self._figures(), {"links": links, label: flows})

    def _link(self, name: str) -> str:
        if not isinstance(name, str):
            raise ArgumentError(
                f"link = {name!r}: give a link name ({', '.join(self.link_names())})"
            )
        return self._core_names.get(name, name)

    @property
    def now(self) -> float:
        """Simulated time, seconds (for display; :attr:`now_ns` is exact)."""
        return self._sim.now

    @property
    def now_ns(self) -> int:
        """Simulated time, integer nanoseconds."""
        return self._sim.now_ns

    @property
    def duration(self) -> float:
        """The scenario's duration, seconds."""
        return self.scenario.duration

    @property
    def end_ns(self) -> int:
        """The scenario's end (its duration), integer nanoseconds."""
        return self._sim.end_ns

    def run_until(self, t: float) -> None:
        """Advance to time ``t`` (seconds; a later ``t`` stops at the scenario's end).

        ``t`` is converted to integer nanoseconds once, by the project's one rounding rule
        (:func:`aqmlab.units.to_ns`: the nearest nanosecond), and the run reaches exactly that instant, so
        ``run_until(0.1 + 0.2)`` ends at 300,000,000 ns.

        Raises
        ------
        ArgumentError
            ``t`` is not a number, is NaN or infinite, negative, or before the current time.
        """
        self.run_until_ns(min(to_ns("t", t), self.end_ns))

    def run_until_ns(self, t_ns: int) -> None:
        """Advance to ``t_ns`` (integer nanoseconds; a later time stops at the scenario's end).

        A long step returns to Python every fraction of a second of wall time, so Ctrl-C
        interrupts it.

        Raises
        ------
        ArgumentError
            ``t_ns`` is not a whole number or is before the current time.
        """
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise ArgumentError(f"t_ns = {t_ns!r}: give a time in whole nanoseconds")
        end = min(t_ns, self.end_ns)
        if end < self.now_ns:
            self._sim.run_until_ns(end)  # raises, naming the current time
        t0 = time.perf_counter()
        # slices of simulated time sized so that each takes about _SLICE_WALL_S of wall time
        step = max(self.end_ns // 1000, 1_000_000)
        while self.now_ns < end:
            s0 = time.perf_counter()
            target = min(end, self.now_ns + step)
            if self._trace is None and self._pcap is None:
                self._sim.run_until_ns(target)
            elif self._trace is None:
                self._sim.run_until_traced_ns(target)  # writes the capture's full batches
            elif not self._sim.run_until_traced_ns(target):
                # the core stops whenever a trace batch is full: write it out, go on
                self._trace.flush()
            took = time.perf_counter() - s0
            if took < _SLICE_WALL_S / 4:
                step *= 2
            elif took > _SLICE_WALL_S:
                step = max(step // 2, 1_000_000)
        self._wall += time.perf_counter() - t0

    def run(self, progress: Callable[[float], None] | None = None, steps: int = 100) -> None:
        """Run from the current time to the end, calling ``progress(now)`` after each of
        ``steps`` chunks.

        A scenario with an ``[sqm]`` table runs SQM's online controller
        (:func:`aqmlab.online.run_controller`) every ``period`` instead, calling ``progress``
        after each period; its record is :attr:`controller` and goes into the result as
        ``sqm_controller.json``.
        """
        ctrl = self.scenario.normalized.get("sqm")
        if ctrl is not None:
            from aqmlab.online import run_controller

            period = float(ctrl["period"])
            r = run_controller(
                self,
                period=period,
                sigma_rule=ctrl["sigma_rule"],
                state=ctrl["state"],
                progress=progress,
            )
            self.controller = {"period_s": period, "periods": r.periods}
            return
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ArgumentError(f"steps = {steps!r}: must be a whole number >= 1")
        start, end = self.now_ns, self.end_ns
        for k in range(1, steps + 1):
            self.run_until_ns(start + (end - start) * k // steps)
            if progress is not None:
                progress(self.now)

    def start_trace(self, path: str | Path, force: bool = False) -> Path:
        """Stream the per-packet queue events of the scenario's ``[trace]`` links to ``path``.

        The file (schema in :mod:`aqmlab.trace`) is written to a temporary sibling and renamed
        into place by :meth:`close_trace`; memory stays bounded by ``[trace] batch``. Call it
        before running (events before the call are not recorded).

        Raises
        ------
        ArgumentError
            The scenario names no link to trace, or a trace is already being written.
        OutputError
            ``path`` exists (unless ``force``), is a folder, or does not end in ``.parquet``.
        """
        from aqmlab.output import check_output_file, temp_file_beside
        from aqmlab.trace import TraceWriter

        if not (self.scenario.normalized.get("trace") or {}).get("links"):
            raise ArgumentError(
                f"trace = {str(path)!r}: the scenario names no link to trace "
                '(add [trace] links = ["bottleneck"])'
            )
        if self._trace is not None:
            raise ArgumentError(f"trace = {str(path)!r}: a trace is already being written")
        target = check_output_file(path, force, suffixes=(".parquet",), what="trace")
        name = temp_file_beside(target)
        names = [self._aliases.get(n, n) for n in self._sim.link_names()]
        try:
            self._sim.start_trace()
            self._trace = TraceWriter(name, self._sim, names)
        except BaseException:
            name.unlink(missing_ok=True)
            raise
        self._trace_target = target
        return target

    def close_trace(self) -> Path | None:
        """Write the remaining trace rows, finish the file and rename it into place.

        Returns the trace's path (None if no trace was being written). The core keeps
        recording into its buffers; a later :meth:`start_trace` is refused.
        """
        if self._trace is None:
            return None
        w, target = self._trace, self._trace_target
        try:
            w.close()
            os.replace(w.path, target)
        except BaseException:
            w.abort()
            w.path.unlink(missing_ok=True)
            raise
        self._trace = None
        return target

    def abort_trace(self) -> None:
        """Stop writing the trace and delete the unfinished file (after an error)."""
        if self._trace is not None:
            self._trace.abort()
            self._trace.path.unlink(missing_ok=True)
            self._trace = None

    def start_pcap(self, path: str | Path, force: bool = False) -> Path:
        """Capture the packets of the scenario's ``[pcap]`` links into the pcapng file ``path``.

        Headers are synthesised from the simulated packets (``docs/pcap.md``); the file is
        written in batches to a temporary sibling and renamed into place by
        :meth:`close_pcap`, so memory stays bounded by ``[pcap] batch``. Call it before
        running (packets before the call are not captured).

        Parameters
        ----------
        path : path-like
            The capture file (``.pcapng``).
        force : bool
            Replace an existing file.

        Returns
        -------
        Path
            The target path.

        Raises
        ------
        ArgumentError
            The scenario has no ``[pcap]`` table, or a capture was already started.
        OutputError
            ``path`` exists (unless ``force``), is a folder, or does not end in ``.pcapng``.
        """
        from aqmlab.output import check_output_file, temp_file_beside

        if not (self.scenario.normalized.get("pcap") or {}).get("links"):
            raise ArgumentError(
                f"pcap = {str(path)!r}: the scenario names no link to capture "
                '(add [pcap] links = ["bottleneck"])'
            )
        if self._pcap is not None or self._sim.pcap_taps():
            raise ArgumentError(f"pcap = {str(path)!r}: a capture was already started")
        target = check_output_file(path, force, suffixes=(".pcapng",), what="pcap")
        name = temp_file_beside(target)
        try:
            self._sim.start_pcap(str(name))
        except OSError as e:
            name.unlink(missing_ok=True)
            from aqmlab.output import OutputError

            raise OutputError(f"pcap = {str(path)!r}: {e}") from None
        self._pcap = (name, target)
        return target

    def close_pcap(self) -> Path | None:
        """Write the remaining captured packets, close the file and rename it into place.

        Returns
        -------
        Path or None
            The capture's path (None if no capture was open).
        """
        if self._pcap is None:
            return None
        name, target = self._pcap
        try:
            self._sim.finish_pcap()
            os.replace(name, target)
        except BaseException:
            name.unlink(missing_ok=True)
            self._pcap = None
            raise
        self._pcap = None
        return target

    def abort_pcap(self) -> None:
        """Stop capturing and delete the unfinished file (after an error)."""
        if self._pcap is not None:
            name, _ = self._pcap
            self._pcap = None
            try:
                self._sim.finish_pcap()
            except OSError:
                pass
            name.unlink(missing_ok=True)

    def pcap_taps(self) -> list[dict[str, int]]:
        """Per capture tap: its interface id and its preallocated capacity.

        Returns
        -------
        list of dict
            ``iface`` (interface id in the file) and ``capacity`` (records the tap's buffer
            holds; constant over a run: memory is bounded), one per tap.
        """
        return [{"iface": i, "capacity": c} for i, c in self._sim.pcap_taps()]

    def trace_buffers(self) -> list[dict[str, Any]]:
        """Per traced link: ``link``, ``capacity`` (rows the preallocated buffer holds; None
        before :meth:`start_trace`) and ``batch`` (rows after which the run stops to write)."""
        return [
            {"link": self._aliases.get(n, n), "capacity": cap, "batch": batch}
            for n, cap, batch in self._sim.trace_buffers()
        ]

    @property
    def num_flows(self) -> int:
        """Flows created so far: the static groups' flows (numbered group by group, in the
        scenario's order) and the short flows that have arrived (numbered after them)."""
        return self._sim.num_flows()

    def flow_groups(self) -> list[int]:
        """Group index (position in the scenario's ``flows``) of each flow of a static group
        (TCP and UDP groups with ``count``), by flow number; short-flow groups add none."""
        out: list[int] = []
        for gi, g in enumerate(self.scenario.normalized["flows"]):
            if g.get("kind", "tcp") != "short_tcp":
                out += [gi] * int(g.get("count", 1))
        return out

    def link_names(self) -> list[str]:
        return [self._aliases.get(n, n) for n in self._sim.link_names()]

    def link_status(self, link: str) -> dict[str, Any]:
        """Queue (packets/bytes), AQM probability and counters of a link.

        ``drops`` counts every packet the queue dropped (at enqueue, at dequeue and a
        scheduler's victims, as ``summary.json``'s ``drops``); ``drops_victim`` the victims."""
        st = self._sim.link_status(self._link(link))
        st["name"] = link
        return st

    def flow_status(self, flow: int) -> dict[str, Any]:
        """cwnd (segments), ssthresh, srtt_s, bytes, retransmissions of flow number ``flow``.

        ``rwnd`` is the receiver's window as the sender sees it, in segments beyond the
        cumulative ACK (the ``linux`` profile's autotuned window or a fixed ``rwnd``; None if
        unlimited, for UDP and once the flow finished)."""
        return self._sim.flow_status(flow)

    def set_aqm_param(self, link: str, key: str, value: Any) -> None:
        """Change one AQM parameter (names/units as ``aqmlab aqms``; ``"5ms"`` accepted).

        For a scheduler the key is a path: ``classes.b.weight``, ``classes.a.aqm.target``;
        DualPI2's L-queue parameters are ``l.step_thresh`` and ``l.min_qlen_step``."""
        self._sim.set_aqm_param(self._link(link), key, value)

    def aqm_param(self, link: str, key: str) -> float:
        """Current value of an AQM parameter as running (SQM: ``queues.N.weight`` too).

        Raises
        ------
        ArgumentError
            ``link`` is not a link, or ``key`` is not a parameter of its queue.
        """
        v = self._sim.aqm_param(self._link(link), key)
        if v is None:
            aqm = self.link_status(link)["aqm"]
            raise ArgumentError(
                f"key = {key!r}: not a parameter of the {aqm} queue on link {link!r} "
                "(see `aqmlab aqms`)"
            )
        return v

    def flow_path(self, flow: int) -> list[str]:
        """The links (names as in results) flow ``flow``'s data packets cross, in order."""
        return [self._aliases.get(n, n) for n in self._sim.flow_path(flow)]

    def flow_hash(self, flow: int) -> int:
        """The hash queue disciplines see for flow ``flow`` (SQM's ``flows.HASH.weight``)."""
        return self._sim.flow_hash(flow)

    def sqm_slots(self, link: str) -> list[int | None] | None:
        """SQM's elephant slots on ``link``: per slot the flow number holding it (None: free);
        None if the link does not run SQM. Slot i's parameters are ``queues.i.weight``,
        ``queues.i.sigma``, ``queues.i.beta``."""
        return self._sim.sqm_slots(self._link(link))

    def set_aqm(self, link: str, name: str, params: dict[str, Any] | None = None) -> None:
        """Replace a link's AQM (the queued packets stay)."""
        self._sim.set_aqm_named(self._link(link), name, params or {})

    def conservation(self) -> dict[str, int]:
        """Packets sent, delivered, dropped, lost and in flight (sent = the other four)."""
        return self._sim.conservation()

    def result(self) -> SimResult:
        """The results so far (statistics over ``[warmup, now]``)."""
        summary = json.loads(self._sim.summary_json())
        summary["wall_seconds"] = self._wall
        alias = self._aliases.get
        summary["links"] = {alias(k, k): v for k, v in summary["links"].items()}
        for f in summary["flows"]:
            if f.get("queue_delay_link") is not None:
                f["queue_delay_link"] = alias(f["queue_delay_link"], f["queue_delay_link"])
            f["queue_delay_by_link"] = {
                alias(k, k): v for k, v in f.get("queue_delay_by_link", {}).items()
            }
        for g in summary.get("groups", []):
            g["queue_delay_ms"] = {alias(k, k): v for k, v in g["queue_delay_ms"].items()}
        summary["conservation"] = self.conservation()
        lbe = [f["goodput_bps"] for f in summary["flows"] if f.get("cc") == "ledbat"]
        if lbe:  # less-than-best-effort (LEDBAT) flows: their part of all flows' goodput
            total = sum(f["goodput_bps"] for f in summary["flows"])
            summary["lbe"] = {
                "flows": len(lbe),
                "goodput_bps": sum(lbe),
                "share": sum(lbe) / total if total > 0 else None,
            }
        cols = self._sim.columns()
        ts = cols["timeseries"]
        ts["link"] = [self._aliases.get(n, n) for n in ts["link"]]
        cts = cols["class_timeseries"]
        cts["link"] = [self._aliases.get(n, n) for n in cts["link"]]
        cols["flows"] = flow_columns(summary["flows"])
        if cols.get("pings", {}).get("flow"):
            from aqmlab.pings import ping_summary

            summary["pings"] = ping_summary(cols["pings"], summary)
        extra = {}
        if self.controller is not None:
            extra["sqm_controller.json"] = self.controller
        summary["meta"] = meta(started=self._started)
        return SimResult(summary=summary, columns=cols, extra=extra, scenario=self.scenario)


def simulate(
    scenario: Scenario | Mapping | str | Path,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    trace: str | Path | None = None,
    force: bool = False,
    pcap: str | Path | None = None,
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
    trace : path, optional
        Write the per-packet events of the scenario's ``[trace]`` links to this Parquet file
        (:mod:`aqmlab.trace`); the scenario must name the links.
    force : bool
        Replace an existing ``trace`` or ``pcap`` file.
    pcap : path, optional
        Capture the packets of the scenario's ``[pcap]`` links into this pcapng file
        (``docs/pcap.md``); the scenario must name the links.

    Returns
    -------
    SimResult
        Summary (results contract, ``docs/design.md``), time series, per-flow rows, cwnd traces.
    """
    sim = Simulation(scenario, seed=seed)
    if trace is None and pcap is None:
        sim.run(progress=progress)
        return sim.result()
    try:
        if trace is not None:
            sim.start_trace(trace, force=force)
        if pcap is not None:
            sim.start_pcap(pcap, force=force)
        sim.run(progress=progress)
        res = sim.result()
        sim.close_trace()
        sim.close_pcap()
    finally:
        sim.abort_trace()
        sim.abort_pcap()
    return res
