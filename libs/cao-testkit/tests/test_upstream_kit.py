"""The upstream kit's environment for upstream's programs: the server's address in upstream's variables,
the token where upstream's clients read it, and nothing of the test's own cao settings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cao_testkit.upstream import upstream_env


@given(port=st.integers(1, 65535), token=st.none() | st.text("abcdef0123456789", min_size=1, max_size=64))
def test_upstream_env_names_the_server_and_the_token(tmp_path_factory, port, token):
    home = tmp_path_factory.mktemp("home")
    env = upstream_env(f"http://127.0.0.1:{port}", token, home, CAO_TERMINAL_ID="abcd1234")
    assert (env["CAO_API_HOST"], env["CAO_API_PORT"], env["HOME"]) == ("127.0.0.1", str(port), str(home))
    assert env.get("CAO_AUTH_LOCAL_TOKEN") == token
    assert env["CAO_TERMINAL_ID"] == "abcd1234"
    # cao's own settings of the test process (its home, its plugin list) never reach upstream's programs.
    assert not {"CAO_HOME_DIR", "CAO_LOAD_PLUGINS"} & set(env)
