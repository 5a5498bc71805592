"""``cao env`` over the managed ``.env``: validated keys and values, private atomic writes under a lock,
values hidden when listed, and what it writes read back the same (and substituted into profiles)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_kernel.cli import cli
from cao_kernel.errors import InvalidInput
from cao_kernel.home import CaoHome
from cao_kernel.profiles.env_store import MAX_VALUE_BYTES, read_values, set_value, unset_value
from cao_kernel.profiles.envfile import parse_env


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--no-plugins", *args], input=input)


def test_set_get_list_unset(cao_home: Path) -> None:
    env_file = cao_home / ".env"
    result = run("env", "set", "API_KEY", "s3cret value")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"✓ Set API_KEY in {env_file}"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert run("env", "set", "REGION", "eu-west-1").exit_code == 0
    assert run("env", "get", "API_KEY").stdout == "s3cret value\n"
    assert run("env", "list").stdout.splitlines() == ["API_KEY=********", "REGION=********"]
    assert run("env", "list", "--show-values").stdout.splitlines() == ["API_KEY=s3cret value",
                                                                      "REGION=eu-west-1"]
    assert run("env", "unset", "API_KEY").stdout.strip() == f"✓ Unset API_KEY in {env_file}"
    missing = run("env", "get", "API_KEY")
    assert missing.exit_code == 1 and "Environment variable 'API_KEY' not found." in missing.stderr
    again = run("env", "unset", "API_KEY")
    assert again.exit_code == 0 and "API_KEY was not set" in again.stderr
    assert env_file.read_text() == "REGION=eu-west-1\n"


def test_value_from_standard_input_stays_off_the_command_line(cao_home: Path) -> None:
    assert run("env", "set", "TOKEN", input="from-stdin\n").exit_code == 0
    assert read_values(CaoHome(cao_home)) == {"TOKEN": "from-stdin"}


def test_comments_and_other_lines_are_kept(cao_home: Path) -> None:
    env_file = cao_home / ".env"
    env_file.write_text("# my keys\nexport A=1\nB='two words'\n")
    assert run("env", "set", "A", "3").exit_code == 0
    assert run("env", "unset", "B").exit_code == 0
    assert env_file.read_text() == "# my keys\nA=3\n"


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("1ABC", "x", "invalid env var name '1ABC'"),
    ("A-B", "x", "invalid env var name 'A-B'"),
    ("GOOD", "two\nlines", "env var GOOD: the value must be one line"),
    ("GOOD", "nul\0", "env var GOOD: the value must be one line"),
    ("GOOD", "x" * (MAX_VALUE_BYTES + 1), f"longer than {MAX_VALUE_BYTES} bytes"),
])
def test_bad_keys_and_values_are_refused_by_name(cao_home: Path, key: str, value: str, expected: str) -> None:
    with pytest.raises(InvalidInput, match=expected.replace("'", ".")):
        set_value(CaoHome(cao_home), key, value)
    assert not (cao_home / ".env").exists()
    result = run("env", "set", key, value) if "\0" not in value else None
    if result is not None:
        assert result.exit_code == 1 and expected.split(":")[0] in result.stderr


def test_a_group_readable_file_is_made_private_again(cao_home: Path) -> None:
    env_file = cao_home / ".env"
    env_file.write_text("A=1\n")
    os.chmod(env_file, 0o644)
    assert run("env", "list").exit_code == 0
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600


_KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
# Any one-line text without NUL, surrogates (not text) or CR.
_VALUES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\0"), max_size=60)


# Each example writes (and syncs) the file a few times: fewer examples keep the test at a few seconds.
@settings(max_examples=60, deadline=None)
@given(values=st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_what_is_written_reads_back_the_same(tmp_path_factory: pytest.TempPathFactory,
                                             values: dict[str, str]) -> None:
    home = CaoHome(tmp_path_factory.mktemp("env-home"))
    for key, value in values.items():
        set_value(home, key, value)
    assert read_values(home) == values
    for key in list(values)[::2]:
        assert unset_value(home, key)
        del values[key]
    assert read_values(home) == values


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_the_parser_takes_any_text_and_keeps_only_valid_names(text: str) -> None:
    from cao_kernel.profiles.validate import ENV_KEY_RE

    parsed = parse_env(text)
    assert all(ENV_KEY_RE.match(key) for key in parsed)
    assert all("\n" not in value for value in parsed.values())


def test_values_are_substituted_into_profiles(cao_home: Path) -> None:
    from cao_kernel.profiles.install import install

    source = cao_home / "svc.md"
    assert run("env", "set", "MODEL_NAME", "big-model").exit_code == 0
    source.write_text("---\nname: svc\nprovider: claude_code\nmodel: ${MODEL_NAME}\n---\nhello\n")
    assert install(str(source), CaoHome(cao_home)).profile.model == "big-model"


def test_concurrent_writers_keep_every_key(cao_home: Path) -> None:
    """Processes (``cao env set`` and ``cao install --env`` share the lock) writing at once lose nothing."""
    script = ("import sys\nfrom cao_kernel.home import CaoHome\nfrom cao_kernel.profiles.env_store import "
              "set_value\nfor n in range(20):\n    set_value(CaoHome.from_env(), f'K_{sys.argv[1]}_{n}', "
              "str(n))\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)], env=os.environ.copy())
             for i in range(6)]
    assert [p.wait(timeout=60) for p in procs] == [0] * len(procs)
    values = read_values(CaoHome(cao_home))
    assert values == {f"K_{i}_{n}": str(n) for i in range(6) for n in range(20)}
