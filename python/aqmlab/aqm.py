"""The Rust ``aqm`` crate's algorithms, usable directly from Python.

:class:`Queue` is one queue discipline (FIFO + hard limit + AQM) driven with explicit times in
seconds, exactly the code the packet simulator runs. :func:`list_aqms` lists every algorithm
with its parameters, units and defaults; :func:`aqm_config` validates a name and parameters
(values may carry units, e.g. ``"5ms"``) and returns the core's configuration.

Examples
--------
>>> q = Queue("codel", {"target": 0.005, "interval": 0.1}, limit_pkts=200, link_rate_bps=10e6)
>>> q.enqueue(0.0, 1500)
'queued'
>>> q.dequeue(0.0012)
1500
"""

from __future__ import annotations

import json
from typing import Any

from aqmlab import _core
from aqmlab.units import parse_rate, parse_size, parse_time

__all__ = ["Queue", "AqmConfigError", "list_aqms", "aqm_config", "aqm_names", "convert_params"]

Queue = _core.Queue
AqmConfigError = _core.AqmConfigError


def aqm_names() -> list[str]:
    """Names of the algorithms (``fifo`` is an alias of ``droptail``)."""
    return list(_core.aqm_names())


def list_aqms() -> dict[str, list[dict[str, Any]]]:
    """Every AQM with its parameters: ``{name: [{name, unit, default, doc}, ...]}``."""
    out = {}
    for name in aqm_names():
        out[name] = [
            {"name": n, "unit": u, "default": d, "doc": doc}
            for (n, u, d, doc) in _core.aqm_describe(name)
        ]
    return out


def _convert(key: str, value: Any, unit: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if text.lower() in ("true", "false"):
        return 1.0 if text.lower() == "true" else 0.0
    try:
        if unit == "s":
            return parse_time(text)
        if unit in ("bps", "bit/s", "bits/s"):
            return parse_rate(text)
        if unit in ("bytes", "B"):
            return parse_size(text)
        return float(text)
    except ValueError:
        raise AqmConfigError(
            f"aqm parameter '{key}' = {value!r}: not a number (unit {unit})"
        ) from None


def convert_params(name: str, params: dict[str, Any]) -> dict[str, float]:
    """Convert parameter values with units (``"5ms"``, ``"true"``) to the core's floats.

    Unknown names are passed through unchanged so that the core reports them.
    """
    units = {n: u for (n, u, _d, _doc) in _core.aqm_describe(name)}
    return {k: _convert(k, v, units.get(k, "")) for k, v in params.items()}


def aqm_config(name: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validate an AQM and its parameters; return the core's configuration (serde form).

    Raises
    ------
    AqmConfigError
        Unknown AQM or parameter, or an invalid value; the message names the key and value.
    """
    conv = convert_params(name, params or {})
    return json.loads(_core.aqm_config_json(name, conv))
