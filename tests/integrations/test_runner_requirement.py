"""The integration tests skip without the runners extra, saying how to install it, but never in CI or
under CTXROBUST_REQUIRE_SOURCES=1, where a missing runner fails them."""

from __future__ import annotations

import pytest
from runners import EXTRA_HINT, runner


def test_a_missing_runner_skips_with_the_install_hint(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CTXROBUST_REQUIRE_SOURCES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="runners extra"):
        runner("ctxrobust_no_such_runner", "no-such-script")
    assert "runners extra" in EXTRA_HINT


@pytest.mark.parametrize(("name", "value"), [("CI", "true"), ("CTXROBUST_REQUIRE_SOURCES", "1")])
def test_a_missing_runner_fails_where_every_test_must_run(monkeypatch, name, value):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CTXROBUST_REQUIRE_SOURCES", raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(ModuleNotFoundError):
        runner("ctxrobust_no_such_runner", "no-such-script")
