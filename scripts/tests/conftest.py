import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[2]


def _build_dir() -> Path:
    return Path(os.environ.get("TRIAUDIT_BUILD_DIR", REPO / "build" / "ci"))


@pytest.fixture(scope="module")
def cluster():
    """A real one-node Slurm cluster for the module's tests (slurm_cluster.py), stopped after them."""
    from slurm_cluster import running_cluster

    yield from running_cluster()


@pytest.fixture(scope="session")
def stream_exe() -> Path:
    exe = _build_dir() / "benchmarks" / "stream" / "triaudit_stream"
    if not exe.exists():
        pytest.skip(f"{exe} not built (scripts/test.sh builds it first)")
    return exe


@pytest.fixture(scope="session")
def no_gpu_json(stream_exe, tmp_path_factory) -> Path:
    """Real output of triaudit_stream with every device hidden: the no-GPU path."""
    out = tmp_path_factory.mktemp("nogpu") / "triaudit_stream.json"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run(
        [
            str(stream_exe),
            "--benchmark_filter=bytes:(1048576|2097152)$|bytes:(1048576|2097152)/",
            f"--benchmark_out={out}",
            "--benchmark_out_format=json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 77, r.stderr
    return out


def real_result_files() -> list[Path]:
    """Every measured run committed under results/."""
    root = REPO / "results"
    if not root.exists():
        return []
    return sorted(
        p
        for p in root.rglob("*.json")
        if p.name != "manifest.json" and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


@pytest.fixture
def unwritable(tmp_path):
    """A folder nobody may write into, root included (the immutable attribute; skipped where chattr
    is not permitted)."""
    d = tmp_path / "locked"
    d.mkdir()
    try:
        locked = subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode == 0
    except FileNotFoundError:
        locked = False
    if not locked:
        pytest.skip("chattr +i is not permitted here")
    yield d
    subprocess.run(["chattr", "-i", str(d)], check=True)
