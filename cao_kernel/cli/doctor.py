"""``cao doctor``: is every installed provider ready to run its agent CLI on this machine?

For each provider: which plugin brings it, where its program is, what version that program reports
and whether the provider was tested with it, and whether the model API it will call answers. Plugins
that failed to load are listed too. Program runs and network checks happen in parallel threads, each
with its own time limit, so a hanging CLI or a black-holed address costs seconds, not minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
import click

from . import get_kernel

VERSION_TIMEOUT = 10.0
ENDPOINT_TIMEOUT = 3.0
_VERSION = re.compile(r"\d+(?:\.\d+)+(?:[-+][0-9A-Za-z][0-9A-Za-z.+-]*)?")
_OUTPUT_LIMIT = 400


@attrs.define
class BinaryCheck:
    """Where the provider's program is. ``source`` says how it was found: the provider's override
    variable, ``PATH``, or ``python environment`` (a console script next to cao's interpreter)."""

    name: str
    path: str | None = None
    source: str | None = None
    install_hint: str = ""
    problem: str | None = None

    @property
    def found(self) -> bool:
        return self.path is not None


@attrs.define
class VersionCheck:
    """What ``<program> <version_args>`` printed, the version read from it, and whether it was tested."""

    command: list[str] = attrs.field(factory=list)
    ran: bool = False
    exit_code: int | None = None
    output: str = ""
    version: str | None = None
    tested: bool | None = None
    tested_versions: list[str] = attrs.field(factory=list)
    error: str | None = None

    @property
    def summary(self) -> str:
        if self.error:
            return f"fails: {self.error}"
        if not self.ran:
            return "-"
        if self.version is None:
            return f"version not recognised in {self.output[:60]!r}"
        if self.tested:
            return f"{self.version} (tested)"
        tested = ", ".join(self.tested_versions) or "none"
        return f"{self.version} (untested: tested with {tested})"


@attrs.define
class EndpointCheck:
    """The model API's base URL and whether anything answered there (any HTTP status counts)."""

    url: str | None = None
    checked: bool = False
    answers: bool | None = None
    detail: str = ""

    @property
    def summary(self) -> str:
        if self.url is None:
            return self.detail or "unknown"
        return f"{self.url} {self.detail}".strip()


@attrs.define
class ProviderCheck:
    name: str
    plugin: str | None
    distribution: str | None
    plugin_version: str | None
    binary: BinaryCheck
    version: VersionCheck = attrs.field(factory=VersionCheck)
    endpoint: EndpointCheck = attrs.field(factory=EndpointCheck)

    @property
    def problems(self) -> list[str]:
        """What makes this provider broken (a missing program is not: it may simply not be wanted)."""
        found = []
        if self.binary.problem:
            found.append(f"{self.name}: {self.binary.problem}")
        if self.version.error:
            found.append(f"{self.name}: {' '.join(self.version.command)} {self.version.error}")
        return found


def find_binary(spec: Any, env: Mapping[str, str]) -> BinaryCheck:
    """Find the provider's program the way its launch would: the override variable, then ``PATH``, then
    the console scripts of cao's own Python environment (providers that ship their program in Python)."""
    from cao_hookspecs.programs import find_program

    check = BinaryCheck(name=spec.binary, install_hint=spec.install_hint)
    override = getattr(spec, "binary_env", None)
    chosen = bool(override and env.get(override))
    try:
        check.path = find_program({"PATH": os.defpath, **env}, spec.binary, override, missing="")
        check.source = override if chosen else "PATH"
        return check
    except ValueError as exc:
        if chosen:
            check.source, check.problem = override, str(exc)
            return check
    beside = Path(sys.executable).parent / spec.binary
    if sys.executable and beside.is_file() and os.access(beside, os.X_OK):
        check.path, check.source = str(beside), "python environment"
    return check


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _OUTPUT_LIMIT else text[:_OUTPUT_LIMIT] + "..."


def run_version(path: str, spec: Any, env: Mapping[str, str],
                timeout: float = VERSION_TIMEOUT) -> VersionCheck:
    """Run the program's version command and judge the version it prints against ``tested_versions``."""
    tested = list(spec.tested_versions)
    check = VersionCheck(command=[path, *spec.version_args], tested_versions=tested)
    try:
        # A session of its own: a CLI that is a wrapper script leaves children holding the output pipes,
        # and only killing the whole group ends a hung one.
        proc = subprocess.Popen(check.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace", env=dict(env),
                                start_new_session=True)
    except OSError as exc:
        check.error = f"cannot run: {exc.strerror or exc}"
        return check
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        check.error = f"did not finish within {timeout:g} s"
        return check
    check.ran, check.exit_code = True, proc.returncode
    check.output = _clip(stdout if stdout.strip() else stderr)
    if proc.returncode != 0:
        said = _clip(stderr or stdout).splitlines()
        check.error = f"exited with status {proc.returncode}" + (f": {said[0]}" if said else "")
        return check
    versions = _VERSION.findall(stdout + "\n" + stderr)
    check.version = next((v for v in versions if v in tested), versions[0] if versions else None)
    check.tested = check.version in tested if check.version else None
    return check


def _kill_group(proc: subprocess.Popen[str]) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        # A descendant in a session of its own still holds the pipes: stop reading them.
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()


def check_endpoint(url: str, timeout: float = ENDPOINT_TIMEOUT) -> EndpointCheck:
    """Ask ``url`` for anything: an HTTP answer of any status means something is listening there."""
    import socket
    import urllib.error
    import urllib.request

    check = EndpointCheck(url=url, checked=True)
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "cao-doctor"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the provider's URL
            check.answers, check.detail = True, f"answers (HTTP {response.status})"
    except urllib.error.HTTPError as exc:
        check.answers, check.detail = True, f"answers (HTTP {exc.code})"
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            why = f"no answer within {timeout:g} s"
        elif isinstance(reason, socket.gaierror):
            why = "host name not found"
        elif isinstance(reason, ConnectionRefusedError):
            why = "connection refused"
        else:
            why = str(reason)
        check.answers, check.detail = False, f"does not answer: {why}"
    except TimeoutError:
        check.answers, check.detail = False, f"does not answer: no answer within {timeout:g} s"
    except (ValueError, OSError) as exc:
        check.answers, check.detail = False, f"does not answer: {exc}"
    return check


def _endpoint_url(spec: Any, env: Mapping[str, str]) -> tuple[str | None, str]:
    compute = getattr(spec, "model_endpoint", None)
    if compute is None:
        return None, "not given by the provider"
    try:
        url = compute(env)
    except Exception as exc:  # noqa: BLE001 - a provider bug is reported, not raised
        return None, f"unknown (the provider's model_endpoint raised {type(exc).__name__}: {exc})"
    if url is None:
        return None, "unknown for this configuration"
    return str(url), ""


def diagnose(kernel: Any, env: Mapping[str, str], *, offline: bool = False) -> dict[str, Any]:
    """Everything ``cao doctor`` reports, as JSON-ready data (``ok`` is false when something is broken)."""
    from cao_hookspecs import ProviderSpec

    records = {record.name: record for record in kernel.plugin_records()}
    problems_before = len(kernel.hooks.problems)
    contributions = kernel.hooks.providers()
    registration_problems = list(kernel.hooks.problems[problems_before:])
    checks: list[tuple[ProviderCheck, Any]] = []
    for contribution in sorted(contributions, key=lambda c: getattr(c.record, "name", "")):
        spec = contribution.record
        if not isinstance(spec, ProviderSpec):
            owner = kernel.describe_plugin(contribution.plugin_name)
            registration_problems.append(f"plugin {owner} registered {type(spec).__name__} where a "
                                         "ProviderSpec was expected")
            continue
        record = records.get(contribution.plugin_name)
        checks.append((ProviderCheck(
            name=spec.name, plugin=contribution.plugin_name,
            distribution=record.distribution if record else None,
            plugin_version=record.version if record else None,
            binary=find_binary(spec, env),
        ), spec))

    def version_of(check: ProviderCheck, spec: Any) -> None:
        if check.binary.path is not None:
            check.version = run_version(check.binary.path, spec, env)
        else:
            check.version = VersionCheck(tested_versions=list(spec.tested_versions))

    def endpoint_of(check: ProviderCheck, spec: Any) -> None:
        url, why = _endpoint_url(spec, env)
        if url is None:
            check.endpoint = EndpointCheck(detail=why)
        elif offline:
            check.endpoint = EndpointCheck(url=url, detail="not checked (--offline)")
        else:
            check.endpoint = check_endpoint(url)

    jobs = [(version_of, pair) for pair in checks] + [(endpoint_of, pair) for pair in checks]
    if jobs:
        with ThreadPoolExecutor(max_workers=min(32, len(jobs)), thread_name_prefix="cao-doctor") as pool:
            for future in [pool.submit(job, *pair) for job, pair in jobs]:
                future.result()

    failed = [record for record in kernel.plugin_records() if record.status == "failed"]
    problems = [p for check, _ in checks for p in check.problems]
    problems += [f"plugin {r.name} ({r.distribution or 'unknown distribution'}) failed to load: {r.error}"
                 for r in failed]
    problems += registration_problems
    return {
        "ok": not problems,
        "providers": [_provider_json(check) for check, _ in checks],
        "failed_plugins": [{"name": r.name, "distribution": r.distribution, "version": r.version,
                            "error": r.error} for r in failed],
        "problems": problems,
    }


def _provider_json(check: ProviderCheck) -> dict[str, Any]:
    binary, version, endpoint = check.binary, check.version, check.endpoint
    return {
        "name": check.name,
        "plugin": {"name": check.plugin, "distribution": check.distribution, "version": check.plugin_version},
        "binary": {"name": binary.name, "found": binary.found, "path": binary.path, "source": binary.source,
                   "install_hint": binary.install_hint, "problem": binary.problem},
        "version": {"command": version.command, "ran": version.ran, "exit_code": version.exit_code,
                    "output": version.output, "version": version.version, "tested": version.tested,
                    "tested_versions": version.tested_versions, "error": version.error,
                    "summary": version.summary},
        "endpoint": {"url": endpoint.url, "checked": endpoint.checked, "answers": endpoint.answers,
                     "detail": endpoint.detail},
        "problems": check.problems,
    }


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def render(report: Mapping[str, Any]) -> str:
    """The report as a table with notes under it."""
    lines: list[str] = []
    providers = report["providers"]
    if providers:
        rows = [("PROVIDER", "PLUGIN", "BINARY", "VERSION", "MODEL API")]
        for p in providers:
            plugin = p["plugin"]
            owner = (f"{plugin['distribution']} {plugin['version']}" if plugin["distribution"]
                     else f"{plugin['name']} (registered in process)")
            binary = p["binary"]
            where = (binary["path"] if binary["found"]
                     else "not usable" if binary["problem"] else "not found")
            endpoint = p["endpoint"]
            api = (f"{endpoint['url']} {endpoint['detail']}".strip() if endpoint["url"]
                   else endpoint["detail"])
            rows.append((p["name"], owner, where, p["version"]["summary"], api))
        lines += _table(rows)
    else:
        lines.append("No providers installed.")
    notes = []
    for p in providers:
        binary = p["binary"]
        if not binary["found"] and not binary["problem"]:
            hint = f"; install it with: {binary['install_hint']}" if binary["install_hint"] else ""
            notes.append(f"{p['name']}: '{binary['name']}' is not on PATH{hint}")
    if notes:
        lines += ["", *notes]
    if report["failed_plugins"]:
        lines += ["", "Plugins that failed to load:"]
        lines += [f"  {f['name']} ({f['distribution'] or 'unknown distribution'}): {f['error']}"
                  for f in report["failed_plugins"]]
    if report["problems"]:
        lines += ["", "Problems:", *(f"  {problem}" for problem in report["problems"])]
    else:
        lines += ["", "No problems found."]
    return "\n".join(lines)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON (for programs).")
@click.option("--offline", is_flag=True, help="Do not contact the model APIs.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, offline: bool) -> None:
    """Check every installed provider's agent CLI and model API.

    For each provider: the plugin that brings it, where its program is (the provider's override
    variable such as CAO_CLAUDE_CODE_BIN, then PATH), the version it reports and whether the provider
    was tested with it, and whether the model API it will call answers (any HTTP answer counts; skipped
    with --offline). Plugins that failed to load are listed too.

    Exits 1 when something is broken: a program that is there but fails to run its version command,
    an override variable naming no program, or a plugin that failed to load. A program that is not
    installed is reported with how to install it, but is not a failure (not every provider is
    wanted), and neither is a model API that does not answer.
    """
    import json

    report = diagnose(get_kernel(ctx), dict(os.environ), offline=offline)
    click.echo(json.dumps(report, indent=2) if as_json else render(report))
    if not report["ok"]:
        ctx.exit(1)
