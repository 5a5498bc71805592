#!/usr/bin/env bash
# Sets up everything cao needs on a Debian-like machine that has nothing but python3 (3.11+):
# tmux (apt-get), uv (from PyPI) and the workspace environment `.venv` (uv sync, locked, built on the
# machine's own Python: uv never downloads an interpreter here). The tests need more, which
# scripts/test installs through bootstrap_node and bootstrap_browser.
#
#   bash scripts/bootstrap.sh           install what is missing, then sync every workspace member
#   bash scripts/bootstrap.sh --check   install nothing; exit 1 naming what is missing or out of date
#
# Idempotent and silent on success. On failure it prints one line saying why; the output of the step
# that failed is kept in .tools/bootstrap.log (and shown too when CI is set, since CI keeps no files).
#
# scripts/demo and scripts/test source this file and call `bootstrap`; afterwards CAO_ROOT is the
# repository root, UV_BIN the uv executable, and uv is on PATH for child processes.

set -euo pipefail

CAO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CAO_TOOLS="$CAO_ROOT/.tools"
UV_BIN=""
# Never download a Python: only the registries (PyPI, Debian) may be reached.
export UV_PYTHON_DOWNLOADS=never

_bootstrap_fail() {
    echo "bootstrap: $*" >&2
    exit 1
}

# Runs a command with its output captured; on failure saves the output to the log and returns non-zero.
_bootstrap_run() {
    local output status=0
    output="$("$@" 2>&1)" || status=$?
    if ((status != 0)); then
        mkdir -p "$CAO_TOOLS"
        printf '$ %s\n%s\n' "$*" "$output" >"$CAO_TOOLS/bootstrap.log"
        if [[ -n "${CI:-}" ]]; then
            printf '%s\n' "$output" | tail -n 40 >&2
        fi
    fi
    return "$status"
}

_bootstrap_as_root() {
    if [[ "$(id -u)" == 0 ]]; then
        "$@"
    elif [[ -t 0 ]]; then
        sudo "$@"
    else
        # No terminal to type a password into (CI, pipes): fail at once instead of hanging.
        sudo -n "$@"
    fi
}

_BOOTSTRAP_APT_UPDATED=0

# apt-get install PACKAGE...; returns non-zero (with the log written) when it cannot.
_bootstrap_apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    if [[ "$(id -u)" != 0 ]] && ! command -v sudo >/dev/null 2>&1; then
        return 1
    fi
    if ((!_BOOTSTRAP_APT_UPDATED)); then
        _bootstrap_run _bootstrap_as_root apt-get update -q || return 1
        _BOOTSTRAP_APT_UPDATED=1
    fi
    _bootstrap_run _bootstrap_as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@"
}

_bootstrap_user_bin() {
    local base
    base="$(python3 -m site --user-base 2>/dev/null)" || base="$HOME/.local"
    echo "$base/bin"
}

# Sets UV_BIN to the first uv found: on PATH, in .tools/bin, or in pip's --user bin folder.
_bootstrap_find_uv() {
    local candidate
    if candidate="$(command -v uv 2>/dev/null)"; then
        UV_BIN="$candidate"
        return 0
    fi
    for candidate in "$CAO_TOOLS/bin/uv" "$(_bootstrap_user_bin)/uv"; do
        if [[ -x "$candidate" ]]; then
            UV_BIN="$candidate"
            return 0
        fi
    done
    return 1
}

_bootstrap_install_uv() {
    local venv="$CAO_TOOLS/uv"
    mkdir -p "$CAO_TOOLS"
    # A failed `python3 -m venv` leaves a venv without pip behind: always start from nothing.
    rm -rf "$venv"
    if ! _bootstrap_run python3 -m venv "$venv"; then
        rm -rf "$venv"
        # Debian ships venv's ensurepip in a separate package.
        if _bootstrap_apt_install python3-venv && _bootstrap_run python3 -m venv "$venv"; then
            :
        else
            rm -rf "$venv"
        fi
    fi
    if [[ -x "$venv/bin/python" ]]; then
        _bootstrap_run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check uv \
            || _bootstrap_fail "could not install uv from PyPI into .tools/uv (see .tools/bootstrap.log)"
        # Only uv goes on PATH: the venv's own python must not shadow the machine's python3.
        mkdir -p "$CAO_TOOLS/bin"
        ln -sf ../uv/bin/uv "$CAO_TOOLS/bin/uv"
    else
        # Last resort. Debian marks its Python "externally managed", which refuses even --user installs;
        # overriding that is safe for uv alone: it has no dependencies and Debian ships no `uv` module.
        _bootstrap_run env PIP_BREAK_SYSTEM_PACKAGES=1 \
            python3 -m pip install --quiet --user --disable-pip-version-check uv \
            || _bootstrap_fail "could not install uv: python3 has no working venv module and" \
                "'pip install --user uv' failed; install python3-venv and rerun (see .tools/bootstrap.log)"
    fi
    _bootstrap_find_uv \
        || _bootstrap_fail "uv was installed but cannot be found in .tools/bin or $(_bootstrap_user_bin)"
}

_bootstrap_python_ok() {
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1
}

# --compile-bytecode: installed packages ship their .pyc, so every `cao` and test subprocess starts fast
# even where PYTHONDONTWRITEBYTECODE stops Python from caching bytecode itself (it halves `cao --help`).
_bootstrap_sync_args=(sync --all-packages --locked --python python3 --compile-bytecode --quiet)

_bootstrap_check() {
    local missing=()
    if ! command -v python3 >/dev/null 2>&1; then
        missing+=("python3")
    elif ! _bootstrap_python_ok; then
        missing+=("python3 >= 3.11")
    fi
    command -v tmux >/dev/null 2>&1 || missing+=("tmux")
    if ! _bootstrap_find_uv; then
        missing+=("uv")
    elif ! (cd "$CAO_ROOT" && "$UV_BIN" "${_bootstrap_sync_args[@]}" --check >/dev/null 2>&1); then
        missing+=(".venv in sync with uv.lock")
    fi
    if ((${#missing[@]})); then
        local joined
        joined="$(printf ', %s' "${missing[@]}")"
        _bootstrap_fail "missing: ${joined:2} (run: bash scripts/bootstrap.sh)"
    fi
}

bootstrap() {
    case "${1:-}" in
        "") ;;
        --check)
            _bootstrap_check
            return 0
            ;;
        *)
            echo "bootstrap: unknown option '$1' (expected nothing or --check)" >&2
            return 2
            ;;
    esac
    # The log belongs to the latest run only.
    rm -f "$CAO_TOOLS/bootstrap.log"
    command -v python3 >/dev/null 2>&1 || _bootstrap_fail "python3 not found: cao needs Python 3.11 or newer"
    _bootstrap_python_ok || _bootstrap_fail "python3 is $(python3 -V 2>&1): cao needs Python 3.11 or newer"
    if ! command -v tmux >/dev/null 2>&1; then
        _bootstrap_apt_install tmux \
            || _bootstrap_fail "tmux is missing and apt-get could not install it" \
                "(needs root or sudo; see .tools/bootstrap.log)"
    fi
    _bootstrap_find_uv || _bootstrap_install_uv
    local uv_dir
    uv_dir="$(dirname "$UV_BIN")"
    case ":$PATH:" in
        *":$uv_dir:"*) ;;
        *) export PATH="$uv_dir:$PATH" ;;
    esac
    (cd "$CAO_ROOT" && _bootstrap_run "$UV_BIN" "${_bootstrap_sync_args[@]}") \
        || _bootstrap_fail "uv sync --all-packages --locked failed; if uv.lock is stale run 'uv lock'" \
            "(see .tools/bootstrap.log)"
}

# The live agent-CLI tests install Claude Code and Codex from the npm registry: the test run needs node
# and npm, the demo does not.
bootstrap_node() {
    command -v npm >/dev/null 2>&1 && return 0
    _bootstrap_apt_install nodejs npm \
        || _bootstrap_fail "npm is missing and apt-get could not install nodejs and npm" \
            "(the live agent-CLI tests need it; see .tools/bootstrap.log)"
}

bootstrap_browser() {
    # The web console's tests drive Debian's chromium, never a downloaded browser. The fonts: a page's
    # text needs them to render (and to be measured) in a headless browser.
    command -v chromium >/dev/null 2>&1 && return 0
    _bootstrap_apt_install chromium fonts-liberation fonts-dejavu-core \
        || _bootstrap_fail "chromium is missing and apt-get could not install it" \
            "(the web console's browser tests need it; see .tools/bootstrap.log)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    bootstrap "$@"
fi
