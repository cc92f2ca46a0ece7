"""Sweeps that cannot lose or invent data: a user's file in a sweep folder is never adopted into
its manifest; resuming trusts only records that verify (checksums of their content and of their
run's scenario) and reports the others in one line; a worker killed from outside fails only its
run; SIGTERM keeps the finished runs like Ctrl-C; and the spec checks that refuse misleading or
oversized sweeps (spec expansion, budget)."""

from __future__ import annotations

import contextlib
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
from badinput import AQMLAB, ROOT, default_sigint, run  # noqa: E402

BASE = {"duration": "1s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}]}
SPEC = {"base": BASE, "seeds": [1, 2], "grid": {"aqm.type": ["codel", "pie"]}}
SPEC_TOML = """seeds = [1, 2]
[base]
duration = "1s"
[base.dumbbell]
rate = "10Mbps"
[[base.flows]]
count = 2
[grid]
"aqm.type" = ["codel", "pie"]
"""


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT / "python"))


def _table(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "results.parquet").drop(columns="wall_s")


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A finished 4-run sweep folder (copied by each test that changes it)."""
    out = tmp_path_factory.mktemp("trust") / "done"
    sweep.run(SPEC, out, workers=1)
    return out


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


# -- the manifest lists only what aqmlab wrote ---------------------------------------------------


def test_a_users_file_in_a_sweep_folder_is_never_adopted(done, tmp_path):
    out = _copy(done, tmp_path / "res")
    (out / "mine.txt").write_text("my notes\n")
    (out / "mine").mkdir()
    (out / "mine" / "data.csv").write_text("a,b\n")
    # resuming (nothing to run) rewrites the manifest: the user's files stay out of it
    sweep.run(SPEC, out, workers=1)
    listed = json.loads((out / ".aqmlab").read_text())["files"]
    assert not [f for f in listed if f.startswith("mine")], listed
    assert "results.parquet" in listed and "runs/" in listed
    # so another command does not replace the folder (and delete the file) without --force
    p = run(
        ["dumbbell", "--duration", "1s", "--flows", "2", "--no-plots", "--out", "res"], tmp_path
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == "error: output folder 'res' is not empty (use --force to replace it)"
    assert (out / "mine.txt").read_text() == "my notes\n"
    assert (out / "mine" / "data.csv").read_text() == "a,b\n"
    # without the user's files it is an aqmlab folder again, replaced without --force
    (out / "mine.txt").unlink()
    (out / "mine" / "data.csv").unlink()
    (out / "mine").rmdir()
    p = run(
        ["dumbbell", "--duration", "1s", "--flows", "2", "--no-plots", "--out", "res"], tmp_path
    )
    assert p.returncode == 0, p.stderr


def test_a_record_written_before_the_process_was_killed_is_listed_once_it_verifies(done, tmp_path):
    # SIGKILL of the parent leaves records the manifest does not list yet: they verify, so
    # the next run lists them (a user's file never verifies as a record)
    out = _copy(done, tmp_path / "res")
    manifest = json.loads((out / ".aqmlab").read_text())
    key = sorted(p.stem for p in (out / "runs").glob("*.json"))[0]
    manifest["files"].remove(f"runs/{key}.json")
    (out / ".aqmlab").write_text(json.dumps(manifest))
    (out / "runs" / "notes.json").write_text("{}")  # not a run of the spec: not listed
    sweep.run(SPEC, out, workers=1)
    listed = json.loads((out / ".aqmlab").read_text())["files"]
    assert f"runs/{key}.json" in listed
    assert "runs/notes.json" not in listed


def test_rfc7928_lists_what_its_sections_wrote_and_not_a_users_file(tmp_path, monkeypatch):
    from aqmlab import rfc7928
    from aqmlab.output import manifest_files

    folder = tmp_path / "suite_specs"
    folder.mkdir()
    src = ROOT / "scenarios" / "rfc7928" / "tcp_friendly.toml"
    (folder / src.name).write_text(src.read_text())
    real = rfc7928.sections
    monkeypatch.setattr(rfc7928, "sections", lambda a, q=False: real(a, q, folder))
    out = tmp_path / "suite"
    rfc7928.run("codel", out, quick=True, workers=1)
    (out / "mine.txt").write_text("mine")
    rfc7928.run("codel", out, quick=True, workers=1)  # resumed: nothing runs
    listed = manifest_files(out)
    assert "mine.txt" not in listed
    assert {"summary.md", "report.html", "tcp_friendly/", "tcp_friendly/results.parquet"} <= listed


# -- resuming trusts nothing it cannot verify ------------------------------------------------------


def _reseal(rec: dict) -> dict:
    from aqmlab.sweep.store import record_sha256

    rec = {k: v for k, v in rec.items() if k != "sha256"}
    return {**rec, "sha256": record_sha256(rec)}


def _truncate(path: Path, others: list[Path]) -> None:
    path.write_text(path.read_text()[:100])


def _edit_a_figure(path: Path, others: list[Path]) -> None:
    rec = json.loads(path.read_text())
    rec["summary"]["links"]["bottleneck"]["utilization"] = 0.123
    path.write_text(json.dumps(rec))


def _copy_another_run(path: Path, others: list[Path]) -> None:
    path.write_text(others[0].read_text())


def _neither_summary_nor_error(path: Path, others: list[Path]) -> None:
    rec = json.loads(path.read_text())
    rec["summary"] = None
    path.write_text(json.dumps(_reseal(rec)))  # a valid checksum: the content rule finds it


def _another_scenario(path: Path, others: list[Path]) -> None:
    rec = json.loads(path.read_text())
    rec["scenario_sha256"] = "0" * 64
    path.write_text(json.dumps(_reseal(rec)))


def _not_a_record(path: Path, others: list[Path]) -> None:
    path.write_text('{"run_key": "x"}')


CORRUPTIONS = [
    (_truncate, "not JSON"),
    (_edit_a_figure, "checksum does not match"),
    (_copy_another_run, "holds the record of run"),
    (_neither_summary_nor_error, "neither a summary nor an error"),
    (_another_scenario, "ran another scenario"),
    (_not_a_record, "not a run record"),
]


@pytest.mark.parametrize("corrupt, why", CORRUPTIONS, ids=[c.__name__[1:] for c, _ in CORRUPTIONS])
def test_a_record_that_does_not_verify_runs_again(done, tmp_path, corrupt, why):
    out = _copy(done, tmp_path / "res")
    reference = _table(done)
    files = sorted((out / "runs").glob("*.json"))
    bad = files[1]
    corrupt(bad, [f for f in files if f != bad])
    prep = sweep.prepare(SPEC, out, workers=1)
    assert [r.key for r in prep.todo] == [bad.stem], "only the bad record's run runs again"
    assert [name for name, _ in prep.rejected] == [f"runs/{bad.name}"]
    assert why in prep.rejected[0][1]
    df = sweep.execute(prep).drop(columns="wall_s")
    # every run once, none empty, the same rows as the untouched sweep (runs are deterministic)
    assert df["run_key"].is_unique and len(df) == 4
    pd.testing.assert_frame_equal(df, reference)
    pd.testing.assert_frame_equal(_table(out), reference)
    again = sweep.prepare(SPEC, out, workers=1)
    assert again.todo == [] and again.rejected == []


def test_the_cli_reports_the_records_that_did_not_verify_in_one_line(done, tmp_path):
    out = _copy(done, tmp_path / "res")
    (tmp_path / "s.toml").write_text(SPEC_TOML)
    files = sorted((out / "runs").glob("*.json"))
    _truncate(files[0], [])
    _copy_another_run(files[1], [files[2]])
    p = subprocess.run(
        [*AQMLAB, "sweep", "s.toml", "--out", "res", "--workers", "1"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("resuming res: 2 of 4 runs already done; 2 records did not verify")
    assert f"runs/{files[0].name}: not JSON" in lines[0]
    assert f"runs/{files[1].name}: holds the record of run {files[2].stem}" in lines[0]
    assert p.stdout.startswith("4 runs, 0 failed")


def test_a_deleted_sweep_json_resumes_from_the_records_that_verify(done, tmp_path):
    out = _copy(done, tmp_path / "res")
    (out / "sweep.json").unlink()
    prep = sweep.prepare(SPEC, out, workers=1)
    assert prep.todo == [] and prep.sweep_json_missing
    assert "sweep.json was missing" in prep.resume_line()
    seen = []
    df = sweep.execute(prep, progress=lambda *a: seen.append(a))
    assert seen == [(4, 4, 0)], "nothing ran again"
    assert (out / "sweep.json").is_file()
    pd.testing.assert_frame_equal(df.drop(columns="wall_s"), _table(done))
    # a different base without sweep.json: its records ran another scenario, all run again
    other = {**SPEC, "base": {**BASE, "duration": "2s"}}
    (out / "sweep.json").unlink()
    prep = sweep.prepare(other, out, workers=1)
    assert len(prep.todo) == 4 and {w for _, w in prep.rejected} == {"ran another scenario"}


def test_a_timeseries_part_is_listed_only_with_its_verified_record(tmp_path):
    out = tmp_path / "ts"
    sweep.run({**SPEC, "seeds": [1], "timeseries": True}, out, workers=1)
    rec = json.loads(next((out / "runs").glob("*.json")).read_text())
    part = out / "timeseries" / f"run_key={rec['run_key']}" / "part-0.parquet"
    import hashlib

    assert rec["timeseries_sha256"] == hashlib.sha256(part.read_bytes()).hexdigest()


# -- workers killed from outside; SIGTERM -------------------------------------------------------


def _communicate(p: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """``p.communicate``; if it times out (or fails), kill ``p``'s whole session (the command,
    its forkserver and workers: ``p`` is started with ``start_new_session``) and re-raise."""
    try:
        return p.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out += [int(x) for x in text]
    return out


def _state(pid: int) -> str:
    """The one-letter scheduler state of ``pid`` (``R`` running, ``S`` sleeping, ...)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "?"
    return stat.rsplit(")", 1)[1].split()[0]


def _grandchildren(pid: int) -> list[int]:
    return [g for c in _children(pid) for g in _children(c)]


needs_proc = pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
    reason="finding the worker processes needs Linux's /proc/PID/task/TID/children",
)

HEAVY = (
    'seeds = [1, 2, 3, 4, 5, 6]\n[base]\nduration = "20s"\n[base.dumbbell]\n'
    'rate = "1Gbps"\n[[base.flows]]\ncount = 50\n'
)


@needs_proc
def test_a_worker_killed_from_outside_fails_only_its_run_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "s.toml").write_text(HEAVY)  # runs of about a second each, 2 workers
    out = tmp_path / "out"
    p = subprocess.Popen(
        [*AQMLAB, "sweep", "s.toml", "--out", "out", "--workers", "2"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not list((out / "runs").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = _grandchildren(p.pid)  # the CLI -> the forkserver -> the workers
    assert len(workers) == 2, workers
    # Kill a worker in the middle of a run: one that is running (state R) on two looks 50 ms
    # apart. A worker killed while it waits for its next run fails no run, rightly.
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = [w for w in workers if _state(w) == "R"]
        time.sleep(0.05)
        busy = [w for w in busy if _state(w) == "R"]
        victim = busy[0] if busy else None
    assert victim is not None, "no worker was seen running"
    os.kill(victim, signal.SIGKILL)
    out_text, err = _communicate(p, 300)  # before the fix: a hang
    assert p.returncode == 0, err
    assert "Traceback" not in err
    assert out_text.startswith("6 runs, 1 failed"), out_text
    df = pd.read_parquet(out / "results.parquet")
    assert len(df) == 6 and df["run_key"].is_unique
    failed = df[df["error"].notna()]
    assert len(failed) == 1
    assert "killed by SIGKILL" in failed["error"].iloc[0]
    assert df[df["error"].isna()]["links.bottleneck.utilization"].gt(0).all()


def test_the_local_pool_replaces_a_worker_that_died_while_idle(tmp_path):
    pool = sweep.LocalPool(1)
    try:
        spec = sweep.load_spec({**SPEC, "seeds": [1]})
        first = list(pool.run(spec.base, spec.runs()[:1], False))
        [pid] = pool.pids()
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        rest = list(pool.run(spec.base, spec.runs()[1:], False))
        assert pool.pids() != [pid]
    finally:
        pool.close()
    assert [r["error"] for r, _ in first + rest] == [None, None], "no run pays for an idle death"


@needs_proc
def test_sigterm_keeps_finished_runs_writes_the_table_and_exits_143(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'seeds = [1, 2, 3, 4, 5, 6, 7, 8]\n[base]\nduration = "10s"\n[base.dumbbell]\n'
        'rate = "100Mbps"\n[[base.flows]]\ncount = 20\n'
    )
    out = tmp_path / "out"
    p = subprocess.Popen(
        [*AQMLAB, "sweep", str(spec), "--out", str(out), "--workers", "1"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not list((out / "runs").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = _grandchildren(p.pid)
    p.send_signal(signal.SIGTERM)
    _, err = _communicate(p, 60)
    assert p.returncode == 143, err
    assert "Traceback" not in err
    kept = sorted(x.stem for x in (out / "runs").glob("*.json"))
    assert err.strip() == (
        f"error: terminated; {len(kept)} of 8 runs kept in {out} (run the same command again "
        "to finish)"
    )
    assert 1 <= len(kept) < 8
    assert sorted(pd.read_parquet(out / "results.parquet")["run_key"]) == kept
    assert not [x for x in out.rglob(".*") if x.name != ".aqmlab"], "no temporaries left"
    time.sleep(0.5)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()], "workers stopped"


# -- spec checks --------------------------------------------------------------------------------


def test_duplicate_and_aliased_values_are_refused():
    with pytest.raises(ValueError, match=r'grid."aqm.type" = \["codel", "codel"\]: "codel"'):
        sweep.load_spec({**SPEC, "grid": {"aqm.type": ["codel", "codel"]}})
    with pytest.raises(ValueError, match=r'"fifo" and "droptail": give the same scenario'):
        sweep.load_spec({**SPEC, "grid": {"aqm.type": ["fifo", "droptail"]}})
    with pytest.raises(ValueError, match=r'"10Mbps" and "10000kbps": give the same scenario'):
        sweep.load_spec({**SPEC, "grid": {"dumbbell.rate": ["10Mbps", "10000kbps"]}})
    with pytest.raises(ValueError, match=r"positions 0 and 2 are the same run"):
        sweep.load_spec(
            {
                **SPEC,
                "zip": {"dumbbell.rate": ["1Mbps", "2Mbps", "1Mbps"], "flows.0.count": [1, 2, 1]},
            }
        )
    # a value repeated in one zip list is fine when the rows differ
    spec = sweep.load_spec(
        {**SPEC, "zip": {"dumbbell.rate": ["1Mbps", "1Mbps"], "flows.0.count": [1, 2]}}
    )
    assert len(spec.runs()) == 8


def test_combination_by_index_is_the_product_order():
    spec = sweep.load_spec(
        {
            **SPEC,
            "grid": {"aqm.type": ["codel", "pie", "red"], "flows.0.count": [1, 2]},
            "zip": {"dumbbell.rate": ["1Mbps", "2Mbps"], "dumbbell.buffer": [10, 20]},
        }
    )
    combos = spec.combinations()
    assert spec.combination_count() == len(combos) == 12
    assert [spec.combination(i) for i in range(12)] == combos


def test_the_estimate_follows_what_the_runs_simulate():
    from aqmlab.sweep import budget

    small = budget.estimate(sweep.load_spec(SPEC), workers=1)
    big = budget.estimate(
        sweep.load_spec({**SPEC, "base": {**BASE, "duration": "100s"}}), workers=1
    )
    assert small.runs == big.runs == 4
    # 100 times the simulated time: all but the fixed cost per run grows 100-fold
    assert 10 < big.cpu_seconds / small.cpu_seconds < 100
    assert big.wall_seconds == pytest.approx(big.cpu_seconds)
    two = budget.estimate(sweep.load_spec(SPEC), workers=2)
    assert two.wall_seconds == pytest.approx(small.wall_seconds / 2)
    many = sweep.load_spec({**SPEC, "base": {**BASE, "flows": [{"count": 2000}]}})
    # the core's estimate: 8 KiB per flow
    assert budget.estimate(many, 1).memory_bytes == pytest.approx(2000 * 8 * 1024, rel=0.01)


def test_workers_that_would_not_fit_in_memory_are_refused_and_the_default_is_lowered(
    tmp_path, monkeypatch
):
    from aqmlab.sweep import budget

    spec = {**SPEC, "base": {**BASE, "flows": [{"count": 16000}]}}  # 125 MiB per run (8 KiB a flow)
    monkeypatch.setattr(budget, "available_memory", lambda: 600 * 2**20)  # room for 2 workers
    monkeypatch.setattr(sweep, "default_workers", lambda: 8)
    monkeypatch.setattr("aqmlab.sweep.executors.default_workers", lambda: 8)
    with pytest.raises(ValueError) as info:
        sweep.prepare(spec, tmp_path / "a", workers=3)
    msg = str(info.value)
    assert msg.startswith("--workers = 3: 3 workers need about 675 MiB of memory")
    assert "600 MiB is available" in msg
    assert not (tmp_path / "a").exists()
    prep = sweep.prepare(spec, tmp_path / "b")
    assert prep.executor.workers == 2, "the default lowered to what fits"
    prep.executor.close()
    monkeypatch.setattr(budget, "available_memory", lambda: 200 * 2**20)
    with pytest.raises(ValueError, match="the largest run .* needs about 225 MiB"):
        sweep.prepare(spec, tmp_path / "c")


def test_rfc7928_sigterm_keeps_the_finished_runs_and_exits_143(tmp_path):
    p = subprocess.Popen(
        [*AQMLAB, "rfc7928", "--quick", "--aqms", "codel", "--out", "r", "--workers", "1"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("r/*/runs/*.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    p.send_signal(signal.SIGTERM)
    _, err = _communicate(p, 60)
    assert p.returncode == 143, err
    assert err.strip().splitlines() == [
        "error: terminated; the finished runs are kept in r (run the same command again to finish)"
    ], err
    kept = list(tmp_path.glob("r/*/runs/*.json"))
    assert kept and all((k.parent.parent / "results.parquet").is_file() for k in kept)


def test_a_real_scheduler_passes_the_handshake_check(done, tmp_path):
    pytest.importorskip("dask.distributed")
    from aqmlab.sweep.executors import check_scheduler
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
        dashboard_address=None, silence_logs=50,
    ) as cluster:  # fmt: skip
        address = cluster.scheduler_address
        assert address.startswith("tcp://")
        check_scheduler(address)
        check_scheduler(address.removeprefix("tcp://"))
        df = sweep.run(SPEC, tmp_path / "remote", dask=address).to_pandas()
    pd.testing.assert_frame_equal(df.drop(columns="wall_s"), _table(done))
