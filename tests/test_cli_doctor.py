"""``cao doctor``: real ``cao`` processes, real programs on PATH, real HTTP servers on 127.0.0.1.

The providers come from the fixture distribution ``tests/fixtures/plugins/doctor`` (entry point
``fixture_doctor``); their programs are small shell scripts each test writes into a folder put on
PATH. The broken plugin is ``tests/fixtures/plugins/import_error``.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cao_hookspecs import hookimpl

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "plugins"
CAO = Path(sys.executable).with_name("cao")


def _script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def fake_bin(tmp_path) -> Path:
    """A folder of fake agent CLIs: real programs printing versions, and one that fails."""
    folder = tmp_path / "bin"
    folder.mkdir()
    _script(folder, "fakecli-ok", 'echo "fakecli 1.2.3 (fixture)"')
    _script(folder, "fakecli-new", 'echo "fakecli-new version 9.9.9"')
    _script(folder, "fakecli-broken", 'echo "fatal: config unreadable" >&2\nexit 3')
    return folder


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with 404 and remembers it (any HTTP answer means 'answers')."""

    seen: list[tuple[str, str]]

    def _answer(self) -> None:
        self.server.seen.append((self.command, self.path))  # type: ignore[attr-defined]
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def api_server() -> Iterator[http.server.HTTPServer]:
    """A model API stand-in on 127.0.0.1 that answers anything with 404."""
    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run_doctor(*args: str, bin_dir: Path, providers: str | None = None, plugins: str = "fixture_doctor",
               folders: tuple[str, ...] = ("doctor",), extra_env: dict[str, str] | None = None,
               home: Path) -> subprocess.CompletedProcess[str]:
    assert CAO.exists(), f"the cao script is not installed next to {sys.executable}"
    proxies = ("http_proxy", "https_proxy", "all_proxy")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CAO_", "DOCTOR_")) and k.lower() not in proxies}
    env.update({
        "HOME": str(home), "CAO_HOME_DIR": str(home / "cao"), "CAO_LOAD_PLUGINS": plugins,
        "PYTHONPATH": os.pathsep.join(str(FIXTURES / folder) for folder in folders),
        "PATH": os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]), "NO_PROXY": "127.0.0.1,localhost",
        **(extra_env or {}),
    })
    if providers is not None:
        env["DOCTOR_FIXTURE_PROVIDERS"] = providers
    return subprocess.run([str(CAO), "doctor", *args], env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def by_name(report: dict) -> dict[str, dict]:
    return {provider["name"]: provider for provider in report["providers"]}


def test_json_report_of_working_untested_broken_and_missing_programs(fake_bin, api_server, refused_url,
                                                                     tmp_path):
    url = f"http://127.0.0.1:{api_server.server_port}/v1"
    done = run_doctor("--json", bin_dir=fake_bin, home=tmp_path,
                      providers="fake_ok,fake_new,fake_broken,fake_missing",
                      extra_env={"FAKE_OK_URL": url, "FAKE_REFUSED_URL": refused_url})
    assert done.returncode == 1, done.stderr  # fakecli-broken is there and fails
    report = json.loads(done.stdout)
    assert set(report) == {"ok", "providers", "failed_plugins", "problems"}
    assert report["ok"] is False and report["failed_plugins"] == []
    providers = by_name(report)
    assert list(providers) == ["fake_broken", "fake_missing", "fake_new", "fake_ok"]

    ok = providers["fake_ok"]
    assert ok["plugin"] == {"name": "fixture_doctor", "distribution": "cao-fixture-doctor", "version": "1.0"}
    assert ok["binary"] == {"name": "fakecli-ok", "found": True, "path": str(fake_bin / "fakecli-ok"),
                            "source": "PATH", "install_hint": "pip install fakecli-ok", "problem": None}
    version = ok["version"]
    assert (version["ran"], version["exit_code"]) == (True, 0)
    assert (version["version"], version["tested"]) == ("1.2.3", True)
    assert version["output"] == "fakecli 1.2.3 (fixture)" and version["summary"] == "1.2.3 (tested)"
    assert version["command"] == [str(fake_bin / "fakecli-ok"), "--version"]
    assert ok["endpoint"] == {"url": url, "checked": True, "answers": True, "detail": "answers (HTTP 404)"}
    assert api_server.seen == [("HEAD", "/v1")]
    assert ok["problems"] == []

    new = providers["fake_new"]
    assert new["version"]["version"] == "9.9.9" and new["version"]["tested"] is False
    assert new["version"]["summary"] == "9.9.9 (untested: tested with 1.2.3, 1.2.4)"
    assert new["endpoint"]["answers"] is False
    assert new["endpoint"]["detail"] == "does not answer: connection refused"
    assert new["problems"] == []  # untested and unreachable are reported, not failures

    broken = providers["fake_broken"]
    assert broken["version"]["exit_code"] == 3
    assert broken["version"]["error"] == "exited with status 3: fatal: config unreadable"
    failure = f"{fake_bin / 'fakecli-broken'} --version exited with status 3: fatal: config unreadable"
    assert broken["problems"] == [f"fake_broken: {failure}"]

    missing = providers["fake_missing"]
    assert missing["binary"]["found"] is False and missing["binary"]["path"] is None
    assert missing["version"]["ran"] is False and missing["problems"] == []
    assert missing["endpoint"] == {"url": None, "checked": False, "answers": None,
                                   "detail": "not given by the provider"}
    assert report["problems"] == broken["problems"]


def test_a_missing_program_alone_is_not_a_failure(fake_bin, tmp_path):
    done = run_doctor(bin_dir=fake_bin, home=tmp_path, providers="fake_ok,fake_missing")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("fake_missing: 'fakecli-missing' is not on PATH; install it with: pip install fakecli-missing"
            in done.stdout)
    assert "No problems found." in done.stdout


def test_table_lists_every_provider_with_its_findings(fake_bin, api_server, tmp_path):
    url = f"http://127.0.0.1:{api_server.server_port}"
    done = run_doctor(bin_dir=fake_bin, home=tmp_path, providers="fake_ok,fake_new,fake_broken,fake_missing",
                      extra_env={"FAKE_OK_URL": url})
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["PROVIDER", "PLUGIN", "BINARY", "VERSION", "MODEL", "API"]
    rows = {line.split()[0]: line for line in lines[1:5]}
    assert f"cao-fixture-doctor 1.0  {fake_bin / 'fakecli-ok'}" in rows["fake_ok"]
    assert "1.2.3 (tested)" in rows["fake_ok"] and f"{url} answers (HTTP 404)" in rows["fake_ok"]
    assert "9.9.9 (untested: tested with 1.2.3, 1.2.4)" in rows["fake_new"]
    assert "unknown for this configuration" in rows["fake_new"]  # FAKE_REFUSED_URL is not set
    assert "fails: exited with status 3: fatal: config unreadable" in rows["fake_broken"]
    assert "not found" in rows["fake_missing"]
    assert "Problems:" in lines
    failure = f"{fake_bin / 'fakecli-broken'} --version exited with status 3: fatal: config unreadable"
    assert f"  fake_broken: {failure}" in lines


def test_a_plugin_that_failed_to_load_is_reported_and_fails(fake_bin, tmp_path):
    done = run_doctor("--json", bin_dir=fake_bin, home=tmp_path, providers="fake_ok",
                      plugins="fixture_doctor,fixture_import_error", folders=("doctor", "import_error"))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    (failed,) = report["failed_plugins"]
    assert failed["name"] == "fixture_import_error" and failed["distribution"] == "cao-fixture-import-error"
    assert "No module named 'cao_fixture_missing_dependency'" in failed["error"]
    assert report["problems"] == [
        f"plugin fixture_import_error (cao-fixture-import-error) failed to load: {failed['error']}"]
    assert [p["name"] for p in report["providers"]] == ["fake_ok"]  # the others still load

    table = run_doctor(bin_dir=fake_bin, home=tmp_path, providers="fake_ok",
                       plugins="fixture_doctor,fixture_import_error", folders=("doctor", "import_error"))
    assert "Plugins that failed to load:" in table.stdout
    assert "  fixture_import_error (cao-fixture-import-error): ModuleNotFoundError:" in table.stdout


def test_offline_contacts_no_model_api(fake_bin, api_server, tmp_path):
    url = f"http://127.0.0.1:{api_server.server_port}/v1"
    done = run_doctor("--json", "--offline", bin_dir=fake_bin, home=tmp_path, providers="fake_ok",
                      extra_env={"FAKE_OK_URL": url})
    assert done.returncode == 0, done.stderr
    endpoint = by_name(json.loads(done.stdout))["fake_ok"]["endpoint"]
    assert endpoint == {"url": url, "checked": False, "answers": None, "detail": "not checked (--offline)"}
    assert api_server.seen == []


def test_the_override_variable_wins_and_a_bad_one_fails(fake_bin, tmp_path):
    good = run_doctor("--json", bin_dir=fake_bin, home=tmp_path, providers="fake_override",
                      extra_env={"CAO_FAKE_OVERRIDE_BIN": str(fake_bin / "fakecli-ok")})
    assert good.returncode == 0, good.stderr
    binary = by_name(json.loads(good.stdout))["fake_override"]["binary"]
    assert (binary["path"], binary["source"]) == (str(fake_bin / "fakecli-ok"), "CAO_FAKE_OVERRIDE_BIN")

    bad = run_doctor("--json", bin_dir=fake_bin, home=tmp_path, providers="fake_override",
                     extra_env={"CAO_FAKE_OVERRIDE_BIN": str(tmp_path / "nowhere")})
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    problem = f"CAO_FAKE_OVERRIDE_BIN={str(tmp_path / 'nowhere')!r} is not an executable file"
    assert by_name(report)["fake_override"]["binary"]["problem"] == problem
    assert report["problems"] == [f"fake_override: {problem}"]


def test_a_raising_model_endpoint_is_reported_not_raised(fake_bin, tmp_path):
    done = run_doctor("--json", bin_dir=fake_bin, home=tmp_path, providers="fake_bad_endpoint")
    assert done.returncode == 0, done.stderr
    endpoint = by_name(json.loads(done.stdout))["fake_bad_endpoint"]["endpoint"]
    assert endpoint["detail"] == ("unknown (the provider's model_endpoint raised RuntimeError: "
                                  "settings unreadable)")


def test_no_providers(tmp_path):
    done = run_doctor(bin_dir=tmp_path, home=tmp_path, plugins="")
    assert done.returncode == 0
    assert done.stdout.startswith("No providers installed.")


def test_help_says_what_fails(tmp_path):
    done = run_doctor("--help", bin_dir=tmp_path, home=tmp_path)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "Exits 1 when something is broken" in text
    assert "A program that is not installed is reported with how to install it, but is not a failure" in text
    assert "--offline" in text and "--json" in text


def test_root_help_lists_doctor_without_importing_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
    env.update(CAO_LOAD_PLUGINS="", CAO_HOME_DIR=str(tmp_path))
    done = subprocess.run([str(CAO), "--help"], env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert "  doctor  " in done.stdout
    assert "Check each provider's CLI, its version and its model API." in done.stdout
    code = ("import sys; from cao_kernel.cli import cli, main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('cao_kernel.cli.doctor' in sys.modules, file=sys.stderr)")
    probe = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                           check=False)
    assert probe.stderr.strip().splitlines()[-1] == "False"


# -- in process: the checks themselves ----------------------------------------------------------------


class SlowProviders:
    """Providers whose version commands each take a second."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    @hookimpl
    def cao_register_providers(self):
        from cao_hookspecs import LaunchPlan, ProviderSpec, StatusReport

        return [ProviderSpec(name=name, binary=name, launch=lambda ctx: LaunchPlan(argv=["x"]),
                             detect_status=lambda screen: StatusReport(status="unknown", evidence="-"),
                             extract_last_message=lambda text: text, tested_versions=("2.0.0",))
                for name in self.names]


def test_version_commands_run_in_parallel(tmp_path, cao_home):
    from cao_kernel.cli.doctor import diagnose
    from cao_kernel.kernel import Kernel

    names = ["slow-a", "slow-b", "slow-c"]
    for name in names:
        _script(tmp_path, name, 'sleep 1\necho "2.0.0"')
    kernel = Kernel(load_entrypoints=False, plugins=[SlowProviders(names)], home=cao_home)
    started = time.monotonic()
    report = diagnose(kernel, {"PATH": f"{tmp_path}:/usr/bin:/bin"}, offline=True)
    elapsed = time.monotonic() - started
    assert [p["version"]["summary"] for p in report["providers"]] == ["2.0.0 (tested)"] * 3
    assert elapsed < 2.5, f"three 1-second version commands took {elapsed:.1f} s"


def test_a_hanging_version_command_is_cut_off(tmp_path):
    from cao_hookspecs import LaunchPlan, ProviderSpec, StatusReport
    from cao_kernel.cli.doctor import run_version

    hang = _script(tmp_path, "hangcli", "sleep 30")
    spec = ProviderSpec(name="hang", binary="hangcli", launch=lambda ctx: LaunchPlan(argv=["x"]),
                        detect_status=lambda screen: StatusReport(status="unknown", evidence="-"),
                        extract_last_message=lambda text: text)
    started = time.monotonic()
    check = run_version(str(hang), spec, {"PATH": "/usr/bin:/bin"}, timeout=0.5)
    assert time.monotonic() - started < 5
    assert check.error == "did not finish within 0.5 s"
    assert check.summary == "fails: did not finish within 0.5 s"


def test_an_endpoint_that_never_answers_times_out(tmp_path):
    from cao_kernel.cli.doctor import check_endpoint

    with socket.socket() as listener:  # accepts connections (the backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        started = time.monotonic()
        check = check_endpoint(f"http://127.0.0.1:{listener.getsockname()[1]}/", timeout=0.5)
    assert time.monotonic() - started < 5
    assert check.answers is False and check.detail == "does not answer: no answer within 0.5 s"


def test_an_unknown_host_does_not_answer():
    from cao_kernel.cli.doctor import check_endpoint

    check = check_endpoint("http://cao-doctor-test.invalid/", timeout=2)
    assert check.answers is False and check.detail.startswith("does not answer")
