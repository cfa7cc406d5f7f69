"""scripts/gpu_check.sh builds the executables first, in a third of a lent GPU's few minutes, and
the suite then runs only what was built: its list must be every executable `triaudit run` runs
(the corner registry), or a corner goes unmeasured on the one machine that can measure it."""

import re
from pathlib import Path

from triaudit.corners import EXECUTABLES

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_check.sh"


def test_gpu_check_builds_every_executable_the_suite_runs():
    text = SCRIPT.read_text()
    m = re.search(r"^EXES=\(([^)]*)\)", text, re.MULTILINE)
    assert m, "gpu_check.sh has no EXES=(...) line"
    listed = m.group(1).split()
    assert sorted(listed) == sorted(EXECUTABLES), (
        f"gpu_check.sh lacks {sorted(set(EXECUTABLES) - set(listed))}, has extra {sorted(set(listed) - set(EXECUTABLES))}"
    )
