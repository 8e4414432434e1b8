"""e2e cases: every one runs the real contenox binary."""

from __future__ import annotations

import pytest

from harness.plugin import report_binary


def pytest_report_header(config: pytest.Config) -> str:
    return report_binary()


@pytest.fixture
def transcripts() -> bool:
    """Every e2e test's instance snapshots its transcript (opt out: no_transcript)."""
    return True
