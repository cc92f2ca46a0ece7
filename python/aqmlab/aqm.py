"""The Rust ``aqm`` crate's algorithms, usable directly from Python.

:class:`Queue` is one queue discipline driven with explicit times in seconds, exactly the code
the packet simulator runs: a FIFO with an AQM (``"codel"``, ``"pie"``, ...) or any qdisc
(``"fq_codel"``, ``"fq_cobalt"``, ``"cake"``, ``"fq_pie"``, ``"sfq"``, ``"sfq_codel"``, ``"drr"``,
``"wfq"``, ``"dualpi2"``, ``"sqm"``), each packet offered with its flow key and ECN codepoint. ``stats()`` counts the
AQM's early drops (``dropped_aqm``) apart from the drops of a full buffer
(``dropped_forced``). :func:`list_aqms` lists every algorithm
with its parameters, units and defaults; :func:`aqm_config` validates a name and parameters
(values may carry units, e.g. ``"5ms"``) and returns the core's configuration.

Examples
--------
>>> q = Queue("codel", {"target": 0.005, "interval": 0.1}, limit_pkts=200, link_rate_bps=10e6)
>>> q.enqueue(0.0, 1500)
'queued'
>>> q.dequeue(0.0012)
1500
>>> fq = Queue("fq_codel", {"quantum": 300}, limit_pkts=100)
>>> fq.enqueue(0.0, 1000, flow=7, ecn="ect1")
'queued'
>>> fq.dequeue_packet(0.001)["flow"]
7
"""

from __future__ import annotations

import json
from typing import Any

from aqmlab import _core

__all__ = [
    "Queue",
    "AqmConfigError",
    "list_aqms",
    "list_schedulers",
    "aqm_config",
    "aqm_list",
    "aqm_names",
    "describe_aqm",
    "scheduler_names",
]

Queue = _core.Queue
AqmConfigError = _core.AqmConfigError


def aqm_list(text: str, key: str = "--aqms") -> list[str]:
    """A comma-separated list of AQM names (``--aqms codel,pie``), each known and none given
    twice; an alias counts as its AQM (``fifo`` and ``taildrop`` are ``droptail``), as do names
    that differ only in case. Returns the names as given, blanks dropped.

    Parameters
    ----------
    text : str
        The comma-separated names.
    key : str
        The option's name, for the error message.

    Returns
    -------
    list of str
        The names as given, blanks dropped.

    Raises
    ------
    AqmConfigError
        ``KEY = 'TEXT': ...``: no name, an unknown name, or one AQM twice.

    Examples
    --------
    >>> aqm_list("codel, pie")
    ['codel', 'pie']
    >>> aqm_list("fifo,droptail")
    Traceback (most recent call last):
    ...
    _core.AqmConfigError: --aqms = 'fifo,droptail': 'fifo' and 'droptail' are the same AQM (droptail)
    """
    names = [a.strip() for a in str(text).split(",") if a.strip()]
    if not names:
        raise AqmConfigError(f"{key} = {text!r}: give at least one AQM")
    seen: dict[str, str] = {}
    for n in names:
        try:
            kind = aqm_config(n)["type"]
        except ValueError as e:
            raise AqmConfigError(f"{key} = {text!r}: {e}") from None
        if kind in seen:
            first = seen[kind]
            why = (
                f"{n!r} is given twice"
                if first == n
                else f"{first!r} and {n!r} are the same AQM ({kind})"
            )
            raise AqmConfigError(f"{key} = {text!r}: {why}")
        seen[kind] = n
    return names


def aqm_names() -> list[str]:
    """Names of the algorithms (``fifo`` is an alias of ``droptail``).

    Returns
    -------
    list of str
    """
    return list(_core.aqm_names())


def list_aqms() -> dict[str, list[dict[str, Any]]]:
    """Every AQM with its parameters: ``{name: [{name, unit, default, doc}, ...]}``.

    Returns
    -------
    dict
        AQM name to :func:`describe_aqm`'s list.
    """
    out = {}
    for name in aqm_names():
        out[name] = describe_aqm(name)
    return out


def _default(unit: str, d: float) -> Any:
    """A default as the user writes it: None (required), a bool, a choice's name, a number."""
    if d != d:  # a parameter without a default (PAQMAN's policy file)
        return None
    if unit == "bool":
        return bool(d)
    if "|" in unit:  # a choice (unit "linux|rfc"): the name at that index
        return unit.split("|")[int(d)]
    return d


def describe_aqm(name: str) -> list[dict[str, Any]]:
    """Parameters of one AQM or scheduler: ``[{name, unit, default, doc}, ...]``.

    ``default`` is as the user writes it: a number in the unit, ``True``/``False`` for a
    ``bool``, the name for a choice (unit ``"linux|rfc"``: one of the names), None for a
    required parameter (unit ``file``: PAQMAN's ``policy``).

    Parameters
    ----------
    name : str
        An AQM or scheduler name (``aqmlab aqms``).

    Returns
    -------
    list of dict
        One entry per parameter: ``name``, ``unit``, ``default``, ``doc``.

    Raises
    ------
    AqmConfigError
        Unknown name (the message lists the known ones).
    """
    return [
        {"name": n, "unit": u, "default": _default(u, d), "doc": doc}
        for (n, u, d, doc) in _core.aqm_describe(name)
    ]


def scheduler_names() -> list[str]:
    """Names of the schedulers: the class-based ``drr`` and ``wfq``, the hashed flow-queueing
    ``fq_codel``, ``fq_cobalt``, ``cake``, ``fq_pie``, ``sfq``, ``sfq_codel``, SQM's ``sqm`` (top-K elephant queues,
    docs/aqm/sqm.md) and ``dualpi2``; ``[aqm] type`` takes them too.

    Returns
    -------
    list of str
    """
    return list(_core.scheduler_names())


def list_schedulers() -> dict[str, list[dict[str, Any]]]:
    """Every scheduler with its parameters, as :func:`list_aqms`. ``NAME`` in a parameter
    stands for a class name and ``PARAM`` for a parameter of the class's AQM
    (``classes.NAME.aqm.PARAM``, e.g. ``classes.b.aqm.target``).

    Returns
    -------
    dict
        Scheduler name to :func:`describe_aqm`'s list.
    """
    return {name: describe_aqm(name) for name in scheduler_names()}


def aqm_config(
    name: str, params: dict[str, Any] | None = None, require_unit: bool = False
) -> dict[str, Any]:
    """Validate an AQM and its parameters; return the core's configuration (serde form).

    Parameters
    ----------
    name : str
        AQM name (``aqmlab aqms``).
    params : dict, optional
        Parameter values: numbers in the parameter's base unit (seconds, bytes, ...), booleans,
        or strings with a unit (``"5ms"``).
    require_unit : bool
        Reject bare numbers for time and byte parameters given as strings (the command line).

    Returns
    -------
    dict
        The configuration as the core serialises it (serde form: times in integer
        nanoseconds), with its ``"type"``.

    Raises
    ------
    AqmConfigError
        Unknown AQM or parameter, or an invalid value; the message names the key and value.
    """
    return json.loads(_core.aqm_config_json(name, params or {}, require_unit))
