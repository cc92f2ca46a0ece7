"""``aqmlab shell -- COMMAND`` and ``aqmlab emulate -- COMMAND``: real programs (Debian's iperf3,
curl, ping; Python's http.server) through the emulated link.

The tests that run the emulator need root, /dev/net/tun and the programs; each skips saying
which is missing. Every run checks that its own namespaces (``aqmlab-PID-*``) and TUN devices
(``aqmPIDs``/``aqmPIDr``) are gone afterwards, on every exit path: the command's exit, its
failure, its death by a signal, SIGINT/SIGTERM to aqmlab, a forwarder error. (Only this run's:
other runs may use the machine's namespaces at the same time.) The bad-input tests run anywhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import AQMLAB, ROOT, default_sigint  # noqa: E402
from idle_rtt import STALL_MS, assert_idle_rtts  # noqa: E402

ENV = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python"))
ENV.pop("AQMLAB_PEER", None)


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the emulator needs root (network namespaces, TUN devices)"
    if not Path("/dev/net/tun").exists():
        return "the emulator needs /dev/net/tun"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing"
    return None


emu = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def needs(*programs: str):
    """Skip unless the programs are installed (scripts/debian-packages.txt lists them)."""
    missing = [p for p in programs if shutil.which(p) is None]
    return pytest.mark.skipif(
        bool(missing),
        reason=f"{', '.join(missing)} not installed (bash scripts/install-debian-packages.sh)",
    )


def _leftovers(pid: int) -> list[str]:
    """This run's namespaces and devices still present."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = [ln.split()[0] for ln in ns.splitlines() if ln.startswith(f"aqmlab-{pid}-")]
    names += [
        n
        for n in (ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines())
        if n in (f"aqm{pid}s", f"aqm{pid}r")
    ]
    return names


def _shell(args: list[str], env=None, timeout=60, **kw):
    """Run ``aqmlab shell ARGS``; check that it left nothing behind."""
    p = subprocess.Popen(
        [*AQMLAB, "shell", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env or ENV, **kw,
    )  # fmt: skip
    out, err = p.communicate(timeout=timeout)
    assert _leftovers(p.pid) == [], err
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _wait_for_command(p: subprocess.Popen, name: str, timeout: float = 20) -> int:
    """The pid of the process ``name`` running inside ``p``'s inside namespace."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = subprocess.run(
            ["ip", "netns", "pids", f"aqmlab-{p.pid}-snd"], capture_output=True, text=True
        )
        for tok in r.stdout.split():
            try:
                if Path(f"/proc/{tok}/comm").read_text().strip() == name:
                    return int(tok)
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"{name} did not start inside the shell: {p.poll()}")


# --- what crosses the link --------------------------------------------------------------------


@emu
@needs("iperf3")
def test_iperf3_throughput_is_the_bottleneck_rate(tmp_path):
    """iperf3 (Debian's) from the inside to a server on the far side through 10 Mbit/s, 40 ms,
    then the reverse (``-R``: the server sends) through a 4 Mbit/s downlink. The receiver's
    goodput over the 5 s test is at most 1448/1500 of the rate (the payload of a 1500-byte
    packet with TCP timestamps; +1 % for iperf3's own timing of its interval) and at least
    90 % of it (slow start at 40 ms costs about 0.3 s of the 5 s). The uplink's statistics
    (--out) show the link full and the queue non-empty."""
    out = tmp_path / "res"
    cmd = 'iperf3 -c "$AQMLAB_PEER" -t 5 -J'
    p = _shell(["--rate", "10Mbps", "--rtt", "40ms", "--reverse-rate", "4Mbps",
                "--peer-command", "iperf3 -s -1", "--out", str(out), "--", "sh", "-c", cmd])  # fmt: skip
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"]
    print(f"iperf3 uplink: {got / 1e6:.3f} Mbit/s")
    assert 0.90 * 10e6 <= got <= 1448 / 1500 * 10e6 * 1.01, got
    s = json.loads((out / "summary.json").read_text())
    up, down = s["links"]["uplink"], s["links"]["downlink"]
    assert up["rate_bps"] == 10e6 and down["rate_bps"] == 4e6
    assert up["tx_packets"] > 3000 and up["queue_delay_ms"]["p99"] > 1.0, up
    assert down["tx_packets"] > 500  # the ACKs
    assert s["shell"]["exit_status"] == 0 and s["shell"]["peer"] == "10.203.1.1"
    import pyarrow.parquet as pq

    ts = pq.read_table(out / "timeseries.parquet").to_pydict()
    assert set(ts["link"]) == {"uplink", "downlink"}
    # the downlink at its own rate
    p = _shell(["--rate", "10Mbps", "--rtt", "40ms", "--reverse-rate", "4Mbps",
                "--peer-command", "iperf3 -s -1", "--", "sh", "-c", cmd + " -R"])  # fmt: skip
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"]
    print(f"iperf3 downlink: {got / 1e6:.3f} Mbit/s")
    assert 0.90 * 4e6 <= got <= 1448 / 1500 * 4e6 * 1.01, got


@emu
@needs("iperf3")
def test_ecn_marks_instead_of_drops(tmp_path):
    """``--ecn --aqm codel``: the inside's connection asks for ECN (its route says ``features
    ecn``), the far side accepts, and CoDel marks the upload's packets instead of dropping them
    (a 1000-packet buffer, so that slow start never reaches the limit)."""
    out = tmp_path / "res"
    p = _shell(["--rate", "10Mbps", "--rtt", "40ms", "--aqm", "codel", "--ecn", "--buffer",
                "1000", "--peer-command", "iperf3 -s -1", "--out", str(out), "--quiet", "--",
                "sh", "-c", 'iperf3 -c "$AQMLAB_PEER" -t 4 > /dev/null'])  # fmt: skip
    assert p.returncode == 0, p.stderr
    s = json.loads((out / "summary.json").read_text())
    up = s["links"]["uplink"]
    assert up["aqm"] == "codel" and up["marks"] > 0 and up["drops"] == 0, up
    assert s["emulation"]["ecn"]["ect_arrivals"] > 1000, s["emulation"]["ecn"]


_RTT = re.compile(r"time=([0-9.]+) ms")


@emu
@needs("ping")
def test_ping_shows_the_rtt_and_the_queue(tmp_path):
    """ping on an idle link: the RTTs are the configured 40 ms plus two 84-byte serialisations
    (0.13 ms) and the forwarder's and kernel's scheduling (``idle_rtt``: none below 40 ms, the
    median within 2 ms, three in four within 4 ms). Under a CUBIC upload
    filling a 50-packet drop-tail buffer (60 ms of queue at 10 Mbit/s), ping's RTT is 40 ms plus
    the queue: every sample at most 40 + 60 ms plus a scheduling stall, and the mean excess over 40 ms within 30 %
    (+0.5 ms of scheduling) of the uplink's mean queueing delay over the same seconds (the
    forwarder's sojourn times; 25 samples of an oscillating queue). Measured: 7.8 ms against
    6.8 ms."""
    p = _shell(["--rate", "10Mbps", "--rtt", "40ms", "--", "ping", "-c", "20", "-i", "0.05",
                "10.203.1.1"])  # fmt: skip
    assert p.returncode == 0, p.stderr
    rtts = [float(x) for x in _RTT.findall(p.stdout)]
    assert len(rtts) == 20, rtts
    assert_idle_rtts(rtts, 40.0)
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed (bash scripts/install-debian-packages.sh)")
    out = tmp_path / "res"
    cmd = ('iperf3 -c "$AQMLAB_PEER" -t 9 > /dev/null & sleep 3; '
           'ping -c 25 -i 0.2 "$AQMLAB_PEER"; wait')  # fmt: skip
    p = _shell(["--rate", "10Mbps", "--rtt", "40ms", "--buffer", "50", "--peer-command",
                "iperf3 -s -1", "--out", str(out), "--", "sh", "-c", cmd])  # fmt: skip
    assert p.returncode == 0, p.stderr
    rtts = [float(x) for x in _RTT.findall(p.stdout)]
    assert len(rtts) >= 24 and min(rtts) >= 40.0 and max(rtts) <= 40 + 60 + STALL_MS, rtts
    import pyarrow.parquet as pq

    ts = pq.read_table(out / "timeseries.parquet").to_pandas()
    up = ts[(ts["link"] == "uplink") & (ts["time_s"] > 3.1) & (ts["time_s"] < 8.1)]
    queue = up["queue_delay_ms_mean"].mean()
    excess = sum(rtts) / len(rtts) - 40.0
    print(f"ping excess {excess:.1f} ms, uplink queue {queue:.1f} ms")
    assert queue > 2.0 and abs(excess - queue) <= 0.3 * queue + 0.5, (excess, queue)


@emu
@needs("curl")
def test_curl_fetches_from_a_server_on_the_far_side(tmp_path):
    """curl (Debian's) downloads 1 MB from Python's http.server started on the far side: the
    bytes arrive intact, no faster than the 8 Mbit/s downlink allows (1 MB x 8 / 8 Mbit/s = 1 s
    plus the handshakes' RTTs)."""
    (tmp_path / "www").mkdir()
    blob = os.urandom(1_000_000)
    (tmp_path / "www" / "blob").write_bytes(blob)
    server = (f"{sys.executable} -m http.server 8000 --bind \"$AQMLAB_PEER\" "
              f"--directory {tmp_path / 'www'}")  # fmt: skip
    got = tmp_path / "got"
    cmd = f'curl -sS -o {got} -w "%{{time_total}}" "http://$AQMLAB_PEER:8000/blob"'
    p = _shell(["--rate", "8Mbps", "--rtt", "20ms", "--peer-command", server, "--", "sh", "-c",
                cmd])  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert got.read_bytes() == blob
    assert float(p.stdout.strip()) >= 1.0, p.stdout


# --- the command's exit status, user, environment ---------------------------------------------


@emu
def test_exit_status_environment_and_user(tmp_path):
    """The command's exit status is aqmlab's (7; 143 = 128 + SIGTERM when a signal ended it);
    it keeps the caller's environment plus AQMLAB_PEER; under sudo (SUDO_UID/SUDO_GID) it runs
    as that user, not as root; its only route out is the uplink."""
    assert _shell(["--", "sh", "-c", "exit 7"]).returncode == 7
    assert _shell(["--", "sh", "-c", "kill -TERM $$"]).returncode == 143
    env = dict(ENV, SUDO_UID="65534", SUDO_GID="65534", AQMLAB_TEST_VAR="kept")
    p = _shell(["--", "sh", "-c", 'echo "$(id -u) $(id -g) $AQMLAB_TEST_VAR $AQMLAB_PEER"; '
                "ip route show default"], env=env)  # fmt: skip
    assert p.returncode == 0, p.stderr
    first, route = p.stdout.splitlines()[:2]
    assert first == "65534 65534 kept 10.203.1.1"
    assert route.startswith("default dev aqm") and "src 10.203.0.1" in route, route


@emu
def test_interactive_shell_on_a_terminal(tmp_path):
    """``aqmlab shell -- bash -i`` on a terminal (a pseudo-terminal here): bash reads the
    commands typed, sees AQMLAB_PEER, and its exit status is aqmlab's."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: aqmlab on the terminal
        os.environ.clear()
        os.environ.update(ENV)
        os.execv(AQMLAB[0], [*AQMLAB, "shell", "--quiet", "--", "bash", "--norc", "-i"])
    os.write(fd, b"echo peer=$AQMLAB_PEER; exit 3\n")
    out = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 3, out
    assert b"peer=10.203.1.1" in out, out
    assert _leftovers(pid) == []


@emu
def test_ctrl_z_stops_aqmlab_with_the_command(tmp_path):
    """Ctrl-Z on the terminal stops the command (``cat``); aqmlab takes the terminal back and
    stops too, as a job of the user's shell (no hang with a stopped command holding the
    terminal). Continued (SIGCONT, as ``fg`` sends), it gives the terminal back to the command,
    which reads what is typed next; Ctrl-D ends it with status 0."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(ENV)
        os.execv(AQMLAB[0], [*AQMLAB, "shell", "--quiet", "--", "cat"])

    def state(p: int) -> str:
        return Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]

    def wait_for(pred, what):
        deadline = time.monotonic() + 20
        while not pred():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    status = None
    try:
        wait_for(lambda: os.tcgetpgrp(fd) not in (0, pid), "cat never got the terminal")
        cat = os.tcgetpgrp(fd)
        os.write(fd, b"\x1a")  # Ctrl-Z
        wait_for(lambda: state(pid) == "T", "aqmlab did not stop with the command")
        assert state(cat) == "T" and os.tcgetpgrp(fd) == pid
        os.kill(pid, signal.SIGCONT)
        wait_for(lambda: os.tcgetpgrp(fd) == cat and state(cat) != "T", "not continued")
        os.write(fd, b"typed after fg\n\x04")
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert out.count(b"typed after fg") == 2, out  # the terminal's echo and cat's
    assert _leftovers(pid) == []


# --- cleanup on every exit path ---------------------------------------------------------------


@emu
def test_command_killed_cleans_up(tmp_path):
    """The command killed from outside (SIGKILL): aqmlab returns 137 and removes everything."""
    p = subprocess.Popen([*AQMLAB, "shell", "--out", str(tmp_path / "r"), "--", "sleep", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)  # fmt: skip
    os.kill(_wait_for_command(p, "sleep"), signal.SIGKILL)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 137, err
    assert _leftovers(p.pid) == []
    # the statistics of a session that ended are written
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["shell"]["exit_status"] == 137


@emu
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_aqmlab_ends_the_command_and_cleans_up(tmp_path, sig):
    """SIGINT or SIGTERM to aqmlab is passed on to the command; aqmlab exits with 128 + the
    signal, one line, no traceback, nothing written, nothing left."""
    out = tmp_path / "r"
    p = subprocess.Popen([*AQMLAB, "shell", "--out", str(out), "--", "sleep", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                         preexec_fn=default_sigint)  # fmt: skip
    child = _wait_for_command(p, "sleep")
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + sig, err
    assert "Traceback" not in err and err.strip().splitlines() == ["error: interrupted"], err
    assert not Path(f"/proc/{child}").exists()
    assert _leftovers(p.pid) == []
    assert not out.exists()


@emu
def test_forwarder_error_ends_the_session_and_cleans_up(tmp_path):
    """The inside's TUN device deleted under the forwarder: its read fails, the session ends
    with exit status 1 and the error in one line, the command is ended, nothing is left."""
    p = subprocess.Popen([*AQMLAB, "shell", "--", "sleep", "60"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=ENV)  # fmt: skip
    child = _wait_for_command(p, "sleep")
    subprocess.run(["ip", "-n", f"aqmlab-{p.pid}-snd", "link", "del", f"aqm{p.pid}s"], check=True)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 1, err
    assert err.strip().splitlines()[-1].startswith("error: forwarder: "), err
    assert not Path(f"/proc/{child}").exists()
    assert _leftovers(p.pid) == []


# --- aqmlab emulate -- COMMAND, and the emulator's reverse trace -----------------------------


@emu
@needs("ping")
def test_emulate_runs_a_command_beside_its_flows(tmp_path):
    """``aqmlab emulate ... -- ping``: ping runs in the senders' namespace with AQMLAB_PEER
    while the emulation's own flow fills the link (its RTT shows the queue: above 20 ms), its
    exit status is recorded; a command still running when the run ends is ended (SIGTERM:
    143) and recorded as such."""
    out = tmp_path / "res"
    p = subprocess.run(
        [*AQMLAB, "emulate", "--flows", "1", "--rate", "5Mbps", "--rtt", "20ms", "--duration",
         "4s", "--warmup", "1s", "--out", str(out), "--quiet", "--no-plots", "--", "sh", "-c",
         'sleep 1.5; ping -c 5 -i 0.2 "$AQMLAB_PEER"'],
        capture_output=True, text=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rtts = [float(x) for x in _RTT.findall(p.stdout)]
    assert len(rtts) == 5 and min(rtts) > 20.0, p.stdout
    s = json.loads((out / "summary.json").read_text())
    c = s["emulation"]["command"]
    assert c["exit_status"] == 0 and not c["ended_by_run"]
    assert s["links"]["bottleneck"]["utilization"] > 0.8
    p = subprocess.run(
        [*AQMLAB, "emulate", "--flows", "1", "--duration", "2s", "--out", str(tmp_path / "r2"),
         "--quiet", "--no-plots", "--", "sleep", "60"],
        capture_output=True, text=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    c = json.loads((tmp_path / "r2" / "summary.json").read_text())["emulation"]["command"]
    assert c == {"argv": ["sleep", "60"], "exit_status": 143, "ended_by_run": True}


def _half_outage_trace() -> str:
    """Mahimahi format: 12 Mbit/s (one opportunity per ms) in the first 500 ms of every second,
    nothing in the second 500 ms."""
    return "\n".join(map(str, range(1, 501))) + "\n1000\n"


REVERSE = """name = "reverse"
duration = "6s"
warmup = "1s"
[dumbbell]
rate = "8Mbps"
rtt = "20ms"
buffer = 100
pkt_size = 1500
reverse_rate_trace = "half.trace"
[[flows]]
count = 2
cc = "cubic"
start = 0
"""


@emu
def test_emulator_reverse_rate_trace_paces_the_acks(tmp_path):
    """``reverse_rate_trace`` in the emulator (refused before): the ACK direction follows the
    trace (a 500 ms outage every second), so the data direction, clocked by the ACKs, stalls
    during the outages: once its own queue has drained (at most 100 packets at 8 Mbit/s,
    150 ms, plus the RTT), its throughput in the rest of the outage is below 10 % of that in
    the open halves (measured: 21 % over the whole outage, drain included). The reverse link is reported (``links.reverse``) with the ACKs
    queued through the outages (mean queueing delay above 50 ms)."""
    (tmp_path / "half.trace").write_text(_half_outage_trace())
    (tmp_path / "s.toml").write_text(REVERSE)
    out = tmp_path / "res"
    p = subprocess.Popen(
        [*AQMLAB, "emulate", str(tmp_path / "s.toml"), "--out", str(out), "--quiet",
         "--no-plots"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert _leftovers(p.pid) == []
    s = json.loads((out / "summary.json").read_text())
    rev = s["links"]["reverse"]
    assert rev["aqm"] == "droptail" and rev["tx_packets"] > 100
    assert rev["queue_delay_ms"]["mean"] > 50.0, rev
    import pyarrow.parquet as pq

    ts = pq.read_table(out / "timeseries.parquet").to_pandas()
    fwd = ts[(ts["link"] == "bottleneck") & (ts["time_s"] > 1.0)]
    frac = (fwd["time_s"] % 1.0).round(6)
    open_ = fwd[(frac > 0.1) & (frac < 0.5)]["throughput_bps"].mean()
    shut = fwd[(frac > 0.7) & (frac < 0.99)]["throughput_bps"].mean()
    print(f"data throughput: open {open_ / 1e6:.2f} Mbit/s, ACK outage {shut / 1e6:.2f} Mbit/s")
    assert open_ > 2e6 and shut < 0.1 * open_, (open_, shut)
    assert set(ts["link"]) == {"bottleneck", "reverse"}


def test_downlink_follows_the_uplink_and_the_reverse_options(tmp_path):
    """The downlink's scenario (no root needed): from a file, the uplink's qdisc and buffer,
    the file's reverse_rate_trace with that trace's mean as its nominal rate (12 Mbit/s for
    one opportunity per ms, not the uplink trace's 18), no rate_changes; the --reverse-*
    options replace each setting; a bad one is named as the --reverse-* option."""
    from aqmlab.cli.shell import downlink_scenario
    from aqmlab.scenario import load_scenario

    (tmp_path / "up.trace").write_text("1\n1\n2\n")  # 3 opportunities per 2 ms: 18 Mbit/s
    (tmp_path / "down.trace").write_text("1\n")  # 12 Mbit/s
    (tmp_path / "s.toml").write_text(
        '[dumbbell]\nrate_trace = "up.trace"\nreverse_rate_trace = "down.trace"\n'
        'rtt = "30ms"\nbuffer = 50\n[aqm]\ntype = "codel"\ntarget = "2ms"\n[[flows]]\n'
    )
    up = load_scenario(tmp_path / "s.toml")
    assert up.normalized["dumbbell"]["rate"] == 18e6
    d = downlink_scenario(up).normalized
    assert d["dumbbell"]["rate"] == 12e6 and d["dumbbell"]["rate_trace"].endswith("down.trace")
    assert d["dumbbell"]["buffer"] == 50 and not d["dumbbell"].get("reverse_rate_trace")
    assert d["aqm"]["type"] == "codel" and d["aqm"]["target"] == 0.002
    d = downlink_scenario(up, rate="4Mbps", buffer=20, aqm="pie").normalized
    assert d["dumbbell"]["rate"] == 4e6 and d["dumbbell"]["buffer"] == 20
    assert d["aqm"]["type"] == "pie"
    # without a downlink trace: the uplink's nominal rate, fixed
    (tmp_path / "s.toml").write_text('[dumbbell]\nrate_trace = "up.trace"\n[[flows]]\n')
    d = downlink_scenario(load_scenario(tmp_path / "s.toml")).normalized["dumbbell"]
    assert d["rate"] == 18e6 and not d.get("rate_trace")
    with pytest.raises(ValueError, match=r"^--reverse-aqm-param target=-1ms: "):
        downlink_scenario(up, aqm_param={"target": "-1ms"})


# --- bad input (no root needed) ---------------------------------------------------------------


def _bad(args: list[str], env=None) -> str:
    p = subprocess.run([*AQMLAB, "shell", *args], capture_output=True, text=True,
                       env=env or ENV, timeout=30)  # fmt: skip
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--rate", "10", "--", "true"], "error: --rate = 10"),
        (["--reverse-rate", "fast", "--", "true"], "error: --reverse-rate = fast"),
        (["--reverse-aqm", "nope", "--", "true"], "error: --reverse-aqm"),
        (["--reverse-aqm", "codel", "--reverse-aqm-param", "target=-1ms", "--", "true"],
         "error: --reverse-aqm-param target=-1ms"),
        (["--aqm", "nope", "--", "true"], "error: --aqm"),
        (["--rate", "5Gbps", "--", "true"], "error: --rate = 5 Gb/s"),
        (["--", ], "error: COMMAND: missing"),
        (["--", "no-such-program-here"], "error: COMMAND = 'no-such-program-here': not found"),
        (["--", "./no/such/file"], "error: COMMAND = './no/such/file': not an executable"),
        (["--set", "seed=2", "--", "true"], "error: --set = 'seed=2': only with a scenario"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(tmp_path, args, start):
    """Bad options: one line naming the option and value, exit status 2, nothing created."""
    assert _bad(args).startswith(start)


def test_emulate_command_not_found_is_bad_input(tmp_path):
    """``aqmlab emulate -- NAME`` with no such program: one line, exit status 2, nothing
    written (checked before anything is created)."""
    p = subprocess.run(
        [*AQMLAB, "emulate", "--duration", "2s", "--out", str(tmp_path / "r"), "--",
         "no-such-program-here"], capture_output=True, text=True, env=ENV, timeout=30,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [
        "error: COMMAND = 'no-such-program-here': not found on PATH"
    ]
    assert not (tmp_path / "r").exists()


def test_nested_shell_is_refused(tmp_path):
    """A shell inside a shell (AQMLAB_PEER set) is refused: one line, exit status 2."""
    line = _bad(["--", "true"], env=dict(ENV, AQMLAB_PEER="10.203.1.1"))
    assert line.startswith("error: AQMLAB_PEER = 10.203.1.1: already inside an aqmlab shell")


@emu
def test_nested_shell_is_refused_even_under_sudo(tmp_path):
    """Inside a shell, ``aqmlab shell`` without AQMLAB_PEER (as after sudo's env_reset) still
    sees its network namespace and refuses; the outer shell returns the inner one's status."""
    inner = (
        f"env -u AQMLAB_PEER PYTHONPATH={ROOT / 'python'} {sys.executable} -m aqmlab shell -- true"
    )
    p = _shell(["--", "sh", "-c", inner])
    assert p.returncode == 2, p.stderr
    assert "error: network namespace = aqmlab-" in p.stderr, p.stderr


@emu
def test_peer_command_that_fails_is_bad_input(tmp_path):
    """A --peer-command that ends before listening: one line naming it, exit status 2, and
    the command never ran; nothing is left behind."""
    p = _shell(["--peer-command", "exit 3", "--", "sh", "-c", "echo ran"])
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "error: --peer-command = 'exit 3': ended with exit status 3 before the command started"
    )
    assert "ran" not in p.stdout


def test_not_root_is_one_line(tmp_path, monkeypatch, capsys):
    """The environment check, as an unprivileged user sees it (euid faked in-process)."""
    from aqmlab.cli import main

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.delenv("AQMLAB_PEER", raising=False)
    with pytest.raises(SystemExit) as e:
        main(["shell", "--", "true"])
    assert e.value.code == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: shell needs root (network namespaces, TUN devices); running as uid 1000"
    ]
