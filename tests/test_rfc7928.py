"""`aqmlab rfc7928 --quick`: every section of scenarios/rfc7928/ runs as a sweep over seeds and
AQMs, and summary.md holds each configuration's means and confidence intervals as computed from
the section's results.parquet."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from aqmlab import rfc7928, sweep  # noqa: E402
from aqmlab.stats import across_seeds  # noqa: E402
from badinput import AQMLAB, ROOT  # noqa: E402


def test_every_section_loads_in_full_and_quick_form():
    full = rfc7928.sections(["codel", "fq_codel"])
    quick = rfc7928.sections(["codel", "fq_codel"], quick=True)
    files = sorted(p.stem for p in rfc7928.SUITE_DIR.glob("*.toml"))
    assert sorted(s.name for s in full) == files and len(files) >= 7
    for f, q in zip(full, quick, strict=True):
        sf, sq = sweep.load_spec(f.spec), sweep.load_spec(q.spec)
        assert sf.override_keys[0] == "aqm.type" and sf.grid["aqm.type"] == ["codel", "fq_codel"]
        assert len(sf.seeds) >= 8 and len(sq.seeds) == 2
        assert sq.base["duration"] != sf.base["duration"], f.name


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("rfc") / "suite"
    r = subprocess.run(
        [*AQMLAB, "rfc7928", "--aqms", "codel,pie", "--quick", "--out", str(out), "--workers", "2"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return out, r


def test_quick_suite_runs_every_section(suite):
    out, r = suite
    names = [s.name for s in rfc7928.sections(["codel"])]
    assert f"{len(names)} sections" in r.stdout and "0 failed" in r.stdout
    for name in names:
        df = pd.read_parquet(out / name / "results.parquet")
        assert set(df["aqm.type"]) == {"codel", "pie"}
        assert set(df["seed"]) == {1, 2}
        assert df["error"].isna().all()
        assert (df["links.bottleneck.utilization"] > 0).all()


def test_summary_md_holds_the_statistics_of_each_section(suite):
    out, _ = suite
    text = (out / "summary.md").read_text()
    for s in rfc7928.sections(["codel", "pie"], quick=True):
        assert f"## {s.rfc_section}. {s.title}" in text
        df = rfc7928.with_derived(pd.read_parquet(out / s.name / "results.parquet"))
        st = across_seeds(df, s.metrics)
        m = st[(st["aqm.type"] == "pie") & (st["metric"] == s.metrics[0])].iloc[0]
        cell = f"{m['mean']:.4g} ± {(m['ci_high'] - m['ci_low']) / 2:.2g}"
        block = text.split(f"(`{s.name}`)")[1].split("## ")[0]
        pie_rows = [ln for ln in block.splitlines() if re.match(r"\| pie \|", ln)]
        assert pie_rows and all(ln.split(" | ")[1:] for ln in pie_rows)
        assert any(cell in ln for ln in pie_rows), (s.name, cell, pie_rows)


def test_rerun_resumes(suite):
    out, _ = suite
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("runs/*.json")}
    r = subprocess.run(
        [*AQMLAB, "rfc7928", "--aqms", "codel,pie", "--quick", "--out", str(out), "--workers", "1"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert {p: p.stat().st_mtime_ns for p in out.rglob("runs/*.json")} == stamps


def test_html_report_has_every_section(suite):
    out, _ = suite
    page = (out / "report.html").read_text()
    names = [s.name for s in rfc7928.sections(["codel"])]
    for name in names:  # one section per guideline section, each with its own table and CDF
        assert f'<section id="{name}">' in page and f'id="{name}-summary"' in page
        assert f'id="{name}-cdf"' in page
    assert page.count("data:image/png;base64,") >= 2 * len(names)
    assert "http://" not in page and "https://" not in page
