"""`aqmlab fluid` command line: the SQM contract, outputs and input errors."""

import json
import subprocess
import sys

import pandas as pd
from aqmlab.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def test_sqm_contract_command_final_rates():
    cmd = [
        sys.executable,
        "-m",
        "aqmlab",
        "fluid",
        "sqm",
        "--capacity",
        "1000pps",
        "--rtt",
        "100ms:150ms",
        "--weights",
        "1500,1500,1500,1500,1500,1000,1000,1000,1000,1000",
        "--duration",
        "50s",
        "--json",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    data = json.loads(out)  # exactly one JSON object
    rates = data["final_rates"]
    assert len(rates) == 10
    for r, target in zip(rates, [120] * 5 + [80] * 5, strict=True):
        assert abs(r - target) / target < 0.01  # paper's weight shares, 1 %


def test_out_dir_has_parquet_and_figure(tmp_path):
    res = runner.invoke(app, ["fluid", "misra", "--duration", "5s", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    df = pd.read_parquet(tmp_path / "o" / "trajectory.parquet")
    assert {"t", "W", "q", "p"} <= set(df.columns)
    assert (tmp_path / "o" / "figure.png").stat().st_size > 0


def test_bad_inputs_fail_with_one_line_and_no_files(tmp_path):
    cases = [
        (["fluid", "sqm", "--capacity", "-5pps"], "--capacity"),
        (["fluid", "sqm", "--weights", "1,2,3", "--flows", "4"], "--weights"),
        (["fluid", "misra", "--law", "xyz"], "--law"),
        (["fluid", "kelly", "--rtt", "100ms,200ms,300ms"], "--rtt"),
    ]
    for args, opt in cases:
        out = tmp_path / "never"
        res = runner.invoke(app, [*args, "--out", str(out)])
        assert res.exit_code == 2, (args, res.output)
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and opt in lines[0], res.output
        assert not out.exists()
    assert list(tmp_path.iterdir()) == []
    res = runner.invoke(app, ["fluid", "nosuchmodel"])
    assert res.exit_code != 0


def test_out_folder_is_replaced_only_when_aqmlab_wrote_it(tmp_path):
    out = tmp_path / "o"
    args = ["fluid", "kelly", "--duration", "2s", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    assert (out / "summary.json").exists() and (out / ".aqmlab").exists()
    assert runner.invoke(app, args).exit_code == 0  # an aqmlab result is replaced
    (out / "mine.txt").write_text("keep")
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "--force" in res.stderr
    assert (out / "mine.txt").read_text() == "keep"
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    assert not (out / "mine.txt").exists()


def test_units_are_required_and_bit_rates_convert():
    res = runner.invoke(app, ["fluid", "misra", "--rtt", "0.2"])
    assert res.exit_code == 2 and "--rtt = 0.2: give a unit" in res.stderr
    a = runner.invoke(app, ["fluid", "misra", "--capacity", "30Mbps", "--duration", "1s", "--json"])
    b = runner.invoke(
        app, ["fluid", "misra", "--capacity", "3750pps", "--duration", "1s", "--json"]
    )
    assert a.exit_code == 0 and b.exit_code == 0
    assert json.loads(a.stdout)["final"] == json.loads(b.stdout)["final"]


def test_cost_is_refused_up_front():
    res = runner.invoke(app, ["fluid", "misra", "--duration", "1e7s"])
    assert res.exit_code == 2
    assert "--duration = 1e7s" in res.stderr and "limit" in res.stderr
    res = runner.invoke(app, ["fluid", "misra", "--duration", "1s", "--dt", "1ns"])
    assert res.exit_code == 2 and "--dt = 1ns" in res.stderr and "GiB" in res.stderr
