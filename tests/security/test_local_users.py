"""Holes 1 and 3 of the trust issue, probed as another local user: the API is closed to anyone without
the owner's token (loopback included), a request cannot set variables that change which code runs, and
no secret shows in any process's arguments."""

from __future__ import annotations

import secrets
import shutil
import tempfile
import textwrap
import threading
from pathlib import Path

from .conftest import client as _client
from .conftest import worker as _worker

PROBE = textwrap.dedent("""
    import json, urllib.request, urllib.error
    url = {url!r}
    out = {{}}
    for method, path, body in [
        ("POST", "/sessions", {{"agent_profile": "worker", "working_directory": "/tmp",
                                "env_vars": {{"PYTHONPATH": "/tmp/evil"}}}}),
        ("GET", "/sessions", None), ("GET", "/events", None),
        ("GET", "/terminals/{tid}/inbox/messages", None),
        ("POST", "/terminals/{tid}/input", {{"message": "rm -rf ~"}}), ("DELETE", "/terminals/{tid}", None),
    ]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url + path, data=data, method=method,
                                         headers={{"Content-Type": "application/json"}})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                out[method + " " + path] = answer.status
        except urllib.error.HTTPError as exc:
            out[method + " " + path] = exc.code
    try:
        open({token_file!r}).read()
        out["token"] = "read"
    except OSError as exc:
        out["token"] = type(exc).__name__
    print(json.dumps(out))
""")


def test_another_local_user_cannot_drive_the_server(cao_server, as_other_user):
    with _client(cao_server) as http:
        created = http.post("/sessions", json=_worker(cao_server))
        assert created.status_code == 201, created.text
        tid = created.json()["id"]
        seen = as_other_user(PROBE.format(url=cao_server.url, tid=tid,
                                          token_file=str(cao_server.home / "api-token")))
        assert seen.pop("token") == "PermissionError"
        assert seen == {key: 401 for key in seen}, seen
        # The owner's terminal is untouched.
        assert http.get(f"/terminals/{tid}").status_code == 200


def test_a_request_cannot_set_variables_that_change_which_code_runs(cao_server):
    with _client(cao_server) as http:
        for name in ("PYTHONPATH", "LD_PRELOAD", "NODE_OPTIONS", "PATH", "BASH_ENV"):
            refused = http.post("/sessions", json=_worker(cao_server, env_vars={name: "/tmp/evil"}))
            assert refused.status_code == 400, refused.text
            assert name in refused.json()["detail"] and "CAO_ALLOWED_ENV_VARS" in refused.json()["detail"]
        assert http.get("/sessions").json() == []  # nothing half-created
        plain = http.post("/sessions", json=_worker(cao_server, env_vars={"PROJECT_MODE": "strict"}))
        assert plain.status_code == 201, plain.text


WATCH = textwrap.dedent("""
    import json, os, time
    # The secret comes in the environment, which no other user can read: never in this probe's own
    # arguments.
    secret, seen, deadline = os.environ["SECRET"].encode(), set(), time.monotonic() + {seconds}
    while time.monotonic() < deadline and not os.path.exists({stop!r}):
        for pid in os.listdir("/proc"):
            if pid.isdigit() and int(pid) != os.getpid():
                try:
                    with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                        args = f.read()
                    if secret in args:
                        seen.add(args.decode(errors="replace")[:200])
                except OSError:
                    pass
    print(json.dumps(sorted(seen)))
""")


def test_another_user_never_sees_a_secret_in_process_arguments(cao_server, as_other_user):
    secret = f"sk-{secrets.token_hex(12)}"
    shared = Path(tempfile.mkdtemp(prefix="cao-security-"))
    shared.chmod(0o755)  # the other user looks for the stop file here
    stop = shared / "stop"
    found: list = []
    watcher = threading.Thread(target=lambda: found.append(as_other_user(
        WATCH.format(seconds=30, stop=str(stop)), SECRET=secret)))
    watcher.start()
    try:
        with _client(cao_server) as http:
            for _ in range(5):
                created = http.post("/sessions", json=_worker(cao_server, env_vars={"SERVICE_KEY": secret}))
                assert created.status_code == 201, created.text
    finally:
        stop.write_text("")
        watcher.join(60)
        shutil.rmtree(shared)
    assert found == [[]], f"the secret showed in the arguments of processes {found}"
