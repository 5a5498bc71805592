"""cao's test kit, and a pytest plugin: enable it with ``-p cao_testkit`` (next to ``-p cao_kernel.testing``).

Fixtures:

- ``private_tmux``: a private tmux server for the test (:mod:`cao_testkit.tmux`, on libtmux's
  ``TestServer`` fixture); ``CAO_TMUX_SOCKET`` and ``CAO_TMUX_CONFIG`` point at it.
- ``tmux_socket``: just such a server's socket path, for tests that hand it to a kernel.
- ``make_kernel``, ``kernel_provider``, ``workdir``: kernels running real agents on that server, the
  provider they run (override it in a package's ``conftest.py``), a folder to work in
  (:mod:`cao_testkit.kernels`).

Around the session (:mod:`cao_testkit.session`): the real CLIs that conftests list in ``LIVE_CLIS`` are
installed in the background once collection shows their live tests will run, and a process the tests
left running is ended and fails the run (:mod:`cao_testkit.leftovers`).

The rest is imported where it is used:

- :mod:`cao_testkit.models`: scripted model servers (Anthropic, OpenAI Responses, Gemini) and real agent
  CLIs installed into a per-machine cache, run in sandboxed homes.
- :mod:`cao_testkit.live`, :mod:`cao_testkit.live_mcp`: live orchestration through real agent CLIs.
- :mod:`cao_testkit.live_example`: the assign example on real Claude Code and Codex (its live test and
  bench/live.py).
- :mod:`cao_testkit.server_process`: a real ``cao server`` subprocess; :mod:`cao_testkit.serve`: one in a
  thread; :mod:`cao_testkit.chaos`: one killed and restarted under traffic, every message counted;
  :mod:`cao_testkit.openapi`: a client that checks every answer against the OpenAPI document.
- :mod:`cao_testkit.recorder`, :mod:`cao_testkit.recording`, :mod:`cao_testkit.steps`: recording a
  provider's screens, with ``python -m cao_testkit.record`` (:mod:`cao_testkit.record`).
- :mod:`cao_testkit.notify`: a fake webhook, example events, fixtures and strategies for notifier plugins.
- :mod:`cao_testkit.live_fixtures`, :mod:`cao_testkit.live_terminal`, :mod:`cao_testkit.startup_dialogs`:
  a provider's live tests (model server and server fixtures, steps with one terminal, start-up dialogs).
- :mod:`cao_testkit.launching`, :mod:`cao_testkit.recorded_screens`: a provider's launch and screen tests.
- :mod:`cao_testkit.waiting`, :mod:`cao_testkit.files`, :mod:`cao_testkit.processes`,
  :mod:`cao_testkit.modules`: waiting for a condition, folder snapshots, a process's liveness, loading
  a script as a module.

Test code only: nothing a user installs to run cao imports it. It imports the kernel and plugins it
drives (``cao-kernel``, ``cao-tmux``, ``cao-server``...) where it uses them; the package whose tests use
a part lists them in its ``test`` extra next to ``cao-testkit``.
"""

from __future__ import annotations

from .kernels import kernel_provider, make_kernel, workdir
from .session import pytest_collection_finish, pytest_sessionfinish, session_temp_folder
from .tmux import private_tmux, tmux_socket

__all__ = ["kernel_provider", "make_kernel", "private_tmux", "pytest_collection_finish",
           "pytest_sessionfinish", "session_temp_folder", "tmux_socket", "workdir"]
