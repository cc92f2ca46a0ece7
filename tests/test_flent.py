"""Ping flows from Python and the command line (``pings.parquet``, ``summary.json`` ``pings``,
the table) and Flent data files (``--flent``, ``[output] flent``) read by Flent 2.3 itself:
its plots drawn headless and its loaded series compared with aqmlab's numbers. The simulator's
probes are tested in ``crates/netsim/tests/ping.rs``."""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import assert_bad_input, run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "scenarios" / "flent"

SHORT = """name = "short"
duration = "8s"
warmup = "2s"
[dumbbell]
rate = "10Mbps"
rtt = "40ms"
buffer = 100
[aqm]
type = "codel"
[[flows]]
count = 2
start = 0
start_jitter = "100ms"
[[flows]]
count = 1
direction = "reverse"
start = 0
[[flows]]
name = "probe"
kind = "ping"
start = 0
start_jitter = 0
"""


def _flent_bin() -> str | None:
    exe = Path(sys.executable).parent / "flent"
    return str(exe) if exe.exists() else shutil.which("flent")


needs_flent = pytest.mark.skipif(
    _flent_bin() is None, reason="Flent is not installed (pip install flent==2.3.0, dev extra)"
)


def _percentile(xs, q):
    import numpy as np

    return float(np.percentile(np.asarray(xs), q))


def test_ping_summary_matches_the_probes_and_parquet(tmp_path):
    """``summary.json`` ``pings`` are the statistics of ``pings.parquet``'s probes sent after
    the warm-up (numpy's percentiles as the reference, to 1e-9 ms); the table shows them."""
    import pyarrow.parquet as pq

    (tmp_path / "s.toml").write_text(SHORT)
    p = run(["run", "s.toml", "--out", "res", "--no-plots"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "latency under load" in p.stdout
    s = json.loads((tmp_path / "res" / "summary.json").read_text())
    t = pq.read_table(tmp_path / "res" / "pings.parquet").to_pydict()
    # probes at 0, 0.2, ..., 8.0 s (the end is inclusive)
    assert t["seq"] == list(range(41))
    after = [
        r for tt, r in zip(t["time_s"], t["rtt_ms"], strict=True) if tt >= 2.0 and r is not None
    ]
    rtts = [r for r in after if not math.isnan(r)]
    ps = s["pings"]
    assert ps["received"] == len(rtts) > 20
    assert ps["sent"] == sum(1 for tt in t["time_s"] if tt >= 2.0)
    assert ps["mean_ms"] == pytest.approx(sum(rtts) / len(rtts), abs=1e-9)
    for key, q in (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99)):
        assert ps[key] == pytest.approx(_percentile(rtts, q), abs=1e-9)
    # queues build: RTTs above the 40 ms base, the ping's flows entry has them too
    assert min(rtts) > 40.0
    assert ps["groups"]["probe"]["received"] == ps["received"]
    fl = [f for f in s["flows"] if f["kind"] == "ping"]
    assert len(fl) == 1 and fl[0]["rtt_samples"] == ps["received"]


def test_bad_output_and_ping_keys_are_one_line(tmp_path):
    """``[output] flent`` and the ping keys are checked by the schema: one line, exit 2."""
    (tmp_path / "s.toml").write_text(SHORT + '\n[output]\nflent = "yes"\n')
    assert_bad_input(
        ["run", "s.toml", "--out", "res"], ['output.flent = "yes": must be true or false'], tmp_path
    )
    (tmp_path / "p.toml").write_text(SHORT.replace('kind = "ping"', 'kind = "ping"\nsize = 10'))
    assert_bad_input(
        ["run", "p.toml", "--out", "res"], ["flows[2].size = 10: must be a whole number"], tmp_path
    )


@pytest.fixture(scope="module")
def rrul(tmp_path_factory):
    """The rrul preset, shortened to 20 s (TCP 5-15 s), run with --flent."""
    d = tmp_path_factory.mktemp("rrul")
    sets = ["duration=20s"]
    for i in range(8):
        sets.append(f"flows.{i}.stop=15s")
    args = ["run", str(PRESETS / "rrul.toml"), "--out", "res", "--no-plots", "--flent"]
    for s in sets:
        args += ["--set", s]
    p = run(args, d, timeout=300)
    assert p.returncode == 0, p.stderr
    files = list((d / "res").glob("*.flent.gz"))
    assert len(files) == 1, list((d / "res").iterdir())
    return d, files[0]


def test_flent_file_name_and_format(rrul):
    """``rrul-DATE.rrul.flent.gz``: gzipped JSON with Flent's keys and series names."""
    d, f = rrul
    assert f.name.startswith("rrul-") and f.name.endswith(".rrul.flent.gz")
    data = json.loads(gzip.open(f, "rt").read())
    assert data["version"] == 4
    md = data["metadata"]
    for key in ("NAME", "TITLE", "LENGTH", "STEP_SIZE", "TIME", "EGRESS_INFO"):
        assert key in md, key
    assert md["NAME"] == "rrul" and md["STEP_SIZE"] == 0.2
    assert md["EGRESS_INFO"]["qdiscs"][0]["name"] == "fq_codel"
    assert len(data["x_values"]) == 100  # 0.2 .. 20 s
    want = {f"TCP {d} {m}" for d in ("upload", "download") for m in ("BE", "BK", "CS5", "EF")}
    want |= {"Ping (ms) UDP EF", "Ping (ms) UDP BK", "Ping (ms) UDP BE", "Ping (ms) ICMP"}
    want |= {"TCP upload sum", "TCP download sum", "TCP upload avg", "TCP totals", "Ping (ms) avg"}
    assert want <= set(data["results"])
    for v in data["results"].values():
        assert len(v) == len(data["x_values"])


@needs_flent
def test_flent_loads_aqmlab_numbers(rrul):
    """Flent's own loader reads the file; its series are aqmlab's numbers: each TCP series
    integrates to the flow's delivered bytes (``summary.json`` ``bytes_delivered``, to 1e-6
    relative), each ping series' raw values are ``pings.parquet``'s answered probes, and
    the sum series is the sum of the flows'."""
    import pyarrow.parquet as pq
    from flent import resultset

    d, f = rrul
    r = resultset.load(str(f))
    s = json.loads((d / "res" / "summary.json").read_text())
    step = r.meta("STEP_SIZE")
    assert r.meta("NAME") == "rrul"
    by_name = {g["name"]: g["group"] for g in s["groups"]}
    for name in ("TCP upload BE", "TCP download EF"):
        flow = next(fl for fl in s["flows"] if fl["group"] == by_name[name])
        mbits = sum(v for v in r.series(name) if v is not None) * step
        assert mbits == pytest.approx(flow["bytes_delivered"] * 8 / 1e6, rel=1e-6)
    up = [r.series(f"TCP upload {m}") for m in ("BE", "BK", "CS5", "EF")]
    for i, v in enumerate(r.series("TCP upload sum")):
        assert v == pytest.approx(sum(u[i] for u in up), abs=1e-9)
    pings = pq.read_table(d / "res" / "pings.parquet").to_pydict()
    fid = next(fl["id"] for fl in s["flows"] if fl["group"] == by_name["Ping (ms) ICMP"])
    mine = [
        rtt
        for fl, rtt in zip(pings["flow"], pings["rtt_ms"], strict=True)
        if fl == fid and rtt is not None and not math.isnan(rtt)
    ]
    theirs = [x["val"] for x in r.raw_values["Ping (ms) ICMP"]]
    assert theirs == mine and len(mine) > 90


@needs_flent
@pytest.mark.parametrize("plot", ["all_scaled", "ping_cdf", "totals", "box_totals"])
def test_flent_plots_the_file_headless(rrul, plot, tmp_path):
    """``flent -i FILE -p PLOT -o x.png`` (Flent 2.3 from PyPI, MPLBACKEND=Agg) draws it.

    Flent leaves its ``--delay`` (5 s by default) out at both ends of a CDF; the plot drawn
    with 1 s must differ from one whose delay cuts every sample (an empty CDF), so the
    probes' RTTs are really on it."""
    _, f = rrul
    env = dict(os.environ, MPLBACKEND="Agg")

    def draw(delay: int) -> bytes:
        out = tmp_path / f"{plot}-{delay}.png"
        p = subprocess.run(
            [_flent_bin(), "-i", str(f), "-p", plot, "--delay", str(delay), "-o", str(out)],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        png = out.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(png) > 10_000
        return png

    drawn = draw(1)
    if plot == "ping_cdf":
        assert drawn != draw(1000)


@pytest.mark.parametrize(
    "name", ["rrul", "rrul_be", "tcp_nup", "tcp_ndown", "rtt_fair", "cubic_bbr"]
)
def test_presets_are_valid_scenarios_named_as_flent(name):
    """Every preset parses, is named as its Flent test and has a ping group."""
    from aqmlab.scenario import load_scenario

    sc = load_scenario(PRESETS / f"{name}.toml")
    assert sc.name == name
    kinds = [g["kind"] for g in sc.normalized["flows"]]
    assert "ping" in kinds and "tcp" in kinds


def test_rtt_fair_hosts_follow_the_presets_order():
    """Flent's rtt_fair pairs its labels (BE1, BE2, BK1, BK2) with ``HOSTS`` in order, so
    ``HOSTS`` lists the hosts as the uploads come (sorted names gave h100ms first and Flent
    then found no data for any series); each host's ping carries its own base RTT."""
    from aqmlab.flent import build_flent, run_sampled
    from aqmlab.scenario import load_scenario
    from aqmlab.sim import Simulation

    sc = load_scenario(PRESETS / "rtt_fair.toml", overrides=["duration=7s", "warmup=1s"])
    sim = Simulation(sc)
    samples = run_sampled(sim)
    data = build_flent(sim.result(), samples, sc)
    assert data["metadata"]["HOSTS"] == ["h40ms", "h60ms", "h100ms", "h200ms"]
    for host, base in (("h40ms", 40), ("h60ms", 60), ("h100ms", 100), ("h200ms", 200)):
        label = {"h40ms": "ICMP1", "h60ms": "ICMP2", "h100ms": "ICMP3", "h200ms": "ICMP4"}[host]
        vals = [v for v in data["results"][f"Ping (ms) {label} {host}"] if v is not None]
        assert vals and base <= min(vals) < base + 1
