"""The webhook URL stays secret: in reprs, in text, and in the HTTP libraries' log records."""

from __future__ import annotations

import logging

import pytest

from cao_notify_core.redact import HTTP_LOGGERS, MASK, RedactFilter, Secret, scrub, secret_forms

URL = "https://hooks.example.com/services/T0001/B0001/s3cr3t t0ken"


def test_a_secret_never_shows_itself() -> None:
    secret = Secret(URL)
    assert secret.reveal() == URL
    assert "s3cr3t" not in repr(secret) and "s3cr3t" not in str(secret) and "s3cr3t" not in f"{secret}"
    assert secret == Secret(URL) and secret != Secret("https://other") and secret != URL
    assert len({secret, Secret(URL)}) == 1


def test_the_url_its_path_and_its_quoted_path_are_masked() -> None:
    forms = secret_forms(URL)
    assert forms[0] == URL
    assert "/services/T0001/B0001/s3cr3t t0ken" in forms and "/services/T0001/B0001/s3cr3t%20t0ken" in forms
    text = f"POST {URL} failed; path /services/T0001/B0001/s3cr3t%20t0ken"
    assert scrub(text, forms) == f"POST {MASK} failed; path {MASK}"
    # A path too short to be a secret is left alone (it would mask ordinary words).
    assert secret_forms("https://a.example/x") == ["https://a.example/x"]


def test_the_filter_masks_records_of_the_http_loggers(caplog: pytest.LogCaptureFixture) -> None:
    redact = RedactFilter(secret_forms(URL))
    redact.install()
    try:
        with caplog.at_level(logging.INFO, logger="httpx"):
            logging.getLogger("httpx").info('HTTP Request: POST %s "HTTP/1.1 204"', URL)
            logging.getLogger("httpx").info("nothing secret")
    finally:
        redact.uninstall()
    assert "s3cr3t" not in caplog.text and MASK in caplog.text and "nothing secret" in caplog.text
    assert all(redact not in logging.getLogger(name).filters for name in HTTP_LOGGERS)
