"""The emulated link's options on ``aqmlab shell`` and ``aqmlab emulate``: the capture of the
real packets (``--pcap``), netem on each direction (``--netem``, ``--reverse-netem``,
``reverse_netem``), and the option declarations both commands share
(``python/aqmlab/cli/link_options.py``).

The tests that run the emulator need root, /dev/net/tun and the programs they use (Debian's
tshark, iputils ping); each skips saying what is missing, and checks that its run left no
namespace or device behind. The others run anywhere.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import AQMLAB  # noqa: E402
from test_shell import ENV, _bad, _shell, emu, needs  # noqa: E402


def _ping_rtts(text: str) -> list[float]:
    return [float(m) for m in re.findall(r"time=([\d.]+) ms", text)]


# --- the capture ------------------------------------------------------------------------------


@emu
@needs("tshark", "ping")
def test_shell_capture_matches_the_links_counters(tmp_path):
    """``aqmlab shell --pcap --out DIR``: DIR/capture.pcapng holds the real packets at both TUN
    devices. tshark (Wireshark) reads it with IPv4 checksum validation on: no malformed
    packet, no expert error, every IPv4 checksum good. The packets per device and direction
    equal the forwarder's own counters exactly: read from the inside's device = the uplink's
    arrivals, written to the far side's = the uplink's releases, read from the far side's =
    the downlink's arrivals, written back to the inside's = the downlink's releases. Three pings,
    then a burst of 300 UDP datagrams into a 2-packet buffer, which drops most of them, so that
    arrivals and releases differ; the last second lets the link drain, so that the uplink's
    releases are its arrivals less its drops."""
    out = tmp_path / "res"
    blast = (
        "import os, socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "[s.sendto(bytes(1000), (os.environ['AQMLAB_PEER'], 9)) for _ in range(300)]"
    )
    p = _shell(["--rate", "1Mbps", "--rtt", "20ms", "--buffer", "2", "--pcap", "--out",
                str(out), "--quiet", "--", "sh", "-c",
                f'ping -q -c 3 -i 0.2 "$AQMLAB_PEER" && {sys.executable} -c "{blast}" && sleep 1'])  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert not list(tmp_path.glob(".*aqmlab-tmp*")), "the temporary capture was moved"
    f = out / "capture.pcapng"
    from aqmlab.pcap import read_pcapng

    cap = read_pcapng(f)
    assert [i["name"] for i in cap.interfaces] == ["senders", "receivers"]
    s = json.loads((out / "summary.json").read_text())
    e, up, down = s["emulation"], s["links"]["uplink"], s["links"]["downlink"]
    assert e["captured"] == {"senders": sum(q[0] == 0 for q in cap.packets),
                             "receivers": sum(q[0] == 1 for q in cap.packets)}  # fmt: skip
    expert = subprocess.run(
        ["tshark", "-r", str(f), "-o", "ip.check_checksum:TRUE", "-q", "-z", "expert,error"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "Errors" not in expert, expert
    rows = subprocess.run(
        ["tshark", "-r", str(f), "-o", "ip.check_checksum:TRUE", "-T", "fields",
         "-e", "frame.interface_name", "-e", "ip.src", "-e", "ip.checksum.status",
         "-e", "_ws.malformed"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(rows) == len(cap.packets)
    # an ICMP error quotes the packet it answers: its outer header's fields come first
    fields = [r.split("\t") for r in rows]
    assert all(set(r[2].split(",")) == {"1"} and r[3] == "" for r in fields), (
        "IPv4 checksums good (quoted headers too), none malformed"
    )
    by = Counter((r[0], r[1].split(",")[0]) for r in fields)
    inside, far = "10.203.0.1", "10.203.1.1"
    assert by[("senders", inside)] == up["arrivals"]
    assert by[("receivers", inside)] == e["timing"]["forward"]["packets"]
    assert by[("receivers", far)] == down["arrivals"]
    assert by[("senders", far)] == e["timing"]["reverse"]["packets"]
    assert sum(by.values()) == len(rows), by  # no other address
    assert up["drops"] > 0 and up["arrivals"] > 200, up
    assert e["timing"]["forward"]["packets"] == up["arrivals"] - up["drops"]


# --- netem on each direction ------------------------------------------------------------------


@emu
@needs("ping")
def test_shell_netem_on_each_direction(tmp_path):
    """``--netem "delay 30ms"`` on the uplink and ``--reverse-netem "delay 20ms"`` on the
    downlink of a 40 ms link: every ping RTT on the idle link is 40 + 30 + 20 = 90 ms, within
    [90, 92) (as the idle-link ping test's 2 ms of host and serialisation time); each link
    reports its own netem stage and its settings."""
    out = tmp_path / "res"
    p = _shell(["--rate", "10Mbps", "--rtt", "40ms", "--netem", "delay 30ms",
                "--reverse-netem", "delay 20ms", "--out", str(out), "--quiet", "--",
                "sh", "-c", 'ping -c 5 -i 0.2 "$AQMLAB_PEER"'])  # fmt: skip
    assert p.returncode == 0, p.stderr
    rtts = _ping_rtts(p.stdout)
    assert len(rtts) == 5 and all(90.0 <= r < 92.0 for r in rtts), rtts
    s = json.loads((out / "summary.json").read_text())
    assert s["shell"]["uplink"]["netem"] == "delay 30ms"
    assert s["shell"]["downlink"]["netem"] == "delay 20ms"
    for name in ("uplink", "downlink"):
        link = s["links"][name]
        assert link["netem_drops"] == 0 and link["tx_packets"] >= 5, link


def test_downlink_netem_is_the_reverse_netem(tmp_path):
    """The downlink's netem (no root needed): a file's ``reverse_netem``, replaced by
    ``--reverse-netem``; the uplink's ``netem`` stays on the uplink. A bad string is named as
    the ``--reverse-netem`` option."""
    from aqmlab.cli.shell import downlink_scenario
    from aqmlab.scenario import load_scenario

    (tmp_path / "s.toml").write_text(
        '[dumbbell]\nrate = "10Mbps"\nnetem = "delay 5ms"\nreverse_netem = "loss 1%"\n[[flows]]\n'
    )
    up = load_scenario(tmp_path / "s.toml")
    d = downlink_scenario(up).normalized["dumbbell"]
    assert d["netem"] == "loss 1%" and not d.get("reverse_netem")
    d = downlink_scenario(up, netem="delay 3ms").normalized["dumbbell"]
    assert d["netem"] == "delay 3ms"
    (tmp_path / "s.toml").write_text('[dumbbell]\nrate = "1Mbps"\nnetem = "delay 5ms"\n[[flows]]\n')
    d = downlink_scenario(load_scenario(tmp_path / "s.toml")).normalized["dumbbell"]
    assert not d.get("netem")
    with pytest.raises(ValueError, match=r"^--reverse-netem = "):
        downlink_scenario(up, netem="wobble 3")


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--netem", "wobble 3", "--", "true"], "error: --netem = "),
        (["--reverse-netem", "delay", "--", "true"], "error: --reverse-netem = "),
        (["--pcap", "--", "true"], "error: --pcap: needs --out"),
    ],
)
def test_bad_link_options_are_one_line(tmp_path, args, start):
    """Bad netem strings and ``--pcap`` without ``--out``: one line naming the option, exit
    status 2, nothing created."""
    assert _bad(args).startswith(start)
    assert list(tmp_path.iterdir()) == []


def test_netem_with_a_scenario_file_is_refused(tmp_path):
    """``--netem`` beside a scenario file is refused as the other link options are (the file
    says it; ``--set dumbbell.netem=...``)."""
    (tmp_path / "s.toml").write_text("[dumbbell]\n[[flows]]\n")
    line = _bad([str(tmp_path / "s.toml"), "--netem", "delay 1ms", "--", "true"])
    assert line.startswith("error: --netem: not with a scenario file")


def test_emulate_and_shell_declare_the_link_options_alike():
    """Both commands take each shared link option (``link_options.SHARED``) with the same
    flag, type, default and help, so that they cannot drift apart."""
    import typer.main
    from aqmlab.cli import app
    from aqmlab.cli.link_options import SHARED

    cmd = typer.main.get_command(app)
    params = {name: {p.name: p for p in cmd.commands[name].params} for name in ("emulate", "shell")}
    for key in SHARED:
        a, b = params["emulate"][key], params["shell"][key]
        assert (a.opts, a.type.name, a.default, a.help, a.multiple) == (
            b.opts, b.type.name, b.default, b.help, b.multiple
        ), key  # fmt: skip


def test_dumbbell_reverse_netem_delays_the_acks(tmp_path):
    """``aqmlab dumbbell --reverse-netem "delay 10ms"`` (simulator; no root needed): the
    scenario written has ``reverse_netem``, and a window-limited flow (rwnd 2, no delayed ACKs,
    no queue) has a mean RTT 10 ms longer than without it, within 10 us (the mean is over the
    samples inside the statistics window, and the 10 ms shift moves which samples those are:
    3 us here)."""
    rtt = {}
    for name, extra in (("plain", []), ("netem", ["--reverse-netem", "delay 10ms"])):
        out = tmp_path / name
        p = subprocess.run(
            [*AQMLAB, "dumbbell", "--flows", "1", "--rtt", "40ms", "--rwnd", "2", "--no-delack",
             "--duration", "2s", "--no-plots", "--quiet", "--out", str(out), *extra],
            capture_output=True, text=True, env=ENV, timeout=120,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        rtt[name] = _flows(out)["rtt_ms_mean"][0]
    assert 'reverse_netem = "delay 10ms"' in (tmp_path / "netem" / "scenario.toml").read_text()
    assert abs(rtt["netem"] - rtt["plain"] - 10.0) < 1e-2, rtt


def _flows(out: Path):
    import pandas as pd

    return pd.read_parquet(out / "flows.parquet")


# --- the emulator's reverse netem -------------------------------------------------------------


@emu
def test_emulate_reverse_netem_on_real_tcp(tmp_path):
    """``aqmlab emulate --reverse-netem``: the ACK direction becomes the simulator's
    ``R2->R1`` (drop-tail, the side buffer, the bottleneck's rate) with a netem stage.
    ``loss 1%``: its netem drops are a binomial 1 % of the ACKs it transmitted (alpha = 0.01);
    ``delay 10ms``: real CUBIC's minimum RTT is the configured 30 ms plus 10 ms (within 1 ms:
    the host's time and the ACK's serialisation), as is the simulator's RTT of a
    window-limited flow on the same path (within 3 ms: its data packet's serialisation at
    8 Mbit/s, 1.5 ms, and its access links')."""
    common = ["--flows", "2", "--rate", "8Mbps", "--rtt", "30ms", "--aqm", "codel",
              "--duration", "5s", "--warmup", "1.5s", "--quiet", "--no-plots"]  # fmt: skip

    def emulate(extra, out):
        p = subprocess.run([*AQMLAB, "emulate", *common, "--cc", "cubic", *extra, "--out",
                            str(out)], capture_output=True, text=True, env=ENV, timeout=90)  # fmt: skip
        assert p.returncode == 0, p.stderr
        return json.loads((out / "summary.json").read_text())

    s = emulate(["--reverse-netem", "loss 1%"], tmp_path / "loss")
    rev = s["links"]["reverse"]
    n = rev["tx_packets"]
    sd = (n * 0.01 * 0.99) ** 0.5
    assert n > 1000 and abs(rev["netem_drops"] - 0.01 * n) < 2.5758 * sd, rev
    s = emulate(["--reverse-netem", "delay 10ms"], tmp_path / "delay")
    assert s["links"]["reverse"]["netem_drops"] == 0
    emu_min = min(f["rtt_ms_min"] for f in s["flows"])
    assert 40.0 <= emu_min < 41.0, s["flows"]
    out = tmp_path / "sim"
    # the simulator's flow, window-limited (rwnd 2: no queue), has the path's RTT as its mean
    p = subprocess.run(
        [*AQMLAB, "dumbbell", "--flows", "1", "--rate", "8Mbps", "--rtt", "30ms", "--rwnd", "2",
         "--duration", "3s", "--cc", "cubic", "--reverse-netem", "delay 10ms", "--quiet",
         "--no-plots", "--out", str(out)], capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    sim = _flows(out)["rtt_ms_mean"][0]
    print(f"minimum RTT: emulated {emu_min:.2f} ms, simulated {sim:.2f} ms")
    assert abs(sim - emu_min) < 3.0, (sim, emu_min)
