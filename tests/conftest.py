"""Shared fixtures.  Area fixtures live in tests/fixtures_*.py modules."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

pytest_plugins = ["fixtures_plans", "fixtures_services"]
