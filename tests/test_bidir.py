"""Bidirectional traffic from the command line: ``direction = "reverse"`` flow groups and
``[reverse_aqm]`` in scenario files, ``aqmlab dumbbell --reverse-flows N``, both directions'
queues in ``summary.json``, the time series and the table, bad input as one line (exit 2). The
simulation itself is tested in ``crates/netsim/tests/bidir.rs`` (against ns-3)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from badinput import assert_bad_input, run  # noqa: E402

SCENARIO = """name = "bidir"
duration = "6s"
warmup = "2s"
[dumbbell]
rate = "10Mbps"
rtt = "40ms"
buffer = 100
[aqm]
type = "codel"
[[flows]]
count = 2
[[flows]]
count = 2
direction = "reverse"
"""


def test_scenario_with_reverse_groups_reports_both_directions(tmp_path):
    """Both bottlenecks in ``links`` (forward keys unchanged), in the time series, a table row
    each; per-flow and per-group ``direction``; the normalized scenario reruns to the same
    summary."""
    (tmp_path / "s.toml").write_text(SCENARIO)
    p = run(["run", "s.toml", "--out", "res", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert list(s["links"]) == ["bottleneck", "bottleneck_reverse"]
    for name, link in s["links"].items():
        assert link["aqm"] == "codel", name
        # two NewReno flows a direction under CoDel fill most of the link, not all of it:
        # measured 0.79 forward (data and the reverse flows' ACKs) and 0.92 reverse over this
        # 4 s window, 0.86 and 0.90 over 16 s (CoDel's 5 ms target under-fills with few Reno
        # flows; before the receive window followed Linux's rcv_ssthresh, slow start was held
        # at 44 segments and the forward link had 0.88)
        assert link["utilization"] > 0.7, (name, link["utilization"])
    assert [f["direction"] for f in s["flows"]] == ["forward"] * 2 + ["reverse"] * 2
    assert [g["direction"] for g in s["groups"]] == ["forward", "reverse"]
    assert s["flows"][3]["queue_delay_link"] == "bottleneck_reverse"
    # a row per direction in the run table, and a direction column in the group table
    assert "bottleneck (codel)" in p.stdout and "bottleneck_reverse (codel)" in p.stdout
    assert "direction" in p.stdout
    import pyarrow.parquet as pq

    ts = pq.read_table(tmp_path / "res" / "timeseries.parquet").to_pandas()
    assert set(ts["link"]) == {"bottleneck", "bottleneck_reverse"}
    flows = pq.read_table(tmp_path / "res" / "flows.parquet").to_pandas()
    assert list(flows["direction"]) == ["forward"] * 2 + ["reverse"] * 2
    text = (tmp_path / "res" / "scenario.toml").read_text()
    assert 'direction = "reverse"' in text and "[reverse_aqm]" in text
    p = run(["run", "res/scenario.toml", "--out", "again", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["links"] == s["links"]


def test_dumbbell_reverse_flows_option(tmp_path):
    """``--reverse-flows N``: a ``reverse`` group beside the ``forward`` one, the reverse
    bottleneck running the same AQM; without it the result has the forward bottleneck only."""
    args = ["dumbbell", "--flows", "2", "--aqm", "pie", "--duration", "4s", "--no-plots"]
    p = run([*args, "--reverse-flows", "3", "--out", "res"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert s["links"]["bottleneck_reverse"]["aqm"] == "pie"
    assert [(g["name"], g["flows"], g["direction"]) for g in s["groups"]] == [
        ("forward", 2, "forward"),
        ("reverse", 3, "reverse"),
    ]
    assert "bottleneck_reverse (pie)" in p.stdout
    p = run([*args, "--out", "one", "--quiet"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert list(s["links"]) == ["bottleneck"]
    assert s["groups"][0]["name"] == "flows[0]"


def test_bad_direction_and_reverse_aqm_are_one_line(tmp_path):
    """A direction other than forward/reverse, an unknown reverse AQM, a negative
    ``--reverse-flows``, reverse traffic on an explicit topology: one line, exit 2."""
    (tmp_path / "s.toml").write_text(SCENARIO.replace('"reverse"', '"sideways"'))
    assert_bad_input(
        ["run", "{tmp}/s.toml", "--out", "res"],
        ['flows[1].direction = "sideways": must be one of forward, reverse'],
        tmp_path,
    )
    (tmp_path / "r.toml").write_text(SCENARIO + '[reverse_aqm]\ntype = "nope"\n')
    assert_bad_input(["run", "{tmp}/r.toml", "--out", "res"], ["reverse_aqm.type"], tmp_path)
    assert_bad_input(
        ["dumbbell", "--reverse-flows", "-1", "--out", "res"],
        ["--reverse-flows = -1: must be >= 0"],
        tmp_path,
    )
    explicit = """duration = "2s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
src = "a"
dst = "b"
rate = "10Mbps"
[[flows]]
src = "a"
dst = "b"
direction = "reverse"
"""
    (tmp_path / "e.toml").write_text(explicit)
    assert_bad_input(
        ["run", "{tmp}/e.toml", "--out", "res"],
        ['flows[0].direction = "reverse": only for [dumbbell] and [parking_lot]'],
        tmp_path,
    )
