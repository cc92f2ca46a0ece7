"""The one protocol of aqmlab's result objects, written once.

Every object a computation returns (a simulation's :class:`~aqmlab.results.SimResult`, a fluid
trajectory, a controller design, a PAQMAN policy, an online controller's record, a sweep's
results, ...) derives from :class:`Result` and so offers the same methods:

``to_pandas()``
    its data as a ``pandas.DataFrame``, or a ``dict`` of DataFrames by table name where there
    are several tables;
``to_dict()``
    a JSON-ready ``dict`` (plain ``int``, ``float``, ``str``, ``bool``, ``None``, lists and
    dicts);
``plot(ax=None)``
    draws on the matplotlib Axes given (an array of Axes for a figure of several panels) or on
    a new Figure; returns the Figure it made, else the ``ax`` given;
``repr(obj)``
    one line with the object's key figures;
``_repr_html_()``
    what a notebook shows: the key figures and the first rows of each table.

Objects that are a run also have ``save(path)`` and ``load(path)``. A subclass supplies
``to_pandas``, ``plot`` and ``_figures`` (the key figures, an ordered ``dict``); ``to_dict``
defaults to the object's fields made JSON-ready (:func:`json_ready`).

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(repr=False)
... class Point(Result):
...     x: float
...     y: float
...     def _figures(self):
...         return {"x": self.x, "y": self.y}
...     def to_pandas(self):
...         import pandas as pd
...         return pd.DataFrame({"x": [self.x], "y": [self.y]})
...     def plot(self, ax=None):
...         fig, ax = new_axes(ax)
...         ax.plot([self.x], [self.y], "o")
...         return plotted(fig, ax)
>>> Point(1.0, 2.5)
Point(x=1, y=2.5)
>>> Point(1.0, 2.5).to_dict()
{'x': 1.0, 'y': 2.5}
>>> "<table" in Point(1.0, 2.5)._repr_html_()
True
"""

from __future__ import annotations

import dataclasses
import html
import math
import os
import warnings
from collections.abc import Mapping
from typing import Any

__all__ = [
    "Result",
    "json_ready",
    "format_value",
    "one_line",
    "html_table",
    "html_result",
    "new_axes",
    "plotted",
    "deprecated",
]

#: Rows of each table a notebook shows (the first ones; the table's size is said beside it).
HTML_ROWS = 8


def json_ready(value: Any) -> Any:
    """``value`` with NumPy scalars and arrays, tuples, paths and nested results made plain.

    Parameters
    ----------
    value : any
        A number, string, ``None``, NumPy scalar or array, sequence, mapping, dataclass or
        :class:`Result`.

    Returns
    -------
    any
        Plain ``int``, ``float``, ``bool``, ``str``, ``None``, ``list`` and ``dict`` (keys as
        strings); an object of another kind becomes its ``str``.

    Examples
    --------
    >>> import numpy as np
    >>> json_ready({"a": np.arange(3), "b": (np.float64(0.5), None)})
    {'a': [0, 1, 2], 'b': [0.5, None]}
    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_ready(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_ready(getattr(value, f.name)) for f in dataclasses.fields(value)}
    tolist = getattr(value, "tolist", None)  # NumPy arrays and scalars
    if callable(tolist):
        return json_ready(tolist())
    for kind in (bool, int, float, str):  # subclasses (an IntEnum, a str enum) as the base
        if isinstance(value, kind):
            return kind(value)
    return str(value)


def format_value(value: Any) -> str:
    """A short text for one key figure: 4 significant digits, arrays by their first values.

    Parameters
    ----------
    value : any
        The figure.

    Returns
    -------
    str
        One line.

    Examples
    --------
    >>> format_value(3.14159), format_value(True), format_value([1.0, 2.0]), format_value(7)
    ('3.142', 'True', '[1, 2]', '7')
    """
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value.replace("\n", " ")
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) == 0:  # a NumPy scalar
        return format_value(value.item())
    if shape is not None and len(shape) > 1:
        return f"array{tuple(shape)}"
    if isinstance(value, list | tuple) or shape is not None:
        items = list(value)
        shown = ", ".join(format_value(v) for v in items[:4])
        more = f", ... ({len(items)})" if len(items) > 4 else ""
        return f"[{shown}{more}]"
    return str(value).replace("\n", " ")


def one_line(name: str, figures: Mapping[str, Any]) -> str:
    """``name(key=value, ...)``: the one-line ``repr`` of a result.

    Parameters
    ----------
    name : str
        The class name.
    figures : mapping
        Key figures in order (strings are quoted).

    Returns
    -------
    str
        One line.

    Examples
    --------
    >>> one_line("Fit", {"model": "gamma", "alpha": 1.23456})
    "Fit(model='gamma', alpha=1.235)"
    """
    parts = [
        f"{k}={v!r}" if isinstance(v, str) else f"{k}={format_value(v)}" for k, v in figures.items()
    ]
    return f"{name}({', '.join(parts)})".replace("\n", " ")


def _cell(tag: str, value: Any) -> str:
    return f"<{tag}>{html.escape(format_value(value))}</{tag}>"


def html_table(table: Any, max_rows: int = HTML_ROWS) -> str:
    """A DataFrame (or a mapping of key figures) as a small HTML table.

    Parameters
    ----------
    table : pandas.DataFrame or mapping
        A DataFrame (its first ``max_rows`` rows are shown, with its index unless that is the
        default ``0..n-1``), or a mapping rendered as one ``name | value`` row per key.
    max_rows : int
        Rows of a DataFrame to show.

    Returns
    -------
    str
        Well-formed HTML (every tag closed, every text escaped).

    Examples
    --------
    >>> html_table({"a": 1, "b<": 0.5})
    '<table><tbody><tr><th>a</th><td>1</td></tr><tr><th>b&lt;</th><td>0.5</td></tr></tbody></table>'
    """
    if isinstance(table, Mapping):
        rows = "".join(f"<tr>{_cell('th', k)}{_cell('td', v)}</tr>" for k, v in table.items())
        return f"<table><tbody>{rows}</tbody></table>"
    import pandas as pd

    df = table
    show_index = not isinstance(df.index, pd.RangeIndex) or df.index.start != 0
    head = "".join(_cell("th", c) for c in df.columns)
    if show_index:
        head = _cell("th", df.index.name or "") + head
    body = []
    for idx, row in zip(
        df.index[:max_rows], df.head(max_rows).itertuples(index=False), strict=True
    ):
        cells = "".join(_cell("td", v) for v in row)
        if show_index:
            cells = _cell("th", idx) + cells
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def html_result(name: str, figures: Mapping[str, Any], tables: Mapping[str, Any]) -> str:
    """The notebook view of a result: its name, key figures and the first rows of its tables.

    Parameters
    ----------
    name : str
        The class name.
    figures : mapping
        Key figures in order.
    tables : mapping
        Table name (``""`` for a result's only table) to DataFrame.

    Returns
    -------
    str
        One ``<div>`` of well-formed HTML.
    """
    parts = [f'<div class="aqmlab-result"><p><strong>{html.escape(name)}</strong></p>']
    if figures:
        parts.append(html_table(figures))
    for tname, df in tables.items():
        n, m = df.shape
        shown = f"first {min(n, HTML_ROWS)} of " if n > HTML_ROWS else ""
        label = f"{tname}: " if tname else ""
        rows = f"{n} row{'s' if n != 1 else ''} &#215; {m} column{'s' if m != 1 else ''}"
        parts.append(f"<p>{html.escape(label)}{shown}{rows}</p>")
        parts.append(html_table(df))
    parts.append("</div>")
    return "".join(parts)


def new_axes(ax=None, nrows: int = 1, ncols: int = 1, **kw):
    """The Axes to draw on: ``ax`` if given, else those of a new Figure.

    Parameters
    ----------
    ax : matplotlib Axes or array of Axes, optional
        Where to draw.
    nrows, ncols : int
        Panels of a new Figure.
    **kw
        Further arguments of ``matplotlib.pyplot.subplots`` (``figsize``, ``sharex``, ...).

    Returns
    -------
    tuple
        ``(fig, axes)``: the new Figure (None when ``ax`` was given) and the Axes.
    """
    if ax is not None:
        return None, ax
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, **kw)
    return fig, axes


def plotted(fig, ax):
    """What ``plot(ax=None)`` returns: the Figure it made, else the ``ax`` it was given.

    Parameters
    ----------
    fig : matplotlib Figure or None
        The Figure :func:`new_axes` made (None when the caller gave the Axes).
    ax : matplotlib Axes or array of Axes
        The Axes drawn on.

    Returns
    -------
    matplotlib Figure or Axes
    """
    return ax if fig is None else fig


def deprecated(old: str, new: str) -> None:
    """Warn that ``old`` is a deprecated alias of ``new`` (kept for one release).

    Parameters
    ----------
    old : str
        The old name, e.g. ``"SimResult.timeseries()"``.
    new : str
        What to call instead.
    """
    warnings.warn(
        f"{old} is deprecated (kept for one release): use {new}", DeprecationWarning, stacklevel=3
    )


class Result:
    """Base of every result object: ``to_pandas``, ``to_dict``, ``plot``, ``repr``, HTML.

    A subclass implements :meth:`to_pandas`, :meth:`plot` and :meth:`_figures`; the rest is
    shared. A dataclass subclass is declared with ``@dataclass(repr=False)`` so that this
    class's one-line ``repr`` is kept.
    """

    def _figures(self) -> dict[str, Any]:
        """The key figures (name to value, in order) of ``repr`` and the notebook view."""
        raise NotImplementedError

    def _tables(self) -> dict[str, Any]:
        """The tables of the notebook view (by name): :meth:`to_pandas`'s."""
        out = self.to_pandas()
        return dict(out) if isinstance(out, Mapping) else {"": out}

    def to_pandas(self):
        """The result's data as a DataFrame (or a dict of DataFrames by table name)."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict (by default its fields, :func:`json_ready`).

        Returns
        -------
        dict
        """
        if dataclasses.is_dataclass(self):
            return {f.name: json_ready(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return json_ready(vars(self))

    def plot(self, ax=None):
        """Draw the result on ``ax`` or a new Figure; returns the Figure made, else ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or array of Axes, optional
            Where to draw; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return one_line(type(self).__name__, self._figures())

    def _repr_html_(self) -> str:
        return html_result(type(self).__name__, self._figures(), self._tables())
