"""netem impairments from the command line and scenario files: ``aqmlab dumbbell --netem``,
``netem`` in a scenario (kept in the normalized ``scenario.toml``, rerun to the same summary),
the per-link counters in ``summary.json``, and bad netem strings as one line naming the option
or key and the word (exit 2). The stage itself is tested statistically in
``crates/experiment/src/netem/tests.rs``, the simulator's links in
``crates/netsim/tests/netem.rs``; the emulator in ``tests/test_emulate.py``."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import assert_bad_input, run  # noqa: E402

SCENARIO = """name = "netem"
duration = "6s"
warmup = "1s"
[dumbbell]
rate = "10Mbps"
rtt = "40ms"
buffer = 100
netem = "delay 5ms 2ms distribution normal loss gemodel 1% 10%"
[[flows]]
count = 4
"""


def test_dumbbell_netem_loss_is_counted(tmp_path):
    """``--netem "loss 1%"``: the bottleneck's netem drops are a binomial 1 % of its
    transmissions (alpha = 0.01); links without netem have no netem keys."""
    args = ["dumbbell", "--netem", "loss 1%", "--flows", "4", "--duration", "10s"]
    p = run([*args, "--out", "res", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    n = link["tx_packets"]
    sd = math.sqrt(n * 0.01 * 0.99)
    assert abs(link["netem_drops"] - 0.01 * n) < 2.5758 * sd, link
    for key in ("duplicates", "reordered", "corrupted", "late"):
        assert link[key] == 0
    c = s["conservation"]
    assert c["sent"] + c["duplicated"] == c["delivered"] + c["dropped"] + c["lost"] + c["in_flight"]
    assert 'netem = "loss 1%"' in (tmp_path / "res" / "scenario.toml").read_text()


def test_dumbbell_netem_delay_adds_to_the_rtt(tmp_path):
    """``--netem "delay 10ms"``: a window-limited flow's mean RTT grows by 10 ms (within
    0.1 ms: the linux profile's delayed ACKs add waits to some samples, and which samples
    they touch changes with the RTT; measured 9.99 ms)."""

    def rtt(extra: list[str], out: str) -> float:
        args = ["dumbbell", "--flows", "1", "--rwnd", "4", "--rtt", "40ms", "--duration", "4s"]
        p = run([*args, *extra, "--out", out, "--quiet", "--no-plots"], tmp_path)
        assert p.returncode == 0, p.stderr
        return json.loads((tmp_path / out / "summary.json").read_text())["flows"][0]["rtt_ms_mean"]

    a, b = rtt([], "a"), rtt(["--netem", "delay 10ms"], "b")
    assert b - a == pytest.approx(10.0, abs=0.1), (a, b)


def test_scenario_netem_reruns_to_the_same_summary(tmp_path):
    """A scenario's ``netem`` is kept in the result's ``scenario.toml``, which reruns to the
    same links (deterministic: the stage's randomness comes from the seed)."""
    (tmp_path / "s.toml").write_text(SCENARIO)
    p = run(["run", "s.toml", "--out", "res", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert s["links"]["bottleneck"]["netem_drops"] > 0
    p = run(["run", "res/scenario.toml", "--out", "again", "--quiet", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["links"] == s["links"]


@pytest.mark.parametrize(
    "text, needles",
    [
        ("delay 10xs", ['"10xs" is not a time']),
        ("loss 1% rate 1mbit", ["rate: not a netem option here"]),
        ("loss bogus", ['"bogus" is not a loss model']),
        ("reorder 25%", ["needs some delay"]),
        ("delay 10ms 1ms distribution weibull", ['"weibull" is not a distribution']),
        ("", ["empty"]),
    ],
    ids=["time", "rate", "loss-model", "reorder", "distribution", "empty"],
)
def test_bad_netem_is_one_line(tmp_path, text, needles):
    """A bad netem string: one line naming the option (or key), the string and the word,
    exit 2, nothing written."""
    args = ["dumbbell", "--netem", text, "--duration", "2s", "--out", "res"]
    assert_bad_input(args, [f"--netem = {json.dumps(text)}", *needles], tmp_path)
    netem = 'netem = "delay 5ms 2ms distribution normal loss gemodel 1% 10%"'
    (tmp_path / "s.toml").write_text(SCENARIO.replace(netem, f"netem = {json.dumps(text)}"))
    line = assert_bad_input(["run", "{tmp}/s.toml", "--out", "res"], needles, tmp_path)
    assert line.startswith(f"error: dumbbell.netem = {json.dumps(text)}"), line
