"""``aqmlab repro``: bad input is one line with exit status 2 and writes nothing; the TOML
writer round-trips the scenario data model."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from aqmlab.repro import PAPERS, to_toml
from badinput import assert_bad_input

BAD = [
    (["repro", "nope", "--out", "{tmp}/r"], ["NAME = 'nope'", "unknown reproduction", "ktl"]),
    (
        ["repro", "sqm", "--out", "{tmp}/r"],
        ["'sqm'", "known: ktl, edc, sfc, paqman, sqm-fluid, sqm-s1, sqm-s2"],
    ),
    (["repro", "ktl", "--quick", "--out", "."], ["'.'", "current folder"]),
    (["repro", "ktl", "--quick", "--out", ""], ["output folder '"]),
    (["repro", "ktl", "--quick", "--out", "notes.txt"], ["'notes.txt'", "is a file"]),
    (["repro", "ktl", "--quick", "--out", "mine"], ["'mine'", "not empty", "--force"]),
    (["repro", "ktl", "--quick", "--out", "notes.txt/sub"], ["notes.txt", "is a file"]),
    (["repro", "ktl", "--quick"], ["--out"]),
    (["repro", "ktl", "--quick", "--out", "{tmp}/r", "--seeds", "3"], ["--seeds"]),
]


@pytest.mark.parametrize("args, needles", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_exit_2(tmp_path, args, needles):
    assert_bad_input(args, needles, tmp_path)


def test_help_lists_only_the_available_papers():
    from aqmlab.cli import app
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, ["repro", "--help"]).output
    for name in PAPERS:
        assert name in out
    assert "sqm-s3" not in out  # nothing that does not exist


def test_toml_writer_round_trips_scenarios():
    from aqmlab.repro import edc, ktl, sfc

    data = [
        ktl.scenario("A-pd", ktl.aqm_for(0.15, False, False), 0.15),
        edc.scenario("LL", "pip"),
        sfc.parking_lot("e", sfc.aqm("pi"), 20, 10.0, 2.0),
        {"name": 'quote " and ü', "x": [1, 2.5, True], "t": {"a b": {"c": -1e-300}}},
    ]
    for d in data:
        assert tomllib.loads(to_toml(d)) == d


def test_toml_writer_refuses_non_finite_numbers():
    with pytest.raises(ValueError, match="nan"):
        to_toml({"a": float("nan")})


def test_scenario_files_are_valid_scenarios(tmp_path: Path):
    from aqmlab.repro import sfc
    from aqmlab.scenario import load_scenario

    p = tmp_path / "s.toml"
    p.write_text(to_toml(sfc.dumbbell("d", sfc.aqm("sfc"), [sfc._flows(5, 0.1, 0.3)], 2, 0, 0.1)))
    assert load_scenario(p).normalized["flows"][0]["count"] == 5
