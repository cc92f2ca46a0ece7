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
        "1000",
        "--rtt",
        "0.100:0.150",
        "--weights",
        "1500,1500,1500,1500,1500,1000,1000,1000,1000,1000",
        "--duration",
        "50",
        "--json",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    data = json.loads(out)  # exactly one JSON object
    rates = data["final_rates"]
    assert len(rates) == 10
    for r, target in zip(rates, [120] * 5 + [80] * 5, strict=True):
        assert abs(r - target) / target < 0.01  # paper's weight shares, 1 %


def test_out_dir_has_parquet_and_figure(tmp_path):
    res = runner.invoke(app, ["fluid", "misra", "--duration", "5", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    df = pd.read_parquet(tmp_path / "o" / "trajectory.parquet")
    assert {"t", "W", "q", "p"} <= set(df.columns)
    assert (tmp_path / "o" / "figure.png").stat().st_size > 0


def test_bad_inputs_fail_with_one_line_and_no_files(tmp_path):
    cases = [
        (["fluid", "sqm", "--capacity", "-5"], "--capacity"),
        (["fluid", "sqm", "--weights", "1,2,3", "--flows", "4"], "--weights"),
        (["fluid", "misra", "--law", "xyz"], "--law"),
        (["fluid", "kelly", "--rtt", "0.1,0.2,0.3"], "--rtt"),
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
