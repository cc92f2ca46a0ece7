"""``aqmlab emulate`` end to end: real kernel TCP through the userspace bottleneck.

Needs root and /dev/net/tun (CI has both); skipped with the reason otherwise. Every test
checks that no namespace, device or process is left behind: ``ip netns list`` and ``ip link``
are the same before and after, on success, on SIGINT, on SIGTERM, and a stale set from a
killed run is removed by the next one. Small rates and short runs (about 60 s in all).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import AQMLAB, ROOT, default_sigint  # noqa: E402

if os.geteuid() != 0:
    pytest.skip("emulation needs root (network namespaces, TUN devices)", allow_module_level=True)
if not Path("/dev/net/tun").exists():
    pytest.skip("emulation needs /dev/net/tun", allow_module_level=True)

ENV = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python"))


def _state() -> tuple[str, list[str]]:
    """(aqmlab namespaces, link names) of the root namespace."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    ours = sorted(ln.split()[0] for ln in ns.splitlines() if ln.startswith("aqmlab-"))
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = sorted(ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines())
    return " ".join(ours), names


def _emulate(args, **kw):
    return subprocess.run(
        [*AQMLAB, "emulate", *args], capture_output=True, text=True, env=ENV, **kw
    )


def _emulate_file(tmp_path, toml: str) -> dict:
    """Emulate the scenario file ``toml``; check it succeeded and left nothing behind; return
    its summary."""
    before = _state()
    (tmp_path / "s.toml").write_text(toml)
    out = tmp_path / "res"
    p = _emulate([str(tmp_path / "s.toml"), "--out", str(out), "--quiet", "--no-plots"], timeout=60)
    assert p.returncode == 0, p.stderr
    assert _state() == before
    return json.loads((out / "summary.json").read_text())


def test_codel_ecn_marks_real_packets_and_cleans_up(tmp_path):
    """CoDel with ECN on real CUBIC flows: the link is used, CE marks replace drops, the
    goodputs add up to what the link carried, the RTT is the configured one plus queueing."""
    before = _state()
    out = tmp_path / "res"
    p = _emulate(
        ["--flows", "2", "--rate", "8Mbps", "--rtt", "30ms", "--aqm", "codel", "--ecn",
         "--cc", "cubic", "--duration", "5s", "--warmup", "1.5s", "--out", str(out), "--quiet"],
        timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert _state() == before
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["aqm"] == "codel"
    assert link["utilization"] > 0.85, link
    assert link["marks"] > 0 and link["drops"] == 0, link
    assert link["arrivals"] == link["enqueued"]
    goodput = sum(f["goodput_bps"] for f in s["flows"])
    carried = link["utilization"] * 8e6
    # payload / IP bytes of a 1500-byte packet with TCP timestamps: 1448 / 1500
    assert 0.85 * carried < goodput <= 1.0 * carried, (goodput, carried)
    for f in s["flows"]:
        assert f["cc"] == "cubic" and f["ecn"] and f["ecn_negotiated"]
        # configured 30 ms plus at most the queue's p99 and some scheduling slack
        assert 30.0 <= f["rtt_ms_mean"] < 30.0 + link["queue_delay_ms"]["p99"] + 10.0, f
    t = s["emulation"]["timing"]
    assert t["forward"]["packets"] > 1000 and t["write_failures"] == 0
    assert s["emulation"]["traffic_realtime"] is True  # root: SCHED_FIFO granted
    assert s["emulation"]["ecn"]["not_ect_drops"] + s["emulation"]["ecn"]["ect_drops"] == 0
    assert {"snd", "rcv"} <= set(s["emulation"]["sysctls"])
    assert s["emulation"]["sysctls"]["snd"]["net.ipv4.tcp_ecn"] == "2"
    import pyarrow.parquet as pq

    ts = pq.read_table(out / "timeseries.parquet").to_pydict()
    assert 480 <= len(ts["time_s"]) <= 500  # 10 ms samples over 5 s
    assert sum(ts["marks"]) >= link["marks"]
    assert len(pq.read_table(out / "flows.parquet")) == 2


def test_parse_counters():
    """``/proc/net/netstat`` and ``/proc/net/snmp`` rows as ``nstat`` names them; other rows
    and the header lines are not counters."""
    from aqmlab.emu.netns import parse_counters

    text = (
        "TcpExt: SyncookiesSent TCPLossProbes TCPTimeouts\n"
        "TcpExt: 0 12 3\n"
        "IpExt: InNoRoutes InOctets\n"
        "IpExt: 0 999\n"
        "Ip: Forwarding DefaultTTL\n"
        "Ip: 1 64\n"
        "Tcp: RtoAlgorithm RtoMin MaxConn RetransSegs\n"
        "Tcp: 1 200 -1 157\n"
    )
    assert parse_counters(text) == {
        "TcpExtSyncookiesSent": 0,
        "TcpExtTCPLossProbes": 12,
        "TcpExtTCPTimeouts": 3,
        "TcpRtoAlgorithm": 1,
        "TcpRtoMin": 200,
        "TcpMaxConn": -1,
        "TcpRetransSegs": 157,
    }


def test_droptail_overflows_without_ecn_and_removes_stale_sets(tmp_path):
    """Drop-tail with a 10-packet buffer and Reno: losses, no marks; a namespace set left by
    a killed run (its pid is gone, a process still inside) is removed by this run."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"aqmlab-{dead.pid}-snd"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    sleeper = subprocess.Popen(["ip", "netns", "exec", stale, "sleep", "300"])
    try:
        time.sleep(0.2)
        out = tmp_path / "res"
        p = _emulate(
            ["--flows", "3", "--rate", "5Mbps", "--rtt", "20ms", "--buffer", "10", "--cc",
             "newreno", "--duration", "4s", "--warmup", "1s", "--out", str(out), "--quiet",
             "--no-plots", "--sysctl", "net.ipv4.tcp_recovery=0"],
            timeout=60,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        assert stale not in _state()[0]
        assert sleeper.wait(timeout=5) == -signal.SIGKILL
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        subprocess.run(["ip", "netns", "del", stale], capture_output=True)
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["drops"] > 0 and link["marks"] == 0, link
    assert link["utilization"] > 0.7
    assert all(f["cc"] == "reno" and not f["ecn_negotiated"] for f in s["flows"])
    assert s["emulation"]["ecn"]["ect_arrivals"] == 0
    assert sum(f["retransmits"] for f in s["flows"]) > 0
    # the kernel's own counters over the window: its retransmissions are the flows' (the
    # flows' figures come from TCP_INFO snapshots taken by the sender at the warm-up's end,
    # the counters by the emulator within 50 ms of it), its data segments the bottleneck's
    # arrivals (a retransmission the kernel counts in both)
    tc = s["emulation"]["tcp_counters"]
    retx = sum(f["retransmits"] for f in s["flows"])
    assert 0.8 * retx <= tc["snd"]["TcpRetransSegs"] <= 1.2 * retx + 5, (tc, retx)
    assert 0.9 * link["arrivals"] <= tc["snd"]["TcpOutSegs"] <= 1.1 * link["arrivals"] + 10
    assert tc["rcv"]["TcpInSegs"] > 0.8 * link["arrivals"] - link["drops"]
    # --sysctl: set in the senders' namespace only, and recorded
    sysctls = s["emulation"]["sysctls"]
    assert sysctls["snd"]["net.ipv4.tcp_recovery"] == "0"
    assert sysctls["rcv"]["net.ipv4.tcp_recovery"] != "0"


def test_sysctl_the_kernel_refuses_is_bad_input(tmp_path):
    """A value the kernel rejects is known only once the namespace exists: one line naming
    the key and value, exit status 2, nothing left behind and nothing written."""
    before = _state()
    out = tmp_path / "res"
    p = _emulate(
        ["--flows", "1", "--duration", "2s", "--out", str(out), "--sysctl",
         "net.ipv4.tcp_recovery=abc"],
        timeout=30,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert (
        p.stderr.strip()
        .splitlines()[-1]
        .startswith("error: --sysctl net.ipv4.tcp_recovery = 'abc': the kernel refused it")
    ), p.stderr
    assert _state() == before
    assert not out.exists()


MIXED = """name = "mixed"
duration = "4s"
warmup = "1s"
[dumbbell]
rate = "6Mbps"
rtt = "20ms"
buffer = 100
pkt_size = 1500
[aqm]
type = "fq_codel"
[[flows]]
cc = "bbr"
start = 0
[[flows]]
cc = "cubic"
ecn = true
start = 0
"""


def test_scenario_file_per_group_cc_and_ecn(tmp_path):
    """A TOML dumbbell: one BBR group (a kernel-only algorithm) without ECN, one CUBIC group
    with ECN, under FQ-CoDel: each flow runs its group's algorithm, only the ECN group's
    packets are marked (marks appear, and FQ-CoDel reports its flow queues)."""
    s = _emulate_file(tmp_path, MIXED)
    assert [(f["cc"], f["ecn"]) for f in s["flows"]] == [("bbr", False), ("cubic", True)]
    link = s["links"]["bottleneck"]
    assert link["aqm"] == "fq_codel" and link["active_flows"]["max"] >= 1
    assert link["marks"] > 0
    assert all(f["goodput_bps"] > 0.5e6 for f in s["flows"])


CLASSES = """name = "classes"
duration = "5s"
warmup = "1.5s"
[dumbbell]
rate = "4Mbps"
rtt = "20ms"
buffer = 100
pkt_size = 1500
[aqm]
type = "drr"
classes = [{name = "a", weight = 1}, {name = "b", weight = 2}]
[[flows]]
count = 2
cc = "cubic"
class = "a"
start = 0
[[flows]]
count = 2
cc = "cubic"
class = "b"
start = 0
"""


def test_drr_classes_reported_per_class(tmp_path):
    """DRR with classes a:1 and b:2, two CUBIC flows in each (``class = "NAME"``): the
    summary has the simulator's per-class keys, the classes add up to the link's counters,
    and b sends twice a's bytes. Tolerance 15 %: DRR splits 2:1 exactly while both classes
    are backlogged (a 100-packet buffer against a 7-packet BDP), so only moments when a
    class's queue drains after losses can move the ratio."""
    link = _emulate_file(tmp_path, CLASSES)["links"]["bottleneck"]
    cls = link["classes"]
    assert sorted(cls) == ["a", "b"]
    keys = {"queue_delay_ms", "enqueued", "drops", "marks", "tx_bytes", "tx_packets"}
    for c in cls.values():
        assert keys <= set(c) and set(c["queue_delay_ms"]) == {"mean", "p50", "p95", "p99"}
        assert c["queue_delay_ms"]["mean"] > 0 and c["marks"] == 0
    for k in ("enqueued", "drops"):
        assert cls["a"][k] + cls["b"][k] == link[k], (k, cls, link)
    # the link counts a transmission when it ends, a class when it starts: one apart at most
    assert abs(cls["a"]["tx_packets"] + cls["b"]["tx_packets"] - link["tx_packets"]) <= 1
    ratio = cls["b"]["tx_bytes"] / cls["a"]["tx_bytes"]
    assert 1.7 < ratio < 2.3, ratio
    # class_timeseries.parquet as the simulator writes it: a row per class at every instant
    # of timeseries.parquet, the classes adding up to the link's queue, drops and marks
    import pyarrow.parquet as pq

    ts = pq.read_table(tmp_path / "res" / "timeseries.parquet").to_pydict()
    cts = pq.read_table(tmp_path / "res" / "class_timeseries.parquet").to_pydict()
    n = len(ts["time_s"])
    assert n >= 4 and cts["class"] == ["a", "b"] * n
    assert set(cts["link"]) == {"bottleneck"}
    assert cts["time_s"][::2] == ts["time_s"] == cts["time_s"][1::2]
    for col in ("queue_pkts", "queue_bytes", "drops", "marks"):
        pairs = zip(cts[col][::2], cts[col][1::2], strict=True)
        assert [a + b for a, b in pairs] == ts[col], col
    assert sum(cts["tx_bytes"][1::2]) > 1.5 * sum(cts["tx_bytes"][::2])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_removes_everything(tmp_path, sig):
    before = _state()
    out = tmp_path / "res"
    p = subprocess.Popen(
        [*AQMLAB, "emulate", "--flows", "2", "--rate", "5Mbps", "--duration", "60s",
         "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        preexec_fn=default_sigint,
    )  # fmt: skip
    mine = f"aqmlab-{p.pid}-rcv"
    deadline = time.monotonic() + 20
    while mine not in _state()[0] and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2.0)  # traffic running
    assert mine in _state()[0], "the run did not start"
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    assert "Traceback" not in err, err
    assert _state() == before
    assert not out.exists()
    procs = subprocess.run(["pgrep", "-f", "aqmlab.emu.traffic"], capture_output=True, text=True)
    assert procs.stdout.strip() == ""


def test_not_root_is_one_line(tmp_path, monkeypatch, capsys):
    """The environment check, seen as an unprivileged user would (euid faked in-process)."""
    from aqmlab.cli import main

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SystemExit) as e:
        main(["emulate", "--duration", "2s", "--out", str(tmp_path / "r")])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "error: emulate needs root (network namespaces, TUN devices); running as uid 1000"
    ]
    assert not (tmp_path / "r").exists()


def _square_trace() -> str:
    """A square wave in Mahimahi's format: 24 Mb/s (2 opportunities per ms) for 500 ms, then
    6 Mb/s (one every other ms) for 500 ms, repeating."""
    times = [t for t in range(1, 501) for _ in range(2)] + list(range(502, 1001, 2))
    return "\n".join(map(str, times)) + "\n"


TRACE = """name = "trace"
duration = "12s"
warmup = "3s"
[dumbbell]
rate_trace = "square.trace"
rtt = "20ms"
buffer = 60
pkt_size = 1500
[[flows]]
count = 8
cc = "cubic"
start = 0
"""


def test_trace_link_agrees_with_the_simulator(tmp_path):
    """The emulator serves a trace with the simulator's code (experiment::service): on the
    same square-wave trace and scenario, real Linux CUBIC through the emulator and the
    simulator's CUBIC agree on the utilization (within 2 points) and the mean queueing delay
    (within 15 %: the delay is the buffer's backlog over the phase's rate, which both keep near
    full; the rest is the two TCPs' difference)."""
    (tmp_path / "square.trace").write_text(_square_trace())
    emu = _emulate_file(tmp_path, TRACE)["links"]["bottleneck"]
    (tmp_path / "s.toml").write_text(TRACE)
    p = subprocess.run(
        [*AQMLAB, "run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "sim"), "--quiet",
         "--no-plots"], capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    sim = json.loads((tmp_path / "sim" / "summary.json").read_text())["links"]["bottleneck"]
    e, s = emu["queue_delay_ms"]["mean"], sim["queue_delay_ms"]["mean"]
    print(f"utilization emu {emu['utilization']:.4f} sim {sim['utilization']:.4f}; "
          f"mean queue delay emu {e:.2f} ms sim {s:.2f} ms")  # fmt: skip
    assert abs(emu["utilization"] - sim["utilization"]) <= 0.02, (emu, sim)
    assert abs(e - s) <= 0.15 * s, (e, s)
    # the emulated link follows the trace: 24 Mb/s in the first half of each second, 6 Mb/s
    # in the second (means over the samples inside each phase, after the warm-up, within 5 %)
    import pyarrow.parquet as pq

    ts = pq.read_table(tmp_path / "res" / "timeseries.parquet").to_pandas()
    ts = ts[ts["time_s"] > 3.0]
    frac = (ts["time_s"] % 1.0).round(6)
    fast = ts[(frac > 0.02) & (frac < 0.49)]["throughput_bps"].mean()
    slow = ts[(frac > 0.52) & (frac < 0.99)]["throughput_bps"].mean()
    assert abs(fast / 24e6 - 1) < 0.05 and abs(slow / 6e6 - 1) < 0.05, (fast, slow)


def test_netem_loss_and_delay_on_real_tcp(tmp_path):
    """``--netem``: the emulated bottleneck runs the simulator's netem stage
    (experiment::netem). ``loss 1%``: its netem drops are a binomial 1 % of the packets it
    transmitted (alpha = 0.01); ``delay 10ms``: real CUBIC's mean RTT is the configured 30 ms
    plus 10 ms plus queueing (as the CoDel test's bound), and nothing is dropped by netem."""
    before = _state()
    common = ["--flows", "2", "--rate", "8Mbps", "--rtt", "30ms", "--aqm", "codel",
              "--cc", "cubic", "--duration", "5s", "--warmup", "1.5s", "--quiet", "--no-plots"]  # fmt: skip
    out = tmp_path / "loss"
    p = _emulate([*common, "--netem", "loss 1%", "--out", str(out)], timeout=60)
    assert p.returncode == 0, p.stderr
    link = json.loads((out / "summary.json").read_text())["links"]["bottleneck"]
    n = link["tx_packets"]
    sd = (n * 0.01 * 0.99) ** 0.5
    assert n > 1000 and abs(link["netem_drops"] - 0.01 * n) < 2.5758 * sd, link
    out = tmp_path / "delay"
    p = _emulate([*common, "--netem", "delay 10ms", "--out", str(out)], timeout=60)
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    link = s["links"]["bottleneck"]
    assert link["netem_drops"] == 0
    for f in s["flows"]:
        assert 40.0 <= f["rtt_ms_mean"] < 40.0 + link["queue_delay_ms"]["p99"] + 10.0, f
    assert _state() == before


TRACED = """name = "traced"
duration = "4s"
warmup = "1s"
cwnd_interval = "50ms"
[dumbbell]
rate = "5Mbps"
rtt = "20ms"
buffer = 10
pkt_size = 1500
[[flows]]
count = 1
cc = "reno"
start = "0s"
start_jitter = "0s"
cwnd_trace = true
[[flows]]
count = 1
cc = "reno"
start = "0s"
start_jitter = "0s"
"""


def test_cwnd_trace_of_kernel_tcp(tmp_path):
    """``cwnd_trace``: the sender samples the kernel's window (``TCP_INFO``) every
    ``cwnd_interval`` into ``cwnd.parquet``, as the simulator writes it. A 10-packet buffer
    at 5 Mb/s: the traced Reno flow starts at Linux's initial window of 10, overflows it in
    slow start, and its ``ssthresh`` becomes finite with the window below its peak; the
    untraced flow has no rows."""
    import math

    import pyarrow.parquet as pq

    _emulate_file(tmp_path, TRACED)
    c = pq.read_table(tmp_path / "res" / "cwnd.parquet").to_pydict()
    assert set(c) >= {"time_s", "flow", "cwnd", "ssthresh", "srtt_ms"}
    assert set(c["flow"]) == {0}
    t = c["time_s"]
    assert t == sorted(t) and 60 <= len(t) <= 81, len(t)  # 50 ms over 4 s, from the start
    assert all(abs(b - a - 0.05) < 1e-6 for a, b in zip(t, t[1:], strict=False)), t[:5]
    assert c["cwnd"][0] == 10.0 and math.isinf(c["ssthresh"][0])
    finite = [i for i, s in enumerate(c["ssthresh"]) if not math.isinf(s)]
    assert finite, "no loss in slow start"
    peak = max(c["cwnd"][: finite[0] + 1])
    assert c["cwnd"][finite[0]] < peak and c["ssthresh"][finite[0]] < peak
    # the kernel's smoothed RTT, in ms: never below the 20 ms path, and typically the path
    # plus at most the buffer (10 x 2.4 ms) and 10 ms of slack. Single samples also carry
    # delays outside the emulated path (the receiver's delayed ACKs, softirq work deferred on
    # a busy machine: one CI run saw more than 54 ms), so the typical value is the median and
    # every sample is only held under 100 ms, which still fails a unit off by 1000.
    srtt = sorted(x for x in c["srtt_ms"] if not math.isnan(x))
    assert srtt and 20.0 <= srtt[0] and srtt[-1] < 100.0, srtt
    assert srtt[len(srtt) // 2] < 20.0 + 24.0 + 10.0, srtt
