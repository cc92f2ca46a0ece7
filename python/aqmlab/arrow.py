"""Arrow tables from aqmlab's flat result columns, without importing pandas.

``pyarrow.table(dict)`` and ``pyarrow.array(values)`` probe every input for a pandas object,
and that probe imports pandas (about 0.4 s) in any process that has it installed, even when
nothing is a DataFrame. The columns aqmlab writes are flat lists (or 1-D NumPy arrays) of
``int``, ``float``, ``bool``, ``str`` or ``None``, so :func:`table` builds their arrays directly
from buffers, with the types ``pyarrow.table`` would infer (``int64``, ``double``, ``bool``,
``string``, ``null``; ``None`` becomes a null). Anything else (mixed kinds, NumPy scalars,
nested values) goes through ``pyarrow.array`` unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["column", "table"]


def column(values: Sequence[Any], mask=None):
    """One Arrow array equal to ``pyarrow.array(values, mask=mask)`` for the flat kinds above.

    Parameters
    ----------
    values : sequence
        A list of Python scalars (``None`` for missing) or a 1-D NumPy array.
    mask : 1-D boolean NumPy array, optional
        For a NumPy array: ``True`` where the value is missing (null).

    Returns
    -------
    pyarrow.Array
    """
    import numpy as np
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        if values.ndim == 1 and values.dtype.kind in "fiu":
            a = np.ascontiguousarray(values)
            valid = None
            if mask is not None:
                valid = pa.py_buffer(np.packbits(~np.asarray(mask, dtype=bool), bitorder="little"))
            return pa.Array.from_buffers(
                pa.from_numpy_dtype(a.dtype), len(a), [valid, pa.py_buffer(a)]
            )
        return pa.array(values, mask=mask)
    if mask is not None:
        raise TypeError("column: a mask goes with a NumPy array (a list marks nulls with None)")
    n = len(values)
    kinds = {type(v) for v in values}
    nulls = type(None) in kinds
    kinds.discard(type(None))
    if not kinds:
        return pa.nulls(n)
    valid = None
    if nulls:
        mask = np.fromiter((v is not None for v in values), dtype=bool, count=n)
        valid = pa.py_buffer(np.packbits(mask, bitorder="little"))
    if kinds == {bool}:
        bits = np.fromiter((v is True for v in values), dtype=bool, count=n)
        data = pa.py_buffer(np.packbits(bits, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), n, [valid, data])
    if kinds == {int}:
        try:
            a = np.fromiter((0 if v is None else v for v in values), dtype=np.int64, count=n)
        except OverflowError:
            return pa.array(values)
        return pa.Array.from_buffers(pa.int64(), n, [valid, pa.py_buffer(a)])
    if kinds <= {int, float}:
        a = np.fromiter((0.0 if v is None else v for v in values), dtype=np.float64, count=n)
        return pa.Array.from_buffers(pa.float64(), n, [valid, pa.py_buffer(a)])
    if kinds == {str}:
        encoded = [b"" if v is None else v.encode() for v in values]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        if offsets[-1] >= 2**31:
            return pa.array(values)
        data = pa.py_buffer(b"".join(encoded))
        return pa.Array.from_buffers(
            pa.string(), n, [valid, pa.py_buffer(offsets.astype(np.int32)), data]
        )
    return pa.array(values)


def table(columns: Mapping[str, Sequence[Any]]):
    """A ``pyarrow.Table`` equal to ``pyarrow.table(columns)`` for a dict of flat columns
    (see :func:`column`); column order is the dict's.

    Parameters
    ----------
    columns : mapping of str to sequence
        Column name to its flat values.

    Returns
    -------
    pyarrow.Table
    """
    import pyarrow as pa

    names = list(columns)
    return pa.Table.from_arrays([column(columns[k]) for k in names], names=names)
