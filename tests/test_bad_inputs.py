"""Bad input to the simulator commands and the Python API: one line, exit 2, the key and value
named, no traceback, no output, a user's files untouched (harness: tests/badinput.py). The
design, fluid and PAQMAN commands have their own table in test_bad_inputs_theory.py.
"""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import (  # noqa: E402
    AQMLAB,
    ROOT,
    assert_bad_input,
    default_sigint,
    run,
    scratch,
    snapshot,
)

# Every dumbbell row runs with these (short, so a row that wrongly succeeds is quick to see).
DB = ["dumbbell", "--duration", "2s", "--flows", "2", "--out", "{tmp}/res"]

GOOD = """name = "ok"
duration = "2s"
[dumbbell]
rate = "10Mbps"
[[flows]]
count = 2
"""

DUMBBELL_ROWS = [
    (["--rate", "10"], ["--rate", "10", "give a unit, e.g. 10Mbps"]),
    (["--rate", "-10Mbps"], ["--rate", "-10Mbps"]),
    (["--rate", "0Mbps"], ["--rate", "0Mbps"]),
    (["--rate", "1e400bps"], ["--rate", "1e400bps", "not a finite rate"]),
    (["--rate", "10MBPS"], ["--rate", "10MBPS", "unknown rate unit"]),
    (["--rtt", "100"], ["--rtt", "100", "give a unit"]),
    (["--rtt", "abc"], ["--rtt", "abc"]),
    (["--duration", "0s"], ["--duration", "0s", "> 0"]),
    (["--warmup", "70s", "--duration", "60s"], ["warmup", "70s"]),
    (["--sample-interval", "1ns"], ["--sample-interval", "1ns", "GiB"]),
    (["--flows", "0"], ["--flows", "0"]),
    (["--access", "nope"], ["--access", "nope", "must be one of link, none"]),
    (["--flows", "abc"], ["--flows", "abc"]),
    (["--flows", "10000000"], ["--flows", "10000000", "GiB"]),
    (["--buffer", "0"], ["--buffer", "0"]),
    (["--pkt-size", "10"], ["--pkt-size", "10"]),
    (["--cc", "vegas"], ["--cc", "vegas"]),
    (["--aqm", "foo"], ["--aqm", "foo", "unknown AQM"]),
    (["--aqm", "codel", "--aqm-param", "tagret=5ms"], ["tagret", "unknown parameter", "codel"]),
    (["--aqm", "codel", "--aqm-param", "target=5"], ["target=5", "give a unit, e.g. 5ms"]),
    (["--aqm", "codel", "--aqm-param", "target=-5ms"], ["target=-5ms"]),
    (["--aqm", "codel", "--aqm-param", "target"], ["--aqm-param", "target", "key=value"]),
    (["--aqm", "red", "--aqm-param", "max_p=2"], ["max_p=2"]),
    (["--aqm", "pie", "--aqm-param", "ecn=maybe"], ["ecn=maybe", "true or false"]),
    (["--aqm", "paqman"], ["--aqm", "paqman", "policy", "required"]),
    (["--aqm", "paqman", "--aqm-param", "policy=nope.json"], ["policy=nope.json", "cannot read"]),
    (["--aqm", "paqman", "--aqm-param", "policy=notes.txt"], ["policy=notes.txt", "not a PAQMAN"]),
    (["--loss", "1.5"], ["--loss", "1.5"]),
    (["--seed", "-1"], ["seed", "-1"]),
    (["--init-cwnd", "0"], ["--init-cwnd", "0"]),
    (["--min-rto", "200"], ["--min-rto", "200", "give a unit"]),
    (["--rwnd", "0"], ["--rwnd", "0"]),
    (["--profile", "bsd"], ["--profile", "bsd", "must be one of linux, classic"]),
    (["--no-such-option", "1"], ["--no-such-option"]),
    # Classes of drr/wfq from the command line (--class NAME:WEIGHT[:AQM], --class-flows NAME=N).
    (["--aqm", "codel", "--class", "a:1"], ["--class", "'a:1'", "codel has no classes"]),
    (["--aqm", "wfq", "--class", "a"], ["--class", "'a'", "NAME:WEIGHT[:AQM]"]),
    (["--aqm", "wfq", "--class", "a:1:codel:5"], ["--class", "'a:1:codel:5'", "NAME:WEIGHT"]),
    (["--aqm", "wfq", "--class", "a:x"], ["--class", "'a:x'", "not a number"]),
    (["--aqm", "wfq", "--class", "a:0"], ["--class", "'a:0'", "(0, 1e6]"]),
    (["--aqm", "drr", "--class", "a:1e9"], ["--class", "'a:1e9'", "(0, 1e6]"]),
    (["--aqm", "drr", "--class", "a:1", "--class", "a:2"], ["'a:2'", "duplicate class name"]),
    (["--aqm", "drr", "--class", "a.b:1"], ["'a.b:1'", "without '.'"]),
    (["--aqm", "wfq", "--class", "a:1:foo"], ["'a:1:foo'", "unknown AQM 'foo'"]),
    (["--aqm", "drr", "--class-flows", "a=2"], ["--class-flows", "'a=2'", "--class"]),
    (
        ["--aqm", "drr", "--class", "a:1", "--class-flows", "z=2"],
        ["--class-flows", "'z=2'", "no class 'z'", "classes: a"],
    ),
    (["--aqm", "drr", "--class", "a:1", "--class-flows", "a=x"], ["'a=x'", "NAME=COUNT"]),
    (["--aqm", "drr", "--class", "a:1", "--class-flows", "a=-1"], ["'a=-1'", "COUNT >= 0"]),
    (["--aqm", "drr", "--class", "a:1", "--class-flows", "a=0"], ["'a=0'", "0 flows"]),
    (
        ["--aqm", "wfq", "--class", "a:1", "--class-flows", "a=1", "--class-flows", "a=2"],
        ["'a=2'", "given twice"],
    ),
    (
        ["--aqm", "drr", "--class", "a:1:codel", "--aqm-param", "classes.a.aqm.target=5"],
        ["classes.a.aqm.target=5", "give a unit"],
    ),
    (
        ["--aqm", "wfq", "--class", "a:1:codel", "--aqm-param", "classes.a.aqm.tagret=5ms"],
        ["tagret", "unknown parameter", "codel"],
    ),
    (
        ["--aqm", "wfq", "--class", "a:1", "--aqm-param", "classes.b.weight=2"],
        ["--aqm-param", "classes.b.weight", "classes: a"],
    ),
    # Parameters Linux's sch_sfq silently lowers, and values the qdiscs used to accept.
    (
        ["--aqm", "sfq", "--aqm-param", "divisor=64", "--aqm-param", "flows=128"],
        ["flows=128", "divisor (64)"],
    ),
    (
        ["--aqm", "sfq", "--aqm-param", "depth=10", "--aqm-param", "flows=4"]
        + ["--aqm-param", "limit=41"],
        ["limit=41", "depth x flows", "40 packets"],
    ),
    (["--aqm", "dualpi2", "--aqm-param", "target=0ms"], ["target=0ms", "(0, 4] s"]),
    (["--aqm", "codel", "--aqm-param", "control_law=fast"], ["control_law=fast", "linux, rfc"]),
    # A timer firing more than once per simulated microsecond is refused (sfq perturb=1ns hung).
    (["--aqm", "sfq", "--aqm-param", "perturb=1ns"], ["perturb=1ns", "microsecond"]),
    (["--aqm", "pie", "--aqm-param", "t_update=100ns"], ["t_update=100ns", "microsecond"]),
    (["--aqm", "ared", "--aqm-param", "interval=1ns"], ["interval=1ns", "microsecond"]),
    (["--aqm", "fq_pie", "--aqm-param", "t_update=1ns"], ["t_update=1ns", "microsecond"]),
    (["--aqm", "dualpi2", "--aqm-param", "tupdate=1ns"], ["tupdate=1ns", "microsecond"]),
    (["--aqm", "pi", "--aqm-param", "w=1e7"], ["w=1e7", "microsecond"]),
    (["--aqm", "sfc", "--aqm-param", "law_period=-5ms"], ["law_period=-5ms", "duration >= 0"]),
    # COBALT: Linux's reciprocal_scale takes a 32-bit interval; BLUE's steps are probabilities.
    (["--aqm", "cobalt", "--aqm-param", "interval=5s"], ["interval=5s", "32-bit"]),
    (["--aqm", "fq_cobalt", "--aqm-param", "p_inc=2"], ["p_inc=2", "probability"]),
    (["--aqm", "fq_cobalt", "--aqm-param", "flows=0"], ["flows=0"]),
    # CAKE's options by tc's names: modes, presets, overhead and rate are checked.
    (["--aqm", "cake", "--aqm-param", "flow_mode=quadruple"], ["quadruple", "triple-isolate"]),
    (["--aqm", "cake", "--aqm-param", "rtt=galactic"], ["galactic", "interplanetary"]),
    (["--aqm", "cake", "--aqm-param", "overhead=300B"], ["overhead=300B", "[-64, 256]"]),
    (["--aqm", "cake", "--aqm-param", "bandwidth=fast"], ["bandwidth", "fast"]),
    (["--aqm", "cake", "--aqm-param", "link_layer=adsl"], ["adsl", "pppoe-vcmux"]),
    (["--aqm", "cake", "--aqm-param", "ack_filter=maybe"], ["maybe", "ack-filter-aggressive"]),
]

# aqmlab emulate: every row fails before anything is created (no root needed to see it).
EMU = ["emulate", "--duration", "2s", "--flows", "2", "--out", "{tmp}/res"]
EMU_TOML = 'duration = "2s"\n[dumbbell]\nrate = "10Mbps"\n[[flows]]\ncount = 2\n'
EMULATE_ROWS = [
    (["--cc", "vegas"], ["--cc", "'vegas'", "the kernel offers"]),
    (["--rate", "10"], ["--rate", "10", "give a unit"]),
    (["--rtt", "-5ms"], ["--rtt", "-5ms"]),
    (["--flows", "0"], ["--flows", "0"]),
    (["--aqm", "foo"], ["--aqm", "foo", "unknown AQM"]),
    (["--aqm", "codel", "--aqm-param", "tagret=5ms"], ["tagret", "unknown parameter"]),
    (["--pkt-size", "100"], ["--pkt-size", "100", "MTU"]),
    (["--warmup", "5s"], ["warmup", "5s"]),
    (["--set", "flows.0.count=3"], ["--set", "flows.0.count=3", "scenario file"]),
    (["--sysctl", "net.ipv4.nope=1"], ["--sysctl", "net.ipv4.nope", "no such setting"]),
    (["--sysctl", "kernel.panic=1"], ["--sysctl", "kernel.panic", "net.ipv4"]),
    (["--sysctl", "tcp_recovery"], ["--sysctl", "'tcp_recovery'", "KEY=VALUE"]),
    # beyond what the emulator can run: ports, the forwarder's rate, a run too short
    (["--flows", "100000"], ["--flows", "100000", "ports"]),
    (["--rate", "10Gbps"], ["--rate", "10 Gb/s", "forwarder"]),
    (["--duration", "1ms"], ["--duration", "0.001", "at least 1 s"]),
]
EMULATE_FILE_ROWS = [
    (EMU_TOML, ["--rate", "5Mbps"], ["--rate", "not with a scenario file"]),
    (EMU_TOML, ["--set", "flows.0.count=0"], ["flows[0].count", "0"]),
    (EMU_TOML, ["--cc", "vegas"], ["--cc", "'vegas'", "the kernel offers"]),
    (EMU_TOML + 'cc = "vegas"\n', [], ["flows[0].cc", "'vegas'", "the kernel offers"]),
    (
        EMU_TOML.replace("count = 2", 'kind = "udp_cbr"\nrate = "1Mbps"'),
        [],
        ["flows[0].kind", "udp_cbr", "long-lived TCP"],
    ),
    (EMU_TOML + "size = 100000\n", [], ["flows[0].size", "100000", "long-lived"]),
    # ping groups: probes that hold the prober's flow id and sequence number, dumbbell hosts
    (
        EMU_TOML + '[[flows]]\nkind = "ping"\nsize = 30\n',
        [],
        ["flows[1].size = 30", "at least 36 bytes"],
    ),
    (
        EMU_TOML + '[[flows]]\nkind = "ping"\nextra_delay = "20ms"\n',
        [],
        ["flows[1].extra_delay", "not emulated"],
    ),
    # a TCP group's extra delay was silently left out before
    (EMU_TOML + 'extra_delay = "20ms"\n', [], ["flows[0].extra_delay", "not emulated"]),
    (EMU_TOML.replace('rate = "10Mbps"', 'rate = "10Mbps"\nloss = 0.01'), [], ["loss", "0.01"]),
    (
        EMU_TOML.replace('rate = "10Mbps"', 'rate = "10Mbps"\naccess = "none"'),
        [],
        ["dumbbell.access", '"none"', "simulator-only"],
    ),
    (
        EMU_TOML.replace('rate = "10Mbps"', 'rate = "10Mbps"\nrate_trace = "missing.trace"'),
        [],
        ["dumbbell.rate_trace", "missing.trace", "cannot read"],
    ),
    (
        EMU_TOML
        + '[[flows]]\ndirection = "reverse"\nclass = "b"\n'
        + '[reverse_aqm]\ntype = "drr"\nclasses = [{name = "a"}, {name = "b"}]\n',
        [],
        ["flows[1].class", "simulator-only"],
    ),
    (
        'duration = "2s"\n[parking_lot]\nhops = 2\nrate = "10Mbps"\n[[flows]]\ncount = 1\n',
        [],
        ["topology", "dumbbell"],
    ),
]


_KERNEL_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


@pytest.mark.skipif(
    _KERNEL_CC.exists() and "bbr3" in _KERNEL_CC.read_text().split(),
    reason="this kernel offers bbr3, so the emulator accepts it",
)
def test_emulate_refuses_bbr3_on_a_kernel_without_it(tmp_path):
    from aqmlab.emu.plan import missing_cc

    assert_bad_input(
        [*EMU, "--cc", "bbr3"], ["--cc = 'bbr3'", "this kernel has no BBRv3"], tmp_path
    )
    (tmp_path / "s.toml").write_text(EMU_TOML + 'cc = "bbr3"\n')
    assert_bad_input(
        ["emulate", "{tmp}/s.toml", "--out", "{tmp}/res"],
        ["flows[0].cc = 'bbr3'", "this kernel has no BBRv3"],
        tmp_path,
    )
    # the reason names what the kernel offers; other names keep the generic line
    assert "reno, bbr" in missing_cc("bbr3", ["reno", "bbr"])
    assert missing_cc("vegas", ["reno"]).startswith("the kernel offers reno")


@pytest.mark.parametrize("args, needles", EMULATE_ROWS, ids=[" ".join(a) for a, _ in EMULATE_ROWS])
def test_emulate_bad_option(tmp_path, args, needles):
    assert_bad_input([*EMU, *args], needles, tmp_path)


@pytest.mark.parametrize(
    "toml, args, needles", EMULATE_FILE_ROWS, ids=[n[0] for _, _, n in EMULATE_FILE_ROWS]
)
def test_emulate_bad_scenario(tmp_path, toml, args, needles):
    (tmp_path / "s.toml").write_text(toml)
    assert_bad_input(["emulate", "{tmp}/s.toml", "--out", "{tmp}/res", *args], needles, tmp_path)


def test_emulate_refuses_more_flows_than_open_files(tmp_path):
    # groups small enough for their ports, together more flows than the programs can hold
    from aqmlab.emu import max_flows

    n = max_flows() + 1
    per = 20000
    groups = "".join(f"[[flows]]\ncount = {min(per, n - i)}\n" for i in range(0, n, per))
    (tmp_path / "s.toml").write_text('duration = "2s"\n[dumbbell]\nrate = "10Mbps"\n' + groups)
    assert_bad_input(
        ["emulate", "{tmp}/s.toml", "--out", "{tmp}/res"],
        [f"flows = {n}", "ulimit -Hn"],
        tmp_path,
    )


def test_emulate_needs_out(tmp_path):
    assert_bad_input(["emulate", "--duration", "2s"], ["--out", "missing"], tmp_path)


OUT_ROWS = [
    (["--out", "."], ["'.'", "current folder"]),
    (["--out", ".."], ["'..'", "parent of the current folder"]),
    (["--out", ""], ["output folder '"]),
    (["--out", "/"], ["'/'", "root"]),
    (["--out", str(Path.home())], [str(Path.home()), "home folder"]),
    (["--out", "notes.txt"], ["'notes.txt'", "is a file"]),
    (["--out", "mine"], ["'mine'", "not empty", "--force"]),
    (["--out", "notes.txt/sub"], ["notes.txt", "is a file"]),
]


@pytest.mark.parametrize(
    "args, needles", DUMBBELL_ROWS, ids=[" ".join(a) for a, _ in DUMBBELL_ROWS]
)
def test_dumbbell_bad_option(tmp_path, args, needles):
    assert_bad_input([*DB, *args], needles, tmp_path)


@pytest.mark.parametrize("args, needles", OUT_ROWS, ids=[" ".join(a) for a, _ in OUT_ROWS])
@pytest.mark.parametrize("command", ["dumbbell", "run", "demo", "emulate", "shell"])
def test_refused_output_paths(tmp_path, command, args, needles):
    if command == "shell":
        base = ["shell"]
    elif command in ("dumbbell", "emulate"):
        base = [command, "--duration", "2s", "--flows", "2"]
    elif command == "run":
        (tmp_path / "s.toml").write_text(GOOD)
        base = ["run", "{tmp}/s.toml"]
    else:
        base = ["demo", "--aqms", "codel"]
    before = tmp_path / "s.toml"
    line = assert_bad_input([*base, *args], needles, tmp_path)
    assert "output folder" in line
    if command == "run":
        assert before.exists()


def _scenario_rows():
    bad_key = GOOD.replace("[dumbbell]", "[dumbbell]\nrat = '1Mbps'")
    return [
        ("missing file", ["run", "{tmp}/nope.toml"], ["nope.toml", "No such file"], None),
        (
            "malformed TOML",
            ["run", "{tmp}/s.toml"],
            ["s.toml", "malformed TOML"],
            "name = 'x'\n[dumbbell\n",
        ),
        (
            "unknown key",
            ["run", "{tmp}/s.toml"],
            ["dumbbell.rat", "1Mbps", "did you mean 'rate'"],
            bad_key,
        ),
        (
            "bad index",
            ["run", "{tmp}/s.toml", "--set", "flows.3.count=5"],
            ["flows.3.count=5", "flows[3]", "1 entries"],
            GOOD,
        ),
        (
            "bad index brackets",
            ["run", "{tmp}/s.toml", "--set", "flows[2].count=5"],
            ["flows[2]"],
            GOOD,
        ),
        (
            "set without =",
            ["run", "{tmp}/s.toml", "--set", "duration"],
            ["--set", "'duration'", "key=value"],
            GOOD,
        ),
        (
            "negative duration",
            ["run", "{tmp}/s.toml", "--set", "duration=-1s"],
            ["duration", "-1s", ">"],
            GOOD,
        ),
        ("seed", ["run", "{tmp}/s.toml", "--seed", "-1"], ["seed = -1", ">= 0"], GOOD),
        (
            "no topology",
            ["run", "{tmp}/s.toml"],
            ["exactly one topology"],
            'duration = "2s"\n[[flows]]\ncount = 1\n',
        ),
        (
            "two topologies",
            ["run", "{tmp}/s.toml"],
            ["exactly one topology"],
            GOOD + '[parking_lot]\nrate = "1Mbps"\n',
        ),
        (
            "no flows",
            ["run", "{tmp}/s.toml"],
            ["flows", "at least one flow group"],
            'duration = "2s"\n[dumbbell]\nrate = "1Mbps"\n',
        ),
        (
            "TOML date",
            ["run", "{tmp}/s.toml"],
            ["name", "1979-05-27"],
            GOOD.replace('name = "ok"', "name = 1979-05-27"),
        ),
        (
            "rate typo unit",
            ["run", "{tmp}/s.toml"],
            ['dumbbell.rate = "10Mbpz"', "unknown rate unit"],
            GOOD.replace("10Mbps", "10Mbpz"),
        ),
        (
            "access typo",
            ["run", "{tmp}/s.toml"],
            ['dumbbell.access = "nnone"', "must be one of link, none"],
            GOOD.replace('rate = "10Mbps"', 'rate = "10Mbps"\naccess = "nnone"'),
        ),
        (
            "access none with access_rate",
            ["run", "{tmp}/s.toml"],
            ['dumbbell.access_rate = "1Gbps"', 'access = "none"'],
            GOOD.replace(
                'rate = "10Mbps"', 'rate = "10Mbps"\naccess = "none"\naccess_rate = "1Gbps"'
            ),
        ),
        (
            "access none with extra_delay",
            ["run", "{tmp}/s.toml"],
            ["flows[0].extra_delay", "10ms", 'access = "none"'],
            GOOD.replace('rate = "10Mbps"', 'rate = "10Mbps"\naccess = "none"')
            + 'extra_delay = "10ms"\n',
        ),
        (
            "huge rate",
            ["run", "{tmp}/s.toml"],
            ['dumbbell.rate = "1e400bps"', "not a finite rate"],
            GOOD.replace("10Mbps", "1e400bps"),
        ),
        (
            "rate change after the end",
            ["run", "{tmp}/s.toml"],
            ['dumbbell.rate_changes[0].at = "5s"', "before the end"],
            GOOD.replace(
                'rate = "10Mbps"\n',
                'rate = "10Mbps"\nrate_changes = [{at = "5s", rate = "5Mbps"}]\n',
            ),
        ),
        (
            "rate changes out of order",
            ["run", "{tmp}/s.toml"],
            ['dumbbell.rate_changes[1].at = "0.5s"', "after the previous change"],
            GOOD.replace(
                'rate = "10Mbps"\n',
                'rate = "10Mbps"\nrate_changes = [{at = "1s", rate = "5Mbps"}, {at = "0.5s", rate = "1Mbps"}]\n',
            ),
        ),
        (
            "negative rate change",
            ["run", "{tmp}/s.toml"],
            ["dumbbell.rate_changes[0].rate = -1", "must be a rate in [0bps"],
            GOOD.replace(
                'rate = "10Mbps"\n',
                'rate = "10Mbps"\nrate_changes = [{at = "1s", rate = -1}]\n',
            ),
        ),
        (
            "rate change without rate",
            ["run", "{tmp}/s.toml"],
            ["dumbbell.rate_changes[0].rate", "required"],
            GOOD.replace('rate = "10Mbps"\n', 'rate = "10Mbps"\nrate_changes = [{at = "1s"}]\n'),
        ),
        (
            "kind key",
            ["run", "{tmp}/s.toml"],
            ["flows[0].on_time", 'not used by kind = "tcp"'],
            GOOD + 'on_time = "1s"\n',
        ),
        (
            "udp without rate",
            ["run", "{tmp}/s.toml"],
            ["flows[0].rate", "required"],
            GOOD.replace("count = 2", 'kind = "udp_cbr"'),
        ),
        (
            "stop before start",
            ["run", "{tmp}/s.toml"],
            ["flows[0].stop", "after start"],
            GOOD + 'start = "1s"\nstop = "0.5s"\n',
        ),
        (
            "aqm param",
            ["run", "{tmp}/s.toml"],
            ["aqm.tagret", "unknown parameter 'tagret' for AQM 'codel'"],
            GOOD + '[aqm]\ntype = "codel"\ntagret = "5ms"\n',
        ),
        (
            "unroutable",
            ["run", "{tmp}/s.toml"],
            ["flows[0]", "unroutable"],
            'duration = "2s"\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n[[nodes]]\nname = "c"\n[[links]]\nsrc = "a"\ndst = "b"\nrate = "1Mbps"\n[[flows]]\nsrc = "a"\ndst = "c"\n',
        ),
        (
            "unknown node",
            ["run", "{tmp}/s.toml"],
            ['flows[0].dst = "d"', "no such node"],
            'duration = "2s"\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n[[links]]\nsrc = "a"\ndst = "b"\nrate = "1Mbps"\n[[flows]]\nsrc = "a"\ndst = "d"\n',
        ),
        (
            "trace unknown link",
            ["run", "{tmp}/s.toml"],
            ['trace.links[0] = "bottlenek"', "unknown link", "links: bottleneck"],
            GOOD + '[trace]\nlinks = ["bottlenek"]\n',
        ),
        (
            "trace no link",
            ["run", "{tmp}/s.toml"],
            ["trace.links", "at least one link"],
            GOOD + "[trace]\nlinks = []\n",
        ),
        (
            "trace batch 0",
            ["run", "{tmp}/s.toml"],
            ["trace.batch = 0"],
            GOOD + '[trace]\nlinks = ["bottleneck"]\nbatch = 0\n',
        ),
        (
            "run --trace without bottleneck",
            ["run", "{tmp}/s.toml", "--trace"],
            ["--trace", "no bottleneck", "[trace] links"],
            'duration = "2s"\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n[[links]]\nsrc = "a"\ndst = "b"\nrate = "1Mbps"\n[[flows]]\nsrc = "a"\ndst = "b"\n',
        ),
        (
            "demo bad aqm",
            ["demo", "--aqms", "codel,foo", "--out", "{tmp}/d"],
            ["--aqms", "foo", "unknown AQM"],
            None,
        ),
        (
            "demo no aqm",
            ["demo", "--aqms", ",", "--out", "{tmp}/d"],
            ["--aqms", "at least one AQM"],
            None,
        ),
        (
            "report missing DIR",
            ["report", "{tmp}/nope", "--out", "{tmp}/r.html"],
            ["DIR", "nope", "no such folder"],
            None,
        ),
        (
            "report DIR is a file",
            ["report", "{tmp}/notes.txt", "--out", "{tmp}/r.html"],
            ["DIR", "notes.txt", "not a folder"],
            None,
        ),
        (
            "report unrecognised DIR",
            ["report", "{tmp}/mine", "--out", "{tmp}/r.html"],
            ["DIR", "mine", "not a sweep (results.parquet), a run (summary.json)"],
            None,
        ),
        (
            "report out not html",
            ["report", "{tmp}/mine", "--out", "{tmp}/notes.txt"],
            ["--out", "notes.txt", "unknown extension"],
            None,
        ),
        (
            "report broken results.parquet",
            ["report", "{tmp}", "--out", "{tmp}/r.html"],
            ["DIR", "results.parquet is not readable"],
            "",
        ),
        (
            "demo missing scenario",
            ["demo", "--scenario", "{tmp}/nope.toml", "--out", "{tmp}/d"],
            ["nope.toml"],
            None,
        ),
    ]


SCENARIO_ROWS = _scenario_rows()


@pytest.mark.parametrize(
    "name, args, needles, toml", SCENARIO_ROWS, ids=[r[0] for r in SCENARIO_ROWS]
)
def test_run_and_demo_bad_input(tmp_path, name, args, needles, toml):
    if args[0] == "report" and toml is not None:
        (tmp_path / "results.parquet").write_text("not parquet")
    elif toml is not None:
        (tmp_path / "s.toml").write_text(toml)
    if args[0] == "run":
        args = [*args, "--out", "{tmp}/res"]
    assert_bad_input(args, needles, tmp_path)


# -- the Python API: a ValueError subclass naming the argument, nothing written ---------------


def _sim():
    from aqmlab.sim import Simulation

    return Simulation({"duration": "2s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}]})


def _traced_sim():
    from aqmlab.sim import Simulation

    return Simulation(
        {
            "duration": "2s",
            "dumbbell": {"rate": "10Mbps"},
            "flows": [{"count": 2}],
            "trace": {"links": ["bottleneck"]},
        }
    )


def _ran_sim():
    s = _sim()
    s.run_until(1.0)
    return s


def _api_rows():
    from aqmlab.aqm import Queue, aqm_config
    from aqmlab.results import SimResult
    from aqmlab.scenario import Scenario, load_scenario
    from aqmlab.sim import simulate
    from aqmlab.units import parse_rate, parse_time

    ok = {"duration": "2s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}]}
    return [
        ("Queue limit -1", lambda: Queue("codel", limit_pkts=-1), "limit_pkts = -1"),
        ("Queue limit 1.5", lambda: Queue("codel", limit_pkts=1.5), "limit_pkts = 1.5"),
        ("Queue rate 0", lambda: Queue("codel", link_rate_bps=0), "link_rate_bps = 0"),
        ("Queue seed", lambda: Queue("codel", seed=-3), "seed = -3"),
        ("Queue unknown aqm", lambda: Queue("nope"), "unknown AQM 'nope'"),
        ("Queue bad unit", lambda: Queue("codel", {"target": "5parsecs"}), "'target' = '5parsecs'"),
        ("Queue param type", lambda: Queue("codel", {"target": [1]}), "'target'"),
        ("enqueue size -1", lambda: Queue("codel").enqueue(0, -1), "size_bytes = -1"),
        ("enqueue flow -2", lambda: Queue("codel").enqueue(0, 100, flow=-2), "flow = -2"),
        ("enqueue time back", lambda: _backwards_queue(), "now_s = 0.5"),
        ("enqueue time nan", lambda: Queue("codel").enqueue(math.nan, 100), "now_s = NaN"),
        ("set_param unknown", lambda: Queue("codel").set_param("tagret", 1), "tagret"),
        ("aqm_config bad", lambda: aqm_config("red", {"max_p": 2}), "'max_p' = 2"),
        ("flow_status -1", lambda: _sim().flow_status(-1), "flow = -1"),
        ("flow_status 1.7", lambda: _sim().flow_status(1.7), "flow = 1.7"),
        ("flow_status too big", lambda: _sim().flow_status(99), "flow = 99"),
        ("run_until back", lambda: _ran_sim().run_until(0.5), "t = 0.5"),
        ("run_until text", lambda: _sim().run_until("1s"), "t = '1s'"),
        ("link unknown", lambda: _sim().link_status("nope"), "nope"),
        ("set_aqm_param key", lambda: _sim().set_aqm_param("bottleneck", "tagret", 1), "tagret"),
        ("set_aqm_param unit", lambda: _sim().set_aqm_param("bottleneck", "limit", "5ms"), "limit"),
        ("set_aqm unknown", lambda: _sim().set_aqm("bottleneck", "nope"), "nope"),
        ("aqm_param unknown", lambda: _sim().aqm_param("bottleneck", "nosuch"), "'nosuch'"),
        ("run_until nan", lambda: _sim().run_until(math.nan), "t = NaN"),
        ("run_until inf", lambda: _sim().run_until(math.inf), "t = inf"),
        ("Simulation seed", lambda: _seeded(-1), "seed = -1"),
        ("simulate 42", lambda: simulate(42), "scenario = 42"),
        ("simulate bad key", lambda: simulate({**ok, "duraton": "1s"}), "duraton"),
        ("Scenario nan", lambda: Scenario({**ok, "warmup": math.nan}), "warmup = nan"),
        ("Scenario list", lambda: Scenario([1, 2]), "must be a table"),
        ("load missing", lambda: load_scenario("/nonexistent/s.toml"), "/nonexistent/s.toml"),
        ("overrides index", lambda: Scenario(ok).with_overrides(["flows.5.count=1"]), "flows[5]"),
        ("save to file", lambda: SimResult({}).save(__file__), "is a file"),
        ("start_trace untraced", lambda: _sim().start_trace("t.parquet"), "no link to trace"),
        ("start_trace suffix", lambda: _traced_sim().start_trace("t.csv"), "'t.csv'"),
        ("parse_rate", lambda: parse_rate("10MBPS"), "10MBPS"),
        ("parse_time unit", lambda: parse_time("5", require_unit=True), "give a unit"),
        ("Queue sfq flows", lambda: Queue("sfq", {"divisor": 16, "flows": 32}), "'flows' = 32"),
        ("Queue sfq perturb", lambda: Queue("sfq", {"perturb": "1ns"}), "'perturb' = 0.000000001"),
        ("Queue dualpi2 target", lambda: Queue("dualpi2", {"target": 0}), "'target' = 0"),
        ("Queue control_law", lambda: Queue("codel", {"control_law": 1}), "'control_law' = '1'"),
        ("Queue ecn", lambda: Queue("fq_codel").enqueue(0, 100, ecn="ect2"), "ecn = 'ect2'"),
    ]


def _backwards_queue():
    from aqmlab.aqm import Queue

    q = Queue("codel")
    q.enqueue(1.0, 100)
    q.enqueue(0.5, 100)


def _seeded(seed):
    from aqmlab.sim import Simulation

    return Simulation({"duration": "2s", "dumbbell": {"rate": "1Mbps"}, "flows": [{}]}, seed=seed)


API_ROWS = _api_rows()


@pytest.mark.parametrize("name, call, needle", API_ROWS, ids=[r[0] for r in API_ROWS])
def test_api_bad_input_raises_named_value_error(tmp_path, monkeypatch, name, call, needle):
    monkeypatch.chdir(scratch(tmp_path))
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert needle in msg, msg
    assert "\n" not in msg.strip(), msg
    assert snapshot(tmp_path) == before


def test_the_tables_have_at_least_sixty_rows():
    rows = len(DUMBBELL_ROWS) + 3 * len(OUT_ROWS) + len(SCENARIO_ROWS) + len(API_ROWS)
    rows += len(SWEEP_ROWS) + len(SWEEP_OUT_ROWS) + len(RFC7928_ROWS)
    rows += len(RATE_ROWS) + len(SUMMARY_ROWS)
    assert rows >= 60, rows


# -- a PAQMAN policy on a link of another rate ------------------------------------------------
# The table is over absolute packet rates and queue lengths solved at one service rate; on a link
# that serves another number of packets per second it is refused (docs/paqman.md).

MU_10 = 10e6 / (8 * 1500)  # 10 Mb/s of 1500-byte packets, packets/s


@pytest.fixture(scope="module")
def policy_10mbps() -> str:
    """A small policy solved for 10 Mb/s of 1500-byte packets, as a file's text."""
    from aqmlab.mdp import negligible_rtt_model, solve

    pol = solve(negligible_rtt_model(MU_10, 0.005, buffer=10, grid=4))
    pol.meta["pkt_size_bytes"] = 1500
    return json.dumps(pol.to_dict())


PAQMAN = ["--aqm", "paqman", "--aqm-param", "policy=p.json"]
_LINK = 'rate = "{rate}"\n'
RATE_ROWS = [
    (
        "dumbbell at twice the rate",
        [*DB, "--rate", "20Mbps", "--pkt-size", "1500", *PAQMAN],
        ["--aqm-param policy", "p.json", "service_rate_pps = 833.333", "1666.67 packets/s"],
        None,
    ),
    (
        "dumbbell with other packets",
        [*DB, "--pkt-size", "1000", *PAQMAN],
        ["--aqm-param policy", "service_rate_pps = 833.333", "1250 packets/s", "1000-byte"],
        None,
    ),
    (
        "scenario at half the rate",
        ["run", "{tmp}/s.toml", "--out", "{tmp}/res"],
        ["aqm.policy", "p.json", "833.333", "416.667 packets/s"],
        'duration = "2s"\n[dumbbell]\nrate = "5Mbps"\npkt_size = 1500\n[aqm]\ntype = "paqman"\n'
        'policy = "p.json"\n[[flows]]\ncount = 1\n',
    ),
    (
        "explicit link",
        ["run", "{tmp}/s.toml", "--out", "{tmp}/res"],
        ["links[0].aqm.policy", "833.333", "1666.67 packets/s", "link a->b"],
        'duration = "2s"\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n[[links]]\nsrc = "a"\n'
        'dst = "b"\nrate = "20Mbps"\naqm = {type = "paqman", policy = "p.json"}\n[[flows]]\n'
        'src = "a"\ndst = "b"\npacket_size = 1500\n',
    ),
]


@pytest.mark.parametrize("name, args, needles, toml", RATE_ROWS, ids=[r[0] for r in RATE_ROWS])
def test_paqman_policy_for_another_rate_is_refused(
    tmp_path, policy_10mbps, name, args, needles, toml
):
    (tmp_path / "p.json").write_text(policy_10mbps)
    if toml is not None:
        (tmp_path / "s.toml").write_text(toml)
    assert_bad_input(args, needles, tmp_path)


def test_paqman_policy_for_the_link_rate_is_accepted(tmp_path, policy_10mbps):
    from aqmlab.scenario import Scenario

    (tmp_path / "p.json").write_text(policy_10mbps)
    policy = str(tmp_path / "p.json")
    for rate, size in (("10Mbps", 1500), ("10000000bps", 1500)):
        Scenario({"duration": "1s", "dumbbell": {"rate": rate, "pkt_size": size},
                  "aqm": {"type": "paqman", "policy": policy}, "flows": [{}]})  # fmt: skip
    # a file without the informative keys cannot be checked and runs as before
    doc = json.loads(policy_10mbps)
    del doc["service_rate_pps"]
    (tmp_path / "p.json").write_text(json.dumps(doc))
    Scenario({"duration": "1s", "dumbbell": {"rate": "20Mbps"},
              "aqm": {"type": "paqman", "policy": policy}, "flows": [{}]})  # fmt: skip


# -- aqmlab report on a malformed or meaningless summary.json ---------------------------------

_GOOD_LINK = {"aqm": "codel", "utilization": 0.9, "arrivals": 100, "drops": 3,
              "queue_delay_ms": {"mean": 2.0, "p99": 8.0}}  # fmt: skip
SUMMARY_ROWS = [
    ("links a number", {"links": 3}, ["summary.json", "links = 3", "not an object"]),
    ("no links", {"scenario": "x", "flows": []}, ["summary.json", "links is missing"]),
    ("link a number", {"links": {"bottleneck": 3}}, ["links.bottleneck = 3", "not an object"]),
    ("flow a number", {"links": {}, "flows": [1]}, ["flows[0] = 1", "not an object"]),
    ("flows an object", {"links": {}, "flows": {}}, ["flows = {}", "not an array"]),
    (
        "utilization negative",
        {"links": {"bottleneck": {**_GOOD_LINK, "utilization": -1}}},
        ["links.bottleneck.utilization = -1", "in [0, 1]"],
    ),
    (
        "drops negative",
        {"links": {"bottleneck": {**_GOOD_LINK, "drops": -100}}},
        ["links.bottleneck.drops = -100", ">= 0"],
    ),
    (
        "delay a string",
        {"links": {"bottleneck": {**_GOOD_LINK, "queue_delay_ms": {"mean": "x"}}}},
        ['links.bottleneck.queue_delay_ms.mean = "x"', "not a finite number"],
    ),
    (
        "histogram count null",
        {
            "links": {
                "bottleneck": {"queue_delay_hist": {"lo_ms": [1], "hi_ms": [2], "counts": [None]}}
            }
        },
        ["links.bottleneck.queue_delay_hist.counts[0] = null"],
    ),
    (
        "histogram lengths",
        {
            "links": {
                "bottleneck": {"queue_delay_hist": {"lo_ms": [1, 2], "hi_ms": [2], "counts": [1]}}
            }
        },
        ["links.bottleneck.queue_delay_hist lengths", "one entry per bin"],
    ),
    ("jain above one", {"links": {}, "fairness": {"jain": 2}}, ["fairness.jain = 2", "in [0, 1]"]),
    ("seed a string", {"links": {}, "seed": "one"}, ['seed = "one"', "not an integer"]),
]


@pytest.mark.parametrize("name, summary, needles", SUMMARY_ROWS, ids=[r[0] for r in SUMMARY_ROWS])
def test_report_refuses_a_malformed_summary(tmp_path, name, summary, needles):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "summary.json").write_text(json.dumps(summary))
    assert_bad_input(["report", "{tmp}/run", "--out", "{tmp}/r.html"], needles, tmp_path)


def test_report_names_the_bad_run_of_a_folder_and_of_a_sweep(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = tmp_path / "runs"
    for name, links in (("a", {"bottleneck": _GOOD_LINK}), ("b", {"bottleneck": {"drops": -1}})):
        (runs / name).mkdir(parents=True)
        (runs / name / "summary.json").write_text(json.dumps({"seed": 1, "links": links}))
    assert_bad_input(["report", "{tmp}/runs", "--out", "{tmp}/r.html"],
                     ["b/summary.json", "links.bottleneck.drops = -1"], tmp_path)  # fmt: skip
    sweep = tmp_path / "sweep"
    (sweep / "runs").mkdir(parents=True)
    pq.write_table(pa.table({"run_key": ["k1"], "seed": [1], "error": [None]}),
                   sweep / "results.parquet")  # fmt: skip
    (sweep / "runs" / "k1.json").write_text(json.dumps({"summary": {"links": []}}))
    assert_bad_input(["report", "{tmp}/sweep", "--out", "{tmp}/r.html"],
                     ["k1.json", "links = []", "not an object"], tmp_path)  # fmt: skip


# -- output safety ----------------------------------------------------------------------------


def _short(out: str) -> list[str]:
    return ["dumbbell", "--duration", "1s", "--flows", "2", "--no-plots", "--quiet", "--out", out]


def test_an_aqmlab_folder_is_replaced_a_user_folder_only_with_force(tmp_path):
    cwd = scratch(tmp_path)
    assert run(_short("res"), cwd).returncode == 0
    manifest = (cwd / "res" / ".aqmlab").read_text()
    assert '"tool": "aqmlab"' in manifest
    assert run(_short("res"), cwd).returncode == 0, "an aqmlab result folder is replaced"
    (cwd / "res" / "mine.txt").write_text("user data")
    p = run(_short("res"), cwd)
    assert p.returncode == 2 and "not empty (use --force" in p.stderr
    assert (cwd / "res" / "mine.txt").read_text() == "user data"
    assert run([*_short("res"), "--force"], cwd).returncode == 0
    assert not (cwd / "res" / "mine.txt").exists()
    assert not [p for p in cwd.iterdir() if p.name.startswith(".")], "no temporaries left"


def test_outputs_follow_the_umask(tmp_path):
    cwd = scratch(tmp_path)
    old = os.umask(0o022)
    try:
        assert run(_short("deep/res"), cwd).returncode == 0
    finally:
        os.umask(old)
    for p in [cwd / "deep", cwd / "deep" / "res"]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o755, p
    for p in (cwd / "deep" / "res").iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


WRITER = """
import sys, time
from aqmlab.output import output_dir
with output_dir(sys.argv[1]) as tmp:
    (tmp / "part.txt").write_text("half")
    print("writing", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("phase", ["simulating", "writing"])
def test_a_signal_leaves_nothing_behind(tmp_path, sig, phase):
    """Ctrl-C or SIGTERM while the simulation runs, or while results are being written into the
    temporary folder: no result folder, no temporary, no parent folder created by the run."""
    cwd = scratch(tmp_path)
    before = snapshot(cwd)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    if phase == "simulating":
        cmd = [*AQMLAB, "dumbbell", "--duration", "6000s", "--flows", "100", "--out", "deep/res"]
    else:
        cmd = [sys.executable, "-c", WRITER, "deep/res"]
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=default_sigint)  # fmt: skip
    if phase == "writing":
        assert p.stdout.readline().strip() == "writing"
        assert any(cwd.glob("deep/.res.*")), "the temporary folder exists while writing"
    else:
        time.sleep(2.0)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    assert p.returncode != 0
    if phase == "simulating":
        assert "Traceback" not in err, err
        if sig == signal.SIGINT:  # Ctrl-C: status 130 and one line saying so
            assert p.returncode == 130
            assert err.strip().splitlines() == ["error: interrupted"], err
    assert snapshot(cwd) == before, "a partial folder or temporary was left behind"


# -- sweep and rfc7928: the spec and the options are checked before anything runs ------------

SWEEP_OK = """seeds = [1, 2]
[base]
duration = "1s"
[base.dumbbell]
rate = "10Mbps"
[[base.flows]]
count = 2
[grid]
"aqm.type" = ["codel", "pie"]
"""

SWEEP_ROWS = [
    ("unknown spec key", SWEEP_OK + "[grdi]\n", [], ["grdi", "unknown sweep key"]),
    (
        "empty grid list",
        SWEEP_OK.replace('["codel", "pie"]', "[]"),
        [],
        ['grid."aqm.type" = []', "at least one value"],
    ),
    (
        "grid value not a list",
        SWEEP_OK.replace('["codel", "pie"]', '"codel"'),
        [],
        ['grid."aqm.type" = "codel"', "list of values"],
    ),
    (
        "zip unequal",
        SWEEP_OK + '[zip]\n"dumbbell.rate" = ["1Mbps", "2Mbps"]\n"dumbbell.buffer" = [10]\n',
        [],
        ['zip."dumbbell.buffer" = [10]', "1 values", "equal length"],
    ),
    (
        "key in grid and zip",
        SWEEP_OK + '[zip]\n"aqm.type" = ["red"]\n',
        [],
        ['zip."aqm.type"', "also in [grid]"],
    ),
    (
        "bad override value",
        SWEEP_OK.replace('"pie"]', '"pei"]'),
        [],
        ['aqm.type = "pei"', "unknown AQM"],
    ),
    (
        "bad override unit",
        SWEEP_OK + '[zip]\n"dumbbell.rate" = ["10Mbpz"]\n',
        [],
        ['dumbbell.rate = "10Mbpz"', "unknown rate unit"],
    ),
    (
        "unknown override key",
        SWEEP_OK + '[zip]\n"dumbbell.rat" = ["1Mbps"]\n',
        [],
        ["dumbbell.rat", "unknown key"],
    ),
    (
        "override index",
        SWEEP_OK + '[zip]\n"flows.3.count" = [1]\n',
        [],
        ["flows.3.count", "flows[3]"],
    ),
    ("seed as override", SWEEP_OK + '[zip]\n"seed" = [1]\n', [], ['zip."seed"', "seeds = [...]"]),
    ("no seeds", SWEEP_OK.replace("seeds = [1, 2]", "seeds = []"), [], ["seeds = []"]),
    (
        "negative seed",
        SWEEP_OK.replace("seeds = [1, 2]", "seeds = [1, -2]"),
        [],
        ["seeds[1] = -2", ">= 0"],
    ),
    (
        "seed twice",
        SWEEP_OK.replace("seeds = [1, 2]", "seeds = [3, 3]"),
        [],
        ["seeds = [3, 3]", "twice"],
    ),
    (
        "timeseries not bool",
        'timeseries = "yes"\n' + SWEEP_OK,
        [],
        ["timeseries = 'yes'", "true or false"],
    ),
    ("no base", "seeds = [1]\n", [], ["base", "missing"]),
    ("missing base file", 'base = "nope.toml"\nseeds = [1]\n', [], ["nope.toml", "No such file"]),
    (
        "bad base",
        SWEEP_OK.replace('duration = "1s"', 'duration = "-1s"'),
        [],
        ["base", "duration", "-1s"],
    ),
    ("malformed spec", "seeds = [1\n", [], ["sweep.toml", "malformed TOML"]),
    ("workers 0", SWEEP_OK, ["--workers", "0"], ["--workers = 0", ">= 1"]),
    ("workers -3", SWEEP_OK, ["--workers", "-3"], ["--workers = -3", ">= 1"]),
    ("workers text", SWEEP_OK, ["--workers", "two"], ["--workers", "two"]),
    ("dask empty", SWEEP_OK, ["--dask", ""], ["--dask = ''", "local"]),
    (
        "dask unreachable",
        SWEEP_OK,
        ["--dask", "tcp://127.0.0.1:9"],
        ["--dask = 'tcp://127.0.0.1:9'", "cannot connect"],
    ),
    (
        "workers with a scheduler",
        SWEEP_OK,
        ["--dask", "tcp://127.0.0.1:9", "--workers", "2"],
        ["--workers = 2", "its own workers"],
    ),
]


@pytest.mark.parametrize("name, spec, extra, needles", SWEEP_ROWS, ids=[r[0] for r in SWEEP_ROWS])
def test_sweep_bad_input(tmp_path, name, spec, extra, needles):
    (tmp_path / "sweep.toml").write_text(spec)
    assert_bad_input(["sweep", "{tmp}/sweep.toml", "--out", "{tmp}/res", *extra], needles, tmp_path)


# rfc7928 checks its folder with the same function: two rows suffice for it.
SWEEP_OUT_ROWS = [("sweep", a, n) for a, n in OUT_ROWS] + [
    ("rfc7928", a, n) for a, n in OUT_ROWS if a[1] in ("mine", "notes.txt")
]


@pytest.mark.parametrize(
    "command, args, needles",
    SWEEP_OUT_ROWS,
    ids=[f"{c} {' '.join(a)}" for c, a, _ in SWEEP_OUT_ROWS],
)
def test_sweep_refused_output_paths(tmp_path, command, args, needles):
    (tmp_path / "sweep.toml").write_text(SWEEP_OK)
    base = ["sweep", "{tmp}/sweep.toml"] if command == "sweep" else ["rfc7928", "--quick"]
    line = assert_bad_input([*base, *args], needles, tmp_path)
    assert "output folder" in line


def test_sweep_does_not_resume_a_sweep_of_another_base(tmp_path):
    cwd = scratch(tmp_path)
    (cwd / "sweep.toml").write_text(SWEEP_OK.replace("seeds = [1, 2]", "seeds = [1]"))
    p = run(["sweep", "sweep.toml", "--out", "res", "--workers", "1"], cwd)
    assert p.returncode == 0, p.stderr
    (cwd / "sweep.toml").write_text(SWEEP_OK.replace('"1s"', '"2s"'))
    line = assert_bad_input(
        ["sweep", "{tmp}/sweep.toml", "--out", "{tmp}/res"], ["'", "res", "another base"], tmp_path
    )
    assert "--force" in line


RFC7928_ROWS = [
    (["--aqms", "codel,foo"], ["--aqms = 'codel,foo'", "unknown AQM 'foo'"]),
    (["--aqms", ","], ["--aqms = ','", "at least one AQM"]),
    (["--aqms", "pie,pie"], ["--aqms = 'pie,pie'", "given twice"]),
    (["--workers", "0"], ["--workers = 0"]),
]


@pytest.mark.parametrize("args, needles", RFC7928_ROWS, ids=[" ".join(a) for a, _ in RFC7928_ROWS])
def test_rfc7928_bad_input(tmp_path, args, needles):
    assert_bad_input(["rfc7928", "--quick", "--out", "{tmp}/res", *args], needles, tmp_path)
