"""Scenarios: TOML in, validated by the Rust core's schema, errors naming the key path.

There is one schema, ``crates/experiment/src/scenario/``; this module reads TOML, applies
``--set``-style overrides and hands the document to it. The reference of every key is
``docs/scenario.md``. A short example::

    name = "dumbbell-codel"
    seed = 1
    duration = "60s"          # quantities: "5ms", "10Mbps", "1500B", or a number in SI base
    warmup = "10s"            # units (seconds, bit/s, bytes); statistics exclude the warm-up

    [dumbbell]                # or [parking_lot], or explicit [[nodes]] + [[links]]
    rate = "10Mbps"
    rtt = "100ms"
    buffer = 100              # packets

    [aqm]                     # see `aqmlab aqms`
    type = "codel"
    target = "5ms"

    [[flows]]
    kind = "tcp"              # tcp | tcp_short | udp_cbr | udp_onoff
    count = 20
    cc = "newreno"

Errors are :class:`ScenarioError` (a ``ValueError``) with one line ``KEY = VALUE: REASON``, e.g.
``flows[0].count = -3: must be a whole number in [1, 4294967295]``.

Examples
--------
>>> sc = Scenario({"duration": "5s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}]})
>>> sc.duration, sc.normalized["dumbbell"]["rtt"]
(5.0, 0.1)
>>> sc.with_overrides(["flows.0.count=4"]).normalized["flows"][0]["count"]
4
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aqmlab import _core

__all__ = [
    "ScenarioError",
    "Scenario",
    "load_scenario",
    "parse_scenario",
    "apply_overrides",
    "set_key",
]

ScenarioError = _core.ScenarioError

#: Keys whose value names a file the scenario reads: PAQMAN's ``policy`` and a link's
#: Mahimahi traces. A relative name is relative to the scenario file's folder; a result folder
#: keeps a copy beside its ``scenario.toml``.
_FILE_KEYS = ("policy", "rate_trace", "reverse_rate_trace", "size_cdf")
#: ``size_cdf`` values that name a shipped flow-size distribution, not a file.
_BUILTIN_CDFS = ("websearch", "datamining")


def _names_file(key: str, value: Any) -> bool:
    """True if ``key = value`` names a file the scenario reads."""
    return (
        key in _FILE_KEYS
        and isinstance(value, str)
        and bool(value)
        and not (key == "size_cdf" and value in _BUILTIN_CDFS)
    )


def _plain(value: Any, key: str) -> Any:
    """The document as JSON-able data (TOML dates and other types are refused by key)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, f"{key}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(f"{key} = {value}: not a finite number")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return _plain(value.item(), key)
    shown = value.isoformat() if hasattr(value, "isoformat") else repr(value)
    raise ScenarioError(f"{key} = {shown}: not a number, string, boolean, table or array")


class Scenario:
    """A validated scenario.

    Parameters
    ----------
    data : mapping
        The scenario document as TOML parses it (tables are dicts). Quantities are numbers in SI
        base units or strings with units.

    Attributes
    ----------
    data : dict
        A copy of the document as given.
    normalized : dict
        The document with every default filled in and every quantity in SI base units.

    Raises
    ------
    ScenarioError
        The first key that does not fit the schema, with its value and the reason.
    """

    __slots__ = ("_data", "_core", "_normalized")

    def __init__(self, data: Mapping[str, Any]):
        if not isinstance(data, Mapping):
            raise ScenarioError(f"scenario: must be a table (dict), not {type(data).__name__}")
        self._data = _plain(data, "")
        self._core = _core.Scenario(json.dumps(self._data))
        self._normalized = json.loads(self._core.normalized_json())
        _check_policy_rates(self._normalized)

    @property
    def data(self) -> dict[str, Any]:
        """The scenario document as given (a copy)."""
        return copy.deepcopy(self._data)

    @property
    def normalized(self) -> dict[str, Any]:
        """The scenario with every default filled in and quantities in SI base units."""
        return copy.deepcopy(self._normalized)

    @property
    def name(self) -> str:
        """The scenario's name."""
        return self._normalized["name"]

    @property
    def seed(self) -> int:
        """The scenario's seed."""
        return self._normalized["seed"]

    @property
    def duration(self) -> float:
        """Simulated time, seconds."""
        return self._normalized["duration"]

    @property
    def warmup(self) -> float:
        """Warm-up excluded from statistics, seconds."""
        return self._normalized["warmup"]

    @property
    def sample_interval(self) -> float:
        """The monitors' sample interval, seconds."""
        return self._normalized["sample_interval"]

    @property
    def aqm(self) -> dict[str, Any]:
        """The AQM of a builder topology's bottleneck(s), normalised (``{"type": ..., ...}``)."""
        return dict(self._normalized["aqm"])

    @property
    def topology(self) -> str:
        """``dumbbell``, ``parking_lot``, ``leaf_spine``, ``fat_tree`` or ``explicit``."""
        for k in ("dumbbell", "parking_lot", "leaf_spine", "fat_tree"):
            if k in self._normalized:
                return k
        return "explicit"

    @property
    def memory_bytes(self) -> float:
        """The run's estimated memory, bytes: the estimate the core's size limit (8 GiB) checks
        (time series, flows, cwnd traces; ``docs/scenario.md``)."""
        return self._core.memory_bytes()

    def link_aliases(self) -> dict[str, str]:
        """The core's link names mapped to the names results use (``R1->R2`` -> ``bottleneck``).

        Returns
        -------
        dict of str to str
        """
        return dict(self._core.link_aliases())

    def replace(self, **changes: Any) -> Scenario:
        """A new scenario with top-level keys replaced (``sc.replace(seed=2, aqm={...})``).

        Parameters
        ----------
        **changes
            Top-level keys and their new values.

        Returns
        -------
        Scenario
        """
        data = self.data
        data.update(changes)
        return Scenario(data)

    def with_overrides(self, overrides: list[str]) -> Scenario:
        """A new scenario with ``key=value`` overrides applied (see :func:`apply_overrides`).

        Parameters
        ----------
        overrides : list of str
            ``key=value`` strings.

        Returns
        -------
        Scenario
        """
        return Scenario(apply_overrides(self.data, overrides))

    def to_toml(self, files: dict[str, Path] | None = None) -> str:
        """The normalized scenario as a TOML file a user can rerun (``aqmlab run FILE``).

        Every default is filled in and every quantity is in SI base units (seconds, bit/s,
        bytes); keys whose value is null (not set) are left out. A result folder keeps it as
        ``scenario.toml``: reading it back gives this scenario again.

        Parameters
        ----------
        files : dict, optional
            If given, files the scenario reads (PAQMAN's ``policy``, ``rate_trace``,
            ``reverse_rate_trace``, a ``size_cdf`` file) are named by a bare file
            name in the text and collected here as ``{name: source path}``, for the caller to
            copy beside the TOML file (so that the folder is complete).

        Returns
        -------
        str
            TOML text with a comment header.

        Examples
        --------
        >>> sc = Scenario({"duration": "2.5s", "dumbbell": {"rate": "10Mbps"},
        ...                "flows": [{"count": 2}]})
        >>> Scenario(tomllib.loads(sc.to_toml())) == sc
        True
        """
        from aqmlab.toml import to_toml

        def drop_null(v: Any) -> Any:
            if isinstance(v, dict):
                out = {}
                for k, x in v.items():
                    if x is None:
                        continue
                    if files is not None and _names_file(k, x):
                        name = Path(x).name
                        while name in files and files[name] != Path(x):
                            name = f"{len(files)}-{name}"
                        files[name] = Path(x)
                        x = name
                    out[k] = drop_null(x)
                return out
            if isinstance(v, list):
                return [drop_null(x) for x in v]
            return v

        head = (
            "# aqmlab scenario, normalized: every default filled in, quantities in SI base\n"
            "# units (seconds, bit/s, bytes). Rerun: aqmlab run scenario.toml --out DIR\n\n"
        )
        return head + to_toml(drop_null(self.normalized))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and other._normalized == self._normalized

    def __repr__(self) -> str:
        n = self._normalized
        flows = sum(g.get("count", 1) for g in n["flows"])
        return (
            f"Scenario(name={n['name']!r}, {self.topology}, aqm={n.get('aqm', {}).get('type')!r}, "
            f"flows={flows}, duration={n['duration']:g} s, seed={n['seed']})"
        )


#: Relative difference between a PAQMAN policy's service rate and its link's rate that is still
#: the same rate (the file stores packets/s and a packet size, the scenario bit/s).
RATE_TOLERANCE = 1e-6


def _policy_links(normalized: dict[str, Any]):
    """``(key, aqm table, link rate in bit/s, link name)`` of every link that runs an AQM with a
    policy file: a builder topology's bottleneck(s) and the explicit ``[[links]]``. A class's
    AQM is left out: it is served at a share of the link that depends on the traffic."""
    for topo, name in (("dumbbell", "bottleneck"), ("parking_lot", "bottleneck0, ...")):
        if topo in normalized:
            yield "aqm", normalized.get("aqm", {}), normalized[topo]["rate"], name
    for i, link in enumerate(normalized.get("links", [])):
        name = link.get("name") or f"{link.get('src')}->{link.get('dst')}"
        yield f"links[{i}].aqm", link.get("aqm", {}), link["rate"], name


def _check_policy_rates(normalized: dict[str, Any]) -> None:
    """Refuse a PAQMAN policy solved for another service rate than its link's (docs/paqman.md).

    A policy's table is over absolute packet rates (``rate_grid.unit_pps``) and queue lengths
    whose delays were computed at the solved service rate ``service_rate_pps``, so on a link that
    serves another number of packets per second it answers a different problem. The link's
    packet rate is its bit rate over the flows' packet size (when every flow group uses the same
    size; with mixed sizes the bit rates ``service_rate_pps * 8 * pkt_size_bytes`` are
    compared). A file without those informative keys cannot be checked and is accepted.
    """
    sizes = {f.get("packet_size") for f in normalized.get("flows", [])}
    flow_size = sizes.pop() if len(sizes) == 1 else None
    for key, aqm, rate, link in _policy_links(normalized):
        policy = aqm.get("policy") if isinstance(aqm, dict) else None
        if not isinstance(policy, str):
            continue
        try:
            doc = json.loads(Path(policy).read_text())
            pps = float(doc["service_rate_pps"])
            size = float(doc["pkt_size_bytes"])
        except (OSError, ValueError, TypeError, KeyError):
            continue  # the core read and checked the file; the keys are informative
        if not (math.isfinite(pps) and pps > 0 and math.isfinite(size) and size > 0):
            continue
        link_size = float(flow_size) if isinstance(flow_size, int | float) else size
        link_pps = rate / (8 * link_size)
        if abs(pps - link_pps) <= RATE_TOLERANCE * link_pps:
            continue
        from aqmlab.errors import error

        raise error(
            f"{key}.policy",
            repr(policy),
            f"solved for service_rate_pps = {pps:.6g} ({pps * 8 * size / 1e6:.6g} Mb/s of "
            f"{size:g}-byte packets), but link {link} serves {link_pps:.6g} packets/s "
            f"({rate / 1e6:.6g} Mb/s of {link_size:g}-byte packets): solve the policy for "
            f"this link (aqmlab paqman solve --service {rate / 1e6:.6g}Mbps --pkt-size "
            f"{link_size:g})",
        )


def parse_scenario(data: Mapping[str, Any]) -> Scenario:
    """Validate a scenario given as a dict (as parsed from TOML). Same as ``Scenario(data)``.

    Parameters
    ----------
    data : mapping
        The scenario document.

    Returns
    -------
    Scenario
    """
    return Scenario(data)


def load_scenario(
    path: str | Path,
    overrides: list[str] | None = None,
    prepare: Callable[[dict], None] | None = None,
) -> Scenario:
    """Read and validate a TOML scenario, applying ``key=value`` overrides first.

    ``prepare``, if given, may edit the document (a dict, overrides applied) before it is
    validated (the emulator takes out kernel-only congestion controls this way).

    Parameters
    ----------
    path : path
        The TOML file.
    overrides : list of str, optional
        ``key=value`` strings.
    prepare : callable, optional
        Edits the document before it is validated.

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        Unreadable or malformed TOML, a bad override, or an invalid key (named in the message).
    """
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ScenarioError(f"scenario file '{path}': {reason}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"scenario file '{path}': malformed TOML: {e}") from None
    if overrides:
        apply_overrides(data, overrides)
    _resolve_files(data, p.parent)
    if prepare is not None:
        prepare(data)
    return Scenario(data)


def _resolve_files(node: Any, base: Path) -> None:
    """Make relative file names (``policy = "p.json"`` at any depth: ``[aqm]``, a class's
    ``aqm``, a link's ``aqm``; ``rate_trace`` and ``reverse_rate_trace`` of a link or builder;
    a short-flow group's ``size_cdf`` file) relative to the scenario's folder."""
    if isinstance(node, dict):
        for k, v in node.items():
            if _names_file(k, v) and not Path(v).is_absolute():
                node[k] = str(base / v)
            else:
                _resolve_files(v, base)
    elif isinstance(node, list):
        for v in node:
            _resolve_files(v, base)


def _coerce(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _path(key: str, item: str) -> list[str | int]:
    """``flows[0].count`` or ``flows.0.count`` -> ``["flows", 0, "count"]``; ``item`` starts
    the error messages."""
    parts: list[str | int] = []
    for token in key.strip().split("."):
        name, *idx = token.replace("]", "").split("[")
        if not name and not idx:
            raise ScenarioError(f"{item}: empty part in key '{key}'")
        if name:
            parts.append(int(name) if name.isdigit() else name)
        for i in idx:
            if not i.isdigit():
                raise ScenarioError(f"{item}: index '{i}' in key '{key}' is not a number")
            parts.append(int(i))
    return parts


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply ``a.b[0].c=value`` or ``a.b.0.c=value`` overrides in place.

    Values are parsed as TOML (``5``, ``true``, ``"5ms"``, ``[1, 2]``), else taken as strings.
    Missing tables are created; an index must exist.

    Parameters
    ----------
    data : dict
        The scenario document (changed in place).
    overrides : list of str
        ``key=value`` strings.

    Returns
    -------
    dict
        ``data``.

    Examples
    --------
    >>> d = {"aqm": {"type": "red"}, "flows": [{"count": 1}]}
    >>> apply_overrides(d, ["aqm.max_p=0.2", "flows.0.count=5"])["flows"][0]["count"]
    5
    """
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(f"--set {item!r}: expected key=value")
        key, raw = item.split("=", 1)
        set_key(data, key, _coerce(raw), f"--set {item!r}")
    return data


def set_key(data: dict, key: str, value: Any, label: str | None = None) -> dict:
    """Set one scenario key (``a.b[0].c`` or ``a.b.0.c``) to an already typed ``value``, in
    place: the path rules of :func:`apply_overrides` (missing tables are created, an index must
    exist). ``label`` starts the error messages (default ``key = value``).

    Parameters
    ----------
    data : dict
        The scenario document (changed in place).
    key : str
        The key path.
    value : any
        The value.
    label : str, optional
        How error messages start.

    Returns
    -------
    dict
        ``data``.

    Examples
    --------
    >>> set_key({"dumbbell": {}}, "dumbbell.rate", "20Mbps")
    {'dumbbell': {'rate': '20Mbps'}}
    """
    item = label if label is not None else f"{key} = {value!r}"
    parts = _path(key, item)
    node: Any = data
    where = ""
    for part, nxt in zip(parts, [*parts[1:], None], strict=True):
        last = nxt is None
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ScenarioError(f"{item}: '{where}' is not an array")
            if not 0 <= part < len(node):
                raise ScenarioError(f"{item}: no {where}[{part}] ({where} has {len(node)} entries)")
            where = f"{where}[{part}]"
            if last:
                node[part] = value
            else:
                node = node[part]
            continue
        if not isinstance(node, dict):
            raise ScenarioError(f"{item}: '{where}' is not a table")
        where = f"{where}.{part}" if where else part
        if last:
            node[part] = value
        else:
            if part not in node:
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
    return data
