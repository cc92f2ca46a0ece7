"""TOML text of the scenario data model (the inverse of ``tomllib.loads`` for it).

Python reads TOML with the standard library's ``tomllib``; this writes it back, for the files
aqmlab writes a user can rerun: a result folder's ``scenario.toml`` (the normalized scenario),
a reproduction's ``scenarios/CASE.toml`` and a sweep's spec.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["to_toml"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{where} = {v}: TOML has no place for a non-finite number here")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string (\uXXXX escapes are TOML too)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    if isinstance(v, Mapping):
        items = ", ".join(f"{_key(str(k))} = {_value(x, f'{where}.{k}')}" for k, x in v.items())
        return "{ " + items + " }" if items else "{}"
    if hasattr(v, "item"):
        return _value(v.item(), where)
    raise ValueError(f"{where} = {v!r}: cannot be written as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list | tuple) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def to_toml(data: Mapping[str, Any], _prefix: str = "") -> str:
    """The scenario data model (tables, arrays of tables, strings, numbers, booleans, arrays)
    as TOML text that ``tomllib`` reads back to the same data.

    >>> import tomllib
    >>> d = {"name": "x", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}, {"count": 3}]}
    >>> tomllib.loads(to_toml(d)) == d
    True

    Parameters
    ----------
    data : mapping
        The data.

    Returns
    -------
    str
    """
    lines: list[str] = []
    tables: list[tuple[str, Any]] = []
    for k, v in data.items():
        k = str(k)
        if isinstance(v, Mapping) or _is_table_array(v):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v, _prefix + k)}")
    out = "\n".join(lines)
    for k, v in tables:
        path = f"{_prefix}{_key(k)}"
        if isinstance(v, Mapping):
            body = to_toml(v, path + ".")
            out += f"\n\n[{path}]\n{body}"
        else:
            for item in v:
                body = to_toml(item, path + ".")
                out += f"\n\n[[{path}]]\n{body}"
    return out.strip("\n") + "\n" if not _prefix else out.strip("\n")
