"""etc/tripleo-flow.conf.sample is what ``tox -e genconfig`` writes from the options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "etc" / "tripleo-flow.conf.sample"


def test_the_sample_configuration_is_up_to_date(tmp_path: Path) -> None:
    out = tmp_path / "sample.conf"
    subprocess.run([sys.executable, "-m", "oslo_config.generator", "--namespace", "tripleo_flow",
                    "--output-file", str(out)], check=True, timeout=120)
    assert out.read_text() == SAMPLE.read_text(), (
        "etc/tripleo-flow.conf.sample is stale: regenerate it with: tox -e genconfig")
