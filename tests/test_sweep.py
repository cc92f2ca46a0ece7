"""Sweeps (aqmlab.sweep, `aqmlab sweep`): spec expansion, the output layout (results.parquet,
runs/<key>.json, time series), rows equal to direct simulations, failed runs recorded, resuming,
Ctrl-C keeping finished runs, and Dask giving the same rows as the local pool."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from aqmlab import sweep  # noqa: E402
from aqmlab.sim import simulate  # noqa: E402
from badinput import AQMLAB, ROOT, default_sigint  # noqa: E402

BASE = {
    "duration": "2s",
    "warmup": "0.5s",
    "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 50},
    "flows": [{"count": 3}],
}
SPEC = {
    "base": BASE,
    "seeds": [1, 2],
    "grid": {"aqm.type": ["codel", "pie"]},
    "zip": {"dumbbell.rate": ["5Mbps", "20Mbps"], "dumbbell.buffer": [30, 60]},
}


def test_spec_expands_grid_times_zip_times_seeds_in_order():
    spec = sweep.load_spec(SPEC)
    runs = spec.runs()
    assert len(runs) == 2 * 2 * 2
    assert spec.override_keys == ["aqm.type", "dumbbell.rate", "dumbbell.buffer"]
    assert [(r.overrides["aqm.type"], r.overrides["dumbbell.rate"], r.seed) for r in runs] == [
        ("codel", "5Mbps", 1),
        ("codel", "5Mbps", 2),
        ("codel", "20Mbps", 1),
        ("codel", "20Mbps", 2),
        ("pie", "5Mbps", 1),
        ("pie", "5Mbps", 2),
        ("pie", "20Mbps", 1),
        ("pie", "20Mbps", 2),
    ]
    # zip lists move together
    assert {(r.overrides["dumbbell.rate"], r.overrides["dumbbell.buffer"]) for r in runs} == {
        ("5Mbps", 30),
        ("20Mbps", 60),
    }
    keys = [r.key for r in runs]
    assert len(set(keys)) == len(keys)
    assert keys == [r.key for r in sweep.load_spec(SPEC).runs()], "keys are stable"
    assert sweep.run_key({"a": 1, "b": 2}, 3) == sweep.run_key({"b": 2, "a": 1}, 3)


def test_spec_file_resolves_base_relative_to_itself(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.toml").write_text(
        'duration = "1s"\n[dumbbell]\nrate = "1Mbps"\n[[flows]]\ncount = 1\n'
    )
    (tmp_path / "s.toml").write_text('base = "sub/base.toml"\nseeds = [4]\n')
    spec = sweep.load_spec(tmp_path / "s.toml")
    assert spec.base["dumbbell"]["rate"] == "1Mbps"
    assert [r.seed for r in spec.runs()] == [4]
    assert spec.name == "s"


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    out = tmp_path_factory.mktemp("sw") / "local"
    df = sweep.run({**SPEC, "timeseries": True}, out, workers=2).to_pandas()
    return out, df


def test_results_table_layout_and_records(local):
    out, df = local
    assert list(df.columns[:9]) == [
        "run_key",
        "aqm.type",
        "dumbbell.rate",
        "dumbbell.buffer",
        "seed",
        "dumbbell.rate.number",
        "dumbbell.rate.unit",
        "error",
        "wall_s",
    ]
    # The rates ("5Mbps", "20Mbps") as numbers in one unit, for numeric sorting and filters.
    rates = df[["dumbbell.rate", "dumbbell.rate.number", "dumbbell.rate.unit"]].drop_duplicates()
    assert {(r, n, u) for r, n, u in rates.itertuples(index=False)} == {
        ("5Mbps", 5.0, "Mb/s"),
        ("20Mbps", 20.0, "Mb/s"),
    }
    for col in (
        "links.bottleneck.utilization",
        "links.bottleneck.queue_delay_ms.mean",
        "links.bottleneck.queue_delay_ms.p99",
        "fairness.jain",
    ):
        assert col in df.columns
    assert not any(c.startswith("flows") for c in df.columns), "lists are not flattened"
    assert "wall_seconds" not in df.columns
    assert df["error"].isna().all()
    assert list(df["run_key"]) == [r.key for r in sweep.load_spec(SPEC).runs()]
    on_disk = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(on_disk, df)
    # the override is applied: the link rate follows dumbbell.rate
    rate = {"5Mbps": 5e6, "20Mbps": 20e6}
    assert (df["links.bottleneck.rate_bps"] == df["dumbbell.rate"].map(rate)).all()
    assert "links.bottleneck.aqm" not in df.columns, "strings are not flattened"
    rec = json.loads((out / "runs" / f"{df['run_key'][0]}.json").read_text())
    assert set(rec) == {
        "run_key",
        "overrides",
        "seed",
        "scenario_sha256",
        "scenario_toml",
        "summary",
        "error",
        "wall_s",
        "timeseries_sha256",
        "sha256",
    }
    assert rec["overrides"] == {
        "aqm.type": "codel",
        "dumbbell.rate": "5Mbps",
        "dumbbell.buffer": 30,
    }
    assert rec["summary"]["links"]["bottleneck"]["aqm"] == "codel"
    assert (out / "spec.toml").is_file() and (out / "sweep.json").is_file()
    manifest = json.loads((out / ".aqmlab").read_text())
    assert manifest["command"] == "sweep"
    assert f"runs/{rec['run_key']}.json" in manifest["files"]


def test_a_row_is_the_direct_simulation_of_its_scenario(local):
    _, df = local
    row = df.iloc[5]
    data = sweep.load_spec(SPEC).scenario_data(
        {k: row[k] for k in ("aqm.type", "dumbbell.rate")}
        | {"dumbbell.buffer": int(row["dumbbell.buffer"])},
        int(row["seed"]),
    )
    direct = sweep.flatten_summary(simulate(data).summary)
    assert direct, "the summary has numeric figures"
    for k, v in direct.items():
        assert row[k] == pytest.approx(v, rel=0, abs=0), k


def test_timeseries_are_a_partitioned_dataset(local):
    import pyarrow.dataset as ds

    out, df = local
    parts = sorted((out / "timeseries").iterdir())
    assert [p.name for p in parts] == sorted(f"run_key={k}" for k in df["run_key"])
    table = ds.dataset(out / "timeseries", format="parquet", partitioning="hive").to_table()
    assert set(table.column("run_key").to_pylist()) == set(df["run_key"])
    one = table.filter(ds.field("run_key") == df["run_key"][0]).to_pandas()
    assert one["time_s"].max() == pytest.approx(2.0)
    assert {"queue_pkts", "queue_delay_ms_mean", "throughput_bps"} <= set(one.columns)


def test_rerun_skips_finished_runs_and_extends_with_new_seeds(local, tmp_path):
    out, df = local
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    seen = []
    again = sweep.run(
        {**SPEC, "timeseries": True}, out, progress=lambda *a: seen.append(a)
    ).to_pandas()
    assert seen == [(8, 8, 0)], "every run was already done: none ran"
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()} == stamps
    pd.testing.assert_frame_equal(again.drop(columns="wall_s"), df.drop(columns="wall_s"))
    seen.clear()
    more = sweep.run(
        {**SPEC, "seeds": [1, 2, 3], "timeseries": True},
        out,
        workers=1,
        progress=lambda *a: seen.append(a),
    ).to_pandas()
    assert seen[0] == (8, 12, 0) and seen[-1] == (12, 12, 0), "only the 4 new runs ran"
    assert len(more) == 12 and sorted(more["seed"].unique()) == [1, 2, 3]
    old = more[more["seed"] < 3].drop(columns="wall_s").reset_index(drop=True)
    pd.testing.assert_frame_equal(old, df.drop(columns="wall_s").reset_index(drop=True))


def test_a_failed_run_is_recorded_and_does_not_stop_the_sweep(tmp_path):
    # c is a node without links: a flow to it has no route, found when the run is built
    base = {
        "duration": "1s",
        "nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "links": [{"src": "a", "dst": "b", "rate": "1Mbps", "delay": "5ms"}],
        "flows": [{"src": "a", "dst": "b"}],
    }
    spec = {"base": base, "seeds": [1], "grid": {"flows.0.dst": ["c", "b"]}}
    df = sweep.run(spec, tmp_path / "out", workers=1).to_pandas()
    assert list(df["flows.0.dst"]) == ["c", "b"]
    bad, good = df.iloc[0], df.iloc[1]
    assert "unroutable" in bad["error"] and "\n" not in bad["error"]
    assert pd.isna(bad["links.a->b.utilization"])
    assert pd.isna(good["error"]) and good["links.a->b.utilization"] > 0
    rec = json.loads((tmp_path / "out" / "runs" / f"{bad['run_key']}.json").read_text())
    assert rec["summary"] is None and rec["error"] == bad["error"]


def test_dask_local_cluster_gives_the_same_rows(local, tmp_path):
    pytest.importorskip("dask.distributed")
    _, df = local
    # a second sweep on the same cluster: the same run keys, another base scenario
    other = {**SPEC, "base": {**BASE, "dumbbell": {**BASE["dumbbell"], "rtt": "80ms"}}}
    cluster = sweep.DaskCluster("local", workers=2)
    try:
        dk = sweep.execute(
            sweep.prepare({**SPEC, "timeseries": True}, tmp_path / "dask", executor=cluster)
        )
        dk2 = sweep.execute(sweep.prepare(other, tmp_path / "dask2", executor=cluster))
    finally:
        cluster.close()
    pd.testing.assert_frame_equal(dk.drop(columns="wall_s"), df.drop(columns="wall_s"))
    assert list(dk2["run_key"]) == list(dk["run_key"])
    ref2 = sweep.run(other, tmp_path / "local2", workers=1).to_pandas()
    pd.testing.assert_frame_equal(dk2.drop(columns="wall_s"), ref2.drop(columns="wall_s"))
    assert not dk2["events"].equals(dk["events"])


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT / "python"))


def test_ctrl_c_keeps_finished_runs_and_a_rerun_finishes_the_rest(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'seeds = [1, 2, 3, 4, 5, 6, 7, 8]\n[base]\nduration = "10s"\n[base.dumbbell]\n'
        'rate = "100Mbps"\n[[base.flows]]\ncount = 20\n'
    )
    out = tmp_path / "out"
    cmd = [*AQMLAB, "sweep", str(spec), "--out", str(out), "--workers", "1"]
    p = subprocess.Popen(
        cmd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while not list((out / "runs").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    kept = sorted(x.stem for x in (out / "runs").glob("*.json"))
    assert err.strip() == (
        f"error: interrupted; {len(kept)} of 8 runs kept in {out} (run the same command again "
        "to finish)"
    )
    assert 1 <= len(kept) < 8, "stopped part-way, finished runs kept"
    table = pd.read_parquet(out / "results.parquet")
    assert sorted(table["run_key"]) == kept
    assert not [x for x in out.rglob(".*") if x.name != ".aqmlab"], "no temporaries left"
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".")]
    r = subprocess.run([*cmd[:-2], "--workers", "2"], env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{len(kept)} of 8 runs already done" in r.stderr
    done = pd.read_parquet(out / "results.parquet")
    assert len(done) == 8 and done["error"].isna().all()
    assert sorted(done["seed"]) == list(range(1, 9))


def test_cli_writes_the_spec_as_given(tmp_path):
    text = '# my sweep\nseeds = [7]\n[base]\nduration = "1s"\n[base.dumbbell]\nrate = "2Mbps"\n[[base.flows]]\ncount = 1\n'
    (tmp_path / "s.toml").write_text(text)
    r = subprocess.run(
        [*AQMLAB, "sweep", "s.toml", "--out", "o", "--workers", "1", "--timeseries"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "1 runs, 0 failed" in r.stdout
    assert (tmp_path / "o" / "spec.toml").read_text() == text
    assert len(list((tmp_path / "o" / "timeseries").iterdir())) == 1


def test_a_run_with_an_sqm_table_runs_the_online_controller_as_aqmlab_run_does(monkeypatch):
    import aqmlab.online
    from aqmlab.sweep.worker import execute

    calls = []
    real = aqmlab.online.run_controller

    def spy(sim, period, **kw):
        calls.append(period)
        return real(sim, period=period, **kw)

    monkeypatch.setattr(aqmlab.online, "run_controller", spy)
    base = {
        "duration": "4s",
        "dumbbell": {"rate": "10Mbps"},
        "aqm": {"type": "sqm", "queues": 2},
        "sqm": {"period": "2s"},
        "flows": [{"count": 2}],
    }
    record, _ = execute(base, "k", {}, 1)
    assert record["error"] is None and calls == [2.0]
    assert record["summary"]["sim_seconds"] == 4.0
    del base["sqm"]
    execute(base, "k", {}, 1)
    assert calls == [2.0], "no [sqm] table: no controller"


def test_a_script_read_from_stdin_can_run_a_sweep(tmp_path):
    # spawn/forkserver workers would try to import __main__ from '<stdin>' and die
    script = (
        "from aqmlab import sweep\n"
        f"res = sweep.run({{'base': {BASE!r}, 'seeds': [1]}}, {str(tmp_path / 'o')!r}, workers=1)\n"
        "df = res.to_pandas()\n"
        "print(len(df), df['error'].isna().all())\n"
    )
    r = subprocess.run(
        [sys.executable, "-"], input=script, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "True"]


def test_cc_is_a_sweep_value_bbr3_included():
    """``cc`` sweeps like any key; ``bbr3`` (BBRv3) is one of its values."""
    spec = sweep.load_spec({"base": BASE, "grid": {"flows.0.cc": ["bbr", "bbr3"]}})
    runs = spec.runs()
    assert [r.overrides["flows.0.cc"] for r in runs] == ["bbr", "bbr3"]
    summary = simulate(spec.scenario_data(runs[1].overrides, runs[1].seed)).summary
    assert [f["cc"] for f in summary["flows"]] == ["bbr3"] * 3
    assert summary["links"]["bottleneck"]["utilization"] > 0.5
