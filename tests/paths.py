"""Paths the tests share: the checkout, the tests folder and its fixtures."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
DATA = TESTS / "data"
