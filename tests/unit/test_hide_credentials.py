"""An API key never reaches the editor: what the daemon tells it (window/logMessage and
window/showMessage) has the environment's key values blanked and key-shaped strings cut short."""

from __future__ import annotations

import pytest

from checkpoint.server.messages import hide_credentials

SECRET = "sk-ant-api03-" + "Zq7" * 20  # the shape of a real key


def test_the_environments_keys_and_key_shapes_are_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "oauth-" + "Qx9" * 10  # no key shape: found only as the environment's value
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", token)
    said = hide_credentials(f"401 for key {SECRET}; token {token}; header Bearer abc.def-ghi_jkl; short sk-ant-ab")
    assert SECRET not in said and token not in said and "abc.def" not in said
    assert said == "401 for key [redacted]; token [redacted]; header Bearer …[redacted]; short sk-ant-ab"


def test_a_key_not_in_the_environment_is_hidden_by_its_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    assert hide_credentials(f"key {SECRET}") == "key sk-ant-api0…[redacted]"  # the prefix says which key


def test_a_short_environment_value_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "abc")  # blanking three letters would blank words
    assert hide_credentials("abc of it") == "abc of it"
