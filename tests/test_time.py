"""Time never livelocks: a time in seconds is converted to integer nanoseconds once, by one
rounding rule (the nearest nanosecond), and every run reaches exactly the instant asked for.

Before this rule, ``Simulation.run_until`` compared floats while the core rounded to whole
nanoseconds, so ``run_until(0.022000000000000002)`` stopped at 22,000,000 ns forever and most
non-integer durations (``2.2s``, ``100ms``, ``4.123s``) hung. The property test below draws
10,000 durations and step sequences; each run must finish at exactly the expected nanosecond.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from aqmlab import sweep  # noqa: E402
from aqmlab.scenario import Scenario  # noqa: E402
from aqmlab.sim import ArgumentError, Simulation, simulate, to_ns  # noqa: E402
from badinput import AQMLAB, ROOT  # noqa: E402

SMALL = {"dumbbell": {"rate": "1Mbps", "rtt": "10ms"}, "flows": [{"count": 1}]}


def exact_ns(seconds: Decimal) -> int:
    """The rounding rule worked in exact decimal arithmetic: nearest ns, halves up."""
    return int((seconds * 10**9).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def scenario(duration) -> Scenario:
    return Scenario({"duration": duration, "sample_interval": "1s", **SMALL})


def random_duration(rng: random.Random) -> tuple[object, int]:
    """A duration as a user writes it (float seconds, text with a unit, a float sum) and the
    nanosecond it must end at."""
    kind = rng.randrange(4)
    if kind == 0:  # fractional milliseconds in a string: "4.123456 ms"
        ms = Decimal(rng.randrange(1, 20_000_000)) / 10**6
        return f"{ms} ms", exact_ns(ms / 1000)
    if kind == 1:  # fractional seconds in a string: "0.0123s"
        s = Decimal(rng.randrange(1, 20_000_000)) / 10**9
        return f"{s}s", exact_ns(s)
    if kind == 2:  # a float of seconds with up to 9 decimals
        s = Decimal(rng.randrange(1, 20_000_000)) / 10**9
        return float(s), exact_ns(s)
    # a float sum that is not what it looks like: 0.1 + 0.2 = 0.30000000000000004
    a, b = rng.randrange(1, 100), rng.randrange(1, 100)
    f = a / 10_000 + b / 10_000
    return f, exact_ns(Decimal(f))


def test_to_ns_is_the_nearest_nanosecond():
    assert to_ns("t", 0.1 + 0.2) == 300_000_000
    assert to_ns("t", 2.2) == 2_200_000_000
    assert to_ns("t", 0.022000000000000002) == 22_000_000
    assert to_ns("t", 1.5e-9) == 2  # halves away from zero
    assert to_ns("t", 0.4e-9) == 0
    assert to_ns("t", 0) == 0


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), -1e-3, "1s", True])
def test_run_until_refuses_what_is_not_a_time(bad):
    sim = Simulation(scenario("10ms"))
    with pytest.raises(ArgumentError, match=r"^t = "):
        sim.run_until(bad)
    assert sim.now_ns == 0


def test_ten_thousand_random_durations_and_step_sequences_reach_the_end_exactly():
    rng = random.Random(20261126)
    for case in range(10_000):
        duration, end = random_duration(rng)
        sim = Simulation(scenario(duration))
        assert sim.end_ns == end, (case, duration)
        # a step sequence: sums of fractional-millisecond and sub-microsecond steps, as a
        # controller written in Python would form them
        t = 0.0
        for _ in range(rng.randrange(0, 6)):
            t += rng.choice([rng.uniform(0, 3e-3), rng.uniform(0, 1e-6), 0.1, 1e-9])
            before = sim.now_ns
            want = min(to_ns("t", t), end)
            if want < before:
                with pytest.raises(ArgumentError):
                    sim.run_until(t)
                continue
            sim.run_until(t)
            assert sim.now_ns == want, (case, duration, t)
        sim.run()
        assert sim.now_ns == end, (case, duration)


def test_run_after_run_until_continues_from_there():
    sim = Simulation(scenario("2.2s"))
    sim.run_until(0.7)
    seen = []
    sim.run(progress=seen.append, steps=3)
    assert sim.now_ns == 2_200_000_000
    assert seen[0] == pytest.approx(0.7 + 1.5 / 3)
    assert seen[-1] == pytest.approx(2.2)
    sim.run()  # at the end already: nothing to do, no error
    assert sim.now_ns == 2_200_000_000


def test_run_until_past_the_end_stops_at_the_end():
    sim = Simulation(scenario("100ms"))
    sim.run_until(5.0)
    assert sim.now_ns == 100_000_000


@pytest.mark.parametrize("duration", [0.2, "0.2s", "100ms", "5 ms", "4.123s", 0.1 + 0.2])
def test_simulate_finishes_at_the_end(duration):
    res = simulate(scenario(duration))
    assert round(res.summary["sim_seconds"] * 1e9) == Simulation(scenario(duration)).end_ns


def test_simulate_with_a_trace_finishes_at_the_end(tmp_path):
    sc = {
        "duration": "0.3s",
        "dumbbell": {"rate": "10Mbps", "rtt": "20ms"},
        "flows": [{"count": 2}],
        "trace": {"links": ["bottleneck"], "batch": 64},
    }
    res = simulate(sc, trace=tmp_path / "t.parquet")
    assert res.summary["sim_seconds"] == pytest.approx(0.3, abs=1e-12)


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*AQMLAB, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


@pytest.mark.parametrize("duration", ["2.2s", "1.1s", "100ms"])
def test_cli_dumbbell_with_a_fractional_duration_finishes(tmp_path, duration):
    p = cli(
        "dumbbell", "--flows", "2", "--rate", "2Mbps", "--duration", duration,
        "--no-plots", "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert round(s["sim_seconds"] * 1e9) == Simulation(scenario(duration)).end_ns


@pytest.mark.parametrize("duration", ["4.123s", "5 ms"])
def test_cli_run_with_a_fractional_duration_finishes(tmp_path, duration):
    f = tmp_path / "s.toml"
    f.write_text(f'duration = "{duration}"\n[dumbbell]\nrate = "2Mbps"\n[[flows]]\ncount = 2\n')
    p = cli("run", str(f), "--no-plots", "--out", str(tmp_path / "r"))
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert round(s["sim_seconds"] * 1e9) == Simulation(scenario(duration)).end_ns


def test_a_sweep_with_fractional_durations_finishes(tmp_path):
    spec = {
        "base": {"warmup": "1ms", **SMALL},
        "seeds": [1],
        "grid": {"duration": ["2.2s", "100ms", "5 ms", "0.30000000000000004s"]},
    }
    df = sweep.run(spec, tmp_path / "sw", workers=1).to_pandas()
    assert len(df) == 4
    assert sorted(round(x * 1e9) for x in df["sim_seconds"]) == [
        5_000_000, 100_000_000, 300_000_000, 2_200_000_000,
    ]  # fmt: skip
