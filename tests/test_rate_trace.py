"""Trace-driven links from the command line: ``rate_trace`` in scenario files (relative to the
file, copied into the result folder), ``aqmlab dumbbell --rate-trace``, bad trace files as one
line naming the key and value (exit 2). The service itself is tested in the Rust crates
(``crates/experiment/src/service.rs``, ``crates/netsim/tests/rate_trace.rs``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import assert_bad_input, run  # noqa: E402

#: 1 opportunity per ms (12 Mb/s) for 800 ms, none for 200 ms, repeating (a 20 % outage).
OUTAGE = "\n".join(str(t) for t in range(1, 801)) + "\n1000\n"

SCENARIO = """name = "trace"
duration = "3s"
warmup = "1s"
[dumbbell]
rate_trace = "link.trace"
rtt = "40ms"
buffer = 100
[[flows]]
count = 4
"""


def test_scenario_file_reads_the_trace_beside_it_and_the_result_keeps_a_copy(tmp_path):
    """A relative ``rate_trace`` is relative to the scenario file, not the working folder;
    the result folder holds the trace and a ``scenario.toml`` that reruns to the same summary;
    the nominal rate defaults to the trace's mean (12 Mb/s x 801 / 1000)."""
    (tmp_path / "sc").mkdir()
    (tmp_path / "sc" / "s.toml").write_text(SCENARIO)
    (tmp_path / "sc" / "link.trace").write_text(OUTAGE)
    p = run(["run", "sc/s.toml", "--out", "res", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["rate_bps"] == pytest.approx(801 * 12000 / 1.0)
    # (4 TCP flows lose some of the capacity after each 200 ms outage: measured 0.85)
    assert 0.5 < link["utilization"] <= 1.0, link
    assert (tmp_path / "res" / "link.trace").read_text() == OUTAGE
    assert 'rate_trace = "link.trace"' in (tmp_path / "res" / "scenario.toml").read_text()
    p = run(["run", "res/scenario.toml", "--out", "again", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["links"] == s["links"]


def test_dumbbell_rate_trace_option(tmp_path):
    """``aqmlab dumbbell --rate-trace FILE``: the bottleneck follows the trace (throughput in
    an outage sample is 0) and ``--rate`` is the nominal rate."""
    (tmp_path / "t.trace").write_text(OUTAGE)
    args = ["dumbbell", "--rate-trace", "t.trace", "--rate", "5Mbps", "--duration", "3s"]
    p = run([*args, "--out", "res", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert s["links"]["bottleneck"]["rate_bps"] == 5e6
    import pyarrow.parquet as pq

    ts = pq.read_table(tmp_path / "res" / "timeseries.parquet").to_pandas()
    # samples whose whole interval lies in an outage (800, 1000) ms of a second send nothing
    frac = (ts["time_s"] % 1.0).round(6)
    inside = ts[(frac > 0.81) & (frac < 0.99)]
    assert len(inside) > 10 and (inside["throughput_bps"] == 0).all()


@pytest.mark.parametrize(
    "content, needles",
    [
        (None, ["cannot read"]),
        ("", ["empty trace"]),
        ("5\n3\n", ["line 2: 3 ms is before"]),
        ("0\n", ["nonzero"]),
    ],
    ids=["missing", "empty", "decreasing", "zero-length"],
)
def test_bad_trace_file_is_one_line(tmp_path, content, needles):
    """A missing, empty or non-monotonic trace file: one line naming the option (or key) and
    its value, exit 2, nothing written."""
    if content is not None:
        (tmp_path / "t.trace").write_text(content)
    args = ["dumbbell", "--rate-trace", "t.trace", "--duration", "2s", "--out", "res"]
    assert_bad_input(args, ['--rate-trace = "t.trace"', *needles], tmp_path)
    (tmp_path / "s.toml").write_text(SCENARIO.replace("link.trace", "t.trace"))
    line = assert_bad_input(["run", "{tmp}/s.toml", "--out", "res"], needles, tmp_path)
    assert line.startswith('error: dumbbell.rate_trace = "'), line
