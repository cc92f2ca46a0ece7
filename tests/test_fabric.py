"""Fabric runs through the command line: the presets run, ``summary.json`` has the FCT
slowdown table, the normalized ``scenario.toml`` reproduces the summary, and the sweep budget
estimates a fabric run (docs/fabric.md)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRESETS = sorted((ROOT / "scenarios" / "fabric").glob("*.toml"))


def _run(scenario: Path, out: Path) -> dict:
    subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(scenario), "--out", str(out), "--no-plots",
         "--quiet"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads((out / "summary.json").read_text())


def _stable(s: dict) -> dict:
    return {k: v for k, v in s.items() if k not in ("wall_seconds", "meta")}


def test_the_permutation_preset_reports_slowdowns_and_reruns_the_same(tmp_path):
    s = _run(ROOT / "scenarios" / "fabric" / "fat_tree_permutation.toml", tmp_path / "a")
    buckets = {b["bucket"]: b for b in s["fct_slowdown"]}
    assert list(buckets) == ["<100KB", "100KB-1MB", "1MB-10MB", ">10MB", "all"]
    # sixteen 2 MB flows, all complete, every slowdown above 1
    assert buckets["1MB-10MB"]["flows"] == 16 == buckets["all"]["flows"]
    assert 1.0 < buckets["all"]["p50"] <= buckets["all"]["p99"]
    again = _run(tmp_path / "a" / "scenario.toml", tmp_path / "b")
    assert _stable(again) == _stable(s)


@pytest.mark.parametrize("preset", PRESETS, ids=[p.stem for p in PRESETS])
def test_the_sweep_budget_estimates_every_preset(preset):
    from aqmlab.scenario import load_scenario
    from aqmlab.sweep.budget import _capacity, _demand, run_seconds

    sc = load_scenario(preset)
    t = run_seconds(sc)
    assert 0 < t < 60 and math.isfinite(t), t
    n = sc.normalized
    if preset.stem == "leaf_spine_websearch":
        # 50 % of 32 hosts x 10 Gb/s for 0.2 s in 1000-byte packets; the hosts' links carry
        # twice that
        assert _demand(n) == pytest.approx(0.5 * 32 * 10e9 * 0.2 / 8000)
        assert _capacity(n) == pytest.approx(32 * 10e9 * 0.2 / 8000)
