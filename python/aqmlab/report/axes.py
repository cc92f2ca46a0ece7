"""A sweep's axes as figures name and order them: numbers with a unit, labels, numeric order.

An axis is one override key of the sweep (a ``[grid]`` or ``[zip]`` key). Its values are read
from ``results.parquet`` as the spec wrote them: numbers stay numbers; strings with a unit
(``"2ms"``, ``"10Mbps"``, ``"1.5kB"``) become numbers in one unit chosen for the axis (ms, Mb/s,
kB, ...) by the parser of :mod:`aqmlab.units`; anything else (``"codel"``, a table) is a
category. Numeric axes sort numerically (``2 ms`` before ``10 ms``), categories keep the spec's
order.

The axis's name is the spec's ``[labels]`` name, else the key without its path (``aqm.target``
-> ``target``; a list index and a generic last part are kept readable: ``flows.0.count`` ->
``flows``, ``aqm.type`` -> ``AQM``), followed by the unit in brackets.

Examples
--------
>>> ax = Axis.from_values("aqm.target", ["10ms", "2ms", "5ms"])
>>> ax.unit, [ax.number(v) for v in ax.values], ax.title
('ms', [2.0, 5.0, 10.0], 'target [ms]')
>>> ax.text("10ms")
'10'
>>> Axis.from_values("aqm.type", ["codel", "pie"], {"name": "AQM", "values": {"pie": "PIE"}}).text("pie")
'PIE'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Axis", "default_name"]

#: Names of keys whose last part says little on its own.
_NAMED = {"aqm.type": "AQM", "aqm": "AQM"}
#: Last parts named after the part before them (``flows.0.count`` -> ``flows``).
_GENERIC = {"count", "type", "kind", "value"}

#: Display units per quantity: (unit, factor from the SI base unit), largest first.
_SCALES = {
    "time": [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)],
    "rate": [("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3), ("b/s", 1.0)],
    "size": [("MB", 1e6), ("kB", 1e3), ("B", 1.0)],
}
_QUANTITY = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-zµ/]+\s*$")


def default_name(key: str) -> str:
    """The axis name of an override key without a ``[labels]`` entry: the key's last part.

    Parameters
    ----------
    key : str
        An override key (``aqm.target``, ``flows.0.count``, ``flows[0].count``).

    Returns
    -------
    str

    Examples
    --------
    >>> default_name("aqm.target"), default_name("flows.0.count"), default_name("dumbbell.rtt")
    ('target', 'flows', 'rtt')
    """
    if key in _NAMED:
        return _NAMED[key]
    parts = [p for p in re.split(r"[.\[\]]+", key) if p and not p.isdigit()]
    if not parts:
        return key
    if len(parts) > 1 and parts[-1] in _GENERIC:
        return parts[-2].replace("_", " ")
    return parts[-1].replace("_", " ")


def _si(values: list[Any]) -> tuple[str, list[float]] | None:
    """(quantity, SI values) if every value is a string with a unit of one quantity."""
    if not values or not all(isinstance(v, str) and _QUANTITY.match(v) for v in values):
        return None
    from aqmlab.units import parse_rate, parse_size, parse_time

    for kind, parse in (("time", parse_time), ("rate", parse_rate), ("size", parse_size)):
        try:
            return kind, [parse(v, require_unit=True) for v in values]
        except ValueError:
            continue
    return None


@dataclass
class Axis:
    """One axis of a sweep.

    Attributes
    ----------
    key : str
        The override key.
    name : str
        What figures call it (without the unit).
    unit : str
        The unit of its numbers ("" for plain numbers and categories).
    numeric : bool
        Its values are numbers (sorted numerically).
    values : list
        Its values as stored in ``results.parquet``, in the axis's order.
    numbers : dict
        Value (as stored) -> number in ``unit`` (numeric axes).
    value_labels : dict
        Value (as stored, made a string) -> label from the spec.
    """

    key: str
    name: str
    unit: str = ""
    numeric: bool = False
    values: list[Any] = field(default_factory=list)
    numbers: dict[Any, float] = field(default_factory=dict)
    value_labels: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_values(cls, key: str, values: list[Any], label: dict[str, Any] | None = None) -> Axis:
        """The axis of ``key`` over ``values`` (in the order of first appearance).

        Parameters
        ----------
        key : str
            The override key.
        values : list
            Every run's value (repeats allowed; missing values are left out).
        label : dict, optional
            Its ``[labels]`` entry, ``{"name", "values"}``.

        Returns
        -------
        Axis
        """
        from aqmlab.sweep.labels import value_key

        label = label or {}
        seen = list(dict.fromkeys(v for v in values if v is not None))
        out = cls(
            key=key,
            name=label.get("name") or default_name(key),
            values=seen,
            value_labels={str(k): v for k, v in (label.get("values") or {}).items()},
        )
        out.value_labels = {value_key(v): t for v, t in out.value_labels.items()}
        plain = [v for v in seen if not isinstance(v, bool)]
        if seen and len(plain) == len(seen) and all(isinstance(v, int | float) for v in plain):
            if all(math.isfinite(float(v)) for v in plain):
                out.numeric = True
                out.numbers = {v: float(v) for v in seen}
        elif (si := _si(seen)) is not None:
            kind, nums = si
            big = max(abs(x) for x in nums) or 1.0
            unit, factor = next(((u, f) for u, f in _SCALES[kind] if big >= f), _SCALES[kind][-1])
            out.numeric, out.unit = True, unit
            out.numbers = {v: x / factor for v, x in zip(seen, nums, strict=True)}
        if out.numeric:
            out.values = sorted(seen, key=lambda v: out.numbers[v])
        return out

    @property
    def title(self) -> str:
        """The axis's name with its unit, e.g. ``target [ms]``."""
        return f"{self.name} [{self.unit}]" if self.unit else self.name

    def number(self, value: Any) -> float:
        """The value as a number in :attr:`unit` (NaN for a category).

        Parameters
        ----------
        value : any
            A value as stored.

        Returns
        -------
        float
        """
        return self.numbers.get(value, math.nan)

    def position(self, value: Any) -> int:
        """The value's place in the axis's order.

        Parameters
        ----------
        value : any
            A value as stored.

        Returns
        -------
        int
        """
        try:
            return self.values.index(value)
        except ValueError:
            return len(self.values)

    def text(self, value: Any) -> str:
        """The value as figures write it: its label, else its number (``%g``), else itself.

        Parameters
        ----------
        value : any
            A value as stored.

        Returns
        -------
        str
        """
        from aqmlab.sweep.labels import value_key

        k = value_key(value)
        if k in self.value_labels:
            return self.value_labels[k]
        if self.numeric:
            return f"{self.number(value):g}"
        return str(value)

    def describe(self, value: Any) -> str:
        """``name = value unit`` for a configuration's label (``target = 2 ms``).

        Parameters
        ----------
        value : any
            A value as stored.

        Returns
        -------
        str
        """
        unit = (
            f" {self.unit}" if self.unit and self.text(value) == f"{self.number(value):g}" else ""
        )
        return f"{self.name} = {self.text(value)}{unit}"
