"""A result folder is a complete record: it holds the normalized scenario (``scenario.toml``)
and a ``meta`` object in ``summary.json`` (versions, commit, platform, command line, start time),
and ``aqmlab run DIR/scenario.toml`` reproduces ``DIR/summary.json`` byte for byte apart from
``wall_seconds`` and ``meta``: for a dumbbell, a parking lot, an explicit topology, a
class-based qdisc, a PAQMAN policy file and a reproduction's run."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from aqmlab.scenario import Scenario  # noqa: E402
from badinput import AQMLAB, ROOT  # noqa: E402

META = {
    "aqmlab_version", "core_version", "git_commit", "git_dirty", "python", "rustc",
    "platform", "command", "started",
}  # fmt: skip


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    p = subprocess.run([*AQMLAB, *args], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def comparable(path: Path) -> str:
    """summary.json's text without the two keys a rerun may change."""
    s = json.loads(path.read_text())
    s.pop("wall_seconds")
    s.pop("meta")
    return json.dumps(s, indent=2)


def assert_rerun_reproduces(folder: Path, tmp_path: Path, *extra: str) -> dict:
    toml = folder / "scenario.toml"
    assert toml.exists(), sorted(p.name for p in folder.iterdir())
    again = tmp_path / "again"
    cli("run", str(toml), "--no-plots", "--quiet", "--out", str(again), *extra)
    assert comparable(again / "summary.json") == comparable(folder / "summary.json")
    # the normalized scenario is a fixed point: running it writes it again unchanged
    assert (again / "scenario.toml").read_text() == toml.read_text()
    meta = json.loads((folder / "summary.json").read_text())["meta"]
    assert set(meta) == META
    return meta


def test_dumbbell_folder_reruns_and_carries_meta(tmp_path):
    out = tmp_path / "d"
    cli(
        "dumbbell", "--flows", "3", "--rate", "5Mbps", "--rtt", "40ms", "--aqm", "codel",
        "--aqm-param", "target=3ms", "--duration", "2.7s", "--seed", "4", "--no-plots",
        "--quiet", "--out", str(out),
    )  # fmt: skip
    meta = assert_rerun_reproduces(out, tmp_path)
    assert "dumbbell" in meta["command"] and "--seed 4" in meta["command"]
    assert meta["rustc"].startswith("rustc ")
    assert meta["started"].endswith("Z") and meta["started"][:4].isdigit()
    if (ROOT / ".git").exists():
        assert len(meta["git_commit"]) == 40
    sc = tomllib.loads((out / "scenario.toml").read_text())
    # normalized: defaults filled in, SI units
    assert sc["dumbbell"]["rate"] == 5e6 and sc["aqm"]["target"] == pytest.approx(0.003)
    assert sc["seed"] == 4 and "interval" in sc["aqm"]


SCENARIOS = {
    "parking_lot": """
duration = "3s"
[parking_lot]
hops = 2
rate = "8Mbps"
[aqm]
type = "pie"
[[flows]]
count = 2
[[flows]]
count = 2
path = 0
""",
    "explicit": """
duration = "2s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
src = "a"
dst = "b"
rate = "6Mbps"
delay = "15ms"
aqm = {type = "red"}
[[flows]]
src = "a"
dst = "b"
count = 3
""",
    "classes": """
duration = "2s"
[dumbbell]
rate = "10Mbps"
[aqm]
type = "wfq"
classes = [{name = "a", weight = 1, aqm = {type = "codel"}}, {name = "b", weight = 2}]
[[flows]]
count = 2
class = "a"
[[flows]]
count = 2
class = "b"
kind = "tcp"
cc = "cubic"
""",
}


@pytest.mark.parametrize("kind", sorted(SCENARIOS))
def test_run_folder_reruns(kind, tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SCENARIOS[kind])
    out = tmp_path / "r"
    cli("run", str(f), "--no-plots", "--quiet", "--out", str(out), "--set", "seed=3")
    assert_rerun_reproduces(out, tmp_path)
    assert Scenario(tomllib.loads((out / "scenario.toml").read_text())).seed == 3


def test_paqman_policy_is_copied_into_the_folder(tmp_path):
    from aqmlab.mdp import negligible_rtt_model, solve

    pol = solve(negligible_rtt_model(10e6 / 12000, 0.005, buffer=40, grid=12))
    pol.save(tmp_path / "p.json")
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "2s"\n[dumbbell]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = 40\n'
        'pkt_size = 1500\n[aqm]\ntype = "paqman"\npolicy = "p.json"\n[[flows]]\ncount = 1\n'
    )
    out = tmp_path / "r"
    cli("run", str(f), "--no-plots", "--quiet", "--out", str(out))
    sc = tomllib.loads((out / "scenario.toml").read_text())
    assert sc["aqm"]["policy"] == "p.json"
    assert (out / "p.json").read_bytes() == (tmp_path / "p.json").read_bytes()
    (tmp_path / "p.json").unlink()  # the folder alone suffices
    assert_rerun_reproduces(out, tmp_path)


def test_demo_folders_hold_their_scenarios(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('duration = "2s"\n[dumbbell]\nrate = "5Mbps"\n[[flows]]\ncount = 2\n')
    out = tmp_path / "demo"
    cli("demo", "--scenario", str(f), "--aqms", "red,pie", "--out", str(out))
    for aqm in ("red", "pie"):
        sc = tomllib.loads((out / aqm / "scenario.toml").read_text())
        assert sc["aqm"]["type"] == aqm
        assert_rerun_reproduces(out / aqm, tmp_path / aqm)


def test_a_reproduction_run_reruns(tmp_path):
    out = tmp_path / "ktl"
    cli("repro", "ktl", "--quick", "--out", str(out))
    runs = sorted((out / "runs").glob("*/seed-*"))
    assert runs, "no run folders"
    assert_rerun_reproduces(runs[0], tmp_path)


def test_a_sweep_run_reruns(tmp_path):
    from aqmlab import sweep

    spec = {
        "base": {"duration": "1.5s", "dumbbell": {"rate": "5Mbps"}, "flows": [{"count": 2}]},
        "seeds": [1, 2],
        "grid": {"aqm.type": ["codel", "pie"]},
    }
    sweep.run(spec, tmp_path / "sw", workers=1)
    records = sorted((tmp_path / "sw" / "runs").glob("*.json"))
    assert len(records) == 4
    rec = json.loads(records[-1].read_text())
    toml = records[-1].with_suffix(".toml")
    assert toml.read_text() == rec["scenario_toml"]
    again = tmp_path / "again"
    cli("run", str(toml), "--no-plots", "--quiet", "--out", str(again))
    want = {k: v for k, v in rec["summary"].items() if k not in ("wall_seconds", "meta")}
    assert comparable(again / "summary.json") == json.dumps(want, indent=2)
    assert set(rec["summary"]["meta"]) == META
