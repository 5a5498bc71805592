"""Generate ``docs/hooks.md`` from the hookspecs in ``cao_hookspecs``.

Usage::

    python scripts/gen_hooks_doc.py            # (re)write docs/hooks.md
    python scripts/gen_hooks_doc.py --check    # exit 1 when docs/hooks.md is out of date

The page is derived entirely from the contract (module docstrings, hookspec signatures, pluggy flags and
docstrings), so a hook cannot change without its documentation changing with it.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "docs" / "hooks.md"

SPEC_ATTR = "cao_spec"  # set by pluggy.HookspecMarker("cao")

INTRO = """\
# cao hooks

This page is generated from the hookspecs in `cao_hookspecs` by `scripts/gen_hooks_doc.py`; edit the
docstrings there, not this file. CI fails when the two disagree.

## Kinds of hooks

Every hook starts with `cao_` and belongs to one of four kinds. Each hook's docstring names its kind
on its `Kind:` line.

- **Registration** (`cao_register_*`): every implementation is called and returns an iterable of
  frozen records, each with a `name`. The kernel calls the implementations one at a time so every
  record can be traced to the plugin that made it: an implementation that raises contributes nothing
  and is reported as a problem without hiding the others, and two records with the same name are
  reported naming both plugins (the first one called is kept).
- **Lookup** (`firstresult=True`): implementations are called in call order until one returns a value
  other than None. The kernel ships its own implementation of each lookup with `trylast=True`, so a
  plugin overrides the default by implementing the hook (with `tryfirst=True` to run before other
  plugins too) and returning None for the cases it does not handle.
- **Before** (`cao_before_*`): run before an action, chained in call order (`tryfirst`
  implementations first). Each implementation receives the request as rewritten by the ones before
  it and returns a replacement record of the same type, or None to keep the request as it is.
  Raising vetoes the action: nothing is created and the caller gets a `Vetoed` error carrying the
  exception's message. Returning any other type is a plugin error. Wrapper implementations
  (`wrapper=True` or `hookwrapper=True`) are not supported and are never called.
- **After** (`cao_after_*`, and `cao_startup` / `cao_shutdown`): observers. Each implementation is
  called on its own and its return value is ignored; one that raises is logged with its plugin's name
  and the next still runs. Observers run on the kernel's event loop thread, so hand slow work to a
  thread or queue of your own.

Call order is pluggy's: `tryfirst` implementations, then the others with the most recently registered
plugin first, then `trylast` implementations. Apart from `cao_deliver_message`, the kernel calls every
hook one implementation at a time, so wrapper implementations only take effect on that hook.

## Implementing a hook

A plugin is a module (or any object) whose functions carry the `hookimpl` marker and are named after
the hook they implement. It depends on `cao-hookspecs` only, never on `cao-kernel`:

```python
# src/my_plugin/plugin.py
from cao_hookspecs import ProviderSpec, hookimpl


@hookimpl
def cao_register_providers():
    from .provider import launch, detect, extract  # heavy imports stay inside the hook

    return [ProviderSpec(name="my_cli", binary="my-cli", launch=launch,
                         detect_status=detect, extract_last_message=extract)]
```

The distribution declares exactly one entry point in group `cao`, and the module it names stays thin
and cheap to import (every command that loads plugins imports every plugin):

```toml
[project.entry-points.cao]
my_plugin = "my_plugin.plugin"
```

`cao plugins` lists what was loaded, with each plugin's hooks and status (`active`, `blocked` or
`failed` with its error). A plugin that fails to import, or implements a hook that does not exist (a
typo such as `cao_regsiter_providers`), is recorded as failed and leaves nothing registered; the other
plugins load normally. `CAO_LOAD_PLUGINS` (comma-separated names; empty for none) and
`CAO_DISABLE_PLUGINS` choose what loads, `cao --no-plugins` loads none, and `CAO_STRICT_PLUGINS=1`
turns a failed plugin into an error. Tests register plugin objects with the `register_plugin`
fixture of `cao_kernel.testing`.

## Opt-in arguments

An implementation accepts only the arguments it needs: the kernel passes them by name, so
`def cao_after_status_changed(terminal, new)` is a valid implementation of a hook that also offers
`old`. Names must match the hookspec's parameter names exactly; an implementation asking for a name
the hookspec does not offer fails to load. Because implementations opt in, a new parameter can be
added to a hook without breaking any plugin; removing or renaming one takes a deprecation cycle and
a major release of `cao-hookspecs`.
"""


# -- reading the contract ---------------------------------------------------------------------------


def spec_modules() -> tuple[ModuleType, ...]:
    from cao_hookspecs import ALL_SPEC_MODULES

    return tuple(ALL_SPEC_MODULES)


def hookspecs_of(module: ModuleType) -> Iterator[Callable[..., Any]]:
    """The hookspec functions defined in ``module``, in source order."""
    found = [
        obj for name, obj in vars(module).items()
        if name.startswith("cao_") and callable(obj) and getattr(obj, SPEC_ATTR, None) is not None
    ]
    yield from sorted(found, key=lambda fn: fn.__code__.co_firstlineno)


def signature_line(fn: Callable[..., Any]) -> str:
    """``cao_name(arg: Type, ...) -> Ret`` with annotations exactly as written in the source."""
    sig = inspect.signature(fn)
    params = []
    for param in sig.parameters.values():
        if param.annotation is inspect.Parameter.empty:
            params.append(param.name)
        else:
            params.append(f"{param.name}: {_annotation(param.annotation)}")
    line = f"{fn.__name__}({', '.join(params)})"
    if sig.return_annotation is not inspect.Signature.empty:
        line += f" -> {_annotation(sig.return_annotation)}"
    return line


def _annotation(value: Any) -> str:
    # The contract uses postponed annotations, so these are the source strings; anything else is a
    # type object and its name is the closest thing to what was written.
    if isinstance(value, str):
        return value
    return getattr(value, "__name__", repr(value))


def flags_of(fn: Callable[..., Any]) -> list[str]:
    opts = getattr(fn, SPEC_ATTR)
    flags = [f"`{flag}=True`" for flag in ("firstresult", "historic") if opts.get(flag)]
    if opts.get("warn_on_impl") is not None:
        flags.append("`warn_on_impl`")
    if opts.get("warn_on_impl_args"):
        flags.append(f"`warn_on_impl_args` ({', '.join(sorted(opts['warn_on_impl_args']))})")
    return flags


def kind_of(fn: Callable[..., Any]) -> str:
    match = re.search(r"^Kind:\s*([\w-]+)", inspect.getdoc(fn) or "", re.MULTILINE)
    return match.group(1) if match else "?"


# -- docstring to Markdown --------------------------------------------------------------------------

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_LABELS = ("Kind:", "Errors:", "Stability:")


def inline(text: str) -> str:
    """reST inline markup to Markdown: ``x`` -> `x`, :class:`~a.b.C` -> `C`."""

    def role(match: re.Match[str]) -> str:
        target = match.group(1)
        shortened = match.group(0).split("`", 1)[1].startswith("~")
        return f"`{target.rsplit('.', 1)[-1] if shortened else target}`"

    return _LITERAL.sub(r"`\1`", _ROLE.sub(role, text))


def _paragraphs(lines: list[str]) -> Iterator[list[str]]:
    block: list[str] = []
    for line in lines:
        if line.strip():
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


def docstring_markdown(doc: str) -> str:
    """Render a hookspec docstring (reST field lists, ``Label:`` paragraphs, ``::`` code blocks)."""
    lines = inspect.cleandoc(doc).splitlines()
    out: list[str] = []
    text: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        text.append(line)
        if not line.rstrip().endswith("::"):
            continue
        # A paragraph ending in "::" owns the indented block that follows it.
        code: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
            code.append(lines[i])
            i += 1
        out.extend(_render_text(text))
        text = []
        out.append("```python\n" + textwrap.dedent("\n".join(code)).strip("\n") + "\n```")
    out.extend(_render_text(text))
    return "\n\n".join(out)


def _render_text(lines: list[str]) -> list[str]:
    return [rendered for block in _paragraphs(lines) for rendered in _render_block(block)]


def _render_block(block: list[str]) -> list[str]:
    first = block[0].strip()
    if first.startswith((":param ", ":return:", ":returns:")):
        return [_render_fields(block)]
    text = " ".join(line.strip() for line in block)
    if text.endswith("::"):
        text = text[:-1]
    if first.startswith("- "):
        return ["\n".join(inline(line.rstrip()) for line in block)]
    for label in _LABELS:
        if text.startswith(label):
            return [f"**{label[:-1]}:** {inline(text[len(label):].strip())}"]
    if text == "Example:":
        return ["**Example:**"]
    return [inline(text)]


def _render_fields(block: list[str]) -> str:
    fields: list[str] = []
    for line in block:
        if line.startswith(":"):
            fields.append(line.strip())
        else:
            fields[-1] += " " + line.strip()
    params = []
    rendered = []
    for field in fields:
        if field.startswith(":param "):
            name, _, text = field[len(":param "):].partition(":")
            params.append(f"- `{name.strip()}`: {inline(text.strip())}")
        else:
            text = field.split(":", 2)[2].strip()
            rendered.append(f"**Returns:** {inline(text)}")
    if params:
        rendered.insert(0, "**Parameters:**\n\n" + "\n".join(params))
    return "\n\n".join(rendered)


# -- the page ---------------------------------------------------------------------------------------


def area_title(module: ModuleType) -> str:
    first = (inspect.getdoc(module) or module.__name__).splitlines()[0].strip()
    return first.rstrip(".")


def area_body(module: ModuleType) -> str:
    doc = inspect.getdoc(module) or ""
    rest = doc.split("\n", 1)[1].strip() if "\n" in doc else ""
    return docstring_markdown(rest) if rest else ""


def render() -> str:
    """The full text of ``docs/hooks.md``."""
    modules = spec_modules()
    parts = [INTRO.rstrip("\n")]

    rows = ["| hook | area | kind | flags |", "|---|---|---|---|"]
    for module in modules:
        area = module.__name__.rsplit(".", 1)[-1]
        for fn in hookspecs_of(module):
            flags = ", ".join(flags_of(fn)) or "-"
            rows.append(f"| [`{fn.__name__}`](#{fn.__name__}) | {area} | {kind_of(fn)} | {flags} |")
    parts.append("## All hooks\n\n" + "\n".join(rows))

    for module in modules:
        section = [f"# {area_title(module)}"]
        body = area_body(module)
        if body:
            section.append(body)
        section.append(f"Hookspec module: `{module.__name__}`.")
        parts.append("\n\n".join(section))
        for fn in hookspecs_of(module):
            flags = ", ".join(flags_of(fn)) or "none"
            hook = [
                f"## {fn.__name__}",
                f"```python\n{signature_line(fn)}\n```",
                f"**Flags:** {flags}",
                docstring_markdown(fn.__doc__ or ""),
            ]
            parts.append("\n\n".join(hook))
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate docs/hooks.md from the cao hookspecs.")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="file to write or check")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
        if current != text:
            print(f"{args.output} is out of date; run: python scripts/gen_hooks_doc.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
