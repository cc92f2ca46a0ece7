"""Errors that keep their structure: every error of the core reaches Python as an exception
(a ``ValueError`` subclass per kind: ``ScenarioError``, ``AqmConfigError``, ``ArgumentError``)
carrying ``key`` (a scenario path, parameter or argument name), ``value`` (as the user gave it,
or None where the key itself is at fault) and ``reason``, besides its one-line message
``KEY = VALUE: REASON``. A front end formats its own line from the fields (the command line
names the option that wrote a key) and never reads the message. Errors raised in Python use
:func:`error` to carry the same fields.

Examples
--------
>>> from aqmlab.scenario import Scenario
>>> try:
...     Scenario({"dumbbell": {"rate": "10"}, "flows": [{"count": 0}]})
... except ScenarioError as e:
...     print(e.key, e.value, e.reason, sep=" | ")
flows[0].count | 0 | must be a whole number in [1, 4294967295]
"""

from __future__ import annotations

from typing import Any

from aqmlab import _core

__all__ = ["AqmConfigError", "ArgumentError", "ScenarioError", "error"]

ScenarioError = _core.ScenarioError
AqmConfigError = _core.AqmConfigError
ArgumentError = _core.ArgumentError

# An exception raised with a message only has the fields too, as None.
for _cls in (ScenarioError, AqmConfigError, ArgumentError):
    _cls.key = None
    _cls.value = None
    _cls.reason = None


def error(key: str, value: Any, reason: str, cls: type[ValueError] = ScenarioError) -> ValueError:
    """An exception ``cls`` with the message ``KEY = VALUE: REASON`` (``KEY: REASON`` when
    ``value`` is None) and the fields ``key``, ``value`` (as text) and ``reason``.

    Parameters
    ----------
    key : str
        The key path, parameter or argument at fault.
    value : object
        The value as the user gave it (shown with ``str``), or None.
    reason : str
        What is wrong or required.
    cls : type
        The exception class (a ``ValueError`` subclass).

    Returns
    -------
    ValueError
        The exception, to raise.

    Examples
    --------
    >>> e = error("dumbbell.loss", 0.01, "not emulated")
    >>> str(e), e.key, e.value
    ('dumbbell.loss = 0.01: not emulated', 'dumbbell.loss', '0.01')
    """
    shown = None if value is None else str(value)
    e = cls(f"{key} = {shown}: {reason}" if shown is not None else f"{key}: {reason}")
    e.key, e.value, e.reason = key, shown, reason
    return e
