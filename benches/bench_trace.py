"""Per-packet trace cost: the same run without and with ``[trace] links = ["bottleneck"]``.

Scenario A of bench_sim (10 Mb/s dumbbell, 100 NewReno flows, 60 s, drop-tail, 125-packet
buffer) through the Python API, three times each way, alternating; the fastest of each counts.
Prints wall seconds, trace rows and rows per wall-second, the file's size, and the ratio
traced / untraced. Bar: tracing the bottleneck at most doubles the run's wall time; the trace's
row groups never exceed the batch (bounded memory). The untraced path's own speed is
bench_sim's (the simulator loop is the same as before traces existed plus one branch per enqueue
and dequeue).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from aqmlab.sim import simulate

SCENARIO = {
    "name": "bench-trace",
    "duration": "60s",
    "warmup": "10s",
    "dumbbell": {"rate": "10Mbps", "rtt": "100ms", "buffer": 125, "pkt_size": 1000},
    "aqm": {"type": "droptail"},
    "flows": [{"count": 100, "cc": "newreno"}],
}
BATCH = 65_536
RATIO_BAR = 2.0


def main() -> int:
    traced = {**SCENARIO, "trace": {"links": ["bottleneck"], "batch": BATCH}}
    plain_s, traced_s = [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.parquet"
        for _ in range(3):
            t0 = time.perf_counter()
            simulate(SCENARIO)
            plain_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            simulate(traced, trace=path, force=True)
            traced_s.append(time.perf_counter() - t0)
        meta = pq.ParquetFile(path).metadata
        rows = meta.num_rows
        groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        size = path.stat().st_size
    a, b = min(plain_s), min(traced_s)
    ratio = b / a
    bounded = max(groups) <= BATCH + 4096
    ok = ratio <= RATIO_BAR and bounded
    print(f"untraced: {a:.3f} s   traced: {b:.3f} s   ratio traced/untraced = {ratio:.2f}")
    print(
        f"trace: {rows:,} rows in {len(groups)} row groups (largest {max(groups):,}, batch "
        f"{BATCH:,}), {size / 1e6:.1f} MB, {rows / b / 1e6:.2f} M rows per wall-second"
    )
    print(f"-> {'PASS' if ok else 'FAIL'} (ratio <= {RATIO_BAR}, row groups <= batch + 4096)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
