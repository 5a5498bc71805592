"""``cao provider new``: a new provider package, rendered from cao's provider template.

The template lives in ``providers/_template`` and ships inside cao-kernel as
``cao_kernel/provider_template``. It is in cookiecutter's format, and cao renders it itself, so
creating a provider needs nothing but cao. For cookiecutter and cao to produce the same files, the
template keeps to a subset both read the same way:

- ``cookiecutter.json`` holds the inputs first, then derived values (keys starting with ``__`` are
  computed, never asked for). A value is text with ``{{ cookiecutter.<key> }}`` placeholders, each
  optionally followed by the string methods ``.replace('a', 'b')``, ``.upper()``, ``.lower()`` or
  ``.title()``.
- File and folder names and file contents use bare ``{{ cookiecutter.<key> }}`` placeholders only;
  any other template syntax (``{%``, ``{#``, filters) is refused, naming the file.

The package is rendered into a hidden folder next to the target and renamed into place at the end,
so a failure leaves nothing behind, and an existing folder is never overwritten.
"""

from __future__ import annotations

import json
import keyword
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import click

__all__ = [
    "ProviderTemplateError",
    "binary_problem",
    "build_context",
    "display_name_problem",
    "name_problem",
    "render_project",
    "template_dir",
]

CONTEXT_FILE = "cookiecutter.json"
INPUTS = ("provider_name", "binary", "display_name")
_KEY = r"[A-Za-z_][A-Za-z0-9_]*"
_PLACEHOLDER = re.compile(r"\{\{\s*cookiecutter\.(?P<key>" + _KEY + r")\s*\}\}")
_CALL = r"\.\s*(?:replace\(\s*'[^'\\]*'\s*,\s*'[^'\\]*'\s*\)|upper\(\)|lower\(\)|title\(\))"
_EXPRESSION = re.compile(
    r"\{\{\s*cookiecutter\.(?P<key>" + _KEY + r")(?P<calls>(?:\s*" + _CALL + r")*)\s*\}\}")
_ONE_CALL = re.compile(r"\.\s*(?:(?P<method>upper|lower|title)\(\)"
                       r"|replace\(\s*'(?P<old>[^'\\]*)'\s*,\s*'(?P<new>[^'\\]*)'\s*\))")
_JINJA = re.compile(r"\{\{|\{%|\{#")
_SKIPPED = ("__pycache__", ".pyc", ".pyo")

_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*\Z")
_BINARY = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+-]*\Z")
_DISPLAY = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+()-]*\Z")


class ProviderTemplateError(Exception):
    """The inputs or the template cannot produce a package; the message says why."""


# -- inputs ---------------------------------------------------------------------------------------


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a new provider's name, or None when it can.

    The name must pass cao's rule for names users type (``cao_hookspecs.names.PROFILE_NAME_RE``: it is
    what profiles and ``--provider`` carry) and also be one snake_case word, because it becomes the
    entry-point name, the module ``cao_provider_<name>`` and the distribution ``cao-provider-<name>``
    (with dashes).
    """
    from cao_hookspecs.names import PROFILE_NAME_RE

    if not isinstance(name, str) or not name:
        return "is empty"
    if not PROFILE_NAME_RE.match(name):
        return "may hold only letters, digits, '_' and '-', at most 64 characters"
    if "-" in name:
        return (f"uses '-': write the words with '_' ({name.replace('-', '_').lower()}); "
                "the distribution name gets the dashes")
    if name != name.lower():
        return f"must be lowercase ({name.lower()})"
    if not name[0].isalpha():
        return "must start with a letter"
    if not _SNAKE.match(name):
        return "must not hold '__' or end with '_'"
    if name == "cao" or name.startswith("cao_"):
        return "must not start with 'cao' (the package is named cao-provider-<name> already)"
    if keyword.iskeyword(name):
        return "is a Python keyword"
    return None


def binary_problem(binary: object) -> str | None:
    """Why ``binary`` cannot be the CLI's program name, or None when it can."""
    if not isinstance(binary, str) or not binary:
        return "is empty"
    if "/" in binary or "\\" in binary:
        return "holds a path separator: give the program's name as found on PATH, not a path"
    if any(ch.isspace() for ch in binary):
        return "holds a space: give the program's name alone, without arguments"
    if binary.startswith(("-", ".")):
        return "must not start with '-' or '.'"
    if len(binary) > 64:
        return "is longer than 64 characters"
    if not _BINARY.match(binary):
        return "may hold only letters, digits, '.', '_', '+' and '-'"
    return None


def display_name_problem(display_name: object) -> str | None:
    """Why ``display_name`` cannot name the CLI in prose, or None when it can."""
    if not isinstance(display_name, str) or not display_name.strip():
        return "is empty"
    if len(display_name) > 60:
        return "is longer than 60 characters"
    if not _DISPLAY.match(display_name) or "  " in display_name or display_name != display_name.strip():
        return "may hold only letters, digits, single spaces and . _ + ( ) -, starting with a letter or digit"
    return None


def _check(what: str, value: object, problem: str | None) -> None:
    if problem:
        raise ProviderTemplateError(f"invalid {what} {value!r}: {problem}")


# -- the template ---------------------------------------------------------------------------------


def template_dir() -> Path:
    """The provider template shipped with cao-kernel."""
    folder = Path(__file__).resolve().parent.parent / "provider_template"
    if not (folder / CONTEXT_FILE).is_file():
        raise ProviderTemplateError(f"the provider template is missing from this cao-kernel installation "
                                    f"(no {folder / CONTEXT_FILE}); reinstall cao-kernel")
    return folder


def _evaluate(value: str, context: Mapping[str, str], where: str) -> str:
    def substitute(match: re.Match[str]) -> str:
        key = match.group("key")
        if key not in context:
            raise ProviderTemplateError(f"{where}: '{match.group(0)}' names {key!r}, which is not defined "
                                        "before it")
        result = context[key]
        for call in _ONE_CALL.finditer(match.group("calls")):
            method = call.group("method")
            if method:
                result = getattr(result, method)()
            else:
                result = result.replace(call.group("old"), call.group("new"))
        return result

    position = _unsupported(value, _EXPRESSION)
    if position is not None:
        raise ProviderTemplateError(f"{where}: template syntax cao does not render at "
                                    f"{value[position:][:40]!r}")
    return _EXPRESSION.sub(substitute, value)


def _unsupported(text: str, allowed: re.Pattern[str]) -> int | None:
    """Where ``text`` holds template syntax that is not an ``allowed`` placeholder, or None."""
    starts = {match.start() for match in allowed.finditer(text)}
    return next((match.start() for match in _JINJA.finditer(text) if match.start() not in starts), None)


def build_context(template: Path, inputs: Mapping[str, str]) -> dict[str, str]:
    """Every value of the template's ``cookiecutter.json``: ``inputs`` where given, else the default
    computed from the values before it. The inputs are checked first; a bad one raises
    ``ProviderTemplateError`` naming the problem."""
    unknown = sorted(set(inputs) - set(INPUTS))
    if unknown:
        raise ProviderTemplateError(f"unknown template input(s): {', '.join(unknown)} "
                                    f"(known: {', '.join(INPUTS)})")
    if "provider_name" in inputs:
        _check("provider name", inputs["provider_name"], name_problem(inputs["provider_name"]))
    if "binary" in inputs:
        _check("binary", inputs["binary"], binary_problem(inputs["binary"]))
    if "display_name" in inputs:
        _check("display name", inputs["display_name"], display_name_problem(inputs["display_name"]))
    path = template / CONTEXT_FILE
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProviderTemplateError(f"cannot read {path}: {exc}") from exc
    if not isinstance(spec, dict):
        raise ProviderTemplateError(f"{path} must hold a JSON object")
    context: dict[str, str] = {}
    for key, default in spec.items():
        if not isinstance(default, str):
            raise ProviderTemplateError(f"{path}: {key!r} must be text (cao renders text values only)")
        context[key] = inputs[key] if key in inputs else _evaluate(default, context, f"{path}: {key}")
    # A derived default is checked too: the display name is built from the provider name.
    _check("display name", context.get("display_name"), display_name_problem(context.get("display_name")))
    return context


def _render_text(text: str, context: Mapping[str, str], where: str) -> str:
    position = _unsupported(text, _PLACEHOLDER)
    if position is not None:
        line = text.count("\n", 0, position) + 1
        raise ProviderTemplateError(f"{where}, line {line}: template syntax other than "
                                    f"'{{{{ cookiecutter.<key> }}}}' is not rendered by cao: "
                                    f"{text[position:][:40]!r}")

    def substitute(match: re.Match[str]) -> str:
        key = match.group("key")
        if key not in context:
            raise ProviderTemplateError(f"{where}: unknown template value {key!r} "
                                        f"(known: {', '.join(context)})")
        return context[key]

    return _PLACEHOLDER.sub(substitute, text)


def _render_name(name: str, context: Mapping[str, str], where: str) -> str:
    rendered = _render_text(name, context, where)
    if not rendered or rendered in (".", "..") or "/" in rendered or "\0" in rendered:
        raise ProviderTemplateError(f"{where}: renders to the unusable name {rendered!r}")
    return rendered


def _project_source(template: Path) -> Path:
    folders = [p for p in template.iterdir() if p.is_dir() and "{{" in p.name]
    if len(folders) != 1:
        raise ProviderTemplateError(f"{template} must hold exactly one folder whose name is a template "
                                    f"(found {len(folders)})")
    return folders[0]


def _render_tree(source: Path, target: Path, context: Mapping[str, str], where: str) -> None:
    target.mkdir(mode=0o755)
    for entry in sorted(source.iterdir()):
        if entry.name.endswith(_SKIPPED):
            continue
        path = f"{where}/{entry.name}"
        destination = target / _render_name(entry.name, context, path)
        if entry.is_dir():
            _render_tree(entry, destination, context, path)
            continue
        data = entry.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            destination.write_bytes(data)  # not text: copied as it is, as cookiecutter does
        else:
            destination.write_bytes(_render_text(text, context, path).encode("utf-8"))
        destination.chmod(entry.stat().st_mode & 0o777)


def render_project(template: Path, context: Mapping[str, str], output_dir: Path) -> Path:
    """Render the template's project folder into ``output_dir``; return the new folder.

    Nothing is created unless everything rendered: the files are written into a hidden folder inside
    ``output_dir`` and renamed into place last. An existing folder of the same name is never touched.
    """
    output_dir = Path(output_dir)
    if not output_dir.is_dir():
        raise ProviderTemplateError(f"output folder {output_dir} does not exist")
    source = _project_source(template)
    target = output_dir / _render_name(source.name, context, source.name)
    if os.path.lexists(target):
        raise ProviderTemplateError(f"{target} already exists; cao never overwrites a folder "
                                    "(choose another name or --output-dir)")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=output_dir))
    try:
        built = staging / target.name
        _render_tree(source, built, context, source.name)
        if os.path.lexists(target):
            raise ProviderTemplateError(f"{target} appeared while rendering; left untouched")
        os.rename(built, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _installed_owner(entry_point: str) -> str | None:
    """The distribution that already provides ``entry_point`` in group ``cao``, if any."""
    from importlib.metadata import entry_points

    for found in entry_points(group="cao"):
        if found.name == entry_point:
            dist = getattr(found, "dist", None)
            return dist.metadata["Name"] if dist is not None else "an installed package"
    return None


# -- the command ----------------------------------------------------------------------------------


@click.group()
def provider() -> None:
    """Create provider packages (one per agent CLI)."""


@provider.command("new")
@click.argument("name")
@click.option("--binary", "binary", required=True,
              help="The CLI's program name as found on PATH (e.g. acme).")
@click.option("--display-name", default=None,
              help="The CLI's name in prose (default: from NAME, e.g. 'Acme Cli').")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Existing folder to create the package in.")
def new(name: str, binary: str, display_name: str | None, output_dir: Path) -> None:
    """Create the package cao-provider-NAME for the agent CLI run as BINARY.

    NAME is the provider's name (snake_case, e.g. acme_cli): the entry point, the name profiles and
    --provider use, and the module cao_provider_NAME.
    """
    inputs = {"provider_name": name, "binary": binary}
    if display_name is not None:
        inputs["display_name"] = display_name
    try:
        template = template_dir()
        context = build_context(template, inputs)
        owner = _installed_owner(name)
        if owner is not None:
            raise ProviderTemplateError(f"invalid provider name {name!r}: {owner} already provides the entry "
                                        f"point {name!r} in group 'cao'")
        target = render_project(template, context, output_dir)
    except ProviderTemplateError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot create the package in {output_dir}: {exc}") from exc
    shown = os.path.relpath(target) if not os.path.relpath(target).startswith("..") else str(target)
    click.echo(f"Created {context['__distribution']} in {shown}")
    click.echo(f"""
Next steps:
  1. cd {shown}
  2. pip install -e '.[test]'      (or: uv pip install -e '.[test]')
  3. pytest                        the generated tests pass against the stand-in program
  4. cao plugins                   lists '{name}'
  5. Make it real: point launch.py at {binary}, record its screens with scripts/record_screens.py,
     rewrite screen.py and dialogs.py for them, and delete the stand-in (README.md says how).
""".rstrip())
