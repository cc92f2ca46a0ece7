"""Per-packet traces: the queue events of chosen links streamed to Parquet in bounded memory.

A scenario names the links to trace (``[trace] links = ["bottleneck"]``, optionally
``batch = N`` rows per batch); the core records one row per queue event of those links into a
preallocated buffer and stops whenever a buffer holds a full batch; :class:`TraceWriter` then
appends the rows to the Parquet file as one row group. Memory is bounded by the batch size
(``docs/trace.md``), not by the length of the run.

Columns of ``trace.parquet``:

========== ========= =========================================================================
column     type      meaning
========== ========= =========================================================================
time_ns    int64     event time, ns since the start of the run (warm-up included)
link       string    link name (``bottleneck``, ...)
flow       int32     flow id (as in ``flows.parquet``)
size       int32     packet size on the wire, bytes (IP header included)
sojourn_ns int64     time spent in the queue, ns (dequeue, mark, drop_victim, drop_dequeue;
                     null for enqueue and drop_arrival)
ecn        int8      ECN codepoint (RFC 3168 bits): 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
kind       string    enqueue, dequeue, mark, drop_arrival, drop_victim, drop_dequeue
========== ========= =========================================================================

Examples
--------
>>> import tempfile, pathlib, pyarrow.parquet as pq
>>> from aqmlab.sim import simulate
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trace.parquet"
>>> res = simulate({"duration": "2s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}],
...                 "trace": {"links": ["bottleneck"]}}, trace=path)
>>> t = pq.read_table(path)
>>> t.column_names
['time_ns', 'link', 'flow', 'size', 'sojourn_ns', 'ecn', 'kind']
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TRACE_FILE", "TraceWriter", "trace_schema"]

#: File name of the trace in a result folder.
TRACE_FILE = "trace.parquet"


def trace_schema():
    """The Arrow schema of ``trace.parquet`` (see the module docstring).

    Returns
    -------
    pyarrow.Schema
    """
    import pyarrow as pa

    return pa.schema(
        [
            ("time_ns", pa.int64()),
            ("link", pa.dictionary(pa.int32(), pa.string())),
            ("flow", pa.int32()),
            ("size", pa.int32()),
            ("sojourn_ns", pa.int64()),
            ("ecn", pa.int8()),
            ("kind", pa.dictionary(pa.int8(), pa.string())),
        ]
    )


class TraceWriter:
    """Streams the trace rows of a core simulation into one Parquet file.

    Parameters
    ----------
    path : path-like
        The Parquet file to create (the caller chooses a temporary path and renames it; see
        :mod:`aqmlab.output`).
    core : aqmlab._core.Simulation
        The simulation whose trace is drained.
    link_names : list of str
        Names of the core's links as results show them (index = core link id).

    Notes
    -----
    Each :meth:`flush` writes the rows the core holds as one row group, so a row group has
    at most ``batch`` rows per traced link plus the rows of the event that filled the batch.
    """

    def __init__(self, path: str | os.PathLike[str], core, link_names: list[str]):
        import pyarrow.parquet as pq

        self.path = Path(path)
        self._core = core
        self._names = list(link_names)
        self._kinds = None
        self._writer = pq.ParquetWriter(self.path, trace_schema())
        self.rows = 0
        self.row_groups = 0

    def flush(self) -> int:
        """Drain the core's buffers into one row group; return the rows written.

        Returns
        -------
        int
        """
        import numpy as np
        import pyarrow as pa

        from aqmlab.arrow import column

        d = self._core.drain_trace()
        if self._kinds is None:
            self._kinds = column(list(d["kinds"]))
        kind = np.frombuffer(d["kind"], dtype=np.uint8).astype(np.int8)
        n = len(kind)
        if n == 0:
            return 0
        sojourn = np.frombuffer(d["sojourn_ns"], dtype="<u8").astype(np.int64)
        # the link column's dictionary holds only the traced links, not every link of the run
        link_ids = np.frombuffer(d["link"], dtype="<u4")
        traced, link_index = np.unique(link_ids, return_inverse=True)
        links = column([self._names[i] for i in traced])
        # enqueue (0) and drop_arrival (3) have no sojourn time
        no_sojourn = (kind == 0) | (kind == 3)
        # Arrow arrays from buffers (aqmlab.arrow): pyarrow's own conversions of NumPy input
        # import pandas, about 0.4 s
        columns = [
            column(np.frombuffer(d["time_ns"], dtype="<u8").astype(np.int64)),
            pa.DictionaryArray.from_arrays(column(link_index.astype(np.int32)), links),
            column(np.frombuffer(d["flow"], dtype="<u4").astype(np.int32)),
            column(np.frombuffer(d["size"], dtype="<u4").astype(np.int32)),
            column(sojourn, mask=no_sojourn),
            column(np.frombuffer(d["ecn"], dtype=np.uint8).astype(np.int8)),
            pa.DictionaryArray.from_arrays(column(kind), self._kinds),
        ]
        table = pa.Table.from_arrays(columns, schema=trace_schema())
        self._writer.write_table(table, row_group_size=n)
        self.rows += n
        self.row_groups += 1
        return n

    def close(self) -> None:
        """Write the remaining rows and finish the file (idempotent)."""
        if self._writer is None:
            return
        try:
            self.flush()
        finally:
            self._writer.close()
            self._writer = None

    def abort(self) -> None:
        """Close the file without draining (on an error; the caller discards the file)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
