"""The claims of the reproductions: every check cites the paper (``source``), gives a reason
(``why``) apart from its pass rule (``rule``), and prints no misleading number (ratios of
near-zero values, settling times of runs that never settle)."""

from __future__ import annotations

import importlib
import math
import re

import numpy as np
import pytest
from aqmlab.cli.repro import claims_table
from aqmlab.repro import PAPERS
from aqmlab.repro._common import CHECK_KEYS, Repro, check, check_source, source_text
from aqmlab.repro._format import compare_small, ordinal, settled_text, span

SRC = {"where": "§VII-A, Fig. 9", "quote": "by reducing as much as 50% packet losses"}


def _row(**kw):
    args = dict(
        claim="c",
        paper="p",
        ours="o",
        verdict="reproduced",
        why="because we measured x",
        id="x",
        source=SRC,
        rule="±10 %",
    )
    args.update(kw)
    return check(
        args.pop("claim"),
        args.pop("paper"),
        args.pop("ours"),
        args.pop("verdict"),
        args.pop("why"),
        **args,
    )


# --- the schema -----------------------------------------------------------------------------------
def test_check_carries_source_rule_and_extra_fields():
    row = _row(ns2="434 packets")
    assert tuple(row)[: len(CHECK_KEYS)] == CHECK_KEYS
    assert row["source"] == SRC and row["rule"] == "±10 %"
    assert row["ns2"] == "434 packets"  # further per-check fields are kept


@pytest.mark.parametrize(
    "source",
    [
        None,
        "§VII-A",  # a string is not the schema
        {},
        {"where": ""},
        {"where": "§VII-A"},  # neither quote nor value
        {"where": "  ", "quote": "x"},
        {"where": "§VII-A", "quote": ""},
        {"where": "§VII-A", "value": True},
        {"where": "§VII-A", "quote": "x", "page": 3},  # unknown key
        {"where": "§VII-A", "quote": " ".join(["word"] * 31)},  # not a short quote
    ],
)
def test_check_refuses_a_missing_or_malformed_source(source):
    with pytest.raises(ValueError, match=r"^source = .*check x"):
        _row(source=source)


def test_check_refuses_an_empty_why():
    with pytest.raises(ValueError, match=r"^why = "):
        _row(why="  ")


def test_source_text_is_one_line():
    assert source_text(SRC) == '§VII-A, Fig. 9: "by reducing as much as 50% packet losses"'
    assert source_text({"where": "§III-A", "value": 434.8}) == "§III-A (434.8)"
    # the value is not repeated when the quote holds it
    assert "(434.8)" not in source_text(
        {"where": "§III-A", "quote": "are 434.8 pkts", "value": 434.8}
    )


@pytest.mark.parametrize("name", list(PAPERS))
def test_every_source_table_follows_the_schema(name):
    mod = importlib.import_module(PAPERS[name][0])
    srcs = getattr(mod, "SOURCES", None)
    if srcs is None:  # the SQM network reproductions share sqm_net's reference only
        pytest.fail(f"{name}: no SOURCES table")
    assert srcs
    for key, src in srcs.items():
        check_source(src, key)
    ref = (
        getattr(mod, "REFERENCE", None) or importlib.import_module("aqmlab.repro.sqm_net").REFERENCE
    )
    # authors, a quoted title and a year
    assert re.search(r'^[A-Z]\..*"[^"]+".*\b(19|20)\d\d\b', ref), ref


def _report(checks):
    rep = Repro(
        paper="x",
        title="T",
        quick=True,
        cases={"a": {"m": 1.0}},
        checks=checks,
        scenarios={},
        sections=[("Set-up and decisions", "* one")],
        reference='A. Author, "Title", Venue 2003',
    )
    return rep.report()


def test_report_opens_with_the_reference_and_the_claims_table():
    md = _report([_row(), _row(id="y", verdict="not reproduced", why="queue sits at 95")])
    lines = md.splitlines()
    assert lines[2] == 'Paper: A. Author, "Title", Venue 2003'
    claims = lines.index("## Claims")
    assert claims < md.splitlines().index("## Set-up and decisions")
    assert "| claim | source | paper | ours | verdict | why |" in md
    assert "2 claims: 1 reproduced, 1 not reproduced, 0 not comparable." in md
    assert '| §VII-A, Fig. 9: "by reducing as much as 50% packet losses" |' in md
    assert "* c: ±10 %" in md  # the pass rules sit below the table


def test_cli_table_shows_each_source():
    out = claims_table([_row(), _row(id="longer-id", verdict="not reproduced")])
    lines = out.splitlines()
    assert len(lines) == 2 and all(line.endswith("§VII-A, Fig. 9") for line in lines)
    assert lines[1].split() == ["not", "reproduced", "longer-id", "§VII-A,", "Fig.", "9"]


# --- odd outputs ----------------------------------------------------------------------------------
def test_ratio_over_a_near_zero_denominator_prints_the_values():
    # the old output: "SFC/best = 1.15e+03x" for 0.127 against 0.00011
    s = compare_small(0.127, 0.00011, floor=1e-3, names=("SFC", "PI"))
    assert s == "SFC 12.70% vs PI 0.01% (PI near zero)"
    assert "e+" not in s and "×" not in s
    assert compare_small(2e-4, 1e-5, floor=1e-3) == "0.02% vs 0.00% (both near zero)"
    assert compare_small(0.127, 0.0031, floor=1e-3, names=("SFC", "PI")) == (
        "SFC 12.70% vs PI 0.31% (41×)"
    )
    assert compare_small(float("nan"), 0.1, floor=1e-3) == "nan% vs 10.00%"


def test_settling_time_of_a_run_that_never_settles():
    assert settled_text(None, 60.0) == "not settled (within the 60 s run)"
    assert settled_text(float("nan"), 60.0) == "not settled (within the 60 s run)"
    assert settled_text(12.04, 60.0) == "12.0 s"


def test_sfc_settling_ignores_the_one_sample_bin_at_the_end():
    from aqmlab.repro.sfc import _settle

    t = np.round(np.arange(0, 6001) * 0.01, 2)  # 10-ms samples, t = 0 .. 60 s inclusive
    q = np.full(t.size, 100.0)
    q[t < 3] = 0.0  # start-up: out of the band for 3 s
    q[-1] = 0.0  # the last sample (t = 60 s) alone is far outside
    st, ov = _settle(t, q, 100.0, 60.0)
    assert st == 3.0 and ov == 0.0  # the old code said 61.0
    q[t >= 59.5] = 200.0  # the last whole second is outside: not settled
    st, _ = _settle(t, q, 100.0, 60.0)
    assert math.isnan(st)


def test_a_range_of_one_value_prints_once():
    # the old output: "100.0%-100.0% over k = 200..200", "mean queue 93-93"
    assert span([1.0, 0.9996], "{:.1%}") == "100.0%"
    assert span([93.2, 92.8]) == "93"
    assert span([62.0, 80.4]) == "62-80"
    assert [ordinal(n) for n in (1, 4, 7)] == ["first", "fourth", "7th"]
