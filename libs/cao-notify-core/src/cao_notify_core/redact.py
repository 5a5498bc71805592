"""Keeping a webhook URL secret: a ``Secret`` holder, and masking it in text and in log records.

A webhook URL is a credential: anyone holding it can post to the channel. It lives in a ``Secret``
(which never shows itself), error messages are passed through ``scrub``, and while a sender runs a
``RedactFilter`` masks it in the records of the HTTP libraries, which log every request's URL.
"""

from __future__ import annotations

import logging
import urllib.parse

#: What a secret is replaced with in text.
MASK = "<webhook>"
# A logger's filters do not see its children's records, so every logger of the HTTP stack is named.
HTTP_LOGGERS = ("httpx", "httpcore", "httpcore.connection", "httpcore.connection_pool", "httpcore.http11",
                "httpcore.http2", "httpcore.proxy", "httpcore.socks")


class Secret:
    """A string that never shows itself in a repr, a str or a log line; ``reveal()`` returns it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def secret_forms(url: str) -> list[str]:
    """The strings that would reveal the webhook: the URL and its path (where the token lives)."""
    forms = [url]
    path = urllib.parse.urlsplit(url).path
    if len(path.strip("/")) >= 4:
        forms.append(path)
        forms.append(urllib.parse.quote(path, safe="/"))
    # Longest first, so a URL is masked whole rather than around its path.
    return sorted(set(forms), key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by ``MASK``."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class RedactFilter(logging.Filter):
    """Masks secrets in log records; ``install()`` puts it on every logger of the HTTP stack."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken record is not ours to fix
            return True
        masked = scrub(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        return True

    def install(self) -> None:
        for name in HTTP_LOGGERS:
            logging.getLogger(name).addFilter(self)

    def uninstall(self) -> None:
        for name in HTTP_LOGGERS:
            logging.getLogger(name).removeFilter(self)
