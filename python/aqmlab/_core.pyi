"""Type stubs of ``aqmlab._core``, the PyO3 bindings of the Rust core (``crates/pybind``).

Every class and function the module exports is here with its parameters as the bindings
declare them; ``tests/test_core_stubs.py`` compares this file with the built module, so a
binding added, removed or renamed without its stub fails the tests. Times are seconds
(``float``) or integer nanoseconds (``int``, names ending in ``_ns``).
"""

import os
from collections.abc import Sequence
from typing import Any, Literal, final

__all__ = [
    "core_version",
    "rustc_version",
    "AqmConfigError",
    "ScenarioError",
    "ArgumentError",
    "congestion_controllers",
    "parse_quantity",
    "secs_to_ns",
    "Queue",
    "aqm_names",
    "scheduler_names",
    "aqm_describe",
    "aqm_config_json",
    "Scenario",
    "Simulation",
    "Forwarder",
]

class AqmConfigError(ValueError):
    """An AQM name or parameter is not acceptable (the message names the key and value)."""

class ScenarioError(ValueError):
    """A scenario is not acceptable (the message names the key path and value)."""

class ArgumentError(ValueError):
    """An argument of an API call is not acceptable (the message names the argument and value)."""

def core_version() -> str:
    """Version of the Rust core."""

def rustc_version() -> str:
    """The compiler the core was built with (``rustc --version``)."""

def congestion_controllers() -> list[dict[str, Any]]:
    """The registry of congestion controllers: ``name``, ``needs_ecn``, ``ect1``, ``kernel``,
    ``help`` per controller."""

def parse_quantity(kind: str, text: str, require_unit: bool = False) -> float:
    """Parse a quantity (``kind``: time, rate, size, packet_rate) to its SI base unit; with
    ``require_unit`` a bare number is an error."""

def secs_to_ns(key: str, s: float) -> int:
    """Seconds to integer nanoseconds (nearest, halves away from zero); ``ArgumentError``
    naming ``key`` for a negative, non-finite or too large time."""

def scheduler_names() -> list[str]:
    """Names of the schedulers (class-based queue disciplines)."""

def aqm_names() -> list[str]:
    """Names of the available AQMs."""

def aqm_describe(name: str) -> list[tuple[str, str, float, str]]:
    """Parameters of one AQM or qdisc: ``(name, unit, default, doc)``."""

def aqm_config_json(
    name: str, params: dict[str, Any] | None = None, require_unit: bool = False
) -> str:
    """Validate ``name`` and ``{param: value}`` and return the configuration's serde JSON."""

@final
class Scenario:
    """A validated scenario: ``Scenario(json)`` with the scenario document as JSON."""

    def __new__(cls, json: str) -> Scenario: ...
    def normalized_json(self) -> str:
        """Defaults filled in, quantities in SI base units, as JSON."""

    def link_aliases(self) -> list[tuple[str, str]]:
        """``[(core link name, result name)]``, e.g. ``[("R1->R2", "bottleneck")]``."""

    def memory_bytes(self) -> float:
        """The run's estimated memory, bytes."""

@final
class Simulation:
    """A packet-level simulation of a validated scenario; long runs release the GIL."""

    def __new__(cls, scenario: Scenario, seed: int | None = None) -> Simulation: ...
    def run_until_ns(self, t_ns: int) -> None:
        """Advance to ``t_ns`` (not before now, at most the scenario's end)."""

    def start_trace(self) -> None:
        """Start recording the per-packet events of the scenario's ``[trace]`` links."""

    def start_pcap(self, path: str | os.PathLike[str]) -> None:
        """Open the capture of the scenario's ``[pcap]`` links at ``path`` (pcapng); drive the
        run with ``run_until_traced_ns``, which writes full batches."""

    def finish_pcap(self) -> int:
        """Write the remaining captured packets and close the file; the packets written."""

    def capturing(self) -> bool:
        """True while a capture is open."""

    def pcap_taps(self) -> list[tuple[int, int]]:
        """Per capture tap: (interface id, capacity in records)."""

    def run_until_traced_ns(self, t_ns: int) -> bool:
        """Like ``run_until_ns``; returns False early once a trace buffer holds a batch."""

    def drain_trace(self) -> dict[str, Any]:
        """The trace rows since the last call: column name to little-endian bytes, plus
        ``"kinds"`` (names by kind code)."""

    def trace_buffers(self) -> list[tuple[str, int | None, int]]:
        """Per traced link: core link name, buffer capacity in rows (None before
        ``start_trace``), batch size in rows."""

    def run(self) -> None:
        """Run to the configured duration."""

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""

    @property
    def now_ns(self) -> int:
        """Current simulated time, integer nanoseconds."""

    @property
    def end_ns(self) -> int:
        """The scenario's end (its duration), integer nanoseconds."""

    @property
    def events(self) -> int:
        """Events executed so far."""

    def link_names(self) -> list[str]:
        """Names of all links (core names)."""

    def monitored_links(self) -> list[str]:
        """Names of the monitored links."""

    def num_flows(self) -> int:
        """Number of flows created so far."""

    def link_status(self, name: str) -> dict[str, Any]:
        """Snapshot of a link: queue, AQM probability and counters."""

    def flow_status(self, id: int) -> dict[str, Any]:
        """Snapshot of a flow: cwnd (segments), ssthresh, srtt, bytes, retransmissions."""

    def set_aqm_param(self, link: str, key: str, value: float | bool | str) -> None:
        """Change one AQM parameter (or a path into a scheduler) while running."""

    def set_aqm(self, link: str, aqm_json: str) -> None:
        """Replace a link's AQM (serde JSON of a qdisc configuration); packets are kept."""

    def set_aqm_named(self, link: str, name: str, params: dict[str, Any] | None = None) -> None:
        """Replace a link's AQM by name and user-written parameters."""

    def aqm_param(self, link: str, key: str) -> float | None:
        """Current value of a link's AQM parameter (None if unknown)."""

    def flow_path(self, flow: int) -> list[str]:
        """The links flow ``flow``'s data packets cross, in order (core names)."""

    def flow_hash(self, flow: int) -> int:
        """The flow hash queue disciplines see for flow ``flow``."""

    def sqm_slots(self, link: str) -> list[int | None] | None:
        """SQM's elephant slots on a link (flow number or None per slot); None without SQM."""

    def set_link_loss(self, link: str, p: float) -> None:
        """Set a link's Bernoulli loss probability."""

    def conservation(self) -> dict[str, int]:
        """Packet totals: sent, delivered, dropped, lost, in_flight."""

    def summary_json(self) -> str:
        """The summary (results contract) as JSON, covering ``[warmup, now]``."""

    def columns(self) -> dict[str, dict[str, list[Any]]]:
        """``{"timeseries", "cwnd", "class_timeseries", "pings"}``: each column name to its
        values (``pings``: ``flow``, ``seq``, ``time_s``, ``rtt_ms``, NaN without echo)."""

@final
class Forwarder:
    """The live-emulation forwarder between two TUN devices for a scenario's dumbbell."""

    def __new__(
        cls,
        scenario: Scenario,
        snd_tun: str,
        rcv_tun: str,
        group_addrs: list[str],
        reverse: Scenario | None = None,
        names: tuple[str, str] | None = None,
        until_stopped: bool = False,
        pcap: str | os.PathLike[str] | None = None,
    ) -> Forwarder: ...
    def run(self, t0_ns: int) -> None:
        """Forward from ``t0_ns`` (a ``time.monotonic_ns()`` instant) for the scenario's
        duration or until ``stop()``; releases the GIL."""

    def finish_capture(self) -> int:
        """Close the capture file (after ``run``); the packets it holds (0 without one)."""

    def stop(self) -> None:
        """End ``run`` within 10 ms (thread-safe)."""

    def report_json(self) -> str:
        """``{"seconds", "bottleneck", "reverse" ([name, summary], with a reverse link),
        "packets_forwarded", "timing", "ecn"}`` as JSON."""

    def timeseries(self) -> dict[str, list[Any]]:
        """The bottleneck's time series, column name to values."""

    def class_timeseries(self) -> dict[str, list[Any]]:
        """The bottleneck's per-class time series (no rows for a FIFO)."""

    def reverse_timeseries(self) -> dict[str, list[Any]]:
        """The reverse link's time series (no rows for a constant delay)."""

@final
class Queue:
    """A queue discipline driven with explicit times (seconds); each packet carries a flow
    key and an ECN codepoint."""

    def __new__(
        cls,
        aqm: str,
        params: dict[str, Any] | None = None,
        limit_pkts: int | None = None,
        link_rate_bps: float = 10e6,
        seed: int | None = None,
        limit_bytes: int | None = None,
        mtu: int | None = None,
    ) -> Queue: ...
    def enqueue(
        self,
        now_s: float,
        size_bytes: int,
        flow: int | None = None,
        ecn: bool | str | None = None,
        dscp: int | str | None = None,
        tcp_flags: str | int | None = None,
        ack_seq: int | None = None,
        sack: Sequence[tuple[int, int]] | None = None,
        ts: tuple[int, int] | None = None,
        payload: int | None = None,
    ) -> Literal["queued", "marked", "dropped"]:
        """Offer a packet at ``now_s`` (``dscp``: 0..63 or a name); the arrival's fate.

        ``tcp_flags`` ("FSRPAUEC" letters or the flag byte), ``ack_seq``, ``sack``, ``ts``
        (TSval, TSecr) and ``payload`` give a TCP segment's header to CAKE's ACK filter."""

    def dequeue(self, now_s: float) -> int | None:
        """The next packet's size in bytes, or None if empty."""

    def dequeue_info(self, now_s: float) -> tuple[int, float, bool] | None:
        """``(size_bytes, sojourn_s, ce)`` of the departing packet, or None."""

    def dequeue_packet(self, now_s: float) -> dict[str, Any] | None:
        """The departing packet: ``size``, ``flow``, ``sojourn_s``, ``ecn``; None if empty."""

    def ready_at(self) -> float | None:
        """A shaping qdisc's next send time (s) while it holds packets it may not send yet."""

    def poll_at(self) -> float | None:
        """Next time (s) the qdisc needs ``on_timer``, or None."""

    def on_timer(self, now_s: float) -> None:
        """Run the qdisc's periodic laws that are due at ``now_s``."""

    def set_param(self, key: str, value: float | bool | str) -> None:
        """Change one parameter (or parameter path) while running."""

    def param(self, key: str) -> float | None:
        """Current value of one parameter (None if unknown)."""

    @property
    def probability(self) -> float:
        """Current drop/mark probability (0 for laws without one)."""

    @property
    def len_pkts(self) -> int:
        """Packets in the queue."""

    @property
    def len_bytes(self) -> int:
        """Bytes in the queue."""

    @property
    def aqm(self) -> str:
        """Name of the AQM or qdisc."""

    @property
    def active_flows(self) -> int | None:
        """Backlogged flow queues of a hashed qdisc, else None."""

    def stats(self) -> dict[str, int]:
        """Counters: received, enqueued, the drops by place and cause, marked, dequeued, ..."""

    def config_json(self) -> str:
        """The configuration as JSON (serde form: times in integer nanoseconds)."""
