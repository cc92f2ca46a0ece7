"""Paper figures: a sweep's axes (labels, units, numeric order), the metric-versus-parameter
figure and its confidence bands, goodput over the fair share, figure files (PNG, SVG, PDF: sizes,
embedded fonts, no date) and ``aqmlab plot``.

The sweep is a real one (``aqmlab.sweep.run``): CoDel's target written as text with units, given
out of order ("10ms", "2ms", "5ms"), times two flow counts, two seeds, 2 s runs.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from aqmlab import sweep as sweep_mod
from aqmlab.cli import main
from aqmlab.report import build_report, figures_folder, load_runs
from aqmlab.report.axes import Axis, default_name
from aqmlab.report.export import save_figure
from aqmlab.report.figures import WIDTHS, line_colors, parameter_figs
from aqmlab.report.metrics import fair_share_mbps, flow_goodputs_fair, run_metrics
from aqmlab.report.plot import PlotOptions, plot_figure
from aqmlab.scenario import ScenarioError
from aqmlab.sim import simulate
from aqmlab.sweep.spec import load_spec
from matplotlib.colors import to_rgb
from PIL import Image
from scipy import stats

BASE = {
    "name": "codel-target",
    "duration": "2s",
    "warmup": "0.5s",
    "dumbbell": {"rate": "10Mbps", "rtt": "20ms", "buffer": 100},
    "aqm": {"type": "codel"},
    "flows": [{"count": 2}],
}
SPEC = {
    "base": BASE,
    "seeds": [1, 2],
    "grid": {"aqm.target": ["10ms", "2ms", "5ms"], "flows.0.count": [2, 4]},
    "labels": {"aqm.target": "CoDel target"},
}


@pytest.fixture(scope="module")
def sw(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig") / "sweep"
    sweep_mod.run(SPEC, out, workers=1)
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run") / "run"
    simulate({**BASE, "flows": [{"count": 3}]}, seed=1).save(d)
    return d


# -- axes ----------------------------------------------------------------------------------


def test_axis_values_with_units_become_numbers_in_numeric_order():
    t = Axis.from_values("aqm.target", ["10ms", "2ms", "5ms", "500us", "2ms"])
    assert (t.numeric, t.unit, t.title) == (True, "ms", "target [ms]")
    assert t.values == ["500us", "2ms", "5ms", "10ms"]  # not "10ms" before "2ms"
    assert [t.number(v) for v in t.values] == pytest.approx([0.5, 2, 5, 10])
    assert t.describe("500us") == "target = 0.5 ms"
    r = Axis.from_values("dumbbell.rate", ["1Gbps", "100Mbps"])
    assert (r.unit, [r.number(v) for v in r.values]) == ("Gb/s", [0.1, 1.0])
    n = Axis.from_values("flows.0.count", [100, 10, 20])
    assert (n.name, n.unit, n.values) == ("flows", "", [10, 20, 100])
    c = Axis.from_values("aqm.type", ["pie", "codel"], {"values": {"codel": "CoDel"}})
    assert (c.numeric, c.values, c.name, c.text("codel")) == (
        False,
        ["pie", "codel"],
        "AQM",
        "CoDel",
    )
    assert default_name("flows[1].rtt_extra") == "rtt extra"


def test_labels_are_checked_and_kept_in_sweep_json(sw):
    assert json.loads((sw / "sweep.json").read_text())["labels"] == {
        "aqm.target": {"name": "CoDel target", "values": {}}
    }
    bad = [
        ({"aqm.tagret": "x"}, 'labels."aqm.tagret" = "x": not a [grid] or [zip] key'),
        ({"aqm.target": ""}, 'labels."aqm.target".name = "": must be a non-empty string'),
        ({"aqm.target": {"values": {"3ms": "x"}}}, 'values."3ms": not a value of aqm.target'),
        ({"aqm.target": {"nmae": "x"}}, 'labels."aqm.target".nmae: unknown key'),
        ({"aqm.target": 3}, 'labels."aqm.target" = 3: give a label or a table'),
    ]
    for labels, msg in bad:
        with pytest.raises(ScenarioError, match=re.escape(msg)):
            load_spec({**SPEC, "labels": labels})


def test_sweep_configurations_are_labelled_and_sorted_numerically(sw):
    rs = load_runs(sw)
    assert rs.configs == [f"CoDel target = {t} ms, flows = {n}" for t in (2, 5, 10) for n in (2, 4)]


# -- metrics -------------------------------------------------------------------------------


def test_goodput_over_fair_share(run_dir):
    rs = load_runs(run_dir)
    (r,) = rs.ok()
    flows = r.summary["flows"]
    rate = r.summary["links"]["bottleneck"]["rate_bps"]
    assert fair_share_mbps(r) == pytest.approx(rate / 1e6 / 3)
    fair = flow_goodputs_fair(r)
    assert fair == pytest.approx([f["goodput_bps"] / (rate / 3) for f in flows])
    assert run_metrics(r)["goodput_fair"] == pytest.approx(
        sum(f["goodput_bps"] for f in flows) / rate
    )


# -- the metric-versus-parameter figure ----------------------------------------------------


def test_parameter_figure_lines_are_seed_means_with_t_bands(sw):
    rs = load_runs(sw)
    figs = dict(parameter_figs(rs))
    assert list(figs) == ["aqm.target", "flows.0.count"]
    fig = figs["aqm.target"]
    ax = fig.axes[0]  # median (p50) queue delay
    assert ax.get_ylabel() == "p50 queue delay [ms]"
    assert ax.get_xlabel() == "" and fig.axes[3].get_xlabel() == "CoDel target [ms]"
    lines = ax.get_lines()
    assert len(lines) == 2  # one per flow count
    assert len({ln.get_color() for ln in lines}) == 2
    for ln, n in zip(lines, (2, 4), strict=True):
        assert ln.get_label() == f"flows = {n}"
        assert list(ln.get_xdata()) == [2.0, 5.0, 10.0]
        for x, y in zip(ln.get_xdata(), ln.get_ydata(), strict=True):
            target = {2.0: "2ms", 5.0: "5ms", 10.0: "10ms"}[x]
            vals = [
                run_metrics(r)["delay_p50"]
                for r in rs.ok()
                if r.flat["aqm.target"] == target and r.flat["flows.0.count"] == n
            ]
            assert len(vals) == 2 and y == pytest.approx(np.mean(vals))
            half = stats.t.ppf(0.975, 1) * np.std(vals, ddof=1) / math.sqrt(2)
            lo, hi = max(0.0, np.mean(vals) - half), np.mean(vals) + half
            rgb = to_rgb(ln.get_color())
            band = [c for c in ax.collections if np.allclose(c.get_facecolor()[0][:3], rgb)]
            assert len(band) == 1
            ys = [
                v[1]
                for c in band
                for p in c.get_paths()
                for v in p.vertices
                if v[0] == pytest.approx(x)
            ]
            assert any(v == pytest.approx(lo, abs=1e-9) for v in ys), (x, lo, ys)
            assert any(v == pytest.approx(hi, abs=1e-9) for v in ys), (x, hi, ys)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_colours_scale_to_the_number_of_lines():
    for n in (1, 10, 12, 40):
        cols = line_colors(n)
        assert len(cols) == n and len(set(cols)) == n


# -- files ----------------------------------------------------------------------------------


def test_report_writes_svg_pdf_png_one_column_fonts_embedded(sw, tmp_path):
    out = tmp_path / "report.html"
    build_report(sw, out, formats=["png", "svg", "pdf"], size="one")
    folder = figures_folder(out)
    assert folder.name == "report-figures"
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    for stem in ("param-aqm.target", "param-flows.0.count", "cdf", "delay-goodput", "goodput"):
        for ext in ("png", "svg", "pdf"):
            assert f"{stem}.{ext}" in names
    width_pt = WIDTHS["one"] * 72
    pdf = (folder / "cdf.pdf").read_bytes()
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType embedded, no Type 3
    box = re.search(rb"/MediaBox \[ *0 0 ([0-9.]+) ([0-9.]+) *\]", pdf)
    assert float(box.group(1)) == pytest.approx(width_pt)
    svg = ET.parse(folder / "cdf.svg").getroot()
    assert svg.get("width") == f"{width_pt:g}pt"
    assert not svg.findall(".//{http://www.w3.org/2000/svg}text")  # text drawn as outlines
    with Image.open(folder / "cdf.png") as im:
        assert im.size[0] == round(WIDTHS["one"] * 300)
    # the page is written too, and the figures folder is refused without --force
    assert out.is_file()
    with pytest.raises(ValueError, match="not empty|exists"):
        build_report(sw, tmp_path / "report.html", force=False, formats=["svg"])


def test_figure_files_carry_no_date(run_dir, tmp_path):
    import matplotlib.pyplot as plt

    rs = load_runs(run_dir)
    for fmt in ("svg", "pdf"):
        data = []
        for i in range(2):
            fig = plot_figure(rs, "cdf")
            data.append(save_figure(fig, tmp_path / f"{i}.{fmt}", fmt).read_bytes())
            plt.close(fig)
        assert data[0] == data[1], fmt


# -- aqmlab plot ----------------------------------------------------------------------------


def _cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_plot_every_kind_of_a_run(run_dir, tmp_path, capsys):
    for kind in ("timeseries", "cdf", "ellipse", "box", "bar"):
        out = tmp_path / f"{kind}.png"
        code, _, err = _cli([
            "plot", str(run_dir), kind, "-o", str(out), "--override-title", f"T {kind}",
            "--size", "one",
        ], capsys)  # fmt: skip
        assert code == 0, err
        with Image.open(out) as im:
            assert im.size[0] == round(WIDTHS["one"] * 300)
    code, _, err = _cli(["plot", str(run_dir), "cdf", "-o", str(tmp_path / "c"), "--formats",
                         "svg,pdf"], capsys)  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "c.svg").is_file() and (tmp_path / "c.pdf").is_file()


def test_plot_of_a_sweep_and_flent_options(sw, run_dir):
    rs = load_runs(sw)
    fig = plot_figure(rs, "param", PlotOptions(title_extra="(2 seeds)", no_legend=True))
    assert fig.get_suptitle() == "sweep: param (2 seeds)" and not fig.legends
    fig = plot_figure(
        rs, "bar", PlotOptions(metric="utilization", bounds_x=(0, 100), label_x="u", zero_y=True)
    )
    ax = fig.axes[0]
    assert ax.get_xlim() == (0, 100) and ax.get_xlabel() == "u"
    assert len(ax.get_yticklabels()) == 6
    # --scale-data: the single run's CDF drawn on axes that cover the sweep's delays too
    own = plot_figure(load_runs(run_dir), "ellipse")
    scaled = plot_figure(load_runs(run_dir), "ellipse", PlotOptions(scale_data=[rs]))
    big = plot_figure(rs, "ellipse")
    (x0, x1), (bx0, bx1) = scaled.axes[0].get_xlim(), big.axes[0].get_xlim()
    assert x0 >= bx0 and x1 <= bx1  # reversed delay axis, wide enough for both
    assert scaled.axes[0].get_ylim()[1] >= own.axes[0].get_ylim()[1]
    import matplotlib.pyplot as plt

    plt.close("all")


def test_plot_bad_input_one_line_nothing_written(run_dir, tmp_path, capsys):
    cases = [
        (["plot", str(run_dir), "pie", "-o", str(tmp_path / "a.png")], "KIND = 'pie'"),
        (["plot", str(run_dir), "cdf", "-o", str(tmp_path / "a.jpg")], "--output ="),
        (["plot", str(run_dir), "cdf", "-o", str(tmp_path / "a"), "--formats", "png,gif"],
         "--formats = 'png,gif'"),
        (["plot", str(run_dir), "bar", "-o", str(tmp_path / "a.png"), "--metric", "x"],
         "metric = 'x'"),
        (["plot", str(run_dir), "param", "-o", str(tmp_path / "a.png")], "nothing to draw"),
        (["plot", str(tmp_path / "none"), "cdf", "-o", str(tmp_path / "a.png")], "no such folder"),
        (["plot", str(run_dir), "cdf", "-o", str(tmp_path / "a.png"), "--bounds-x", "1,2,3"],
         "--bounds-x = 1,2,3"),
        (["report", str(run_dir), "--out", str(tmp_path / "r.html"), "--formats", "png,jpg"],
         "--formats = 'png,jpg'"),
        (["report", str(run_dir), "--out", str(tmp_path / "r.html"), "--size", "three"],
         "--size = 'three'"),
        (["plot", str(run_dir), "cdf", "-o", str(tmp_path / "a.png"), "--size", "three"],
         "--size = 'three'"),
        (["plot", str(run_dir), "cdf", "-o", str(tmp_path / "a.png"), "--figure-width", "0"],
         "--figure-width = 0"),
    ]  # fmt: skip
    for args, msg in cases:
        code, _, err = _cli(args, capsys)
        assert code == 2, (args, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and msg in lines[0] and "Traceback" not in err, (args, err)
        assert sorted(p.name for p in tmp_path.iterdir()) == [], args
    # an existing file is kept without --force
    (tmp_path / "keep.png").write_bytes(b"mine")
    code, _, err = _cli(["plot", str(run_dir), "cdf", "-o", str(tmp_path / "keep.png")], capsys)
    assert code == 2 and (tmp_path / "keep.png").read_bytes() == b"mine"


def test_sweep_result_plot_names_and_orders_configurations(sw):
    import matplotlib.pyplot as plt

    fig = sweep_mod.SweepResult.load(sw).plot(metric="links.bottleneck.utilization")
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == [f"CoDel target = {t} ms, flows = {n}" for t in (2, 5, 10) for n in (2, 4)]
    plt.close(fig)
