"""An API key never leaves the process: every string from outside that Checkpoint stores or shows
(an API error, a cause, a problem message, a base URL, a log line, what the editor is told) passes
`redact.hide_secrets`, which knows the configured credentials by value and every shape the
transcript detectors know."""

from __future__ import annotations

import logging

import anthropic
import pytest

from checkpoint.extract import ExtractionError
from checkpoint.extract.anthropic import _classify
from checkpoint.extract.claude_code import classify_error
from checkpoint.redact import hide_secrets, hide_secrets_in_logs
from checkpoint.redact.outside import CREDENTIAL, configured_credentials
from tests.support.fake_anthropic import FakeAnthropic

SECRET = "sk-ant-api03-" + "Zq7" * 20  # the shape of a real key
TOKEN = "oauth-" + "Qx9" * 10  # no key shape: found only as the environment's value
_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_BASE_URL",
         "OPENAI_BASE_URL", "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")


@pytest.fixture(autouse=True)
def _no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in _VARS:
        monkeypatch.delenv(var, raising=False)


def test_the_environments_credentials_are_replaced_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TOKEN)
    said = hide_secrets(f"401 for key {SECRET}; token {TOKEN}.")
    assert said == f"401 for key {CREDENTIAL}; token {CREDENTIAL}."


def test_a_key_not_in_the_environment_is_hidden_by_its_shape() -> None:
    assert hide_secrets(f"key {SECRET}") == "key [REDACTED:anthropic_api_key]"
    assert "abc.def-ghi_jkl9" not in hide_secrets("header Authorization: Bearer abc.def-ghi_jkl9")


def test_a_short_environment_value_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "abc")  # blanking three letters would blank words
    assert hide_secrets("abc of it") == "abc of it"


def test_a_base_urls_password_is_replaced_wherever_it_appears(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://gw-user:Pr0xy%21pass@proxy.internal:8080/v1")
    assert set(configured_credentials()) == {"Pr0xy%21pass", "Pr0xy!pass"}
    said = hide_secrets("Using Claude at http://gw-user:Pr0xy%21pass@proxy.internal:8080/v1; echo Pr0xy!pass")
    assert "Pr0xy" not in said and "proxy.internal:8080" in said


def test_the_base_url_on_nows_first_line_holds_no_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from checkpoint.config import Settings
    from checkpoint.extract.choose import choose_extractor

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://user:hunter2pw@proxy:8080")
    choice = choose_extractor(Settings(extractor="anthropic"))
    assert "hunter2pw" not in choice.sentence and SECRET not in choice.sentence and "proxy:8080" in choice.sentence


def _api_error(fake: FakeAnthropic, key: str, model: str) -> anthropic.APIStatusError:
    client = anthropic.Anthropic(base_url=fake.base_url, api_key=key, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model=model, max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    return raised.value


@pytest.mark.parametrize(("model", "status"), [("no-such-model", 404), ("claude-sonnet-4-5", 400)])
def test_an_api_error_quoting_the_key_keeps_none_of_it(monkeypatch: pytest.MonkeyPatch, model: str,
                                                      status: int) -> None:
    key = "gw-" + "K3y" * 60  # longer than the 200 characters kept: cutting first would leave most of it
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with FakeAnthropic(echo_key=True) as fake:
        if status == 400:
            fake.script("prompt_too_long")
        exc = _api_error(fake, key, model)
    assert exc.status_code == status and key in (exc.api_message or "")  # the gateway quotes it
    failed = _classify(exc)
    assert key[:12] not in failed.cause and "authenticated with key" in failed.cause


def test_an_extraction_errors_cause_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TOKEN)
    assert TOKEN not in ExtractionError(f"claude: refused {TOKEN}").cause
    assert TOKEN not in str(ExtractionError(f"claude: refused {TOKEN}"))


def test_claude_codes_error_text_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    failed = classify_error({"api_error_status": 400, "result": f"API Error: 400 bad key {SECRET}"})
    assert SECRET[:20] not in failed.cause


def test_log_lines_and_tracebacks_are_hidden(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TOKEN)
    logger = logging.getLogger("checkpoint.test.hide")
    hide_secrets_in_logs(caplog.handler)
    try:
        raise RuntimeError(f"gateway said {TOKEN}")
    except RuntimeError:
        logger.exception("request failed with %s", TOKEN)
    text = caplog.text
    assert "request failed" in text and "RuntimeError" in text and TOKEN not in text


def test_codexs_error_is_hidden_before_it_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    from checkpoint.extract.codex import classify

    key = "sk-proj-" + "Ab3" * 120  # longer than the 300 characters kept
    monkeypatch.setenv("OPENAI_API_KEY", key)
    failed = classify(f"unexpected status 401 Unauthorized: Incorrect API key provided: {key}")
    assert key[:20] not in failed.cause and "401" in failed.cause
