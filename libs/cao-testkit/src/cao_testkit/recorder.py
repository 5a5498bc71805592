"""Recording an agent CLI's screens as detector test fixtures: the machinery under
``python -m cao_testkit.record`` (:mod:`cao_testkit.record`) and the scenarios of every provider.

- :class:`ScreenRecorder`: one terminal at a time on a private tmux server, started through cao's tmux
  backend from the provider's launch plan (so each screen is captured the way the kernel captures it);
  it waits for the screen to settle on a sign (or, for animated states, for the sign itself), saves the
  screen with its manifest entry, types and sends keys.
- :func:`neutral_root`: a scratch folder with the same path on every machine, for CLIs that print
  their working folder's full path; :func:`scratch_root`: a fresh one.
- :func:`environment`: ``os.environ`` swapped for the recording's sandboxed one, then restored.
- :func:`tmux_backend`: cao's tmux backend on a private tmux server of its own.
- :func:`recording_arguments`, :func:`screen_entry`, :func:`write_manifest`: the recording command's
  command line and the manifest format of ``cao_kernel.testing.screens``.

Each screen is labelled by the status the scenario drove the CLI into, never by the detector under test.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan, Terminal, TerminalLaunch

from cao_kernel.testing.screens import MANIFEST

if TYPE_CHECKING:
    from cao_hookspecs import TerminalBackend

__all__ = [
    "EditFile",
    "Launch",
    "ScreenRecorder",
    "Sign",
    "environment",
    "json_edit",
    "neutral_root",
    "recording_arguments",
    "scratch_root",
    "screen_entry",
    "tmux_backend",
    "write_manifest",
]

#: The provider's launch: what the kernel calls to build a terminal's command line.
Launch = Callable[[LaunchContext], LaunchPlan]
#: ``(name, content) -> content``: changes one generated file before it is written.
EditFile = Callable[[str, str], str]
#: Whether a rendered screen shows what the recording waits for.
Sign = Callable[[str], bool]


_NO_PROMPT = object()


def screen_entry(status: str, size: Sequence[int], *, last_message: str | None = None,
                 dialog: str | None = None, note: str = "", prompt: Any = _NO_PROMPT,
                 answers: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One screen's manifest entry: only the fields that say something, in the manifest's order.
    ``prompt`` (a ``Prompt``, or None for a waiting screen no answer can be typed into) is written in the
    manifest's form; ``answers`` as given."""
    entry: dict[str, Any] = {"status": status, "size": list(size)}
    if last_message is not None:
        entry["last_message"] = last_message
    if dialog is not None:
        entry["dialog"] = dialog
    if prompt is not _NO_PROMPT:
        from cao_kernel.testing.prompt_expect import prompt_as_manifest

        entry["prompt"] = None if prompt is None else prompt_as_manifest(prompt)
    if answers is not None:
        entry["answers"] = dict(answers)
    if note:
        entry["note"] = note
    return entry


def json_edit(suffix: str, edit: Callable[[dict[str, Any]], None]) -> EditFile:
    """A file hook for :meth:`ScreenRecorder.start`: ``edit`` changes, in place, the JSON document of
    the generated file whose name ends with ``suffix``; every other file is written as generated."""

    def hook(name: str, content: str) -> str:
        if not name.endswith(suffix):
            return content
        document = json.loads(content)
        edit(document)
        return json.dumps(document)

    return hook


class ScreenRecorder:
    """One terminal at a time on a private tmux server, and the screens saved from it.

    ``launch`` builds each terminal's command line, exactly as the provider builds it for the kernel;
    ``provider`` is the name the terminals are registered under. Terminals run in ``workdir`` (created
    when missing) at ``size``; each gets a runtime folder under ``runtime_root`` (default: the folder
    holding ``workdir``), a fresh ``rt-*`` one, or ``runtime_name`` formatted with ``count``, ``width``,
    ``height`` and ``id`` where a screen prints that path. Screens go to ``out`` as ``<name>.txt``, their
    entries to :attr:`manifest`.

    ``timeout``, ``settle``, ``pause`` and ``poll`` are the defaults of the waits (seconds);
    ``enter_count`` and ``submit_delay`` how text is submitted (the provider's capabilities when it
    differs from one plain Enter). ``profile`` is the profile of a terminal started without one.
    ``ids`` numbers the terminals (share one counter between recorders on one backend to keep their
    ids apart); ``terminal_name`` and ``session_name`` are formatted with ``count``.
    ``server``, the scripted model server, is only kept for the recording's steps.
    """

    def __init__(self, backend: TerminalBackend, launch: Launch, *, provider: str, workdir: Path, out: Path,
                 size: tuple[int, int] = (220, 50), server: Any = None, profile: AgentProfile | None = None,
                 timeout: float = 30.0, settle: float = 0.6, pause: float = 0.3, poll: float = 0.05,
                 runtime_root: Path | None = None, runtime_name: str | None = None,
                 enter_count: int = 1, submit_delay: float = 0.0, ids: Iterator[int] | None = None,
                 terminal_name: str = "rec-{count}", session_name: str = "cao-rec{count}") -> None:
        self.backend = backend
        self.launch = launch
        self.provider = provider
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.default_size = size
        self.size = size
        self.server = server
        self.profile = profile
        self.timeout = timeout
        self.settle = settle
        self.pause = pause
        self.poll = poll
        self.runtime_root = runtime_root if runtime_root is not None else workdir.parent
        self.runtime_name = runtime_name
        self.enter_count = enter_count
        self.submit_delay = submit_delay
        self.manifest: dict[str, dict[str, Any]] = {}
        self.terminal_id = ""
        self._ids = ids if ids is not None else itertools.count(1)
        self._names = (terminal_name, session_name)
        self._count = 0

    def start(self, profile: AgentProfile | None = None, *, size: tuple[int, int] | None = None,
              env: Mapping[str, str] | None = None, edit_file: EditFile | None = None,
              files: Mapping[str, str] | None = None, plan_env: Mapping[str, str | None] | None = None,
              wrapper: Sequence[str] = (), extra_args: Sequence[str] = (),
              edit_argv: Callable[[list[str]], Sequence[str]] | None = None, cwd: Path | None = None,
              **context: Any) -> None:
        """Start the next terminal the way the kernel starts one.

        ``env`` goes into the launch context and under the plan's own environment, as the kernel
        passes a caller's; ``context`` sets more :class:`LaunchContext` fields (``yolo``, ``model``,
        ``allowed_tools``, ``mcp_servers``). Then, to show what a user's setup would: ``edit_file``
        changes generated files before they are written, ``files`` adds files to the runtime folder,
        ``plan_env`` changes the plan's environment (a value replaces, None removes), ``wrapper`` is a
        command the CLI runs under, ``extra_args`` are appended to its command line and ``edit_argv``
        rewrites that command line; ``cwd`` is where the program starts when not in the working folder
        the launch was built for. ``size`` (default: the recorder's) holds for this terminal and its
        screens.
        """
        self._count += 1
        self.size = size or self.default_size
        width, height = self.size
        self.terminal_id = f"{next(self._ids):08x}"
        if self.runtime_name is None:
            runtime = Path(tempfile.mkdtemp(prefix="rt-", dir=self.runtime_root))
        else:
            folder = self.runtime_name.format(count=self._count, width=width, height=height,
                                              id=self.terminal_id)
            runtime = self.runtime_root / folder
            runtime.mkdir(parents=True)
        profile = profile if profile is not None else self.profile
        name, session = (pattern.format(count=self._count) for pattern in self._names)
        terminal = Terminal(id=self.terminal_id, name=name, session_name=session, provider=self.provider,
                            agent_profile=profile.name if profile else "recorder")
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime), env=env or {}, **context)
        plan = self.launch(ctx)
        for name, content in {**plan.files, **(files or {})}.items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(edit_file(name, content) if edit_file else content, encoding="utf-8")
        launch_env = {**ctx.env, **plan.env}
        for name, value in (plan_env or {}).items():
            if value is None:
                launch_env.pop(name, None)
            else:
                launch_env[name] = value
        argv = [*wrapper, *plan.argv, *extra_args]
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(cwd or self.workdir), argv=tuple(edit_argv(argv) if edit_argv else argv),
            env=launch_env, width=width, height=height,
        ))
        # The backend streams output to whoever watches; an unread stream would stall the program.
        self.backend.watch(self.terminal_id, lambda event: None)

    def stop(self) -> None:
        """Kill the current terminal (quietly: it may have exited on its own)."""
        with contextlib.suppress(Exception):
            self.backend.unwatch(self.terminal_id)
        with contextlib.suppress(Exception):
            self.backend.kill_terminal(self.terminal_id)

    def screen(self) -> str:
        return self.backend.capture(self.terminal_id)

    def wait(self, sign: Sign, what: str, timeout: float | None = None, settle: float | None = None) -> str:
        """The screen once ``sign`` holds and the screen stayed the same for ``settle`` seconds."""
        settle = self.settle if settle is None else settle
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen != last:
                last, since = screen, time.monotonic()
            elif sign(screen) and time.monotonic() - since >= settle:
                return screen
            time.sleep(self.poll)
        raise SystemExit(f"gave up waiting for {what}; screen:\n{last}")

    def wait_sign(self, sign: Sign, what: str, timeout: float | None = None) -> str:
        """A screen where ``sign`` holds, taken a moment (``pause``) after it first did: for states that
        animate and never settle, the moment lets the CLI finish drawing."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while time.monotonic() < deadline:
            if sign(self.screen()):
                time.sleep(self.pause)
                screen = self.screen()
                if sign(screen):
                    return screen
            time.sleep(self.poll)
        raise SystemExit(f"gave up waiting for {what}; screen:\n{self.screen()}")

    def catch(self, sign: Sign, timeout: float = 10.0, poll: float = 0.0) -> str | None:
        """The first screen where ``sign`` holds, polling as fast as tmux answers (for states that last
        a fraction of a second) or every ``poll`` seconds; None when none showed within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if sign(screen):
                return screen
            time.sleep(poll)
        return None

    def save(self, name: str, screen: str, status: str, *, last_message: str | None = None,
             dialog: str | None = None, note: str = "", prompt: Any = _NO_PROMPT,
             answers: Mapping[str, Any] | None = None) -> None:
        """Write the screen as ``<name>.txt`` and its manifest entry, at the current terminal's size
        (``prompt`` and ``answers`` as :func:`screen_entry` takes them)."""
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"{name}.txt").write_text(screen + "\n", encoding="utf-8")
        self.manifest[name] = screen_entry(status, self.size, last_message=last_message, dialog=dialog,
                                           note=note, prompt=prompt, answers=answers)
        print(f"  {name}: {status}")

    def type(self, text: str, *, enter: bool = True) -> None:
        """Type ``text`` and, unless ``enter`` is false, submit it."""
        self.backend.send_text(self.terminal_id, text, enter_count=self.enter_count if enter else 0,
                               submit_delay=self.submit_delay)

    def keys(self, *keys: str) -> None:
        self.backend.send_keys(self.terminal_id, list(keys))


@contextlib.contextmanager
def neutral_root(name: str) -> Iterator[Path]:
    """``<tmp>/<name>``, emptied and private for the block, removed after it. The same path on every
    machine, so a CLI that prints its working folder's path shows nothing of the recording machine;
    give each recorder a name of its own (recorders of other CLIs may run at the same time)."""
    root = Path(tempfile.gettempdir()) / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(mode=0o700)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def scratch_root(prefix: str = "cao-screens-", parent: Path | None = None) -> Iterator[Path]:
    """A fresh folder named ``<prefix>...`` in ``parent`` (default: the system's temporary folder), removed
    after the block."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def environment(env: Mapping[str, str], *, clear: bool = True) -> Iterator[None]:
    """``os.environ`` is ``env`` for the block (``clear=False``: ``env`` over what was there), then what
    it was. The tmux server the first terminal starts and the provider's launch both read it."""
    saved = dict(os.environ)
    if clear:
        os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def tmux_backend(home_dir: Path) -> Iterator[TerminalBackend]:
    """cao's tmux backend (its state in ``home_dir``) on a private tmux server that starts with the
    first terminal; the backend is closed and the server killed after the block."""
    from cao_tmux.backend import TmuxBackend

    from .tmux import private_tmux_socket

    with private_tmux_socket() as tmux:
        backend = TmuxBackend(home_dir=home_dir, socket_path=tmux.socket_path, config_file=tmux.config_file)
        try:
            yield backend
        finally:
            backend.close()


def recording_arguments(doc: str, *, version: str | None = None, cli: str = "",
                        out_default: str = "tests/screens/<version>") -> argparse.ArgumentParser:
    """The recording command's command line: ``--version`` (when ``version``, the newest tested one,
    is given; ``cli`` names the program in its help) and ``--out``. The description is the first
    paragraph of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if version is not None:
        parser.add_argument("--version", default=version, help=f"{cli} version to record")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"folder for the screens (default: {out_default})")
    return parser


def write_manifest(out: Path, *, package: str, version: str, version_output: str, recorded_with: str,
                   screens: Mapping[str, Mapping[str, Any]], source: str = "recorded") -> Path:
    """Write ``out/manifest.json`` with the standard fields (``recorded_with``: the scenarios file, from the
    repository root) and return its path."""
    manifest = {"package": package, "version": version, "version_output": version_output, "source": source,
                "recorded_with": recorded_with, "screens": dict(screens)}
    path = out / MANIFEST
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
