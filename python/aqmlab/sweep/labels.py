"""The ``[labels]`` table of a sweep spec: how figures and tables name its axes and values.

An entry names an override key of ``[grid]`` or ``[zip]``: a string names the axis, a table
names the axis (``name``) and some of its values (``values``, by the value as written in the
spec)::

    [labels]
    "aqm.target" = "CoDel target"
    "aqm.type" = { name = "AQM", values = { codel = "CoDel", fq_codel = "FQ-CoDel" } }

The labels are kept in ``DIR/sweep.json`` (``labels``); ``aqmlab report`` reads them there.

Examples
--------
>>> parse_labels({"aqm.target": "CoDel target"}, {"aqm.target": ["2ms", "5ms"]})
{'aqm.target': {'name': 'CoDel target', 'values': {}}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["parse_labels", "value_key"]


def value_key(value: Any) -> str:
    """How a label table names an axis value: a string as it is, anything else as JSON.

    Parameters
    ----------
    value : any
        A value of a ``[grid]`` or ``[zip]`` list.

    Returns
    -------
    str

    Examples
    --------
    >>> value_key("5ms"), value_key(10), value_key(0.5)
    ('5ms', '10', '0.5')
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def parse_labels(labels: Any, axes: Mapping[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """Check a spec's ``[labels]`` table and bring every entry to ``{"name", "values"}``.

    Parameters
    ----------
    labels : any
        The ``labels`` value of the spec (None when absent).
    axes : mapping
        The spec's ``[grid]`` and ``[zip]`` keys and their value lists.

    Returns
    -------
    dict
        Override key -> ``{"name": str or None, "values": {value as written: label}}``.

    Raises
    ------
    ValueError
        One line naming the entry: not a table, a key that is no override key, a name or a
        value label that is not a non-empty string, a value the axis does not have, an unknown
        key inside an entry.
    """
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise ValueError(f"labels = {json.dumps(labels)}: must be a table of KEY = LABEL")
    out: dict[str, dict[str, Any]] = {}
    for key, entry in labels.items():
        where = f'labels."{key}"'
        if key not in axes:
            known = ", ".join(axes) or "none"
            raise ValueError(
                f"{where} = {json.dumps(entry)}: not a [grid] or [zip] key (those are: {known})"
            )
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, Mapping):
            raise ValueError(
                f"{where} = {json.dumps(entry)}: give a label or a table {{ name, values }}"
            )
        extra = [k for k in entry if k not in ("name", "values")]
        if extra:
            raise ValueError(f"{where}.{extra[0]}: unknown key (known: name, values)")
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"{where}.name = {json.dumps(name)}: must be a non-empty string")
        values = entry.get("values", {})
        if not isinstance(values, Mapping):
            raise ValueError(f"{where}.values = {json.dumps(values)}: must be a table")
        have = [value_key(x) for x in axes[key]]
        for v, text in values.items():
            if v not in have:
                raise ValueError(
                    f'{where}.values."{v}": not a value of {key} (those are: {", ".join(have)})'
                )
            if not isinstance(text, str) or not text.strip():
                raise ValueError(
                    f'{where}.values."{v}" = {json.dumps(text)}: must be a non-empty string'
                )
        out[key] = {"name": name, "values": dict(values)}
    return out
