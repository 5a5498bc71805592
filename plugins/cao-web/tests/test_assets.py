"""The console's page and assets: served without a credential, only from the package's own files, with
a policy that lets nothing from elsewhere run."""

from __future__ import annotations

import httpx
import pytest
from cao_server.api_token import ensure_token
from cao_testkit.serve import serve_in_thread
from cao_web import assets

pytestmark = pytest.mark.tmux


@pytest.fixture
def running(make_kernel, cao_home):
    kernel = make_kernel("tmux", "mock_cli", "inbox_sqlite", "web")
    with serve_in_thread(kernel, token=ensure_token(cao_home)) as server:
        yield server


def test_the_page_and_its_assets_are_served_without_a_credential(running):
    with httpx.Client(base_url=running.url, timeout=10) as browser:
        page = browser.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "/static/app.js" in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy
        script = browser.get("/static/app.js")
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
        assert script.headers["x-content-type-options"] == "nosniff"
        again = browser.get("/static/app.js", headers={"If-None-Match": script.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        # The data is not public: the API still wants the token or a session.
        assert browser.get("/sessions").status_code == 401


@pytest.mark.parametrize("name", ["../plugin.py", "..%2fplugin.py", "nothing.js", "", "/etc/passwd",
                                  "app.js/", "%2e%2e/assets.py", "static/app.js", "APP.JS"])
def test_nothing_outside_the_shipped_files_is_served(running, name):
    with httpx.Client(base_url=running.url, timeout=10) as browser:
        answer = browser.get(f"/static/{name}")
        assert answer.status_code in (404, 401), name
        assert b"import" not in answer.content


def test_every_shipped_file_has_a_type_and_the_page_links_only_shipped_files():
    files = assets.listing()
    assert "index.html" in files and "app.js" in files and "app.css" in files
    import re

    linked = re.findall(r'(?:src|href)="/static/([^"]+)"', files["index.html"].decode())
    assert linked and all(name in files for name in linked)


def test_the_pages_scripts_never_turn_text_into_markup():
    # Agent output and message bodies reach the page as text nodes only: no API that parses HTML.
    sinks = (b"innerHTML", b"outerHTML", b"insertAdjacentHTML", b"document.write",
             b"createContextualFragment", b"DOMParser", b"eval(", b"new Function")
    for name, body in assets.listing().items():
        if name.endswith(".js") and not name.startswith("vendor/"):
            found = [sink.decode() for sink in sinks if sink in body]
            assert not found, f"{name} uses {found}"
