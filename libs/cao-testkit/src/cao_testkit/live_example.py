"""The assign example (``examples/assign``) on real agent CLIs, each against a scripted model server.

One copy of what the live example test (``tests/test_examples_live.py``) checks and the live benchmark
(``bench/live.py``) times: the example runs as a user runs it (``python examples/run_example.py assign
--provider P``), with the model API passed through the runner's ``--env``.

- :class:`AssignModels`: what each of the example's profiles asks of a model, computed from the
  conversation the CLI sent. One scripted server per wire format answers all five agents of a run (the
  supervisor, three data analysts, the report generator), telling them apart by :data:`MARKERS`, the
  first line of each profile's instructions, which the CLI sends in every request's system prompt. So a
  run depends on what the CLI really passed along: the tasks with their callback lines, the handoff's
  answer read from the worker's screen, the results typed into the supervisor's terminal.
- :data:`CLIS`: per CLI, the pinned CLI (installed from npm once per machine), its model server and the
  environment that points the CLI at it (:class:`ScriptedCli`; Grok Build's catalog of MCP tools is
  bridged by :class:`_GrokCatalog`).
- :func:`run_assign`: one run of the runner with ``--timeline``, in a throw-away HOME.
- :func:`phases`: the durations a run's timeline gives (:data:`PHASES`), ``None`` where it lacks the
  events.

Everything needs the repository's root (``root``): the example, its runner and its expected report
live there, not in this package.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .live import CALLBACK_RE, RoleScript, answers_by, json_answer, offered_tools
from .models.script import Answer, Conversation, ScriptedServer, call_tool, reply, think
from .modules import load_file

__all__ = [
    "CAO_TOOLS",
    "CLIS",
    "CONNECTING",
    "MARKERS",
    "PHASES",
    "AssignModels",
    "ExampleRun",
    "ScriptedCli",
    "claude_code",
    "codex",
    "expected_report",
    "gemini_cli",
    "hermes",
    "grok_cli",
    "pi",
    "omp",
    "phases",
    "qwen_code",
    "run_assign",
    "short_name",
]

#: The first line of each profile's body in examples/assign/.
MARKERS = {"supervisor": "# Analysis supervisor", "data_analyst": "# Data analyst",
           "report_generator": "# Report generator"}
RESULT_RE = re.compile(r"(Result for dataset (\w+)\n.*?)\s*\[Message from terminal ([a-f0-9]{8})\.",
                       re.DOTALL)
PLACEHOLDER_RE = re.compile(r"\{(\w+)\.([\w ]+)\}")
#: Claude Code's deferred tools: a request may list MCP servers still connecting, and the model is told to
#: wait for their tools with its tool search, whose answer holds the tools' definitions.
CONNECTING = "MCP servers are still connecting"
TOOL_SEARCH = "ToolSearch"
SEARCHED_RE = re.compile(r'"name":\s*"([^"]+)"')
CAO_TOOLS = ("assign", "handoff", "send_message", "delete_terminal")
#: Seconds the runner waits for a run to end, and the quiet that means it has.
RUN_TIMEOUT = 90
RUN_SETTLE = 2.0


def short_name(name: str) -> str:
    """A tool's own name without the CLI's server prefix (``mcp__cao__assign`` -> ``assign``). Gemini CLI
    joins with single underscores (``mcp_cao-mcp-server_assign``), and a server's or a tool's name may hold
    them too, so cao's own tools are found by their names."""
    own = [tool for tool in CAO_TOOLS if name == tool or name.endswith("_" + tool)]
    return own[0] if own else name.rsplit("__", 1)[-1]


def expected_report(root: Path, provider: str) -> str:
    """The report the assign example ends with (the same as its offline run's), as ``provider``'s CLI shows
    it, which is where cao reads answers from (a handoff's and the final one)."""
    report = (root / "tests/fixtures/examples/assign_report.txt").read_text(encoding="utf-8").rstrip("\n")
    if provider == "codex":
        # Codex renders answers as Markdown, and a paragraph line's leading spaces do not survive that.
        return "\n".join(line.lstrip() for line in report.splitlines())
    return report


# -- the models: what each profile asks of a real model, decided from the conversation ------------------


def _calls(conversation: Conversation) -> list[Any]:
    return [call for message in conversation.messages if message.role == "assistant"
            for call in message.tool_calls]


class AssignModels:
    """The example's three roles answering as a model told what their profiles say would.

    ``analyst_think`` and ``report_think`` are the seconds the data analysts and the report generator
    take before their first answer (a real model's work; the test takes none, the benchmark takes the
    issue's 3 s and 2 s). :attr:`still_connecting` collects the requests that met cao's MCP server still
    connecting (the model then waited for the tools with the CLI's tool search).
    """

    def __init__(self, root: Path, *, analyst_think: float = 0.0, report_think: float = 0.0) -> None:
        #: The example's own statistics and template functions (what its mock agents compute).
        self.steps = load_file(root / "examples" / "assign" / "behaviours.py", "assign_example_behaviours")
        self.analyst_think = analyst_think
        self.report_think = report_think
        self.still_connecting: list[str] = []

    def roles(self) -> RoleScript:
        """A model script answering every role with its behaviour below."""
        behaviours: dict[str, Callable[[Conversation], Any]] = {
            "supervisor": self.supervisor, "data_analyst": self.data_analyst,
            "report_generator": self.report_generator}
        return answers_by(MARKERS, behaviours)

    def _tool(self, conversation: Conversation, name: str) -> str | None:
        """The name under which the CLI offers cao's tool ``name`` to the model, None when it does not
        (yet). A tool found through the CLI's own tool search counts too (see :meth:`_use`)."""
        found = {t for t in offered_tools(conversation) if short_name(t) == name and "cao" in t}
        for message in conversation.messages:
            for result in message.tool_results:
                found.update(t for t in SEARCHED_RE.findall(result.output)
                             if short_name(t) == name and "cao" in t)
        assert len(found) <= 1, f"several cao tools {name!r}: {sorted(found)}"
        return found.pop() if found else None

    def _use(self, conversation: Conversation, name: str, arguments: dict[str, Any]) -> Answer:
        """Call cao's tool ``name``. Claude Code may say that cao's MCP server is still connecting and that
        the model should wait for it with its tool search, which is what a model told so does."""
        tool = self._tool(conversation, name)
        if tool is not None:
            return call_tool(tool, arguments)
        announced = "\n".join(m.text for m in conversation.messages if m.role == "system")
        assert CONNECTING in announced, (f"cao's tool {name!r} is not offered: "
                                         f"{sorted(offered_tools(conversation))}")
        query = f"+cao {name}"
        searched = any(c.name == TOOL_SEARCH and c.arguments.get("query") == query
                       for c in _calls(conversation))
        assert not searched, f"cao's tool {name!r} is still not offered after the CLI's tool search for it"
        self.still_connecting.append(conversation.last_user_text[:80])
        return call_tool(TOOL_SEARCH, {"query": query, "max_results": 5})

    def _listed(self, found: dict[str, list[float]]) -> str:
        return "; ".join(f"Dataset {name}: [{', '.join(self.steps.number(v) for v in values)}]"
                         for name, values in found.items())

    def supervisor(self, conversation: Conversation) -> Any:
        steps = self.steps
        task = next(m.text for m in conversation.messages if m.role == "user" and "Dataset" in m.text)
        found = steps.datasets(task)
        calls = _calls(conversation)
        names = [short_name(call.name) for call in calls]
        assigned = names.count("assign")
        if assigned < len(found):
            name, values = list(found.items())[assigned]
            message = (f"Analyze dataset {name}: [{', '.join(steps.number(v) for v in values)}]. Compute n, "
                       "the mean, the median, the population standard deviation and the sample standard "
                       "deviation.")
            return self._use(conversation, "assign", {"agent_profile": "data_analyst", "message": message})
        if "handoff" not in names:
            listed = self._listed(found)
            message = (f"Write a report template for the statistics of these datasets: {listed}. Use "
                       "placeholders like {A.mean} for each dataset's n, mean, median, population standard "
                       "deviation and sample standard deviation, and {A.values} for its values.")
            return self._use(conversation, "handoff",
                             {"agent_profile": "report_generator", "message": message})
        handoff_id = next(call.call_id for call in calls if short_name(call.name) == "handoff")
        results: dict[str, dict[str, str]] = {}
        senders: list[str] = []
        for message in conversation.messages:
            if message.role == "user":
                for block, name, sender in RESULT_RE.findall(message.text):
                    fields = dict(line.split(": ", 1) for line in block.splitlines()[1:] if ": " in line)
                    results[name] = fields
                    senders.append(sender)
        deleted = {call.arguments.get("terminal_id") for call in calls
                   if short_name(call.name) == "delete_terminal"}
        waiting = [sender for sender in senders if sender not in deleted]
        if waiting:
            return self._use(conversation, "delete_terminal", {"terminal_id": waiting[0]})
        if not results:
            return reply(f"Assigned {len(found)} data analysts and received the report template; "
                         "waiting for their results.")
        missing = [name for name in found if name not in results]
        if missing:
            return reply(f"Have the results for {', '.join(sorted(results))}; "
                         f"waiting for {', '.join(missing)}.")
        template = _handoff_output(conversation, handoff_id)
        return reply(PLACEHOLDER_RE.sub(lambda m: results.get(m.group(1), {}).get(m.group(2), m.group(0)),
                                        template))

    def data_analyst(self, conversation: Conversation) -> Any:
        steps = self.steps
        # The task is the first thing the analyst was told (a tool search's answer may come after it).
        task = next(m.text for m in conversation.messages if m.role == "user" and "Analyze dataset" in m.text)
        ((name, values),) = steps.datasets(task.split("[Assigned by")[0]).items()
        callback = CALLBACK_RE.search(task)
        calls = _calls(conversation)
        if any(short_name(call.name) == "send_message" for call in calls):
            assert callback is not None
            return reply(f"Sent the statistics of dataset {name} to terminal {callback.group(1)}.")
        lines = [f"Result for dataset {name}", f"values: [{', '.join(steps.number(v) for v in values)}]"]
        lines += [f"{field}: {value}" for field, value in steps.describe(values).items()]
        result = "\n".join(lines)
        answer = (reply(result) if callback is None
                  else self._use(conversation, "send_message", {"receiver_id": callback.group(1),
                                                                 "message": result}))
        # The statistics are worked out once, before the analyst's first answer (a tool search for
        # send_message included).
        return _thinking(self.analyst_think if not calls else 0.0, answer)

    def report_generator(self, conversation: Conversation) -> Any:
        names = list(self.steps.datasets(conversation.last_user_text))
        lines = ["DATA ANALYSIS REPORT", f"Datasets: {', '.join(names)}", ""]
        for name in names:
            lines.append(f"Dataset {name}: {{{name}.values}}")
            lines += [f"  {field}: {{{name}.{field}}}" for field in self.steps.FIELDS]
        lines += ["", ("Population standard deviation divides by n; "
                       "sample standard deviation divides by n - 1.")]
        return _thinking(self.report_think, reply("\n".join(lines)))


def _thinking(seconds: float, answer: Answer) -> Answer:
    return think(seconds, answer) if seconds else answer


def _handoff_output(conversation: Conversation, call_id: str) -> str:
    for message in conversation.messages:
        for result in message.tool_results:
            if result.call_id == call_id:
                payload = json_answer(result.output)
                assert payload["success"] is True, payload
                return str(payload["output"])
    raise AssertionError("the conversation has no result for the handoff call")


# -- the CLIs and their model servers ------------------------------------------------------------------


@attrs.define(kw_only=True, eq=False)
class ScriptedCli:
    """A real CLI (``version``) pointed at a started scripted model server: ``model_env`` goes to the
    runner's ``--env`` (so to every agent), ``path`` first on the runner's PATH."""

    version: str
    server: ScriptedServer
    model_env: dict[str, str]
    path: list[Path] = attrs.field(factory=list)


def _newest_tested(provider: str) -> str:
    """The newest release of ``provider``'s CLI its package is tested with (read from its installed plugin:
    the kit declares no provider package)."""
    from cao_kernel.testing.conformance import load_provider

    return load_provider(provider, provider).tested_versions[-1]


def claude_code(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Claude Code at its newest tested version, against an Anthropic-wire server answering ``roles``."""
    from .models.anthropic import AnthropicServer
    from .models.cli import install_npm_cli

    cli = install_npm_cli("@anthropic-ai/claude-code", _newest_tested("claude_code"), "claude")
    server = AnthropicServer(roles).start()
    env = {**server.client_env(), "CAO_CLAUDE_CODE_BIN": str(cli.binary),
           # As root, Claude Code accepts bypass mode (cao's default for agents) only in a sandbox.
           "IS_SANDBOX": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env)


def codex(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Codex at its newest tested version, against an OpenAI Responses server answering ``roles``; its
    home (the user's configuration, as cao's codex provider reads it) is made under ``folder``."""
    from .models.cli import install_npm_cli
    from .models.openai import OpenAIServer

    home = folder / "codex-home"
    home.mkdir()
    # `codex --version` writes into its home: not the user's.
    cli = install_npm_cli("@openai/codex", _newest_tested("codex"), "codex", env={"CODEX_HOME": str(home)})
    server = OpenAIServer(roles, models=("scripted",)).start()
    # cao's codex provider builds each agent's own configuration from this one.
    (home / "config.toml").write_text(
        'model = "scripted"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
        f'name = "scripted model server"\nbase_url = "{server.base_url}"\nenv_key = "SCRIPTED_MODEL_KEY"\n'
        'wire_api = "responses"\n', encoding="utf-8")
    env = {"CODEX_HOME": str(home), "SCRIPTED_MODEL_KEY": "sk-scripted-key"}
    return ScriptedCli(version=cli.version, server=server, model_env=env, path=[cli.bin_dir])


def gemini_cli(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Gemini CLI at its newest tested version, against a Gemini API server answering ``roles``, pointed
    at it as the provider's live tests do (API-key sign-in, the server's base URL). The example's profiles
    name no model, so the CLI routes each task itself (a side request, answered by the server's side
    answer) and asks for the model it picked; the server answers whichever model is asked."""
    from .models.cli import install_npm_cli
    from .models.gemini import GeminiServer

    cli = install_npm_cli("@google/gemini-cli", _newest_tested("gemini_cli"), "gemini")
    server = GeminiServer(roles).start()
    env = {**server.client_env(), "CAO_GEMINI_CLI_BIN": str(cli.binary), "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env)


def qwen_code(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Qwen Code at its newest tested version, against a Chat Completions server answering ``roles``,
    pointed at it as the provider's live tests do (the OpenAI sign-in's variables)."""
    from .models.chat import ChatServer
    from .models.cli import install_npm_cli

    cli = install_npm_cli("@qwen-code/qwen-code", _newest_tested("qwen_code"), "qwen")
    server = ChatServer(roles, models=("scripted",)).start()
    env = {**server.client_env(), "OPENAI_MODEL": "scripted", "CAO_QWEN_CODE_BIN": str(cli.binary),
           "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env)


def hermes(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Hermes Agent at its newest tested version (with its ``mcp`` extra), against a Chat Completions server
    answering ``roles``, named as a custom provider in the user's ``~/.hermes/config.yaml`` under
    ``folder`` (cao's provider builds each agent's private home from it).

    Hermes hands the model an MCP tool's text as ``{"result": text}`` inside a notice that it is data; the
    server reads each such tool message through the notice, as a model does, so the roles and the checks
    see cao's own JSON answer.
    """
    from .models.chat import ChatServer
    from .models.cli import install_pypi_cli

    notice = re.compile(r'^<untrusted_tool_result source="[^"]+">\n.*?\n\n(\{.*\})\n'
                        r'</untrusted_tool_result>$', re.DOTALL)

    class ReadThroughNotice(ChatServer):
        def handle(self, request: Any) -> None:
            for message in request.body.get("messages", []) if isinstance(request.body, dict) else []:
                found = notice.match(message.get("content") or "") if message.get("role") == "tool" else None
                if found:
                    result = json.loads(found.group(1)).get("result")
                    message["content"] = result if isinstance(result, str) else found.group(1)
            super().handle(request)

    cli = install_pypi_cli("hermes-agent", _newest_tested("hermes"), "hermes", python=">=3.11",
                           extras=("mcp",))
    server = ReadThroughNotice(roles, models=("scripted",)).start()
    home = folder / "hermes-user" / ".hermes"
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted\n  base_url: {server.base_url}\n"
        "  api_key: sk-scripted-key\n", encoding="utf-8")
    env = {"HERMES_HOME": str(home), "CAO_HERMES_BIN": str(cli.binary), "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env)


class _GrokCatalog:
    """Grok Build's MCP catalog, shown to the example's models as cao's tools offered by name.

    Grok offers MCP tools only through two tools of its own: ``search_tool`` finds ``<server>__<tool>``
    keys and ``use_tool`` calls one (``{"tool_name": key, "tool_input": {...}}``). The models here skip
    the search (they know cao's tools): each request they see offers cao's keys and shows earlier
    ``use_tool`` calls as the calls they made, and each call of a key they make goes out as ``use_tool``.
    Everything else is ``roles``'s.
    """

    SERVER = "cao-mcp-server"

    def __init__(self, roles: RoleScript) -> None:
        self._roles = roles

    def __getattr__(self, name: str) -> Any:
        return getattr(self._roles, name)

    def next_turn(self, conversation: Conversation) -> Any:
        answer = self._roles.next_turn(self._as_offered(conversation))
        if not isinstance(answer, Answer):
            return answer
        calls = [attrs.evolve(call, name="use_tool", arguments={"tool_name": call.name,
                                                                "tool_input": dict(call.arguments)})
                 if call.name.startswith(self.SERVER + "__") else call for call in answer.tool_calls]
        return attrs.evolve(answer, tool_calls=tuple(calls))

    def _as_offered(self, conversation: Conversation) -> Conversation:
        if "use_tool" not in conversation.tools:
            return conversation
        keys = tuple(f"{self.SERVER}__{tool}" for tool in CAO_TOOLS)

        def direct(call: Any) -> Any:
            if call.name != "use_tool":
                return call
            return attrs.evolve(call, name=str(call.arguments.get("tool_name")),
                                arguments=dict(call.arguments.get("tool_input") or {}))

        messages = tuple(attrs.evolve(m, tool_calls=tuple(direct(c) for c in m.tool_calls))
                         for m in conversation.messages)
        return attrs.evolve(conversation, tools=(*conversation.tools, *keys), messages=messages)


def grok_cli(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Grok Build at its newest tested version, against a Chat Completions server answering ``roles``
    through :class:`_GrokCatalog`. Its package's install script writes into ``$GROK_HOME``: a folder of
    the kit's cache, never the user's ``~/.grok``."""
    from .models.chat import ChatServer
    from .models.cli import cache_root, install_npm_cli

    cli = install_npm_cli("@xai-official/grok", _newest_tested("grok_cli"), "grok",
                          env={"GROK_HOME": str(cache_root() / ".grok-npm-install-home")})
    server = ChatServer(_GrokCatalog(roles), models=("scripted",)).start()  # type: ignore[arg-type]
    env = {"GROK_MODELS_BASE_URL": server.base_url, "XAI_API_KEY": "xai-scripted-key",
           "CAO_GROK_CLI_BIN": str(cli.binary), "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env)


def pi(folder: Path, roles: RoleScript) -> ScriptedCli:
    """pi at its newest tested version, against a Chat Completions server answering ``roles``, named as the
    default provider in the user's agent folder under ``folder`` (``PI_CODING_AGENT_DIR``; cao's provider
    builds each agent's private folder from it)."""
    from .models.chat import ChatServer
    from .models.cli import install_npm_cli

    cli = install_npm_cli("@mariozechner/pi-coding-agent", _newest_tested("pi"), "pi")
    server = ChatServer(roles, models=("scripted",)).start()
    agent_dir = folder / "pi-agent"
    agent_dir.mkdir()
    models = {"providers": {"scripted": {"baseUrl": server.base_url, "api": "openai-completions",
                                         "apiKey": "sk-scripted-key", "models": [{"id": "scripted"}]}}}
    (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "scripted", "defaultModel": "scripted"}
    (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {"PI_CODING_AGENT_DIR": str(agent_dir), "CAO_PI_BIN": str(cli.binary), "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env)


def omp(folder: Path, roles: RoleScript) -> ScriptedCli:
    """Oh My Pi at its newest tested version (with Bun beside it, which runs it), against a Chat
    Completions server answering ``roles``, declared as the user's model provider in an agent folder
    under ``folder`` (``PI_CODING_AGENT_DIR``; cao's provider builds each agent's private one from it),
    whose settings make it the default model (the example's profiles name none)."""
    from .models.chat import ChatServer
    from .models.cli import install_npm_cli

    cli = install_npm_cli("@oh-my-pi/pi-coding-agent", _newest_tested("omp"), "omp",
                          with_packages=["bun@1.4.5"])
    server = ChatServer(roles, models=("scripted",)).start()
    agent = folder / "omp-user" / "agent"
    agent.mkdir(parents=True)
    (agent / "models.yml").write_text(
        f"providers:\n  scripted:\n    baseUrl: {server.base_url}\n    api: openai-completions\n"
        "    apiKey: sk-scripted-key\n    models:\n      - id: scripted\n", encoding="utf-8")
    (agent / "config.yml").write_text("modelRoles:\n  default: scripted/scripted\n", encoding="utf-8")
    env = {"PI_CODING_AGENT_DIR": str(agent), "CAO_OMP_BIN": str(cli.binary), "TERM": "xterm-256color"}
    return ScriptedCli(version=cli.version, server=server, model_env=env, path=[cli.bin_dir])


CLIS: dict[str, Callable[[Path, RoleScript], ScriptedCli]] = {
    "claude_code": claude_code, "codex": codex, "gemini_cli": gemini_cli, "qwen_code": qwen_code,
    "hermes": hermes, "grok_cli": grok_cli, "pi": pi, "omp": omp}


# -- one run ------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ExampleRun:
    """What one run of the runner left: its process, its wall time and its timeline file."""

    done: subprocess.CompletedProcess[str]
    wall: float
    timeline_file: Path

    @property
    def timeline(self) -> dict[str, Any]:
        """The runner's ``--timeline`` JSON (written whether the run finished or not)."""
        return json.loads(self.timeline_file.read_text(encoding="utf-8"))


def run_assign(root: Path, provider: str, cli: ScriptedCli, folder: Path, *, timeout: float = RUN_TIMEOUT,
               settle: float = RUN_SETTLE, env: Mapping[str, str] | None = None) -> ExampleRun:
    """Run the assign example on ``provider``'s CLI with the runner of ``root``, in a throw-away HOME made
    under ``folder`` (none of the user's agent settings or keys). ``env`` adds settings to the runner's
    ``--env`` after the model's."""
    from .models.cli import make_sandbox

    sandbox = make_sandbox(folder / "sandbox", path=cli.path)
    runner_env = {k: v for k, v in sandbox.env.items() if not k.startswith(("CAO_", "TMUX"))}
    timeline_file = folder / "timeline.json"
    argv = [sys.executable, str(root / "examples" / "run_example.py"), "assign", "--provider", provider,
            "--settle", f"{settle:g}", "--timeout", f"{timeout:g}", "--timeline", str(timeline_file)]
    settings = {**cli.model_env, **(env or {})}
    argv += [arg for name, value in settings.items() for arg in ("--env", f"{name}={value}")]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=runner_env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout + 60, check=False)
    return ExampleRun(done=done, wall=time.perf_counter() - started, timeline_file=timeline_file)


# -- reading a run's timeline -------------------------------------------------------------------------

#: The phases :func:`phases` reads, in the order a table shows them. Indented ones are parts of the one
#: above. The first six need the kernel's per-terminal timeline (each terminal's ``timeline`` in the
#: runner's JSON); "whole example" and those marked "(statuses)" come from the runner's own records: a
#: terminal's creation, the status changes the server reported and its removal.
PHASES = (
    "launch → supervisor ready",
    "handoff (report generator) total",
    "  requested → task typed",
    "  created → CLI ready",
    "  CLI ready → task typed",
    "  MCP started → tools listed",
    "  answer ready → handoff returned",
    "whole example",
    "supervisor created → first ready (statuses)",
    "report generator created → removed (statuses)",
    "  created → first ready",
    "  first ready → working",
    "  working → completed",
    "  completed → removed",
)
READY = ("idle", "completed")
#: The report generator's phases in the kernel's timeline: (phase, from the first event so named, to the
#: first event so named).
HANDOFF_PHASES = (
    ("handoff (report generator) total", "requested", "handoff_returned"),
    ("  requested → task typed", "requested", "task_typed"),
    ("  created → CLI ready", "terminal_created", "cli_ready"),
    ("  CLI ready → task typed", "cli_ready", "task_typed"),
    ("  MCP started → tools listed", "mcp_started", "tools_listed"),
    ("  answer ready → handoff returned", "answer_ready", "handoff_returned"),
)


def _first(track: Mapping[str, Any], name: str) -> float | None:
    times = [float(e["at"]) for e in track.get("timeline") or () if e.get("name") == name]
    return min(times) if times else None


def _span(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None else end - start


def _one(terminals: Sequence[Mapping[str, Any]], profile: str) -> Mapping[str, Any] | None:
    found = [t for t in terminals if t.get("profile") == profile]
    return found[0] if len(found) == 1 else None


def _status_times(track: Mapping[str, Any]) -> tuple[float | None, float | None, float | None]:
    """When a worker was first ready, then first working, then first done after that (None: not seen)."""
    ready = working = done = None
    for status, since in track.get("statuses") or ():
        if ready is None:
            ready = since if status in READY else None
        elif working is None:
            working = since if status == "processing" else None
        elif done is None and status in READY:
            done = since
    return ready, working, done


def phases(timeline: Mapping[str, Any]) -> dict[str, float | None]:
    """Seconds of each of :data:`PHASES` in one run's timeline (the runner's ``--timeline`` JSON); None
    for a phase whose events it does not hold.

    "Launch" is the supervisor terminal's creation (``cao launch``); "whole example" ends at its last
    status change, the final report ready, as in bench/examples.py.
    """
    terminals = timeline.get("terminals") or []
    sup = next((t for t in terminals if t.get("id") == timeline.get("supervisor")), None)
    gen = _one(terminals, "report_generator")
    out: dict[str, float | None] = dict.fromkeys(PHASES)
    if sup is not None:
        created = _first(sup, "terminal_created") or sup.get("created")
        ready = _first(sup, "gate_open") or _first(sup, "cli_ready")
        out["launch → supervisor ready"] = _span(created, ready)
        statuses = sup.get("statuses") or []
        out["whole example"] = _span(sup.get("created"), statuses[-1][1] if statuses else None)
        out["supervisor created → first ready (statuses)"] = _span(sup.get("created"), _status_times(sup)[0])
    if gen is not None:
        for phase, start, end in HANDOFF_PHASES:
            out[phase] = _span(_first(gen, start), _first(gen, end))
        ready, working, done = _status_times(gen)
        out["report generator created → removed (statuses)"] = _span(gen.get("created"), gen.get("removed"))
        out["  created → first ready"] = _span(gen.get("created"), ready)
        out["  first ready → working"] = _span(ready, working)
        out["  working → completed"] = _span(working, done)
        out["  completed → removed"] = _span(done, gen.get("removed"))
    return out
