"""aqmlab.arrow builds the same Arrow arrays as pyarrow.array, without importing pandas."""

import math
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from aqmlab.arrow import column, table

CASES = [
    [],
    [None, None],
    [1, 2, -3, 2**62],
    [1, None, 3],
    [0.5, float("nan"), -1e300, 2],
    [None, 1.5, None, 2],
    [True, False, True, True, False, True, False, False, True],
    [None, True, False],
    ["bottleneck", "l23", "", "ü∆"],
    ["a", None, "bc"],
    [1, "x"],  # mixed kinds: pyarrow's own error or result
    [2**70],  # beyond int64
    [np.float64(1.0), np.float64(2.0)],  # NumPy scalars: the fallback
]


def _same(a, b) -> bool:
    if a.type != b.type or len(a) != len(b):
        return False
    for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True):
        if not (x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))):
            return False
    return a.null_count == b.null_count


@pytest.mark.parametrize("values", CASES, ids=range(len(CASES)))
def test_column_equals_pyarrow_array(values):
    try:
        want = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            column(values)
        return
    got = column(values)
    got.validate(full=True)
    assert _same(got, want), (got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint8])
def test_numpy_columns(dtype):
    a = np.arange(7, dtype=dtype)[::2]  # not contiguous
    got = column(a)
    got.validate(full=True)
    assert _same(got, pa.array(a))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int8])
def test_numpy_columns_with_a_mask(dtype):
    a = np.arange(11, dtype=dtype)
    mask = a % 3 == 0
    got = column(a, mask=mask)
    got.validate(full=True)
    assert _same(got, pa.array(a, mask=mask))
    assert got.null_count == 4
    with pytest.raises(TypeError):
        column([1, 2], mask=np.array([False, True]))


def test_table_keeps_order_and_types():
    cols = {"time_s": [0.01, 0.02], "link": ["a", "b"], "drops": [0, 3], "fct_s": [None, None]}
    t = table(cols)
    assert t.column_names == list(cols)
    assert t.schema == pa.table(cols).schema
    assert t.to_pydict() == cols


def test_writing_results_does_not_import_pandas(tmp_path):
    code = (
        "import sys\n"
        "from aqmlab.sim import simulate\n"
        "r = simulate({'dumbbell': {'rate': 1e6, 'rtt': 0.04, 'buffer': 20},"
        " 'flows': [{'count': 2}], 'duration': 1})\n"
        f"r.write_into({str(tmp_path)!r}, plots=False)\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert (tmp_path / "timeseries.parquet").exists()
    assert (tmp_path / "flows.parquet").exists()


def test_writing_a_trace_does_not_import_pandas(tmp_path):
    code = (
        "import sys\n"
        "from aqmlab.sim import Simulation\n"
        "sim = Simulation({'dumbbell': {'rate': 1e6, 'rtt': 0.04, 'buffer': 20},"
        " 'flows': [{'count': 2}], 'duration': 1, 'trace': {'links': ['bottleneck']}})\n"
        f"sim.start_trace({str(tmp_path / 'trace.parquet')!r})\n"
        "sim.run()\n"
        "sim.close_trace()\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    t = pq.read_table(tmp_path / "trace.parquet")
    assert t.num_rows > 0
    kinds = t.column("kind").to_pylist()
    sojourn = t.column("sojourn_ns").to_pylist()
    # enqueue and drop_arrival rows have no sojourn time, the others do
    assert all(
        (s is None) == (k in ("enqueue", "drop_arrival"))
        for k, s in zip(kinds, sojourn, strict=True)
    )
