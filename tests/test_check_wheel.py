"""tools/check_wheel.sh as a test: builds the sdist and the wheel, repairs it
with auditwheel, installs it into a fresh venv and runs this suite there.
Minutes long and needs PyPI, so it runs only with COUNTGRID_CHECK_WHEEL=1
(.ci/run calls the script directly when CI=true)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "check_wheel.sh"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("COUNTGRID_CHECK_WHEEL") != "1",
                    reason="slow packaging check: set COUNTGRID_CHECK_WHEEL=1")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auditwheel is Linux-only")
def test_check_wheel_script(tmp_path):
    if not SCRIPT.is_file():
        pytest.skip("tools/check_wheel.sh not available (not a source checkout)")
    out = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "work")],
                         env=dict(os.environ, PYTHON=sys.executable),
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    assert "manylinux" in out.stdout and "libgomp" in out.stdout
