"""The script side (``cao_workflow``) against a stand-in server on loopback, its import cost, and the
server side's reading of scripts (tiers, output lines, environment)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cao_workflows.errors import WorkflowFileError
from cao_workflows.scripts import _environment, output_of
from cao_workflows.source import WorkflowSource, classify

TOKEN = "t" * 40


class StandIn:
    """Records each request and answers with ``self.answer`` (status, JSON body)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer: tuple[int, Any] = (200, {"terminal_id": "abcd1234", "last_message": "hello",
                                              "status": "completed", "replayed": False})


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[StandIn]:
    state = StandIn()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, "body": body,
                                   "authorization": self.headers.get("Authorization")})
            status, answer = state.answer
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    (tmp_path / "api-token").write_text(TOKEN + "\n")
    monkeypatch.setenv("CAO_WORKFLOW_RUN_ID", "run-1")
    monkeypatch.setenv("CAO_WORKFLOW_GENERATION", "2")
    monkeypatch.setenv("CAO_API_BASE_URL", f"http://127.0.0.1:{server.server_port}/")
    monkeypatch.setenv("CAO_HOME_DIR", str(tmp_path))
    # A proxy from the environment must not see the token: the stand-in answers only when bypassed.
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    import cao_workflow._wire as wire

    monkeypatch.setattr(wire, "_counter", 0)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_run_step_posts_upstreams_body_with_the_token_and_returns_the_handle(stand_in):
    from cao_workflow import StepHandle, run_step

    handle = run_step("mock_cli", "analyst", "look", timeout=30, model="m1")
    assert handle == StepHandle(step_id="call-1", terminal_id="abcd1234", output="hello", status="completed",
                                replayed=False)
    [sent] = stand_in.requests
    assert sent["path"] == "/terminals/run-step"
    assert sent["authorization"] == f"Bearer {TOKEN}"
    assert sent["body"] == {"provider": "mock_cli", "agent": "analyst", "prompt": "look", "timeout": 30,
                            "model": "m1", "env_vars": {"CAO_WORKFLOW_RUN_ID": "run-1",
                                                        "CAO_WORKFLOW_GENERATION": "2",
                                                        "CAO_WORKFLOW_STEP_ID": "call-1"}}
    assert "recovery" not in sent["body"]


def test_unnamed_steps_are_counted_and_named_ones_keep_their_name(stand_in):
    from cao_workflow import run_step, step

    keys = [run_step("p", "a", "1").step_id, step("p", "a", "2", recovery="manual", step_id="mine").step_id,
            run_step("p", "a", "3").step_id]
    assert keys == ["call-1", "mine", "call-2"]
    assert stand_in.requests[1]["body"]["recovery"] == "manual"


def test_an_error_answer_is_a_shim_http_error_with_its_status_and_body(stand_in):
    from cao_workflow import ShimHTTPError, run_step

    stand_in.answer = (502, {"detail": {"message": "worker crashed", "kind": "error", "terminal_id": "x"}})
    with pytest.raises(ShimHTTPError, match="HTTP 502: worker crashed") as caught:
        run_step("p", "a", "boom")
    assert caught.value.status == 502 and json.loads(caught.value.body)["detail"]["kind"] == "error"


def test_calls_the_server_would_refuse_are_refused_before_sending(stand_in):
    from cao_workflow import ShimError, run_step, step

    with pytest.raises(ShimError, match="recovery='sometimes'"):
        step("p", "a", "x", recovery="sometimes")
    with pytest.raises(ShimError, match="cannot reuse a terminal"):
        run_step("p", "a", "x", reuse_terminal_id="abcd1234")
    assert stand_in.requests == []


def test_outside_a_run_the_missing_variables_are_named(monkeypatch):
    from cao_workflow import ShimIdentityError, run_step

    for name in ("CAO_WORKFLOW_RUN_ID", "CAO_WORKFLOW_GENERATION", "CAO_API_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ShimIdentityError, match="CAO_WORKFLOW_RUN_ID, CAO_WORKFLOW_GENERATION, "
                                                "CAO_API_BASE_URL"):
        run_step("p", "a", "x")


def test_an_unreachable_server_is_a_transport_error(monkeypatch):
    from cao_workflow import ShimTransportError, run_step

    monkeypatch.setenv("CAO_WORKFLOW_RUN_ID", "r")
    monkeypatch.setenv("CAO_WORKFLOW_GENERATION", "1")
    monkeypatch.setenv("CAO_API_BASE_URL", "http://127.0.0.1:9")
    with pytest.raises(ShimTransportError, match="run-step at http://127.0.0.1:9 failed"):
        run_step("p", "a", "x", timeout=1)


def test_inputs_and_the_output_line(monkeypatch, capsys):
    from cao_workflow import ShimError, emit_output, get_inputs

    monkeypatch.delenv("CAO_WORKFLOW_INPUTS", raising=False)
    assert get_inputs() == {}
    monkeypatch.setenv("CAO_WORKFLOW_INPUTS", '{"topic":"tides"}')
    assert get_inputs() == {"topic": "tides"}
    monkeypatch.setenv("CAO_WORKFLOW_INPUTS", "[1]")
    with pytest.raises(ShimError, match="not a JSON object"):
        get_inputs()
    emit_output({"a": [1, 2]})
    assert capsys.readouterr().out == 'CAO_WORKFLOW_OUTPUT:{"a": [1, 2]}\n'


def test_importing_the_shim_loads_nothing_of_cao():
    code = "import sys, cao_workflow; print(sorted(m for m in sys.modules if m.startswith('cao')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['cao_workflow', 'cao_workflow._wire', 'cao_workflow.errors', " \
                                  "'cao_workflow.handle']"


def test_the_last_output_line_wins_and_a_bad_one_is_null():
    assert output_of("x\nCAO_WORKFLOW_OUTPUT:1\nprogress\nCAO_WORKFLOW_OUTPUT:{\"a\": 2}\n") == {"a": 2}
    assert output_of("no result here\n") is None
    assert output_of("CAO_WORKFLOW_OUTPUT:1\nCAO_WORKFLOW_OUTPUT:{oops\n") is None


def test_the_script_environment_is_built_and_holds_no_token(tmp_path):
    (tmp_path / "api-token").write_text(TOKEN + "\n")
    env = _environment("r", "3", "http://127.0.0.1:1", {"k": "v"}, str(tmp_path), resumed=True)
    workflow = ["CAO_WORKFLOW_" + n for n in ("GENERATION", "INPUTS", "RESUME", "RUN_ID")]
    assert sorted(env) == ["CAO_API_BASE_URL", "CAO_HOME_DIR", *workflow, "HOME", "PATH"]
    assert env["CAO_WORKFLOW_INPUTS"] == '{"k":"v"}'
    assert env["CAO_HOME_DIR"] == str(tmp_path)
    assert not [name for name, value in env.items() if TOKEN in value]


def _source(text: str) -> WorkflowSource:
    return WorkflowSource(name="s", path="s.py", text=text)


def test_a_file_importing_cao_workflow_without_a_workflow_function_is_a_script():
    text = ("from cao_workflow import run_step\nrun_step('mock_cli', 'analyst', 'x')\n"
            "run_step('p', agent='writer', prompt='y')\nrun_step('p', name, 'z')\n")
    tier, uses = classify(_source(text))
    assert tier == "script"
    assert [(u.profile, u.line) for u in uses] == [("analyst", 2), ("writer", 3)]
    assert classify(_source("import cao_workflow\ndef workflow(inputs):\n    return 1\n"))[0] == "function"


def test_a_file_that_is_neither_tier_is_refused_naming_both():
    with pytest.raises(WorkflowFileError, match=r"no top-level function 'workflow\(inputs\)' and does not "
                                                r"import cao_workflow"):
        classify(_source("print('hello')\n"))
