"""LEDBAT flows (``cc = "ledbat"``) and varying capacity (``[dumbbell] rate_changes``) through
the Python layer: the summary's ``lbe`` entry, the normalized document, errors."""

from __future__ import annotations

import pytest
from aqmlab.scenario import ScenarioError, parse_scenario
from aqmlab.sim import simulate


def scenario(**over):
    d = {
        "duration": "10s",
        "warmup": "2s",
        "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 100},
        "flows": [{"count": 2}, {"count": 1, "cc": "ledbat"}],
    }
    d.update(over)
    return d


def test_lbe_share_is_the_ledbat_flows_part_of_the_goodput():
    s = simulate(scenario()).summary
    flows = s["flows"]
    assert [f["cc"] for f in flows] == ["newreno", "newreno", "ledbat"]
    g = [f["goodput_bps"] for f in flows]
    assert s["lbe"]["flows"] == 1
    assert s["lbe"]["goodput_bps"] == pytest.approx(g[2])
    assert s["lbe"]["share"] == pytest.approx(g[2] / sum(g))
    # Without LEDBAT flows the key is absent (results of other scenarios are unchanged).
    assert "lbe" not in simulate(scenario(flows=[{"count": 2}])).summary


def test_rate_changes_normalized_and_used():
    changes = [{"at": "4s", "rate": "5Mbps"}, {"at": "7s", "rate": 8e6}]
    d = scenario(flows=[{"count": 8}])
    d["dumbbell"]["rate_changes"] = changes
    sc = parse_scenario(d)
    assert sc.normalized["dumbbell"]["rate_changes"] == [
        {"at": 4.0, "rate": 5e6},
        {"at": 7.0, "rate": 8e6},
    ]
    res = simulate(sc)
    ts = res.to_pandas("timeseries")
    mid = ts[(ts["time_s"] > 5.0) & (ts["time_s"] <= 7.0)]["throughput_bps"].mean()
    assert mid == pytest.approx(5e6, rel=0.05)
    assert res.summary["links"]["bottleneck"]["rate_bps"] == 8e6
    assert 0.95 < res.summary["links"]["bottleneck"]["utilization"] <= 1.0
    # Not given: not in the normalized document either.
    assert "rate_changes" not in parse_scenario(scenario()).normalized["dumbbell"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ([{"at": "10s", "rate": "5Mbps"}], 'dumbbell.rate_changes[0].at = "10s": must be before'),
        ([{"at": "0s", "rate": "5Mbps"}], 'dumbbell.rate_changes[0].at = "0s": must be > 0'),
        ([{"at": "2s", "rate": "-1Mbps"}], 'dumbbell.rate_changes[0].rate = "-1Mbps"'),
        ("5Mbps", 'dumbbell.rate_changes = "5Mbps": must be an array'),
    ],
)
def test_rate_changes_errors(changes, message):
    d = scenario()
    d["dumbbell"]["rate_changes"] = changes
    with pytest.raises(ScenarioError) as e:
        parse_scenario(d)
    assert str(e.value).startswith(message), str(e.value)
