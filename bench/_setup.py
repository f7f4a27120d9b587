"""Imported first by the bench scripts that drive the service in their own process.

bench/ comes off the import path (``bench/http.py`` would shadow the standard ``http`` module for
everything imported after it), the repository goes on it (its ``tests`` package), AWS credentials
are moto's fakes, and Powertools logs errors only and neither traces nor publishes metrics.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phoneid_dev.emulation import FAKE_CREDENTIALS  # noqa: E402 - the path above first

os.environ.update(FAKE_CREDENTIALS)
os.environ.update(
    POWERTOOLS_TRACE_DISABLED="true", POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="ERROR"
)
