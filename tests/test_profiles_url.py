"""Installing from https URLs: the URL rules, and real downloads from a local HTTPS server.

The server runs on 127.0.0.1 with a self-signed certificate made by the ``openssl`` command line;
the client trusts it through an explicit SSL context or ``SSL_CERT_FILE``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_kernel.errors import InvalidInput, NotFound
from cao_kernel.home import CaoHome
from cao_kernel.profiles import find_profile, install
from cao_kernel.profiles.fetch import allowed_hosts, check_url, fetch_profile
from cao_testkit.files import snapshot

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "data_analyst.md"
LIMIT = 256 * 1024
ENDLESS_CAP = 256 * 1024 * 1024


# -- URL rules (no network) -----------------------------------------------------------------------

HOSTS = allowed_hosts({})


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://raw.githubusercontent.com/o/r/main/a.md", "plain http is not allowed"),
        ("HTTP://raw.githubusercontent.com/o/r/main/a.md", "plain http is not allowed"),
        ("file:///etc/passwd.md", "only https URLs"),
        ("https://evil.example/o/a.md", "host 'evil.example' is not allowed"),
        ("https://github.com.evil.example/a.md", "is not allowed"),
        ("https://user:pw@github.com/o/a.md", "user name or password"),
        ("https://user@github.com/o/a.md", "user name or password"),
        ("https://github.com/o/a.md?raw=1", "query string"),
        ("https://github.com/o/a.md?", "query string"),
        ("https://github.com/o/a.md#top", "fragment"),
        ("https://github.com/o/../a.md", "unsafe path segment '..'"),
        ("https://github.com/o/./a.md", "unsafe path segment '.'"),
        ("https://github.com/o//a.md", "unsafe path segment ''"),
        ("https://github.com/o/%2e%2e/a.md", "unsafe path segment '%2e%2e'"),
        ("https://github.com/o/a%2Fb.md", "unsafe path segment"),
        ("https://github.com/o/a.txt", "must end with a .md file name"),
        ("https://github.com/o/", "unsafe path segment ''"),
        ("https://github.com/.md", "must end with a .md file name"),
        ("https://github.com", "no file path"),
        ("https://github.com/o/a b.md", "whitespace or control characters"),
        ("https://github.com/o/a.md\n", "whitespace or control characters"),
        ("https://github.com:99999/o/a.md", "invalid port"),
        ("https:///o/a.md", "no host"),
    ],
)
def test_refused_urls(url: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as info:
        check_url(url, HOSTS)
    assert "\n" not in str(info.value)


def test_allowed_urls_and_the_github_page_rewrite() -> None:
    raw = "https://raw.githubusercontent.com/awslabs/cli-agent-orchestrator/main/src/agent_store/developer.md"
    assert check_url(raw, HOSTS) == raw
    page = "https://github.com/owner/repo/blob/v1.2/docs/agents/dev_1.md"
    assert check_url(page, HOSTS) == "https://raw.githubusercontent.com/owner/repo/v1.2/docs/agents/dev_1.md"
    assert check_url("https://GitHub.com/owner/repo/raw/main/a.md", HOSTS).startswith(
        "https://raw.githubusercontent.com/owner/repo/main/"
    )


def test_extra_hosts_come_from_the_environment_variable() -> None:
    hosts = allowed_hosts({"CAO_PROFILE_ALLOWED_HOSTS": " Example.COM, ,127.0.0.1:8443"})
    assert hosts == {"github.com", "raw.githubusercontent.com", "example.com", "127.0.0.1:8443"}
    assert check_url("https://example.com/a.md", hosts)
    assert check_url("https://127.0.0.1:8443/a.md", hosts)
    with pytest.raises(InvalidInput, match="'127.0.0.1' is not allowed"):
        check_url("https://127.0.0.1:9443/a.md", hosts)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.sampled_from(["https://github.com/", "https://", "", "http://github.com/"]))
def test_arbitrary_urls_are_refused_cleanly_or_stay_on_allowed_hosts(tail: str, prefix: str) -> None:
    from urllib.parse import urlsplit

    try:
        url = check_url(prefix + tail, HOSTS)
    except InvalidInput as exc:
        assert "\n" not in str(exc)
    else:
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.hostname in HOSTS
        assert not parts.query and not parts.fragment and "@" not in parts.netloc
        assert url.endswith(".md") and "/../" not in url + "/"


# -- a real HTTPS server --------------------------------------------------------------------------


@attrs.define
class Server:
    base: str
    cert: Path
    requests: list[str] = attrs.field(factory=list)
    endless_sent: int = 0
    endless_done: threading.Event = attrs.field(factory=threading.Event)
    stop: threading.Event = attrs.field(factory=threading.Event)

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the openssl command line is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


@pytest.fixture(scope="module")
def https(certificate: tuple[Path, Path]) -> Iterator[Server]:
    cert, key = certificate
    fixture_bytes = FIXTURE.read_bytes()
    state: dict[str, Server] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet test output
            pass

        def _send(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            server = state["server"]
            server.requests.append(self.path)
            route = self.path.rsplit("/", 1)[-1]
            if route == "data_analyst.md":
                self._send(200, fixture_bytes, {"Content-Type": "text/markdown"})
            elif route == "nameless.md":
                self._send(200, b"---\ndescription: no name\n---\nbody\n")
            elif route == "latin1.md":
                self._send(200, b"---\nname: x\n---\ncaf\xe9\n")
            elif route == "redirect.md":
                self._send(302, b"", {"Location": "/profiles/data_analyst.md"})
            elif route == "server_error.md":
                self._send(500, b"boom")
            elif route == "declared_huge.md":
                self.send_response(200)
                self.send_header("Content-Length", str(10 * 1024 * 1024))
                self.end_headers()
                self._stream(10 * 1024 * 1024)
            elif route == "endless.md":
                self.send_response(200)  # no Content-Length: the body ends when the connection does
                self.end_headers()
                server.endless_sent = self._stream(ENDLESS_CAP)
                server.endless_done.set()
            elif route == "slow.md":
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"---\nname: slow\n")
                self.wfile.flush()
                server.stop.wait(5)
            else:
                self._send(404, b"nope")

        def _stream(self, limit: int) -> int:
            chunk = b"x" * 65536
            sent = 0
            try:
                while sent < limit:
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            return sent

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    server = Server(base=f"https://127.0.0.1:{httpd.server_address[1]}/profiles", cert=cert)
    state["server"] = server
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def server(https: Server, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.setenv("CAO_PROFILE_ALLOWED_HOSTS", "127.0.0.1")
    https.requests.clear()
    return https


@pytest.fixture
def home(cao_home: Path) -> CaoHome:
    return CaoHome(cao_home)


def test_https_install_writes_the_file_unchanged(server: Server, home: CaoHome) -> None:
    result = install(f"{server.base}/data_analyst.md", home, ssl_context=server.context())
    assert (result.name, result.source_kind) == ("data_analyst", "url")
    assert (home.agent_store / "data_analyst.md").read_bytes() == FIXTURE.read_bytes()
    assert (home.agent_context / "data_analyst.md").read_bytes() == FIXTURE.read_bytes()
    assert find_profile("data_analyst", home=home).source == "local"
    assert server.requests == ["/profiles/data_analyst.md"]


def test_ssl_cert_file_is_honoured(server: Server, home: CaoHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
    origin, body = fetch_profile(f"{server.base}/data_analyst.md")
    assert body == FIXTURE.read_bytes() and origin.endswith("/data_analyst.md")


def test_an_untrusted_certificate_is_refused(server: Server, home: CaoHome) -> None:
    with pytest.raises(InvalidInput, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        install(f"{server.base}/data_analyst.md", home, ssl_context=ssl.create_default_context())
    assert snapshot(home.root) == {}


def test_a_host_not_in_the_allow_list_is_never_contacted(
    server: Server, home: CaoHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAO_PROFILE_ALLOWED_HOSTS")
    with pytest.raises(InvalidInput, match="host '127.0.0.1' is not allowed"):
        install(f"{server.base}/data_analyst.md", home, ssl_context=server.context())
    assert server.requests == [] and snapshot(home.root) == {}


@pytest.mark.parametrize(
    ("route", "error", "message"),
    [
        ("redirect.md", InvalidInput, r"refused redirect \(HTTP 302 to /profiles/data_analyst.md\)"),
        ("declared_huge.md", InvalidInput, r"file is 10485760 bytes; the limit is 262144"),
        ("endless.md", InvalidInput, r"larger than the 262144 byte limit"),
        ("missing.md", NotFound, r"not found \(HTTP 404\)"),
        ("server_error.md", InvalidInput, r"download failed: HTTP 500"),
        ("nameless.md", InvalidInput, r"frontmatter has no 'name' field"),
        ("latin1.md", InvalidInput, r"not UTF-8 text"),
    ],
)
def test_refused_downloads_leave_the_home_unchanged(
    server: Server, home: CaoHome, route: str, error: type[Exception], message: str
) -> None:
    install("reviewer", home, env=["KEEP=1"])
    before = snapshot(home.root)
    with pytest.raises(error, match=message) as info:
        install(f"{server.base}/{route}", home, env=["NEW=1"], ssl_context=server.context())
    assert "\n" not in str(info.value)
    assert snapshot(home.root) == before
    # A refused redirect is not followed: the target was never requested.
    assert server.requests == [f"/profiles/{route}"]


def test_an_endless_body_is_cut_off_while_streaming(server: Server, home: CaoHome) -> None:
    server.endless_done.clear()
    with pytest.raises(InvalidInput, match="larger than the 262144 byte limit"):
        fetch_profile(f"{server.base}/endless.md", ssl_context=server.context())
    # The client hung up: the server's writes failed long before it could send everything.
    assert server.endless_done.wait(10)
    assert server.endless_sent < 64 * 1024 * 1024


def test_the_download_deadline(server: Server, home: CaoHome) -> None:
    started = time.monotonic()
    with pytest.raises(InvalidInput, match=r"slow.md: the download did not finish within its 0.5 s deadline"):
        install(f"{server.base}/slow.md", home, ssl_context=server.context(), timeout=0.5)
    assert time.monotonic() - started < 4
    assert snapshot(home.root) == {}


def test_cli_subprocess_install_from_https_then_list_json(
    server: Server, tmp_path: Path, cao_home: Path
) -> None:
    cao = Path(sys.executable).with_name("cao")
    assert cao.exists(), "the cao console script is not installed in this environment"
    env = {
        **os.environ,
        "CAO_HOME_DIR": str(cao_home),
        "HOME": str(tmp_path),
        "SSL_CERT_FILE": str(server.cert),
        "CAO_PROFILE_ALLOWED_HOSTS": "127.0.0.1",
    }
    done = subprocess.run(
        [str(cao), "install", f"{server.base}/data_analyst.md", "--env", "TOKEN=abc"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "✓ Downloaded agent from URL to local store" in done.stdout
    assert "✓ Agent 'data_analyst' installed successfully" in done.stdout
    assert f"✓ Set 1 env var(s) in {cao_home / '.env'}" in done.stdout
    assert (cao_home / "agent-store" / "data_analyst.md").read_bytes() == FIXTURE.read_bytes()

    listed = subprocess.run(
        [str(cao), "profile", "list", "--json"], env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["data_analyst"]["source"] == "local" and rows["data_analyst"]["loadable"] is True
    assert rows["data_analyst"]["duplicated_in"] == ["installed"]
    assert rows["data_analyst"]["role"] == "developer"
    assert {"code_supervisor", "developer", "reviewer"} <= set(rows)

    refused = subprocess.run(
        [str(cao), "install", f"{server.base}/redirect.md"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error: ") and "refused redirect" in refused.stderr
    assert refused.stderr.count("\n") == 1


# -- slow hosts: one deadline for the whole download, and threads of its own -------------------------

DEADLINE = 1.0
# How long a failed download may take beyond its deadline on a busy machine.
MARGIN = 0.6
# A slow host gives up after this long: long enough to show a download that outlives its deadline.
TRICKLE_FOR = 15.0


@attrs.define(eq=False)
class SlowHost:
    """An HTTPS host on 127.0.0.1 that answers slowly. ``headers``: the status line and then one header
    byte every ``gap`` seconds; ``body``: the headers at once, then one body byte every ``gap`` seconds
    (no ``Content-Length``). A read timeout per call never fires on either, since bytes keep coming."""

    context: ssl.SSLContext
    cert: Path
    gap: float = 0.2
    listener: socket.socket = attrs.field(init=False)
    stop: threading.Event = attrs.field(factory=threading.Event)
    accepted: list[socket.socket] = attrs.field(factory=list)
    threads: list[threading.Thread] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self._start(self._accept)

    def url(self, mode: str, n: int = 0) -> str:
        return f"https://127.0.0.1:{self.listener.getsockname()[1]}/{mode}/{n}.md"

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(5)
        self.listener.close()
        for conn in self.accepted:
            conn.close()
        assert not [t for t in self.threads if t.is_alive()]

    def _start(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self.threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.accepted.append(conn)
            self._start(self._answer, conn)

    def _answer(self, raw: socket.socket) -> None:
        raw.settimeout(5)
        try:
            conn = self.context.wrap_socket(raw, server_side=True)
            self.accepted.append(conn)
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(4096) or b"\r\n\r\n"
            mode = request.split(b" ", 2)[1].split(b"/")[1]
            if mode == b"headers":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n---\nname: slow\n---\n")
            ends = time.monotonic() + TRICKLE_FOR
            while time.monotonic() < ends and not self.stop.wait(self.gap):
                conn.sendall(b"a")
        except OSError:
            pass  # the client hung up: what a deadline is for


@pytest.fixture
def slow_host(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowHost]:
    cert, key = certificate
    monkeypatch.setenv("CAO_PROFILE_ALLOWED_HOSTS", "127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    host = SlowHost(context, cert)
    try:
        yield host
    finally:
        host.close()


def _download_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("cao-download")]


@pytest.mark.parametrize(("mode", "gap"), [("headers", 0.2), ("body", 0.9 * DEADLINE)])
def test_a_slow_host_is_cut_off_at_the_deadline(
    slow_host: SlowHost, home: CaoHome, mode: str, gap: float
) -> None:
    slow_host.gap = gap
    url = slow_host.url(mode)
    started = time.monotonic()
    with pytest.raises(InvalidInput) as info:
        install(url, home, ssl_context=slow_host.client_context(), timeout=DEADLINE)
    took = time.monotonic() - started
    assert DEADLINE - 0.05 < took < DEADLINE + MARGIN, took
    assert str(info.value) == f"{url}: the download did not finish within its {DEADLINE:g} s deadline"
    assert snapshot(home.root) == {}
    assert not _download_threads()


def test_the_deadline_setting(slow_host: SlowHost, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAO_PROFILE_DOWNLOAD_TIMEOUT", "0.5")
    started = time.monotonic()
    with pytest.raises(InvalidInput, match=r"within its 0.5 s deadline"):
        fetch_profile(slow_host.url("headers"), ssl_context=slow_host.client_context())
    assert time.monotonic() - started < 0.5 + MARGIN
    for bad in ("0", "-1", "soon", "inf"):
        monkeypatch.setenv("CAO_PROFILE_DOWNLOAD_TIMEOUT", bad)
        with pytest.raises(InvalidInput, match=rf"CAO_PROFILE_DOWNLOAD_TIMEOUT={bad!r} is not"):
            fetch_profile(slow_host.url("headers"), ssl_context=slow_host.client_context())


@pytest.mark.tmux
async def test_slow_downloads_hold_no_thread_that_profiles_and_terminals_need(
    slow_host: SlowHost, make_kernel: Any, workdir: str
) -> None:
    from cao_hookspecs import AgentProfile, CreateTerminalRequest
    from cao_kernel.errors import Conflict

    deadline = 6.0
    kernel = make_kernel(CAO_PROFILE_DOWNLOAD_TIMEOUT=str(deadline))
    kernel.add_profile(AgentProfile(name="developer", provider="mock_cli"))
    context = slow_host.client_context()
    async with kernel:
        await kernel.get_profile("reviewer")  # the first read imports the parser: not what is measured
        started = time.monotonic()
        downloads = [
            asyncio.ensure_future(kernel.install_profile(slow_host.url("headers", n), ssl_context=context))
            for n in range(8)
        ]
        # Every download that got a thread is connected (a TCP and a TLS socket each) and trickling.
        while len(slow_host.accepted) < 2 * 4 and time.monotonic() - started < 5:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)

        read_from = time.monotonic()
        assert (await kernel.get_profile("reviewer")).name == "reviewer"
        read_took = time.monotonic() - read_from
        create_from = time.monotonic()
        term = await kernel.create_session(CreateTerminalRequest(agent_profile="developer",
                                                                 working_directory=workdir))
        create_took = time.monotonic() - create_from
        await kernel.delete_session(term.session_name)
        assert not all(d.done() for d in downloads), "the downloads ended before the test could use them"

        results = await asyncio.gather(*downloads, return_exceptions=True)
        took = time.monotonic() - started
    assert read_took < 0.5 and create_took < 5, (read_took, create_took)
    refused = [r for r in results if isinstance(r, Conflict)]
    timed_out = [r for r in results if isinstance(r, InvalidInput) and "deadline" in str(r)]
    assert (len(refused), len(timed_out)) == (4, 4), results
    assert str(refused[0]) == "4 profile downloads are already in progress; try again when one has finished"
    assert took < deadline + 1 + MARGIN, took
    for thread in _download_threads():
        thread.join(2)
    assert not _download_threads()
