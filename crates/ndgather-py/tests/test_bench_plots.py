"""scripts/bench_plots.py draws the performance page's plots from a run's results: both
plots for each size whose files are there, and a clear refusal where none is."""
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "bench_plots.py"
# Outside the repository (the package alone) there is no script; inside, it must be there.
pytestmark = pytest.mark.skipif(not (ROOT / "scripts").is_dir(), reason="needs the repository")


def results(folder: pathlib.Path) -> None:
    ours = {"memcpy_gbps": 30.0, "cases": [
        {"name": n, "mode": m, "median_s": t, "bytes_moved": b}
        for n, m, t, b in [("embed", "alloc", 2e-4, 2_000_000), ("embed", "into", 1e-4, 2_000_000),
                           ("tiny", "alloc", 3e-7, 40), ("tiny", "into", 2e-7, 40)]]}
    peers = {"cases": [
        {"name": "embed", "results": {"numpy": {"median_s": 8e-4}, "jax": {"median_s": 4e-4},
                                      "ort": {"median_s": 3e-4}, "ndgather": {"median_s": 2e-4}}},
        {"name": "tiny", "results": {"numpy": {"median_s": 1.3e-6}}}]}
    (folder / "ndgather-quick.json").write_text(json.dumps(ours))
    (folder / "peers-quick.json").write_text(json.dumps(peers))


def test_both_plots_of_each_size_given(tmp_path: pathlib.Path) -> None:
    results(tmp_path)
    out = tmp_path / "img"
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["gbps-quick.png", "ratio-quick.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in out.iterdir())


def test_each_case_is_set_against_the_right_peers(tmp_path: pathlib.Path) -> None:
    results(tmp_path)
    spec = importlib.util.spec_from_file_location("bench_plots", SCRIPT)
    plots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plots)
    rows = {r["name"]: r for r in plots.rows(*plots.load(str(tmp_path), "quick"))}
    # embed: JAX is the fastest allocating peer; ORT is set against `into`; Python is there.
    assert rows["embed"]["best"] == "jax" and rows["embed"]["best_s"] == 4e-4
    assert rows["embed"]["ort"] == 3e-4 and rows["embed"]["python"] == 2e-4
    assert rows["embed"]["moved"] == 2_000_000
    # tiny: NumPy alone, no ORT and no Python timing.
    assert rows["tiny"]["best"] == "numpy" and rows["tiny"]["ort"] is None
    assert rows["tiny"]["python"] is None
    assert plots.best_of(list(rows.values())) == "best of NumPy, JAX"


def test_no_results_is_an_error(tmp_path: pathlib.Path) -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(tmp_path / "img")],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "no ndgather-SIZE.json" in run.stderr
