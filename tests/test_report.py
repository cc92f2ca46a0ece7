"""``aqmlab report``: the page's structure, its images, self-containment, and its numbers.

The sweep fixtures are written here in the sweep layout (results.parquet, runs/<key>.json,
timeseries/run_key=<key>/part-0.parquet, spec.toml) from a few short simulations, so the report
is tested independently of the sweep command.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from aqmlab.report import build_report, load_runs
from aqmlab.report.figures import cdf_points, merged_histogram
from aqmlab.scenario import Scenario
from aqmlab.sim import simulate
from PIL import Image
from scipy import stats

BASE = {
    "name": "fixture",
    "duration": "4s",
    "warmup": "1s",
    "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 60},
    "aqm": {"type": "codel"},
    "flows": [{"count": 3}],
}
GRID = [{"aqm.type": "codel"}, {"aqm.type": "pie"}, {"aqm.type": "droptail"}]
SEEDS = [1, 2, 3]


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out[key] = float(v)
    return out


def write_sweep(folder: Path, grid=GRID, seeds=SEEDS, failed: int = 1, timeseries=True):
    """A sweep folder in the documented layout; the last ``failed`` configurations' first
    seed is recorded as a failed run (error message, no summary)."""
    folder.mkdir(parents=True)
    (folder / "runs").mkdir()
    rows = []
    for ci, ov in enumerate(grid):
        for si, seed in enumerate(seeds):
            key = f"c{ci}-s{seed}"
            fails = ci >= len(grid) - failed and si == 0
            summary, error = None, None
            if fails:
                error = "simulated failure: the test asked for it"
            else:
                sc = Scenario(BASE).with_overrides([f"{k}={v}" for k, v in ov.items()])
                res = simulate(sc, seed=seed)
                summary = res.summary
                if timeseries:
                    d = folder / "timeseries" / f"run_key={key}"
                    d.mkdir(parents=True)
                    pq.write_table(pa.table(res.columns["timeseries"]), d / "part-0.parquet")
            (folder / "runs" / f"{key}.json").write_text(
                json.dumps(
                    {
                        "run_key": key,
                        "overrides": ov,
                        "seed": seed,
                        "summary": summary,
                        "error": error,
                        "wall_s": 0.01,
                    }  # fmt: skip
                )
            )
            rows.append(
                {
                    "run_key": key,
                    **ov,
                    "seed": seed,
                    "error": error,
                    "wall_s": 0.01,
                    **(_flatten(summary) if summary else {}),
                }  # fmt: skip
            )
    cols = list(dict.fromkeys(k for r in rows for k in r))
    table = pa.table({c: [r.get(c) for r in rows] for c in cols})
    pq.write_table(table, folder / "results.parquet")
    (folder / "spec.toml").write_text('scenario = "fixture.toml"\nseeds = [1, 2, 3]\n')
    return folder


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return write_sweep(tmp_path_factory.mktemp("sw") / "sweep")


@pytest.fixture(scope="module")
def sweep_page(sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "report.html"
    build_report(sweep, out)
    return out.read_text()


class _Page(HTMLParser):
    """Collects sections, image sources, table rows and every attribute value."""

    def __init__(self):
        super().__init__()
        self.sections, self.imgs, self.attrs = [], [], []
        self.rows: dict[str, int] = {}
        self._table, self._in_body = None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.attrs += [v or "" for _k, v in attrs]
        if tag == "section":
            self.sections.append(a.get("id"))
        elif tag == "img":
            self.imgs.append(a.get("src", ""))
        elif tag == "table":
            self._table = a.get("class") or f"table{len(self.rows)}"
            self.rows[self._table] = 0
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows[self._table] += 1

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False


def _parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


def _assert_self_contained(html: str, page: _Page) -> None:
    assert "http://" not in html and "https://" not in html
    assert "<script" not in html.lower() and "<link" not in html.lower()
    assert "url(" not in html
    for v in page.attrs:
        assert not re.match(r"^\s*(//|[a-z]+:(?!image/png;base64,))", v, re.I) or v.startswith(
            "data:image/png;base64,"
        ), v
    for src in page.imgs:
        assert src.startswith("data:image/png;base64,"), src[:40]


def _assert_images_decode(page: _Page) -> list[tuple[int, int]]:
    sizes = []
    for src in page.imgs:
        raw = base64.b64decode(src.split(",", 1)[1], validate=True)
        img = Image.open(io.BytesIO(raw))
        assert img.format == "PNG"
        img.load()  # decodes every pixel
        sizes.append(img.size)
    return sizes


def test_sweep_page_structure(sweep_page):
    page = _parse(sweep_page)
    sections = ("summary", "parameters", "cdf", "delay-goodput", "timeseries", "goodput")
    for section in (*sections, "failed"):
        assert section in page.sections, section
    # one table row per configuration, one per failed run
    assert page.rows["ci"] == len(GRID)
    assert sum(v for k, v in page.rows.items() if k != "ci") == 1
    assert "simulated failure" in sweep_page
    # metric versus AQM, CDF, ellipses, one time-series figure, box plots
    sizes = _assert_images_decode(page)
    assert len(sizes) == 5 and all(w >= 600 and h >= 100 for w, h in sizes)
    _assert_self_contained(sweep_page, page)


def test_table_numbers_are_the_runs_means_and_t_intervals(sweep, sweep_page):
    # droptail (the last configuration) lost its first seed: n = 2, its interval from 2 runs
    checked = 0
    for aqm, ci, seeds, n_txt in (
        ("droptail", 2, SEEDS[1:], "2 (+1 failed)"),
        ("codel", 0, SEEDS, "3"),
    ):
        row = re.search(rf"<tr><td class=\"cfg\">AQM = {aqm}</td>(.*?)</tr>", sweep_page)
        assert row, sweep_page[:2000]
        cells = re.findall(r"<td>(.*?)</td>", row.group(1))
        assert cells[0] == n_txt
        links = [
            json.loads((sweep / "runs" / f"c{ci}-s{seed}.json").read_text())["summary"]["links"][
                "bottleneck"
            ]
            for seed in seeds
        ]
        for col, values in (
            (1, [100 * ln["utilization"] for ln in links]),
            (2, [ln["queue_delay_ms"]["mean"] for ln in links]),
            (3, [ln["queue_delay_ms"]["p99"] for ln in links]),
        ):
            n = len(values)
            m = float(np.mean(values))
            half = stats.t.ppf(0.975, n - 1) * np.std(values, ddof=1) / math.sqrt(n)
            mean_txt, half_txt = cells[col].split(" ± ")
            if half == 0:  # the runs gave the same value (droptail's utilization: 100 %)
                assert half_txt == "0" and float(mean_txt) == pytest.approx(m, abs=0.05)
                continue
            # the half-width to two significant digits, the mean to the same decimal place
            decimals = len(half_txt.split(".")[1]) if "." in half_txt else 0
            assert (len(mean_txt.split(".")[1]) if "." in mean_txt else 0) == decimals
            assert decimals == max(0, 1 - math.floor(math.log10(half)))
            assert float(half_txt) == pytest.approx(round(half, decimals))
            assert abs(float(mean_txt) - m) <= 0.5 * 10**-decimals + 1e-12
            checked += 1
    assert checked >= 3


def test_cdf_from_merged_histograms_matches_the_runs(sweep):
    rs = load_runs(sweep)
    assert rs.kind == "sweep" and rs.keys == ["aqm.type"]
    assert rs.configs == ["AQM = codel", "AQM = pie", "AQM = droptail"]
    # codel: three runs; the merged CDF at each bin edge is the fraction of all their packets
    runs = rs.ok("AQM = codel")
    assert len(runs) == 3
    hists = [r.summary["links"]["bottleneck"]["queue_delay_hist"] for r in runs]
    total = sum(sum(h["counts"]) for h in hists)
    edge = sorted({hi for h in hists for hi in h["hi_ms"]})[len(hists[0]["hi_ms"]) // 2]
    below = sum(
        c for h in hists for hi, c in zip(h["hi_ms"], h["counts"], strict=True) if hi <= edge
    )

    lo, hi, counts = merged_histogram(rs, "AQM = codel")
    x, y = cdf_points(lo, hi, counts)
    k = int(np.flatnonzero(x == edge)[-1])
    assert y[k] == pytest.approx(below / total)
    assert counts.sum() == total


def test_folder_of_runs_and_single_run(tmp_path):
    # a folder of single runs (as `aqmlab demo` writes): grouped by scenario and AQM, seeds
    # of one configuration together
    for aqm in ("codel", "pie"):
        for seed in (1, 2):
            sc = {**BASE, "name": "grp", "aqm": {"type": aqm}}
            simulate(sc, seed=seed).save(tmp_path / "runs" / f"{aqm}-{seed}")
    rs = load_runs(tmp_path / "runs")
    assert rs.kind == "runs"
    assert rs.configs == ["grp / codel", "grp / pie"]
    assert [len(rs.ok(c)) for c in rs.configs] == [2, 2]
    out = tmp_path / "r.html"
    build_report(tmp_path / "runs", out)
    page = _parse(out.read_text())
    assert page.rows["ci"] == 2
    assert len(_assert_images_decode(page)) == 4
    _assert_self_contained(out.read_text(), page)
    # one run folder: one row, no interval
    out1 = tmp_path / "r1.html"
    build_report(tmp_path / "runs" / "pie-2", out1)
    html = out1.read_text()
    page = _parse(html)
    assert page.rows["ci"] == 1
    assert " ± " not in html.split("<tbody>")[1].split("</tbody>")[0]
    _assert_images_decode(page)


def test_cli_writes_once_and_replaces_only_with_force(sweep, tmp_path):
    out = tmp_path / "rep.html"

    def cli(*extra):
        return subprocess.run(
            [sys.executable, "-m", "aqmlab", "report", str(sweep), "--out", str(out), *extra],
            capture_output=True, text=True, cwd=tmp_path,
        )  # fmt: skip

    p = cli()
    assert p.returncode == 0, p.stderr
    first = out.stat().st_mtime_ns
    p = cli()
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "--force" in p.stderr
    assert out.stat().st_mtime_ns == first
    assert cli("--force").returncode == 0
    assert sorted(q.name for q in tmp_path.iterdir()) == ["rep.html"]


def test_meaningless_ratios_are_shown_as_not_applicable():
    """A ratio whose base is zero or negative, a fraction outside [0, 1] or a negative count is
    NaN in the metrics and "n/a" on the page, never a number such as -100 % (a sweep's row
    cannot be refused per run: its numbers are taken as they are and judged here)."""
    from aqmlab.report.inputs import Run
    from aqmlab.report.metrics import run_metrics
    from aqmlab.report.page import _cell

    def flat(**kw):
        row = {
            "links.bottleneck.utilization": 0.5,
            "links.bottleneck.arrivals": 1000.0,
            "links.bottleneck.drops": 10.0,
            "links.bottleneck.queue_delay_ms.mean": 2.0,
            "links.bottleneck.queue_delay_ms.p99": 9.0,
            "fairness.jain": 0.9,
        }
        row.update(kw)
        return run_metrics(Run(key="k", config="c", seed=1, summary=None, flat=row))

    good = flat()
    assert good["utilization"] == 50.0 and good["loss"] == 1.0 and good["jain"] == 0.9
    for bad, key in [
        ({"links.bottleneck.utilization": -1.0}, "utilization"),  # was -100 %
        ({"links.bottleneck.utilization": 1.5}, "utilization"),
        ({"links.bottleneck.arrivals": 0.0}, "loss"),
        ({"links.bottleneck.arrivals": -1000.0, "links.bottleneck.drops": 1000.0}, "loss"),
        ({"links.bottleneck.drops": -1000.0}, "loss"),  # was -100 %
        ({"links.bottleneck.drops": 2000.0}, "loss"),
        ({"links.bottleneck.queue_delay_ms.mean": -3.0}, "delay_mean"),
        ({"fairness.jain": 7.0}, "jain"),
    ]:
        m = flat(**bad)
        assert math.isnan(m[key]), (bad, m)
        assert _cell([m[key]]) == "n/a"
        assert _cell([m[key], m[key]]) == "n/a"
    assert _cell([50.0, 70.0]) == "60 ± 127"  # t(0.975, 1) x 10 = 127.06: whole units
