"""``cao flow`` (and ``cao schedule``, upstream's name): flows through the running cao-server."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import click


def _call(method: str, path: str, **kwargs: Any) -> Any:
    from cao_server.commands import _api

    return _api.run(lambda api: api.call_route(method, path, **kwargs))


def _when(value: str | None, never: str) -> str:
    if not value:
        return never
    return dt.datetime.fromisoformat(value).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


@click.group(name="flow")
def flow() -> None:
    """Flows: an agent started on a cron schedule with a prompt, from a markdown file.

    The cao-server runs each enabled flow when its schedule says, in a session of its own
    (cao-flow-NAME), and records every run. See the flows guide for the file format.
    """


@flow.command(name="add")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def add(file: Path) -> None:
    """Add the flow in FILE (read again at each run, so edits take effect)."""
    created = _call("POST", "/flows", json={"file_path": str(file.expanduser().resolve())})
    click.echo(f"Flow '{created['name']}' added successfully")
    click.echo(f"  Schedule: {created['schedule']}")
    click.echo(f"  Agent: {created['agent_profile']}")
    click.echo(f"  Next run: {_when(created['next_run'], 'N/A')}")


@flow.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print the flows as JSON.")
def list_flows(as_json: bool) -> None:
    """List the flows with their last and next runs."""
    flows = _call("GET", "/flows")
    if as_json:
        click.echo(json.dumps(flows, indent=2))
        return
    if not flows:
        click.echo("No flows found")
        return
    rows = [[f["name"], f["schedule"] or "?", f["agent_profile"] or "?", _when(f["last_run"], "Never"),
             _when(f["next_run"], "N/A"), "Yes" if f["enabled"] else "No"] for f in flows]
    click.echo(_table(["Name", "Schedule", "Agent", "Last Run", "Next Run", "Enabled"], rows))
    for found in flows:
        if found.get("problem"):
            click.echo(f"flow {found['name']}: {found['problem']}", err=True)


@flow.command(name="show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the flow as JSON.")
def show(name: str, as_json: bool) -> None:
    """Show one flow: its file, schedule, agent, options and prompt."""
    found = _call("GET", f"/flows/{_checked(name)}")
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    for key in ("name", "file_path", "schedule", "timezone", "agent_profile", "provider", "engine", "script",
                "catch_up", "working_directory"):
        if found.get(key) is not None:
            click.echo(f"{key}: {found[key]}")
    click.echo(f"enabled: {'yes' if found['enabled'] else 'no'}")
    click.echo(f"last_run: {_when(found['last_run'], 'never')}")
    click.echo(f"next_run: {_when(found['next_run'], 'n/a')}")
    if found.get("problem"):
        click.echo(f"problem: {found['problem']}")
    if found.get("prompt_template"):
        click.echo("---")
        click.echo(found["prompt_template"].rstrip())


@flow.command(name="remove")
@click.argument("name")
def remove(name: str) -> None:
    """Remove a flow and its run history (its file stays, unless the server wrote it)."""
    _call("DELETE", f"/flows/{_checked(name)}")
    click.echo(f"Flow '{name}' removed successfully")


@flow.command(name="enable")
@click.argument("name")
def enable(name: str) -> None:
    """Run the flow on its schedule again (from now on)."""
    _call("POST", f"/flows/{_checked(name)}/enable")
    click.echo(f"Flow '{name}' enabled")


@flow.command(name="disable")
@click.argument("name")
def disable(name: str) -> None:
    """Stop running the flow on its schedule (cao flow run still runs it)."""
    _call("POST", f"/flows/{_checked(name)}/disable")
    click.echo(f"Flow '{name}' disabled")


@flow.command(name="run")
@click.argument("name")
def run(name: str) -> None:
    """Run the flow now, whatever its schedule; says whether its agent got the prompt."""
    answer = _call("POST", f"/flows/{_checked(name)}/run")
    state = answer["run"]["state"]
    if answer["executed"]:
        click.echo(f"Flow '{name}' executed successfully (session {answer['run']['session_name']})")
    elif state == "skipped":
        click.echo(f"Flow '{name}' skipped (execute=false)")
    else:
        raise click.ClickException(f"flow '{name}' did not run: {state}: {answer['run']['detail']}")


@flow.command(name="runs")
@click.argument("name")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs(name: str, limit: int, as_json: bool) -> None:
    """The flow's runs, newest first: when each was due, how it was started, and how it ended."""
    found = _call("GET", f"/flows/{_checked(name)}/runs", params={"limit": limit})
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    if not found:
        click.echo(f"Flow '{name}' has not run yet")
        return
    rows = [[str(r["id"]), _when(r["due_at"], ""), r["trigger"], r["state"], _when(r["started_at"], ""),
             _when(r["ended_at"], "-"), r["session_name"] or "-", (r["detail"] or "")[:60]] for r in found]
    click.echo(_table(["Run", "Due", "Trigger", "State", "Started", "Ended", "Session", "Detail"], rows))


def _checked(name: str) -> str:
    from .flow_file import NAME

    if not NAME.fullmatch(name):
        raise click.BadParameter(f"invalid flow name {name!r}: 1 to 64 letters, digits, '-' or '_'",
                                 param_hint="NAME")
    return name
