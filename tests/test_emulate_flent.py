"""Ping flows and Flent data files from the emulator (``aqmlab emulate --flent``) and from
``aqmlab shell --flent`` (iputils ``ping -D``, ``iperf3 -J``), read by Flent 2.3 itself.

The emulation tests need root and /dev/net/tun (CI has both) and run in real time (about 40 s
in all); each skips saying what is missing. The parsers of the tools' output and the bad input
run anywhere.
"""

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
from badinput import AQMLAB, ROOT  # noqa: E402
from idle_rtt import STALL_MS, assert_idle_rtts  # noqa: E402

ENV = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python"))
ENV.pop("AQMLAB_PEER", None)
PRESETS = ROOT / "scenarios" / "flent"
#: The far side's address in ``aqmlab shell`` (docs/shell.md).
PEER = "10.203.1.1"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "emulation needs root (network namespaces, TUN devices)"
    if not Path("/dev/net/tun").exists():
        return "emulation needs /dev/net/tun"
    return None


emu = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def _flent_bin() -> str | None:
    exe = Path(sys.executable).parent / "flent"
    return str(exe) if exe.exists() else shutil.which("flent")


needs_flent = pytest.mark.skipif(
    _flent_bin() is None, reason="Flent is not installed (pip install flent==2.3.0, dev extra)"
)


def needs(program: str):
    return pytest.mark.skipif(
        shutil.which(program) is None,
        reason=f"{program} not installed (bash scripts/install-debian-packages.sh)",
    )


def _aqmlab(args: list[str], timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*AQMLAB, *args], capture_output=True, text=True, env=ENV, timeout=timeout
    )


def _plot(path: Path, plot: str, out: Path, delay: int) -> None:
    """``flent -i FILE -p PLOT -o PNG`` headless; ``--delay``: Flent cuts that many seconds
    at both ends of a CDF (its tests' DELAY, 5 s by default, longer than these runs)."""
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run(
        [_flent_bin(), "-i", str(path), "-p", plot, "--delay", str(delay), "-o", str(out)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


# --- the emulator ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rrul(tmp_path_factory):
    """The rrul preset emulated for 8 s (TCP 1-7 s, warm-up 1 s) with --flent."""
    if _why_not():
        pytest.skip(_why_not())
    d = tmp_path_factory.mktemp("emurrul")
    args = ["emulate", str(PRESETS / "rrul.toml"), "--out", str(d / "res"), "--no-plots"]
    args += ["--flent", "--set", "duration=8s", "--set", "warmup=1s"]
    for i in range(8):
        args += ["--set", f"flows.{i}.start=1s", "--set", f"flows.{i}.stop=7s"]
    p = _aqmlab(args)
    assert p.returncode == 0, p.stderr
    assert "latency under load" in p.stdout
    files = list((d / "res").glob("*.flent.gz"))
    assert len(files) == 1, list((d / "res").iterdir())
    return d / "res", files[0]


@emu
def test_emulated_rrul_writes_a_flent_file_of_real_traffic(rrul):
    """``rrul-DATE.rrul.flent.gz`` with Flent's series names; its metadata says it is from
    the emulator and the qdisc; the stopped flows carry nothing before 1 s or after 7 s."""
    res, f = rrul
    assert f.name.startswith("rrul-") and f.name.endswith(".rrul.flent.gz")
    data = json.loads(gzip.open(f, "rt").read())
    md = data["metadata"]
    assert md["NAME"] == "rrul" and md["STEP_SIZE"] == 0.2
    assert md["AQMLAB"]["source"] == "emulator" and "emulation" in md["NOTE"]
    assert md["EGRESS_INFO"]["qdiscs"][0]["name"] == "fq_codel"
    assert len(data["x_values"]) == 40  # 0.2 .. 8 s
    want = {f"TCP {d} {m}" for d in ("upload", "download") for m in ("BE", "BK", "CS5", "EF")}
    want |= {"Ping (ms) UDP EF", "Ping (ms) UDP BK", "Ping (ms) UDP BE", "Ping (ms) ICMP"}
    want |= {"TCP upload sum", "TCP download sum", "TCP totals", "Ping (ms) avg"}
    assert want <= set(data["results"])
    x = data["x_values"]
    for name in ("TCP upload BE", "TCP download EF"):
        v = data["results"][name]
        assert all(b == 0 for t, b in zip(x, v, strict=True) if t <= 1.0 or t > 7.2), v
        assert sum(b for t, b in zip(x, v, strict=True) if 2 < t <= 7) > 0
    s = json.loads((res / "summary.json").read_text())
    # the stop closes the window: 7 s - (1 s + jitter), as the simulator's
    up = next(fl for fl in s["flows"] if fl["kind"] == "tcp")
    assert 5.98 <= up["window_s"] <= 6.0, up
    assert s["links"]["bottleneck"]["utilization"] > 0.5


@emu
@needs_flent
def test_flent_loads_the_emulators_numbers(rrul):
    """Flent's loader reads the file and its series are aqmlab's numbers: each TCP series
    integrates to the bytes the receiver read (``bytes_delivered``, to 1e-9 relative: the
    per-step counts add up to the total exactly); each ping series' raw values are
    ``pings.parquet``'s echoes, and their mean over the probes sent after the warm-up is
    ``summary.json``'s ``pings`` group mean (to 1e-9 ms)."""
    import pyarrow.parquet as pq
    from flent import resultset

    res, f = rrul
    r = resultset.load(str(f))
    s = json.loads((res / "summary.json").read_text())
    step = r.meta("STEP_SIZE")
    by_name = {g["name"]: g["group"] for g in s["groups"]}
    for name in ("TCP upload BE", "TCP upload EF", "TCP download BK"):
        flow = next(fl for fl in s["flows"] if fl["group"] == by_name[name])
        mbits = sum(v for v in r.series(name) if v is not None) * step
        assert flow["bytes_delivered"] > 0
        assert mbits == pytest.approx(flow["bytes_delivered"] * 8 / 1e6, rel=1e-9)
    pings = pq.read_table(res / "pings.parquet").to_pydict()
    for name in ("Ping (ms) ICMP", "Ping (ms) UDP EF"):
        fid = next(fl["id"] for fl in s["flows"] if fl["group"] == by_name[name])
        mine = [
            (t, rtt)
            for fl, t, rtt in zip(pings["flow"], pings["time_s"], pings["rtt_ms"], strict=True)
            if fl == fid and rtt is not None and not math.isnan(rtt)
        ]
        theirs = [x["val"] for x in r.raw_values[name]]
        assert sorted(theirs) == sorted(rtt for _, rtt in mine) and len(mine) >= 30
        after = [rtt for t, rtt in mine if t >= s["warmup_s"]]
        assert s["pings"]["groups"][name]["mean_ms"] == pytest.approx(
            sum(after) / len(after), abs=1e-9
        )
        # fq_codel keeps the probes out of the bulk flows' queues: near the 40 ms base
        assert 40.0 <= min(theirs) and s["pings"]["groups"][name]["p50_ms"] < 50


@emu
@needs_flent
@pytest.mark.parametrize("plot", ["all_scaled", "ping_cdf", "totals", "box_totals"])
def test_flent_plots_the_emulated_file_headless(rrul, plot, tmp_path):
    """``flent -i FILE -p all_scaled`` (and ``ping_cdf``, ``totals``, ``box_totals``) draw the
    emulator's file."""
    _, f = rrul
    _plot(f, plot, tmp_path / f"{plot}.png", delay=1)
    if plot == "ping_cdf":  # the probes are on it: an all-cut CDF (empty) draws otherwise
        _plot(f, plot, tmp_path / "empty.png", delay=1000)
        assert (tmp_path / f"{plot}.png").read_bytes() != (tmp_path / "empty.png").read_bytes()


IDLE = """name = "idle"
duration = "3s"
warmup = "0s"
[dumbbell]
rate = "10Mbps"
rtt = "40ms"
buffer = 100
[aqm]
type = "codel"
[[flows]]
name = "Ping (ms) UDP EF"
kind = "ping"
interval = "100ms"
dscp = "EF"
start = 0
start_jitter = 0
[[flows]]
name = "back"
kind = "ping"
interval = "100ms"
direction = "reverse"
start = 0
start_jitter = 0
"""


@emu
def test_idle_path_pings_are_the_base_rtt_and_carry_their_dscp(tmp_path):
    """On an idle 40 ms path the probes' RTTs are those of the path (``idle_rtt``: none below
    40 ms, the median within 2 ms, three in four within 4 ms): the propagation delay plus the
    serialisation of two 64-byte packets at 10 Mb/s on the link (0.1 ms) and the programs'
    and forwarder's scheduling. Forward and reverse probers both; none lost; the forward probes and
    their echoes carry DSCP EF (46) in the capture, the reverse ones 0."""
    import pyarrow.parquet as pq
    from aqmlab.pcap import read_pcapng

    (tmp_path / "s.toml").write_text(IDLE)
    out = tmp_path / "res"
    p = _aqmlab(["emulate", str(tmp_path / "s.toml"), "--out", str(out), "--quiet", "--pcap"])
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    t = pq.read_table(out / "pings.parquet").to_pydict()
    assert set(t["flow"]) == {0, 1}
    rtts = [r for r in t["rtt_ms"] if r is not None and not math.isnan(r)]
    assert len(rtts) == len(t["rtt_ms"]) >= 2 * 29, t
    assert_idle_rtts(rtts, 40.0)
    assert s["pings"]["lost"] == 0 and s["pings"]["groups"]["back"]["received"] >= 29
    kinds = {fl["kind"] for fl in s["flows"]}
    assert kinds == {"ping"} and s["fairness"]["jain"] is None
    cap = read_pcapng(out / "capture.pcapng")
    tos = {}
    assert {i["linktype"] for i in cap.interfaces} == {1}  # Ethernet frames
    for _, _, frame, _ in cap.packets:
        pkt = frame[14:]
        if pkt[9] != 17:  # UDP
            continue
        ihl = (pkt[0] & 0x0F) * 4
        sport, dport = int.from_bytes(pkt[ihl : ihl + 2]), int.from_bytes(pkt[ihl + 2 : ihl + 4])
        assert 5202 in (sport, dport)
        from_inside = pkt[12:15] == bytes([10, 203, 0])  # the senders' namespace
        if dport == 5202:
            key = ("probe", "fwd" if from_inside else "rev")
        else:
            key = ("echo", "rev" if from_inside else "fwd")
        tos.setdefault(key, set()).add(pkt[1] >> 2)
    assert tos[("probe", "fwd")] == {46} and tos[("echo", "fwd")] == {46}, tos
    assert tos[("probe", "rev")] == {0} and tos[("echo", "rev")] == {0}, tos


LOADED = """name = "loaded"
duration = "6s"
warmup = "2s"
[dumbbell]
rate = "10Mbps"
rtt = "40ms"
buffer = 50
[aqm]
type = "droptail"
[[flows]]
count = 2
cc = "cubic"
start = 0
[[flows]]
name = "probe"
kind = "ping"
interval = "50ms"
start = 0
start_jitter = 0
"""


@emu
def test_pings_under_load_see_the_queue(tmp_path):
    """Behind two CUBIC uploads filling a 50-packet drop-tail buffer at 10 Mb/s, a probe waits
    in the same FIFO as the data: the 99th percentile RTT is at most 40 ms + a full buffer
    (50 x 1.2 ms) + a scheduling stall (``idle_rtt.STALL_MS``), and the mean excess over 40 ms after the warm-up is within 30 % (+0.5 ms) of the
    bottleneck's mean queueing delay over the same window (a probe samples the queue at its
    arrival; the link's mean weights every dequeued packet)."""
    (tmp_path / "s.toml").write_text(LOADED)
    out = tmp_path / "res"
    p = _aqmlab(["emulate", str(tmp_path / "s.toml"), "--out", str(out), "--quiet", "--no-plots"])
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    g = s["pings"]["groups"]["probe"]
    assert g["received"] >= 70 and g["p99_ms"] <= 40 + 60 + STALL_MS, g
    excess, queue = g["mean_ms"] - 40.0, link["queue_delay_ms"]["mean"]
    print(f"ping excess {excess:.2f} ms, queue delay {queue:.2f} ms")
    assert queue > 10, link  # the flows keep a standing queue
    assert abs(excess - queue) <= 0.3 * queue + 0.5, (excess, queue)


# --- aqmlab shell --flent -------------------------------------------------------------------


@emu
@needs("ping")
@needs_flent
def test_shell_ping_writes_a_flent_ping_file(tmp_path):
    """``aqmlab shell --out DIR --flent -- ping -D ...``: the reply lines become Flent's ``ping``
    test's ``Ping (ms) ICMP`` series (each reply a raw value, those of the idle 40 ms link as
    ``idle_rtt`` bounds them), which ``flent -p ping`` and ``-p ping_cdf`` draw; ping's output still reaches the
    terminal."""
    from flent import resultset

    out = tmp_path / "res"
    p = _aqmlab(["shell", "--rtt", "40ms", "--out", str(out), "--flent", "--quiet", "--",
                 "ping", "-D", "-n", "-c", "12", "-i", "0.2", PEER])  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "icmp_seq=12" in p.stdout
    files = list(out.glob("ping-*.shell.flent.gz"))
    assert len(files) == 1, list(out.iterdir())
    r = resultset.load(str(files[0]))
    vals = [x["val"] for x in r.raw_values["Ping (ms) ICMP"]]
    assert len(vals) == 12, vals
    assert_idle_rtts(vals, 40.0)
    assert r.meta("AQMLAB")["source"] == "shell" and r.meta("STEP_SIZE") == 0.2
    assert r.meta("SERIES_META")["Ping (ms) ICMP"]["LOST"] == 0
    for plot in ("ping", "ping_cdf"):
        _plot(files[0], plot, tmp_path / f"{plot}.png", delay=0)


@emu
@needs("iperf3")
@needs_flent
def test_shell_iperf3_writes_a_flent_tcp_file(tmp_path):
    """``aqmlab shell --out DIR --flent -- iperf3 -c PEER -J -P 2``: one ``TCP upload::k``
    series per stream (iperf3's interval figures), ``TCP upload sum`` their sum; Flent's
    ``totals`` draws it; after the first second the series' mean is near the 10 Mbit/s link
    (iperf3's sender counts the bytes its socket took in each 0.5 s interval, which swing
    around the link's rate as the socket buffer fills and drains: one interval measured 12.5
    Mbit/s, so single intervals are not bounded)."""
    from flent import resultset

    out = tmp_path / "res"
    p = _aqmlab(["shell", "--rate", "10Mbps", "--rtt", "20ms", "--out", str(out), "--flent",
                 "--quiet", "--peer-command", "iperf3 -s -1", "--",
                 "iperf3", "-c", PEER, "-t", "4", "-P", "2", "-J", "-i", "0.5"])  # fmt: skip
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    files = list(out.glob("tcp_nup-*.shell.flent.gz"))
    assert len(files) == 1, list(out.iterdir())
    r = resultset.load(str(files[0]))
    assert r.meta("NAME") == "tcp_nup" and r.meta("STEP_SIZE") == pytest.approx(0.5, abs=0.01)
    for k in (1, 2):
        assert len(r.series(f"TCP upload::{k}")) == len(doc["intervals"])
    streams = [sum(st["bits_per_second"] for st in iv["streams"]) / 1e6 for iv in doc["intervals"]]
    total = r.series("TCP upload sum")
    assert total == pytest.approx(streams, rel=1e-9)
    late = total[2:]
    assert len(late) >= 4 and 8.0 < sum(late) / len(late) < 10.5, total
    _plot(files[0], "totals", tmp_path / "totals.png", delay=0)


def _bad(args: list[str]) -> str:
    p = subprocess.run([*AQMLAB, "shell", *args], capture_output=True, text=True, env=ENV,
                       timeout=30)  # fmt: skip
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--flent", "--", "true"], "error: --flent: needs --out DIR"),
        (["--out", "{tmp}/r", "--flent", "--", "true"],
         "error: COMMAND = 'true': --flent reads the output of ping (with -D) and iperf3"),
        (["--out", "{tmp}/r", "--flent", "--", "ping", "-c", "1", PEER],
         "error: COMMAND = 'ping -c 1 10.203.1.1': --flent needs ping's -D"),
        (["--out", "{tmp}/r", "--flent", "--", "iperf3", "-c", PEER],
         "error: COMMAND = 'iperf3 -c 10.203.1.1': --flent needs iperf3's -J"),
        (["--out", "{tmp}/r", "--flent", "--", "iperf3", "-c", PEER, "-J", "-u"],
         "error: COMMAND = 'iperf3 -c 10.203.1.1 -J -u': --flent reads TCP iperf3 runs only"),
        (["--out", "{tmp}/r", "--flent", "--", "iperf3", "-c", PEER, "-J", "--bidir"],
         "error: COMMAND = 'iperf3 -c 10.203.1.1 -J --bidir': --flent reads one-way iperf3"),
    ],
)  # fmt: skip
def test_shell_flent_with_an_unknown_tool_is_one_line(tmp_path, args, start):
    """``--flent`` with a command whose output aqmlab does not read: one line naming the
    command, exit status 2, nothing created."""
    for tool in ("ping", "iperf3", "true"):
        if tool in args and shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert _bad(args).startswith(start)
    assert list(tmp_path.iterdir()) == []


# --- the parsers (no emulation) -------------------------------------------------------------

PING_D = """PING 10.203.1.1 (10.203.1.1) 56(84) bytes of data.
[1795749293.065805] 64 bytes from 10.203.1.1: icmp_seq=1 ttl=64 time=40.3 ms
[1795749293.265710] 64 bytes from 10.203.1.1: icmp_seq=2 ttl=64 time=40.5 ms
[1795749293.665681] 64 bytes from 10.203.1.1: icmp_seq=4 ttl=64 time=41.0 ms

--- 10.203.1.1 ping statistics ---
4 packets transmitted, 3 received, 25% packet loss, time 610ms
"""


def test_ping_output_becomes_a_ping_series():
    """Each ``ping -D`` reply is a raw value stamped with its arrival; the step is ``-i``; at
    each x the mean of the replies that arrived in the step; the missing reply is LOST."""
    from aqmlab.flent_tools import ping_flent

    data = ping_flent(PING_D, ["ping", "-D", "-i", "0.2", "10.203.1.1"])
    name = "Ping (ms) ICMP"
    raw = data["raw_values"][name]
    assert [x["val"] for x in raw] == [40.3, 40.5, 41.0]
    assert raw[0]["t"] == pytest.approx(1795749293.065805)
    assert data["metadata"]["STEP_SIZE"] == 0.2
    t0 = 1795749293.065805 - 0.0403
    assert data["metadata"]["TIME"].startswith("2026-11-27T")
    # arrivals 0.0403, 0.2402, 0.6402 s after the first send: steps 1, 2 and 4
    assert data["results"][name] == [40.3, 40.5, None, 41.0]
    assert data["x_values"] == pytest.approx([0.2, 0.4, 0.6000000000000001, 0.8])
    assert data["metadata"]["SERIES_META"][name]["LOST"] == 1
    assert data["metadata"]["SERIES_META"][name]["MEAN_VALUE"] == pytest.approx(
        (40.3 + 40.5 + 41.0) / 3
    )
    assert raw[-1]["t"] - t0 == pytest.approx(0.640176, abs=1e-6)


def test_iperf3_json_becomes_throughput_series():
    """``iperf3 -J``'s intervals: one series per stream (``TCP download::k`` with ``-R``),
    Mbit/s, the step the interval; the sum is Flent's ``TCP download sum``."""
    from aqmlab.flent_tools import iperf3_flent

    def iv(a, b, rates):
        return {
            "streams": [
                {"socket": s, "start": a, "end": b, "bits_per_second": r}
                for s, r in zip((5, 7), rates, strict=True)
            ],
            "sum": {"start": a, "end": b, "bits_per_second": sum(rates)},
        }

    doc = {
        "start": {"test_start": {"reverse": 1}, "timestamp": {"timesecs": 1795749294}},
        "intervals": [iv(0, 1.0, [4e6, 5e6]), iv(1.0, 2.0, [4.5e6, 4.5e6])],
    }
    data = iperf3_flent("noise\n" + json.dumps(doc), ["iperf3", "-c", "x", "-J", "-R"])
    md = data["metadata"]
    assert md["NAME"] == "tcp_ndown" and md["STEP_SIZE"] == 1.0
    assert md["TEST_PARAMETERS"] == {"upload_streams": "0", "download_streams": "2"}
    assert data["results"]["TCP download::1"] == [4.0, 4.5]
    assert data["results"]["TCP download::2"] == [5.0, 4.5]
    assert data["results"]["TCP download sum"] == [9.0, 9.0]
    assert data["x_values"] == [1.0, 2.0]
