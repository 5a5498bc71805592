"""Schemathesis against the server's own OpenAPI document (``GET /openapi.json``), over real HTTP.

The server is real (a thread over a real kernel on a private tmux server); schemathesis runs from a venv
of its own (the root ``fuzz`` group) as a subprocess. The run is bounded and the same every time:
deterministic generation, a fixed number of cases per operation, one worker. It fails on any 5xx, any
answer the document does not describe (status, content type, schema), any documented-valid input
refused, and any answer slower than 5 s.

The only agent a fuzzed call can start is the offline mock agent (the kernel loads no other provider),
and only a few of them: a budget plugin vetoes (403) every terminal past ``AGENTS``. The test deletes
every session after the run, then checks no terminal is left.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest
from cao_hookspecs import hookimpl

pytestmark = pytest.mark.tmux

ROOT = Path(__file__).resolve().parents[3]
CASES = 12
# Terminals the run may start, besides the two it aims at: enough to reach the code past a creation.
AGENTS = 4
# Routes that wait by design, with why they are left out of the run.
EXCLUDED = {
    # Each waits for a worker's answer for `timeout` seconds, at least 1 and by default 600.
    "handoff": "waits for a worker",
    "handoff_from_user": "waits for a worker",
    "run_step": "waits for a worker",
    # A stream that ends only when its client leaves.
    "events": "streams until closed",
    # An https source would reach the network; a name installs into the home (the routes test covers it).
    "install_profile": "reaches the network",
}
# /wait long-polls for `timeout` seconds (up to an hour): it is fuzzed with that one value pinned short.
# 502 (the agent failed) and 504 (it did not answer in time) are documented answers about the agent, not
# the server's faults: the run kills its own agent (keys, exit), so they are expected where documented;
# so is attach-command's 501 for a backend that cannot attach a viewer.
# Creating a terminal is refused with 400 for what no schema can state: a folder that does not exist, an
# environment variable name (OpenAPI 3.0 cannot constrain a map's keys); and send_message without a
# receiver needs a sender created by another terminal; an answer needs one of answer, option and text,
# which a body read from the query as well cannot state. Folder settings are refused with 400 for a folder
# that does not exist or is not configured, which no schema can state either. 403 is the agent budget
# below. The deletes aim at a terminal of their own, so the one the other routes aim at lives on.
CONFIG = """
[[operations]]
include-operation-id = "wait_status"
parameters = { "query.timeout" = 0.2 }
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "502", "504"]

[[operations]]
include-operation-id-regex = "^create_(session|terminal)$"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "502", "504"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "403", "404", "409"]

[[operations]]
include-operation-id = "attach_command"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "501"]

[[operations]]
include-operation-id-regex = "^delete_(session|terminal)$"
parameters = { "path.terminal_id" = "DOOMED_ID", "path.session_name" = "DOOMED_SESSION" }

[[operations]]
include-operation-id = "send_message"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "404", "409"]

[[operations]]
include-operation-id-regex = "^set_(agent|skill)_dirs$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400"]
[[operations]]
include-operation-id = "answer"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "403", "404", "409"]
"""
# A route with a body reads each parameter from the body or the query, the body winning. OpenAPI cannot
# say "one of the two": the document puts the requirement on the body (what cao's client sends). So a
# request with a body sends its parameters there alone (else a body without a required field would be
# rightly accepted for the query's copy), and a request in upstream's form, the query with no body, being
# accepted is no failure.
HOOKS = """
import schemathesis
from schemathesis.core import NOT_SET
from schemathesis.core.failures import AcceptedNegativeData


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if isinstance(case.body, dict) and case.query:
        case.query = {}


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    return not (isinstance(failure, AcceptedNegativeData) and case.body is NOT_SET and case.query)
"""


class AgentBudget:
    """Vetoes every terminal past the first ``left``, as a budget plugin does."""

    def __init__(self, left: int) -> None:
        self.left = left

    @hookimpl
    def cao_before_terminal_create(self, request):
        if self.left <= 0:
            raise PermissionError("the fuzz run's agent budget is spent")
        self.left -= 1


@pytest.fixture(scope="module")
def schemathesis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cao_testkit.group_venv import group_venv

    return group_venv(ROOT, "fuzz", tmp_path_factory.mktemp("fuzz") / "venv") / "st"


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory):
    """A server with one idle mock agent, whose id the run aims the terminal routes at."""
    from cao_testkit.kernels import build_kernel
    from cao_testkit.serve import serve_in_thread
    from cao_testkit.tmux import private_tmux_socket

    home = tmp_path_factory.mktemp("fuzz-home")
    workdir = tmp_path_factory.mktemp("fuzz-project")
    # A creation with use_worktree and no folder uses the server's own: never the repository under test.
    with pytest.MonkeyPatch.context() as patch, private_tmux_socket() as tmux:
        patch.chdir(workdir)
        # Plain mock agents: this kernel serves no MCP tools, so a profile asking for them is refused.
        kernel = build_kernel(home, tmux.socket_path, "tmux", "mock_cli", "inbox_sqlite", agents=("fuzzer",))
        kernel.register_plugin(AgentBudget(2 + AGENTS), name="fuzz-agent-budget")
        with serve_in_thread(kernel) as running, httpx.Client(base_url=running.url, trust_env=False,
                                                              timeout=30) as http:
            created = http.post("/sessions", json={"agent_profile": "fuzzer", "session_name": "fuzz",
                                                   "working_directory": str(workdir)})
            doomed = http.post("/sessions", json={"agent_profile": "fuzzer", "session_name": "doomed",
                                                  "working_directory": str(workdir)})
            assert created.status_code == doomed.status_code == 201, created.text + doomed.text
            running.terminal_id = created.json()["id"]  # type: ignore[attr-defined]
            running.doomed = doomed.json()  # type: ignore[attr-defined]
            running.http = http  # type: ignore[attr-defined]
            running.tmux = tmux  # type: ignore[attr-defined]
            yield running


def test_schemathesis_finds_nothing(schemathesis: Path, fuzzed_server, tmp_path: Path):
    config = tmp_path / "schemathesis.toml"
    # Terminal routes aim at the live terminal (random ids would only ever find a 404).
    pinned = f'parameters = {{ "path.terminal_id" = "{fuzzed_server.terminal_id}" }}\n'
    hooks = tmp_path / "fuzz_hooks.py"
    hooks.write_text(HOOKS, encoding="utf-8")
    doomed = fuzzed_server.doomed
    operations = CONFIG.replace("DOOMED_ID", doomed["id"]).replace("DOOMED_SESSION", doomed["session_name"])
    config.write_text(f'hooks = "{hooks}"\n' + pinned + operations, encoding="utf-8")
    argv = [
        str(schemathesis), "--config-file", str(config), "run", f"{fuzzed_server.url}/openapi.json",
        "--checks", "all", "--max-response-time", "5", "--request-timeout", "10",
        "--max-examples", str(CASES), "--generation-deterministic",
        "--workers", "1", "--phases", "examples,coverage,fuzzing", "--no-color",
        *(arg for name in EXCLUDED for arg in ("--exclude-operation-id", name)),
    ]
    started = time.monotonic()
    # Run where it may write nothing into the repository (reports, caches).
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    took = time.monotonic() - started
    try:
        assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
        assert " passed" in done.stdout, done.stdout[-5000:]
    finally:
        _delete_every_session(fuzzed_server)
    assert took < 120, f"the fuzz run took {took:.0f} s"


def _delete_every_session(server) -> None:
    """Whatever the run created goes, and nothing is left running in the private tmux server."""
    http = server.http
    for session in http.get("/sessions").json():
        http.delete(f"/sessions/{session['name']}")
    assert http.get("/sessions").json() == []
    windows = subprocess.run(["tmux", "-S", server.tmux.socket_path, "list-windows", "-a"],
                             capture_output=True, text=True, timeout=10)
    assert windows.stdout.strip() == "", windows.stdout
