"""mock_cli as a real subprocess with pipes (non-terminal mode): the upstream-compatible contract."""

from __future__ import annotations

import subprocess
import sys
import time

P = "\u276f "


def test_banner_prompt_and_every_command(run_piped):
    stdin = "hello world\n__mock_error__\n__mock_sleep_0.1\n\nsecond turn\n/exit\nnever read\n"
    result = run_piped(stdin.encode())
    assert result.returncode == 0
    assert result.stderr == b""
    assert result.stdout.decode() == (
        f"MockCli ready.\n{P}"
        f"> MOCK: hello world\n{P}"
        f"ERROR: mock failure injected\n{P}"
        f"> MOCK: slept 0.1s\n{P}"
        f"{P}"
        f"> MOCK: second turn\n{P}"
        "goodbye\n"
    )


def test_quit_is_exit_too_and_eof_ends_the_program(run_piped):
    assert run_piped(b"/quit\n").stdout.decode().endswith(f"{P}goodbye\n")
    result = run_piped(b"only line\n")
    assert result.returncode == 0
    assert result.stdout.decode() == f"MockCli ready.\n{P}> MOCK: only line\n{P}"


def test_reply_waits_for_the_delay(run_piped):
    started = time.monotonic()
    result = run_piped(b"a\nb\n", "--delay-ms", "300")
    elapsed = time.monotonic() - started
    assert result.stdout.decode().count("> MOCK:") == 2
    assert elapsed >= 0.6


def test_delay_zero_and_equals_form(run_piped):
    started = time.monotonic()
    result = run_piped(b"x\n" * 20, "--delay-ms=0")
    assert result.stdout.decode().count("> MOCK: x\n") == 20
    assert time.monotonic() - started < 2


def test_paste_markers_and_crlf_are_stripped_in_line_mode(run_piped):
    result = run_piped(b"\x1b[200~pasted text\x1b[201~\r\n")
    assert f"{P}> MOCK: pasted text\n" in result.stdout.decode()


def test_sleep_with_bad_number_is_an_ordinary_input(run_piped):
    started = time.monotonic()
    result = run_piped(b"__mock_sleep_inf\n__mock_sleep_-1\n__mock_sleep_1e9\n", "--delay-ms", "0")
    assert time.monotonic() - started < 2
    out = result.stdout.decode()
    for label in ("inf", "-1", "1e9"):
        assert f"> MOCK: __mock_sleep_{label}\n" in out


def test_version_help_and_unknown_arguments(mock_argv):
    version = subprocess.run(mock_argv("--version"), capture_output=True, timeout=10)
    assert (version.returncode, version.stdout) == (0, b"mock_cli 0.1.0\n")
    helped = subprocess.run(mock_argv("--help"), capture_output=True, timeout=10)
    assert helped.returncode == 0 and b"--delay-ms" in helped.stdout
    ignored = subprocess.run(mock_argv("--yolo", "-x", "chat", "--delay-ms", "0"), input=b"hi\n",
                             capture_output=True, timeout=10)
    assert ignored.returncode == 0 and b"> MOCK: hi\n" in ignored.stdout


def test_bad_delay_is_refused_with_a_clear_error(mock_argv):
    for args in (["--delay-ms"], ["--delay-ms", "fast"], ["--delay-ms=-5"]):
        result = subprocess.run(mock_argv(*args), input=b"", capture_output=True, timeout=10)
        assert result.returncode == 2
        assert result.stdout == b""
        assert b"mock_cli: --delay-ms needs" in result.stderr


def test_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "cao_provider_mock", "--delay-ms", "0"], input=b"hi\n",
                            capture_output=True, timeout=10)
    assert result.returncode == 0
    assert result.stdout.decode() == f"MockCli ready.\n{P}> MOCK: hi\n{P}"


def test_output_is_unbuffered_so_a_reader_sees_each_answer_at_once(mock_argv):
    proc = subprocess.Popen(mock_argv("--delay-ms", "0"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.read(len(f"MockCli ready.\n{P}".encode())) == f"MockCli ready.\n{P}".encode()
        proc.stdin.write(b"ping\n")
        proc.stdin.flush()
        expected = f"> MOCK: ping\n{P}".encode()
        assert proc.stdout.read(len(expected)) == expected
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=5) == 0
        proc.stdout.close()
