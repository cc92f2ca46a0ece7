"""Scenario model: TOML in, validated objects out, clear errors naming the offending key.

A scenario file describes one simulation::

    name = "dumbbell-codel"
    seed = 1
    duration = "60s"          # times: "5ms", "60s" or a number of seconds
    warmup = "10s"            # statistics exclude the warm-up
    sample_interval = "10ms"

    [dumbbell]                # or [parking_lot], or explicit [[nodes]] + [[links]]
    rate = "10Mbps"           # bottleneck rate; access links are 10x faster
    rtt = "100ms"             # two-way propagation delay of every flow
    buffer = 100              # bottleneck buffer in packets
    pkt_size = 1000           # IP size of data packets incl. 40 B of TCP/IP headers

    [aqm]                     # the AQM at the bottleneck(s); see `aqmlab aqms`
    type = "codel"
    target = "5ms"

    [[flows]]                 # one group of flows
    kind = "tcp"              # tcp | tcp_short | udp_cbr | udp_onoff
    count = 20
    cc = "newreno"            # newreno | reno | cubic
    start = "0s"
    stop = "60s"              # optional: the group leaves (a load step)

Explicit topologies name nodes and links (each link one direction unless ``duplex = true``)::

    [[nodes]]
    name = "a"
    [[links]]
    src = "a"
    dst = "b"
    rate = "10Mbps"
    delay = "10ms"
    buffer = 100
    aqm = { type = "red" }
    [[flows]]
    src = "a"
    dst = "b"

Every validation error is a :class:`ScenarioError` (a ``ValueError``) whose message names the key
path and the value, e.g. ``scenario key 'flows[0].count' = -3: Input should be greater than 0``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from aqmlab.units import UnitError, parse_rate, parse_size, parse_time

__all__ = [
    "ScenarioError",
    "Scenario",
    "Dumbbell",
    "ParkingLot",
    "Node",
    "Link",
    "FlowGroup",
    "load_scenario",
    "parse_scenario",
    "apply_overrides",
]


class ScenarioError(ValueError):
    """A scenario is malformed; the message names the key and the offending value."""


def _unit(parser):
    def convert(v: Any) -> Any:
        if isinstance(v, str):
            try:
                return parser(v)
            except UnitError as e:
                raise ValueError(str(e)) from None
        return v

    return BeforeValidator(convert)


Seconds = Annotated[float, _unit(parse_time), Field(ge=0)]
PositiveSeconds = Annotated[float, _unit(parse_time), Field(gt=0)]
Rate = Annotated[float, _unit(parse_rate), Field(gt=0)]
Bytes = Annotated[float, _unit(parse_size), Field(gt=0)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class AqmSpec(BaseModel):
    """An AQM by name plus parameters (the config fields ``aqmlab aqms`` lists).

    Values may carry units (``"5ms"``); they are converted using each parameter's unit as the Rust
    core describes it, and validated by the core itself.
    """

    model_config = ConfigDict(extra="allow")
    type: str = "droptail"

    def params(self) -> dict[str, Any]:
        """The parameters other than ``type``."""
        return dict(self.model_extra or {})


class Dumbbell(_Model):
    """N senders -- R1 == bottleneck == R2 -- N receivers (see ``netsim`` SCHEMA.md)."""

    rate: Rate
    rtt: Seconds = 0.1
    buffer: int = Field(100, gt=0)
    buffer_bytes: bool = False
    access_rate: Rate | None = None
    pkt_size: int = Field(1000, gt=40, le=65535)
    loss: float = Field(0.0, ge=0.0, lt=1.0)


class ParkingLot(_Model):
    """A chain of ``hops`` bottlenecks; flow groups name ``path = "long"`` or a hop index."""

    hops: int = Field(2, ge=1)
    rate: Rate
    link_delay: Seconds = 0.01
    access_delay: Seconds = 0.005
    buffer: int = Field(100, gt=0)
    pkt_size: int = Field(1000, gt=40, le=65535)


class Node(_Model):
    name: str = Field(min_length=1)


class Link(_Model):
    src: str
    dst: str
    rate: Rate
    delay: Seconds = 0.0
    buffer: int = Field(1000, gt=0)
    buffer_bytes: bool = False
    loss: float = Field(0.0, ge=0.0, lt=1.0)
    aqm: AqmSpec | None = None
    name: str | None = None
    duplex: bool = True
    monitor: bool = True


class FlowGroup(_Model):
    """A group of identical flows."""

    kind: Literal["tcp", "tcp_short", "udp_cbr", "udp_onoff"] = "tcp"
    count: int = Field(1, gt=0)
    cc: Literal["newreno", "reno", "cubic"] = "newreno"
    ecn: bool = False
    delack: bool = False
    start: Seconds | None = None  # None: seeded-uniform start in [0, start_jitter or 1 s]
    start_jitter: Seconds | None = None
    stop: Seconds | None = None
    extra_delay: Seconds = 0.0
    packet_size: int | None = Field(None, gt=40, le=65535)
    # finite / short flows
    size: Bytes | None = None
    arrival_rate: Annotated[float, Field(gt=0)] | None = None  # short flows per second
    mean_size: Bytes | None = None
    pareto_shape: float = Field(1.2, gt=1.0)
    # UDP
    rate: Rate | None = None
    on_time: PositiveSeconds | None = None
    off_time: PositiveSeconds | None = None
    # explicit topology / parking lot
    src: str | None = None
    dst: str | None = None
    path: str | int | None = None
    cwnd_trace: bool = False

    @model_validator(mode="after")
    def _check(self) -> FlowGroup:
        if self.stop is not None and self.stop <= (self.start or 0.0):
            raise ValueError(f"stop = {self.stop} must be after start = {self.start or 0.0}")
        if self.kind in ("udp_cbr", "udp_onoff") and self.rate is None:
            raise ValueError(f"a {self.kind} group needs 'rate'")
        if self.kind == "udp_onoff" and (self.on_time is None or self.off_time is None):
            raise ValueError("a udp_onoff group needs 'on_time' and 'off_time'")
        if self.kind == "tcp_short" and (self.arrival_rate is None or self.mean_size is None):
            raise ValueError("a tcp_short group needs 'arrival_rate' and 'mean_size'")
        return self


class Scenario(_Model):
    """A validated scenario. Times in seconds, rates in bits/s, sizes in bytes."""

    name: str = "scenario"
    seed: int = Field(1, ge=0)
    duration: PositiveSeconds = 60.0
    warmup: Seconds = 0.0
    sample_interval: PositiveSeconds = 0.01
    dumbbell: Dumbbell | None = None
    parking_lot: ParkingLot | None = None
    nodes: list[Node] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    aqm: AqmSpec = Field(default_factory=AqmSpec)
    flows: list[FlowGroup] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        kinds = [self.dumbbell is not None, self.parking_lot is not None, bool(self.links)]
        if sum(kinds) != 1:
            raise ValueError(
                "give exactly one topology: [dumbbell], [parking_lot] or [[nodes]] + [[links]]"
            )
        if self.warmup >= self.duration:
            raise ValueError(
                f"warmup = {self.warmup} must be shorter than duration = {self.duration}"
            )
        if self.links:
            names = {n.name for n in self.nodes}
            for i, link in enumerate(self.links):
                for end in ("src", "dst"):
                    if getattr(link, end) not in names:
                        raise ValueError(f"links[{i}].{end} = {getattr(link, end)!r}: no such node")
            for i, f in enumerate(self.flows):
                for end in ("src", "dst"):
                    v = getattr(f, end)
                    if v is None or v not in names:
                        raise ValueError(f"flows[{i}].{end} = {v!r}: no such node")
        return self


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or str(part).startswith(
            ("function-", "constrained-", "lax-", "union")
        ):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _format_error(err: ValidationError, data: dict) -> str:
    first = err.errors()[0]
    loc = _loc(first["loc"])
    msg = first["msg"].removeprefix("Value error, ")
    if loc:
        value = first.get("input")
        return f"scenario key '{loc}' = {value!r}: {msg}"
    return f"scenario: {msg}"


def parse_scenario(data: dict) -> Scenario:
    """Validate a scenario given as a dict (as parsed from TOML)."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(_format_error(e, data)) from None


def load_scenario(path: str | Path, overrides: list[str] | None = None) -> Scenario:
    """Read and validate a TOML scenario, applying ``key=value`` overrides first.

    Raises
    ------
    ScenarioError
        Unreadable or malformed TOML, or an invalid key (named in the message).
    """
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ScenarioError(f"scenario file '{path}': {e.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"scenario file '{path}': malformed TOML: {e}") from None
    if overrides:
        apply_overrides(data, overrides)
    return parse_scenario(data)


def _coerce(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply ``a.b[0].c=value`` overrides in place (values parsed as TOML, else as strings).

    Examples
    --------
    >>> d = {"aqm": {"type": "red"}, "flows": [{"count": 1}]}
    >>> apply_overrides(d, ["aqm.max_p=0.2", "flows[0].count=5"])["flows"][0]["count"]
    5
    """
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(f"--set {item!r}: expected key=value")
        key, raw = item.split("=", 1)
        parts: list[str | int] = []
        for token in key.strip().split("."):
            name, *idx = token.replace("]", "").split("[")
            if name:
                parts.append(name)
            parts.extend(int(i) for i in idx)
        if not parts:
            raise ScenarioError(f"--set {item!r}: empty key")
        node: Any = data
        try:
            for part in parts[:-1]:
                if isinstance(part, int):
                    node = node[part]
                else:
                    node = node.setdefault(part, {})
            node[parts[-1]] = _coerce(raw)
        except (IndexError, KeyError, TypeError):
            raise ScenarioError(f"--set {item!r}: key '{key}' does not exist") from None
    return data
