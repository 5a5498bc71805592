"""``cao workflow``: the commands over the server's ``/workflows`` routes. A workflow file is read here
and its text sent, so the server may run on another machine; everything else is a run id."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

import click

from .errors import WorkflowFileError

# A blocking call's HTTP timeout is its own wait plus this margin.
_MARGIN = 30.0


def _call(method: str, path: str, *, body: Mapping[str, Any] | None = None,
          params: Mapping[str, Any] | None = None, timeout: float | None = None) -> Any:
    from cao_server.commands import _api

    async def go(api: Any) -> Any:
        return await api._call(method, path, json=body, params=params, timeout=timeout)

    return _api.run(go)


def _source_body(path: str) -> dict[str, Any]:
    from .source import read_file

    try:
        source = read_file(path, base=os.getcwd())
    except WorkflowFileError as exc:
        raise click.ClickException(str(exc)) from None
    return {"name": source.name, "path": source.path, "source": source.text, "working_directory": os.getcwd()}


def _run_path(run_id: str, tail: str = "") -> str:
    from .names import run_id as checked

    try:
        return f"/workflows/runs/{checked(run_id)}{tail}"
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


def _show(record: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(record, indent=2))
        return
    if isinstance(record, list):
        if not record:
            click.echo("No workflow runs.")
        for item in record:
            click.echo(f"{item['run_id']:<40} {item['name']:<24} {item['state']}")
        return
    click.echo(f"run {record.get('run_id')} ({record.get('name')}): {record.get('state')}")
    if record.get("approval"):
        click.echo(f"  waiting for approval: {record['approval'].get('question')}")
        click.echo(f"  answer: cao workflow approve {record.get('run_id')} [--reject] [--note TEXT]")
    for key, value in (record.get("outputs") or {}).items():
        click.echo(f"  output {key}: {json.dumps(value)}")
    if record.get("error"):
        click.echo(f"  error: {record['error']}")
    if record.get("state") == "completed" and "result" in record:
        click.echo(f"  result: {json.dumps(record['result'])}")


def _exit_for(record: Mapping[str, Any]) -> None:
    # As upstream: 0 for completed, 1 for failed or cancelled; a run still going is not a failure.
    if record.get("state") in ("failed", "cancelled"):
        sys.exit(1)


@click.group()
def workflow() -> None:
    """Durable multi-step runs of agents: a Python file with ``def workflow(inputs):`` whose steps
    (run_step, assign_step, approve, emit) are journaled, so a run survives a server restart."""


@workflow.command()
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def validate(path: str, as_json: bool) -> None:
    """Check a workflow file: its syntax, its workflow(inputs) function, the profiles it names."""
    record = _call("POST", "/workflows/validate", body=_source_body(path))
    if as_json:
        click.echo(json.dumps(record, indent=2))
    else:
        profiles = ", ".join(record.get("profiles") or []) or "none named literally"
        click.echo(f"{record['name']}: valid (profiles: {profiles})")


@workflow.command()
@click.argument("path")
@click.option("--input", "inputs", multiple=True, metavar="KEY=VALUE", help="An input (repeatable).")
@click.option("--run-id", help="Name the run (a retried command with the same id starts nothing twice).")
@click.option("--detach", is_flag=True, help="Print the run id and return at once.")
@click.option("--timeout", type=float, default=3600.0, show_default=True, help="Seconds to wait.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def run(path: str, inputs: tuple[str, ...], run_id: str | None, detach: bool, timeout: float,
        as_json: bool) -> None:
    """Run a workflow file; wait for it to end unless --detach (exit 1 when it fails)."""
    from .names import parse_inputs

    try:
        body = {**_source_body(path), "inputs": parse_inputs(inputs)}
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if run_id is not None:
        body["run_id"] = run_id
    record = _call("POST", "/workflows/runs:submit", body=body)
    if detach:
        click.echo(json.dumps(record, indent=2) if as_json else record["run_id"])
        return
    click.echo(f"run {record['run_id']} started", err=True)
    record = _call("GET", _run_path(record["run_id"], "/wait"), params={"timeout": timeout},
                   timeout=timeout + _MARGIN)
    _show(record, as_json)
    _exit_for(record)


@workflow.command()
@click.option("--state", help="Only runs in this state (running, queued, completed, failed, cancelled).")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs(state: str | None, limit: int, as_json: bool) -> None:
    """List runs, newest first."""
    params: dict[str, Any] = {"limit": limit}
    if state:
        params["state"] = state
    _show(_call("GET", "/workflows/runs", params=params), as_json)


@workflow.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(run_id: str, as_json: bool) -> None:
    """A run's state, outputs and the question it waits on."""
    _show(_call("GET", _run_path(run_id)), as_json)


@workflow.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def events(run_id: str, as_json: bool) -> None:
    """A run's journaled steps, in order."""
    listed = _call("GET", _run_path(run_id, "/events"))
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    for event in listed:
        click.echo(f"{event['seq']:>3} {event['name']:<32} {event['state']:<10} {event.get('error') or ''}")


@workflow.command()
@click.argument("run_id")
@click.option("--timeout", type=float, default=3600.0, show_default=True, help="Seconds to wait.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def wait(run_id: str, timeout: float, as_json: bool) -> None:
    """Wait until a run ends; exit 1 when it failed or was cancelled."""
    record = _call("GET", _run_path(run_id, "/wait"), params={"timeout": timeout}, timeout=timeout + _MARGIN)
    _show(record, as_json)
    _exit_for(record)


@workflow.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def result(run_id: str, as_json: bool) -> None:
    """A finished run's result (its workflow function's return value) and outputs."""
    record = _call("GET", _run_path(run_id, "/result"))
    if as_json:
        click.echo(json.dumps(record, indent=2))
    else:
        value = record.get("result")
        click.echo(value if isinstance(value, str) else json.dumps(value, indent=2))
    _exit_for(record)


@workflow.command()
@click.argument("run_id")
def resume(run_id: str) -> None:
    """Run a cancelled or failed run again from its first unfinished step."""
    _show(_call("POST", _run_path(run_id, "/resume")), False)


@workflow.command()
@click.argument("run_id")
def cancel(run_id: str) -> None:
    """Cancel a run; its agents are closed."""
    _show(_call("POST", _run_path(run_id, "/cancel")), False)


@workflow.command()
@click.argument("run_id")
@click.option("--reject", is_flag=True, help="Refuse instead of approving.")
@click.option("--note", default="", help="A comment the run receives with the answer.")
def approve(run_id: str, reject: bool, note: str) -> None:
    """Answer the question a run waits on (its approve(...) call)."""
    _call("POST", _run_path(run_id, "/approve"), body={"approved": not reject, "note": note, "by": "cli"})
    click.echo(f"run {run_id}: {'rejected' if reject else 'approved'}")
