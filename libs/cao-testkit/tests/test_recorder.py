"""``cao_testkit.recorder``: the machinery under every provider's recording of its screens.

The recorder drives the real mock_cli (the mock provider's own launch) through cao's tmux backend on a
private tmux server, so what it waits for, saves and writes is checked against a real terminal.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import attrs
import pytest

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan
from cao_kernel.testing.screens import load_screens, manifest_problems
from cao_provider_mock.contract import PROMPT_GLYPH
from cao_provider_mock.provider import NAME, mock_provider
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    json_edit,
    neutral_root,
    recording_arguments,
    screen_entry,
    tmux_backend,
    write_manifest,
)

pytestmark = pytest.mark.tmux

PROFILE = AgentProfile(name="recorder", provider=NAME, extra={"mock_delay_ms": 0})


def _prompt_last(screen: str) -> bool:
    rows = [row.rstrip() for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1] == PROMPT_GLYPH


@pytest.fixture
def backend(private_tmux, tmp_path):
    from cao_tmux.backend import TmuxBackend

    backend = TmuxBackend(home_dir=tmp_path / "cao-home", socket_path=private_tmux.socket_path,
                          config_file=private_tmux.config_file)
    yield backend
    backend.close()


def recorder(backend, tmp_path: Path, launch=None, **options) -> ScreenRecorder:
    return ScreenRecorder(backend, launch or mock_provider().launch, provider=NAME,
                          workdir=tmp_path / "home" / "project", out=tmp_path / "screens" / "0.1.0",
                          profile=PROFILE, timeout=10.0, settle=0.3, **options)


def test_saves_settled_screens_at_the_terminal_size_and_writes_a_valid_manifest(backend, private_tmux,
                                                                                 tmp_path, capsys):
    rec = recorder(backend, tmp_path, size=(90, 20))
    assert rec.workdir.is_dir()
    rec.start()
    panes = private_tmux.run("list-panes", "-a", "-F", "#{pane_width}x#{pane_height}").stdout
    assert panes.split() == ["90x20"]
    began = time.monotonic()
    idle = rec.wait(_prompt_last, "the prompt")
    # Returned only once the screen held still for the settle time, so it is what tmux shows now.
    assert time.monotonic() - began >= 0.3
    assert idle == rec.screen()
    rec.save("idle", idle, "idle")

    rec.type("Summarise the repository.")
    done = rec.wait(lambda s: "> MOCK: Summarise the repository." in s and _prompt_last(s), "the answer")
    rec.save("completed", done, "completed", last_message="Summarise the repository.", note="echoed")
    rec.type("half-typed", enter=False)
    typed = rec.wait_sign(lambda s: s.rstrip().endswith(f"{PROMPT_GLYPH} half-typed"), "the typed text")
    rec.save("processing_typed", typed, "processing")
    rec.stop()
    rec.stop()  # a second stop of a gone terminal is quiet

    assert (rec.out / "idle.txt").read_text(encoding="utf-8") == idle + "\n"
    assert (rec.out / "completed.txt").read_text(encoding="utf-8") == done + "\n"
    assert rec.manifest == {
        "idle": {"status": "idle", "size": [90, 20]},
        "completed": {"status": "completed", "size": [90, 20], "last_message": "Summarise the repository.",
                      "note": "echoed"},
        "processing_typed": {"status": "processing", "size": [90, 20]},
    }
    assert capsys.readouterr().out.splitlines() == ["  idle: idle", "  completed: completed",
                                                    "  processing_typed: processing"]

    path = write_manifest(rec.out, package="cao-provider-mock", version="0.1.0",
                          version_output="mock_cli 0.1.0", recorded_with="tests/test_recorder.py",
                          screens=rec.manifest)
    assert path.read_text(encoding="utf-8").endswith("}\n")
    written = json.loads(path.read_text(encoding="utf-8"))
    assert list(written) == ["package", "version", "version_output", "source", "recorded_with", "screens"]
    assert written["source"] == "recorded" and written["screens"] == rec.manifest
    [version] = load_screens(tmp_path / "screens")
    assert manifest_problems(version, ()) == []
    assert {screen.name: screen.status for screen in version.screens} == {
        "idle": "idle", "completed": "completed", "processing_typed": "processing"}


def test_a_wait_that_never_comes_gives_up_with_the_screen(backend, tmp_path):
    rec = recorder(backend, tmp_path)
    rec.start()
    rec.wait(_prompt_last, "the prompt")
    with pytest.raises(SystemExit, match=r"(?s)gave up waiting for the impossible; screen:\n.*❯"):
        rec.wait(lambda s: False, "the impossible", timeout=0.5)
    with pytest.raises(SystemExit, match="gave up waiting for the animation"):
        rec.wait_sign(lambda s: False, "the animation", timeout=0.3)
    assert rec.catch(lambda s: False, timeout=0.2) is None
    assert PROMPT_GLYPH in (rec.catch(_prompt_last) or "")
    rec.stop()


def test_start_writes_the_plan_files_and_applies_each_change(backend, tmp_path):
    def launch(ctx: LaunchContext) -> LaunchPlan:
        plan = mock_provider().launch(ctx)
        return attrs.evolve(plan, env={**plan.env, "PROBE_PLAN": "plan", "PROBE_DROP": "plan"},
                            files={"conf/settings.json": json.dumps({"auth": "key", "keep": 1}),
                                   "notes.txt": "as generated"})

    ids = iter(range(40, 50))
    rec = recorder(backend, tmp_path, launch=launch, size=(200, 30), ids=ids,
                   runtime_name="rt-{width}x{height}-{count}")
    probe = 'echo "ctx=$PROBE_CTX plan=$PROBE_PLAN drop=${PROBE_DROP-gone} args=$*"; exec "$@"'
    rec.start(env={"PROBE_CTX": "context", "PROBE_PLAN": "context"},
              edit_file=json_edit("settings.json", lambda doc: doc.pop("auth")),
              files={"share/seed.txt": "seeded"}, plan_env={"PROBE_DROP": None},
              wrapper=("sh", "-c", probe, "sh"), extra_args=("--delay-ms", "0"))
    assert rec.terminal_id == f"{40:08x}"
    screen = rec.wait(_prompt_last, "the prompt")
    rec.stop()
    # The caller's env sits under the plan's (as the kernel passes it); plan_env removes from the plan's.
    assert "ctx=context plan=plan drop=gone args=" in screen
    assert screen.split("args=")[1].split("\n")[0].rstrip().endswith("--delay-ms 0 --delay-ms 0")
    runtime = tmp_path / "home" / "rt-200x30-1"
    assert json.loads((runtime / "conf" / "settings.json").read_text(encoding="utf-8")) == {"keep": 1}
    assert (runtime / "notes.txt").read_text(encoding="utf-8") == "as generated"
    assert (runtime / "share" / "seed.txt").read_text(encoding="utf-8") == "seeded"

    # A second recorder on the same counter goes on numbering; a size given to start holds for it alone.
    narrow = recorder(backend, tmp_path, launch=launch, ids=ids, runtime_name="rt-{width}x{height}-{count}")
    narrow.start(size=(70, 20))
    assert narrow.terminal_id == f"{41:08x}" and narrow.size == (70, 20)
    narrow.save("narrow", narrow.wait(_prompt_last, "the prompt"), "idle")
    narrow.stop()
    narrow.start()
    assert narrow.size == (220, 50)
    narrow.stop()
    assert narrow.manifest["narrow"]["size"] == [70, 20]
    assert sorted(p.name for p in (tmp_path / "home").iterdir() if p.name.startswith("rt-")) == [
        "rt-200x30-1", "rt-220x50-2", "rt-70x20-1"]


def test_the_main_plumbing(tmp_path, monkeypatch):
    monkeypatch.setenv("CAO_RECORDER_OUTSIDE", "1")
    name = f"cao-recorder-test-{os.getpid()}"
    with neutral_root(name) as root:
        assert root.name == name and root.is_dir() and stat.S_IMODE(root.stat().st_mode) == 0o700
        (root / "left-over").write_text("x", encoding="utf-8")
        with environment({"ONLY": "this"}):
            assert dict(os.environ) == {"ONLY": "this"}
        with environment({"ADDED": "too"}, clear=False):
            assert os.environ["ADDED"] == "too" and os.environ["CAO_RECORDER_OUTSIDE"] == "1"
        assert "ADDED" not in os.environ and os.environ["CAO_RECORDER_OUTSIDE"] == "1"
        with tmux_backend(root / "cao-home") as backend:
            rec = recorder(backend, tmp_path)
            rec.start()
            assert _prompt_last(rec.wait(_prompt_last, "the prompt"))
    assert not root.exists()

    parser = recording_arguments("Record it.\n\nMore.", version="1.2.3", cli="Acme")
    assert parser.description == "Record it."
    args = parser.parse_args([])
    assert (args.version, args.out) == ("1.2.3", None)
    assert parser.parse_args(["--out", "x"]).out == Path("x")
    with pytest.raises(SystemExit):
        recording_arguments("Record it.").parse_args(["--version", "1"])
    assert screen_entry("waiting_user_answer", (80, 24), dialog="trust folder", note="") == {
        "status": "waiting_user_answer", "size": [80, 24], "dialog": "trust folder"}
