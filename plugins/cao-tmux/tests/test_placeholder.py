"""A new window's placeholder program never outlives the terminal it holds the place of."""

from __future__ import annotations

import os
import subprocess

from cao_tmux.backend import PLACEHOLDER


def test_the_placeholder_ends_with_its_terminal_without_a_hang_up_signal(wait_until):
    # respawn-pane -k replaces the placeholder by closing its terminal, and the kernel sends SIGHUP only
    # to a terminal's controlling process: a placeholder not (yet) that when its terminal went away
    # must still end, or it stays behind for good once its tmux server is gone.
    master, slave = os.openpty()
    placeholder = subprocess.Popen(list(PLACEHOLDER), stdin=slave, stdout=slave, stderr=slave,
                                   start_new_session=True)
    os.close(slave)
    try:
        os.close(master)
        wait_until(lambda: placeholder.poll() is not None, timeout=5, what="the placeholder to end")
    finally:
        placeholder.kill()
        placeholder.wait()
