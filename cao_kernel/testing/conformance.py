"""The provider conformance kit: one pytest class every provider package runs against its recorded screens.

Use it from a provider's ``tests/test_conformance.py``::

    from pathlib import Path

    from cao_kernel.testing.conformance import ProviderConformance


    class TestConformance(ProviderConformance):
        entry_point = "my_cli"                 # entry-point name in group "cao"
        provider_name = "my_cli"               # ProviderSpec.name
        screens_dir = Path(__file__).parent / "screens"
        busy_lines = ("◦ Working (3s • esc to interrupt)",)   # copied from recorded processing screens

The plugin is loaded the way ``cao`` loads it (a real ``Kernel`` that loads only ``entry_point``), and
the provider record is taken from what it registers. The screens and their ``manifest.json`` are
described in :mod:`cao_kernel.testing.screens`. Tests are parametrized per version folder and per
screen, with ids ``<version>/<screen>`` (``-documented`` marks screens transcribed from documentation).

What a subclass may set besides the three required attributes:

- ``required_statuses``: statuses every recorded version must have a screen of (a CLI that can never
  ask the user anything drops ``waiting_user_answer``).
- ``busy_lines``: rows copied from recorded processing screens that show a spinner or a running tool.
  Each is put into every completed screen with :meth:`ProviderConformance.insert_busy_line`, and the
  result must read as processing. By default the row goes above the screen's last block of rows (above
  the input box, also one drawn as two rules around an empty row); a CLI that draws it elsewhere (in
  its footer, in place of its prompt) overrides that method, finding the place from the bottom::

      def insert_busy_line(self, screen: str, line: str) -> str:
          rows = screen.split("\\n")
          footer = max(i for i, row in enumerate(rows) if row.strip())
          return "\\n".join([*rows[:footer], line, *rows[footer + 1:]])

- ``check_extraction_outside_completed``: when true (the default), ``extract_last_message`` must raise
  ``ValueError`` on every screen that is not completed; set it false for a CLI whose extractor returns
  an earlier turn's answer while a new turn runs. Either way it may raise nothing but ``ValueError``.
- ``hypothesis_examples``: examples per property (kept small so the kit runs in seconds).

Prompts. ``read_prompt`` must read every waiting screen into the ``prompt`` its manifest entry expects
(``null`` for a screen no answer can be typed into), and find no prompt on any other screen. On recorded
versions, every option of every recorded prompt has a screen captured after pressing its keys
(``answers``) that no longer shows that prompt, and every kind of prompt is recorded at two sizes.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cao_hookspecs import ProviderSpec, StatusReport, TerminalStatus
from cao_hookspecs.names import PROFILE_NAME_RE

from .prompt_expect import prompt_differences
from .screens import RecordedScreen, ScreensVersion, load_screens, manifest_problems

__all__ = ["ProviderConformance", "insert_above_last_block", "load_provider"]

_DEFAULT_REQUIRED = ("idle", "processing", "completed", "waiting_user_answer", "error")
_SHOWN_ROWS = 14
# A horizontal rule, bare or with the corners of a box's top or bottom edge.
_RULE = re.compile(r"[╭┌╰└]?[─━═]{3,}[╮┐╯┘]?")


@functools.cache
def _load(entry_point: str, provider_name: str) -> ProviderSpec:
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    # The kernel is never started: nothing is written to this home, it only keeps the user's out.
    home = Path(tempfile.gettempdir()) / "cao-conformance-home"
    kernel = Kernel(policy=LoadPolicy(only=(entry_point,)), home=home, settings={})
    record = kernel.loader.records.get(entry_point)
    if record is None:
        installed = ", ".join(sorted(kernel.loader.records)) or "none"
        raise AssertionError(f"no entry point {entry_point!r} in group 'cao' is installed "
                             f"(installed: {installed})")
    if record.status != "active":
        raise AssertionError(f"plugin {entry_point!r} ({record.distribution}) did not load: {record.status}, "
                             f"{record.error}")
    providers = kernel.providers
    if provider_name not in providers:
        problems = "; ".join(kernel.hooks.problems)
        raise AssertionError(
            f"plugin {entry_point!r} registers no provider named {provider_name!r} "
            f"(it registers: {', '.join(sorted(providers)) or 'none'})"
            + (f"; problems: {problems}" if problems else "")
        )
    return providers[provider_name]


def load_provider(entry_point: str, provider_name: str) -> ProviderSpec:
    """The ``ProviderSpec`` named ``provider_name``, registered by the plugin at ``entry_point``
    (loaded alone into a fresh kernel, once per process)."""
    return _load(entry_point, provider_name)


def _block_start(rows: Sequence[str], end: int) -> int:
    """The first row of the block of non-blank rows that ends just before ``end``."""
    start = end
    while start > 0 and rows[start - 1].strip():
        start -= 1
    return start


def _is_rule(row: str) -> bool:
    return bool(_RULE.fullmatch(row.strip()))


def insert_above_last_block(screen: str, line: str) -> str:
    """``screen`` with ``line`` inserted just above its last block of non-blank rows (the input area
    and footer of most agent CLIs).

    An input box drawn as two rules around an empty input row reads as two blocks, the last starting
    with the box's bottom rule; the row then goes above the block holding the box's top rule, not
    between the rules (where no CLI draws a spinner)."""
    rows = screen.split("\n")
    end = len(rows)
    while end > 0 and not rows[end - 1].strip():
        end -= 1
    start = _block_start(rows, end)
    if start < end and _is_rule(rows[start]):
        top = start - 1
        while top >= 0 and not rows[top].strip():
            top -= 1
        if top >= 0 and _is_rule(rows[top]):
            start = _block_start(rows, top + 1)
    return "\n".join([*rows[:start], line, *rows[start:]])


def _tail(text: str, rows: int = _SHOWN_ROWS) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    shown = lines[-rows:]
    return "\n".join(f"    | {line}" for line in shown)


def _params(cases: Sequence[Any], ids: Sequence[str], empty_id: str) -> tuple[list[Any], list[str]]:
    # An empty parameter set would make pytest skip the test; a None case makes it fail and say why.
    if cases:
        return list(cases), list(ids)
    return [None], [empty_id]


# -- hypothesis strategies (built lazily: hypothesis is a test dependency only) ----------------------


def _strategies() -> Any:
    from hypothesis import strategies as st

    wide = st.lists(st.sampled_from(list("界語漢字한글😀🚀\u200b\u00a0\u3000ｗ") + ["e\u0301", " "]),
                    max_size=60).map("".join)
    ansi = st.lists(st.sampled_from(["\x1b[0m", "\x1b[2m", "\x1b[38;5;245m", "\x1b[?2004h", "\x1b]0;t\x07",
                                     "\x1b[", "\x1b", "[0m", "\r", "\t", "\x07", "\x00"])
                    | st.text(max_size=10), max_size=30).map("".join)
    long_line = st.builds(lambda ch, n: ch * n, st.characters(exclude_categories=("Cs",)),
                          st.integers(500, 5000))
    lines = st.lists(st.text(max_size=40) | wide | ansi, max_size=40).map("\n".join)
    return st.one_of(st.just(""), st.text(), wide, ansi, long_line, lines)


def _mutations() -> Any:
    """A list of edits to a screen's rows: delete, duplicate, truncate, insert random text."""
    from hypothesis import strategies as st

    index = st.integers(0, 10_000)
    line = st.text(max_size=60)
    op = st.one_of(
        st.tuples(st.just("delete"), index, st.just(0), st.just("")),
        st.tuples(st.just("duplicate"), index, st.just(0), st.just("")),
        st.tuples(st.just("truncate"), index, st.integers(0, 120), st.just("")),
        st.tuples(st.just("insert"), index, st.just(0), line),
    )
    return st.lists(op, min_size=1, max_size=6)


def _apply(screen: str, edits: Sequence[tuple[str, int, int, str]],
           spare: Callable[[str], bool] | None = None) -> str:
    rows = screen.split("\n")
    for kind, index, length, text in edits:
        if kind == "insert":
            rows.insert(index % (len(rows) + 1), text)
            continue
        editable = [i for i, row in enumerate(rows) if spare is None or not spare(row)]
        if not editable:
            continue
        at = editable[index % len(editable)]
        if kind == "delete":
            del rows[at]
        elif kind == "duplicate":
            rows.insert(at, rows[at])
        else:
            rows[at] = rows[at][:length]
    return "\n".join(rows)


class ProviderConformance:
    """Base class of a provider's conformance tests (see the module docstring)."""

    entry_point: ClassVar[str]
    provider_name: ClassVar[str]
    screens_dir: ClassVar[Path]
    required_statuses: ClassVar[tuple[str, ...]] = _DEFAULT_REQUIRED
    busy_lines: ClassVar[tuple[str, ...]] = ()
    check_extraction_outside_completed: ClassVar[bool] = True
    hypothesis_examples: ClassVar[int] = 40

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def spec(self) -> ProviderSpec:
        for attribute in ("entry_point", "provider_name", "screens_dir"):
            if not hasattr(self, attribute):
                raise AssertionError(f"{type(self).__name__} must set the class attribute {attribute!r}")
        return load_provider(self.entry_point, self.provider_name)

    @classmethod
    def versions(cls) -> list[ScreensVersion]:
        return load_screens(Path(cls.screens_dir))

    @classmethod
    def screens(cls) -> list[RecordedScreen]:
        return [screen for version in cls.versions() for screen in version.screens]

    def insert_busy_line(self, screen: str, line: str) -> str:
        """``screen`` (a completed one) with the busy row ``line`` drawn where the CLI draws it while
        a turn runs. The default (:func:`insert_above_last_block`) puts it just above the last block
        of non-blank rows, or above an input box drawn as two rules; override it for a CLI that draws
        spinners elsewhere, placing the row where the recorded processing screens show it."""
        return insert_above_last_block(screen, line)

    def is_busy_line(self, row: str) -> bool:
        """Whether a screen row is one of ``busy_lines`` (compared without surrounding blanks)."""
        wanted = {line.strip() for line in self.busy_lines}
        return row.strip() in wanted

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize the kit's tests over the recorded versions and screens of ``screens_dir``."""
        versions = self.versions()
        screens = [screen for version in versions for screen in version.screens]
        if "screens_version" in metafunc.fixturenames:
            cases, ids = _params(versions, [v.id for v in versions], "no-screens-recorded")
            metafunc.parametrize("screens_version", cases, ids=ids)
        if "recorded_screen" in metafunc.fixturenames:
            cases, ids = _params(screens, [s.id for s in screens], "no-screens-recorded")
            metafunc.parametrize("recorded_screen", cases, ids=ids)
        if "busy_case" in metafunc.fixturenames:
            completed = [s for s in screens if s.status == TerminalStatus.COMPLETED.value]
            pairs = [(screen, number, line) for screen in completed
                     for number, line in enumerate(self.busy_lines, 1)]
            ids = [f"{screen.id}+busy{number}" for screen, number, _ in pairs]
            empty = "no-busy-lines" if not self.busy_lines else "no-completed-screens"
            cases, ids = _params(pairs, ids, empty)
            metafunc.parametrize("busy_case", cases, ids=ids)

    def _fail_if_none(self, case: Any, what: str) -> None:
        if case is None:
            pytest.fail(f"{self.provider_name}: {what}")

    # -- the manifest and the versions -------------------------------------------------------------

    def test_manifest_is_well_formed(self, screens_version: ScreensVersion | None) -> None:
        """Every .txt has a manifest entry and every entry a .txt; statuses, sources, sizes, last
        messages and dialog names are what the format allows."""
        self._fail_if_none(screens_version, f"no version folder under {self.screens_dir}")
        assert screens_version is not None
        dialogs = [dialog.name for dialog in self.spec.startup_dialogs]
        problems = manifest_problems(screens_version, dialogs)
        assert not problems, "manifest problems:\n  " + "\n  ".join(problems)

    def test_screens_match_tested_versions(self) -> None:
        """Every version in ``tested_versions`` has a screens folder, and every folder is a tested version."""
        spec = self.spec
        tested = set(spec.tested_versions)
        folders = {version.version for version in self.versions()}
        missing = sorted(tested - folders)
        extra = sorted(folders - tested)
        assert not missing, (f"{spec.name}: tested_versions lists {', '.join(missing)} but "
                             f"{self.screens_dir} has no folder for {'it' if len(missing) == 1 else 'them'} "
                             "(record the screens)")
        assert not extra, (f"{spec.name}: {self.screens_dir} has screens of {', '.join(extra)}, which "
                           f"tested_versions ({', '.join(spec.tested_versions) or 'empty'}) does not list")

    def test_version_covers_required_statuses(self, screens_version: ScreensVersion | None) -> None:
        """A recorded version has a screen of every status in ``required_statuses``."""
        self._fail_if_none(screens_version, f"no version folder under {self.screens_dir}")
        assert screens_version is not None
        if screens_version.source == "documented":
            # Documentation rarely shows every state; what it shows is still checked screen by screen.
            return
        have = {screen.status for screen in screens_version.screens}
        missing = [status for status in self.required_statuses if status not in have]
        assert not missing, (f"{screens_version.version}: no recorded screen in status "
                             f"{', '.join(missing)} (have: {', '.join(sorted(have)) or 'none'})")

    # -- each screen --------------------------------------------------------------------------------

    def test_screen_reads_as_recorded(self, recorded_screen: RecordedScreen | None) -> None:
        """The detector reads each screen as the status it was recorded in, with evidence."""
        self._fail_if_none(recorded_screen, f"no recorded screens under {self.screens_dir}")
        screen = recorded_screen
        assert screen is not None
        report = self.spec.detect_status(screen.text)
        assert isinstance(report, StatusReport), (
            f"{screen.id}: detect_status returned {type(report).__name__}, not a StatusReport")
        assert report.status == screen.status, (
            f"{screen.id}: recorded as {screen.status}, read as {report.status.value} "
            f"(evidence: {report.evidence!r}); the screen's last rows:\n{_tail(screen.text)}")
        assert report.evidence.strip(), f"{screen.id}: read as {report.status.value} with empty evidence"

    def test_last_message(self, recorded_screen: RecordedScreen | None) -> None:
        """Completed screens give exactly their recorded answer; other screens raise ValueError (unless
        ``check_extraction_outside_completed`` is false); nothing ever raises anything else."""
        self._fail_if_none(recorded_screen, f"no recorded screens under {self.screens_dir}")
        screen = recorded_screen
        assert screen is not None
        expect_answer = screen.status == TerminalStatus.COMPLETED.value and screen.last_message is not None
        try:
            answer = self.spec.extract_last_message(screen.text)
        except ValueError as exc:
            assert not expect_answer, (
                f"{screen.id}: extract_last_message raised ValueError({exc}) on a completed screen whose "
                f"answer is {screen.last_message!r}; the screen's last rows:\n{_tail(screen.text)}")
            return
        except Exception as exc:  # noqa: BLE001 - anything but ValueError is the failure reported
            pytest.fail(f"{screen.id}: extract_last_message raised {type(exc).__name__}: {exc} "
                        "(it may raise ValueError only)")
        assert isinstance(answer, str), f"{screen.id}: extract_last_message returned {type(answer).__name__}"
        if expect_answer:
            assert answer == screen.last_message, (
                f"{screen.id}: extract_last_message returned {answer!r}, the recorded answer is "
                f"{screen.last_message!r}")
        elif screen.status == TerminalStatus.COMPLETED.value:
            pytest.fail(f"{screen.id}: a completed screen without a recorded last_message (a turn that "
                        f"ended without an answer) must raise ValueError; got {answer!r}")
        elif self.check_extraction_outside_completed:
            pytest.fail(f"{screen.id}: a {screen.status} screen gave the answer {answer!r}; expected "
                        "ValueError (set check_extraction_outside_completed = False if earlier answers "
                        "are meant to be returned)")

    def test_startup_dialogs_match_only_their_screens(self, recorded_screen: RecordedScreen | None) -> None:
        """A dialog screen matches exactly its own StartupDialog pattern; other screens match none."""
        self._fail_if_none(recorded_screen, f"no recorded screens under {self.screens_dir}")
        screen = recorded_screen
        assert screen is not None
        matching = []
        for dialog in self.spec.startup_dialogs:
            try:
                if re.search(dialog.pattern, screen.text, re.MULTILINE):
                    matching.append(dialog.name)
            except re.error as exc:
                pytest.fail(f"start-up dialog {dialog.name!r}: pattern {dialog.pattern!r} is not a valid "
                            f"regular expression: {exc}")
        expected = [screen.dialog] if screen.dialog else []
        if screen.dialog:
            assert matching == expected, (
                f"{screen.id}: recorded as start-up dialog {screen.dialog!r}, but the dialogs matching it "
                f"are {matching or 'none'}; the screen's last rows:\n{_tail(screen.text)}")
        else:
            assert not matching, (
                f"{screen.id}: not a start-up dialog screen ({screen.status}), yet dialog pattern(s) "
                f"{matching} match it: the kernel would press their keys")

    def test_every_startup_dialog_is_recorded(self) -> None:
        """Every StartupDialog the provider declares has at least one screen: dialogs are recorded, not
        invented (the kernel presses their keys unattended)."""
        spec = self.spec
        recorded = {screen.dialog for screen in self.screens() if screen.dialog}
        unrecorded = [dialog.name for dialog in spec.startup_dialogs if dialog.name not in recorded]
        assert not unrecorded, (f"{spec.name}: start-up dialog(s) {', '.join(map(repr, unrecorded))} have no "
                                "screen marked with \"dialog\" in any manifest")

    # -- the record itself --------------------------------------------------------------------------

    def test_spec_is_sane(self) -> None:
        """Name, binary, install hint, tested versions, exit command and model endpoint are usable."""
        spec = self.spec
        problems = []
        if not PROFILE_NAME_RE.match(spec.name):
            problems.append(f"name {spec.name!r} must be 1-64 letters, digits, '_' or '-' (the rule cao "
                            "applies to names users type, cao_hookspecs.names.PROFILE_NAME_RE)")
        for field in ("binary", "install_hint", "exit_command"):
            value = getattr(spec, field)
            if not isinstance(value, str) or not value.strip():
                problems.append(f"{field} must be a non-empty string, got {value!r}")
        if not spec.tested_versions:
            problems.append("tested_versions is empty: list the CLI versions whose screens are recorded")
        if not all(isinstance(arg, str) for arg in spec.version_args):
            problems.append(f"version_args must be strings, got {spec.version_args!r}")
        names = [dialog.name for dialog in spec.startup_dialogs]
        if len(names) != len(set(names)):
            problems.append(f"start-up dialog names repeat: {names}")
        if spec.binary_env is not None and not re.fullmatch(r"[A-Z_][A-Z0-9_]*", spec.binary_env):
            problems.append(f"binary_env {spec.binary_env!r} is not an environment variable name")
        if spec.model_endpoint is not None:
            # An empty home: the provider's defaults, never the configuration of whoever runs the tests.
            with tempfile.TemporaryDirectory(prefix="cao-conformance-") as home:
                for env in ({"HOME": home}, {"HOME": home, "PATH": os.defpath, "TERM": "xterm-256color"}):
                    try:
                        url = spec.model_endpoint(env)
                    except Exception as exc:  # noqa: BLE001 - reported as the problem
                        problems.append(f"model_endpoint({env}) raised {type(exc).__name__}: {exc}")
                        continue
                    if url is not None and not (isinstance(url, str) and re.match(r"https?://[^\s/]+", url)):
                        problems.append(f"model_endpoint(...) returned {url!r}, not None or an http(s) URL")
        assert not problems, f"{spec.name}: " + "; ".join(problems)

    # -- busy screens -------------------------------------------------------------------------------

    def test_busy_lines_are_recorded(self) -> None:
        """``busy_lines`` are declared and each is copied from a recorded processing screen."""
        processing = [s for s in self.screens() if s.status == TerminalStatus.PROCESSING.value]
        assert self.busy_lines, (
            f"{self.provider_name}: set busy_lines to the rows of recorded processing screens that show a "
            f"spinner or a running tool (processing screens: "
            f"{', '.join(s.id for s in processing) or 'none'})")
        for line in self.busy_lines:
            found = [s.id for s in processing
                     if any(row.strip() == line.strip() for row in s.text.split("\n"))]
            assert found, f"busy line {line!r} is in no recorded processing screen (copy it from one)"

    def test_busy_line_makes_a_completed_screen_processing(
            self, busy_case: tuple[RecordedScreen, int, str] | None) -> None:
        """A completed screen with a spinner or running-tool row drawn in it reads as processing."""
        if busy_case is None:
            pytest.fail(f"{self.provider_name}: no busy_lines declared, or no completed screen recorded: "
                        "the 'a busy screen is never completed' property has nothing to check")
        screen, number, line = busy_case
        busy = self.insert_busy_line(screen.text, line)
        assert busy != screen.text, f"{screen.id}: insert_busy_line left the screen unchanged"
        report = self.spec.detect_status(busy)
        assert report.status != TerminalStatus.COMPLETED, (
            f"{screen.id} with busy line {number} {line!r}: still read as completed (evidence: "
            f"{report.evidence!r}); a screen with a spinner or a running tool is never completed:\n"
            f"{_tail(busy)}")
        assert report.status == TerminalStatus.PROCESSING, (
            f"{screen.id} with busy line {number} {line!r}: read as {report.status.value} (evidence: "
            f"{report.evidence!r}), not processing: does insert_busy_line put the row where the CLI draws "
            f"it?\n{_tail(busy)}")

    def test_processing_screens_stay_busy_under_edits(self) -> None:
        """Recorded processing screens with rows other than busy lines deleted, duplicated, truncated or
        with random rows inserted are never read as completed."""
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        processing = [s for s in self.screens() if s.status == TerminalStatus.PROCESSING.value]
        assert processing, f"{self.provider_name}: no processing screen recorded"
        spec = self.spec

        @settings(max_examples=self.hypothesis_examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(screen=st.sampled_from(processing), edits=_mutations())
        def check(screen: RecordedScreen, edits: list[tuple[str, int, int, str]]) -> None:
            edited = _apply(screen.text, edits, spare=self.is_busy_line)
            report = spec.detect_status(edited)
            assert report.status != TerminalStatus.COMPLETED, (
                f"{screen.id} after edits {edits!r}: read as completed ({report.evidence!r}) though its busy "
                f"rows are untouched:\n{_tail(edited)}")

        check()

    # -- properties on any input ---------------------------------------------------------------------

    def test_detector_never_raises_on_any_text(self) -> None:
        """Arbitrary text (wide characters, ANSI remnants, very long lines, nothing) gets a StatusReport
        with evidence, never an exception."""
        from hypothesis import HealthCheck, given, settings

        spec = self.spec

        @settings(max_examples=self.hypothesis_examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
        @given(text=_strategies())
        def check(text: str) -> None:
            _check_report(spec, text, "arbitrary text")

        check()

    def test_detector_and_extractor_survive_edited_screens(self) -> None:
        """Recorded screens with rows deleted, duplicated, truncated or random rows inserted: the detector
        answers with evidence, the extractor raises nothing but ValueError."""
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        screens = self.screens()
        assert screens, f"{self.provider_name}: no recorded screens under {self.screens_dir}"
        spec = self.spec

        @settings(max_examples=self.hypothesis_examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(screen=st.sampled_from(screens), edits=_mutations())
        def check(screen: RecordedScreen, edits: list[tuple[str, int, int, str]]) -> None:
            edited = _apply(screen.text, edits)
            _check_report(spec, edited, f"{screen.id} after edits {edits!r}")
            _check_extraction(spec, edited, f"{screen.id} after edits {edits!r}")

        check()

    # -- prompts ---------------------------------------------------------------------------------------

    def _read_prompt(self) -> Callable[[str], Any]:
        reader = self.spec.read_prompt
        assert reader is not None, (f"{self.provider_name}: the provider has no read_prompt: a waiting "
                                    "terminal's prompt cannot be shown or answered by option")
        return reader

    def test_prompt_reads_as_recorded(self, recorded_screen: RecordedScreen | None) -> None:
        """A waiting screen reads into the prompt its manifest expects; any other screen into none."""
        self._fail_if_none(recorded_screen, f"no recorded screens under {self.screens_dir}")
        screen = recorded_screen
        assert screen is not None
        read = self._read_prompt()(screen.text)
        if screen.status != TerminalStatus.WAITING_USER_ANSWER.value:
            assert read is None, (f"{screen.id}: a {screen.status} screen read as a prompt {read!r}; the "
                                  f"screen's last rows:\n{_tail(screen.text)}")
            return
        assert screen.has_prompt, (f"{screen.id}: a waiting screen without a 'prompt' in its manifest entry "
                                   "(the record read_prompt must give, or null)")
        if screen.prompt is None:
            assert read is None, f"{screen.id}: expected no readable prompt, read {read!r}"
            return
        problems = prompt_differences(screen.prompt, read)
        assert not problems, (f"{screen.id}: the prompt read differs from the recorded one:\n  "
                              + "\n  ".join(problems) + f"\nthe screen's last rows:\n{_tail(screen.text)}")

    def test_every_prompt_option_is_answered_on_record(self, screens_version: ScreensVersion | None) -> None:
        """For every kind of prompt a recorded version shows (start-up dialogs aside: the kernel's own
        answers to them are proven live), one prompt screen has each of its options pressed with the
        keys read_prompt gives it now, and the screen captured after that no longer shows the prompt.
        Every recorded answer, of any prompt, is held to the same."""
        self._fail_if_none(screens_version, f"no version folder under {self.screens_dir}")
        assert screens_version is not None
        if screens_version.source == "documented":
            return  # documentation shows screens, not what keys do to them
        reader = self._read_prompt()
        answered: dict[tuple[str, int], RecordedScreen] = {}
        for screen in screens_version.screens:
            if screen.answers is not None:
                answered[(screen.answers["screen"], screen.answers["option"])] = screen
        problems: list[str] = []
        # Per kind: whether one of its prompts has every option answered, and what the others lack.
        complete: set[str] = set()
        unanswered: dict[str, list[str]] = {}
        for screen in screens_version.screens:
            if not screen.prompt:
                continue
            prompt = reader(screen.text)
            if prompt is None:
                continue  # reported by test_prompt_reads_as_recorded
            missing = []
            for number, option in enumerate(prompt.options, 1):
                after = answered.get((screen.name, number))
                if after is None:
                    missing.append(f"{number} ({option.label!r})")
                    continue
                if list(option.keys) != list(after.answers["keys"]):
                    problems.append(f"{after.id}: recorded after pressing {after.answers['keys']}, but option "
                                    f"{number} is now picked with {list(option.keys)} (record it again)")
                still = reader(after.text) if after.status == TerminalStatus.WAITING_USER_ANSWER.value else None
                if still is not None and still.fingerprint == prompt.fingerprint:
                    problems.append(f"{after.id}: option {number}'s keys left the prompt on screen")
            kind = prompt.kind.value
            if not missing:
                complete.add(kind)
            elif kind != "startup_dialog":
                unanswered.setdefault(kind, []).append(
                    f"{screen.id}: options {', '.join(missing)} have no screen recorded after pressing their keys")
        for kind, missing_lists in unanswered.items():
            if kind not in complete:
                problems.extend(missing_lists)
        assert not problems, "\n".join(problems)

    def test_prompt_kinds_are_recorded_at_two_sizes(self, screens_version: ScreensVersion | None) -> None:
        """Every kind of prompt a recorded version shows is recorded at two terminal sizes."""
        self._fail_if_none(screens_version, f"no version folder under {self.screens_dir}")
        assert screens_version is not None
        if screens_version.source == "documented":
            return
        sizes: dict[str, set[tuple[int, int]]] = {}
        for screen in screens_version.screens:
            if screen.prompt and screen.size is not None:
                sizes.setdefault(str(screen.prompt.get("kind")), set()).add(screen.size)
        short = {kind: sorted(found) for kind, found in sizes.items() if len(found) < 2}
        assert not short, f"{screens_version.version}: prompt kinds recorded at one size only: {short}"

    def test_prompt_reader_never_raises_on_any_text(self) -> None:
        """On arbitrary text read_prompt returns a Prompt or None, never raises."""
        from hypothesis import HealthCheck, given, settings

        reader = self._read_prompt()

        @settings(max_examples=self.hypothesis_examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
        @given(text=_strategies())
        def check(text: str) -> None:
            _check_prompt(reader, text, "arbitrary text")

        check()

    def test_no_prompt_on_edited_prompt_free_screens(self) -> None:
        """Recorded screens that show no prompt, with rows deleted, duplicated, cut or random rows added,
        still show none; edited prompt screens read without raising."""
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        reader = self._read_prompt()
        screens = self.screens()
        assert screens, f"{self.provider_name}: no recorded screens under {self.screens_dir}"

        @settings(max_examples=self.hypothesis_examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(screen=st.sampled_from(screens), edits=_mutations())
        def check(screen: RecordedScreen, edits: list[tuple[str, int, int, str]]) -> None:
            edited = _apply(screen.text, edits)
            read = _check_prompt(reader, edited, f"{screen.id} after edits {edits!r}")
            if screen.status != TerminalStatus.WAITING_USER_ANSWER.value:
                assert read is None, (f"{screen.id} after edits {edits!r}: a prompt-free screen read as a "
                                      f"prompt {read!r}:\n{_tail(edited)}")

        check()

    def test_extractor_raises_only_value_error_on_any_text(self) -> None:
        """On arbitrary text the extractor returns a string or raises ValueError, nothing else."""
        from hypothesis import HealthCheck, given, settings

        spec = self.spec

        @settings(max_examples=self.hypothesis_examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
        @given(text=_strategies())
        def check(text: str) -> None:
            _check_extraction(spec, text, "arbitrary text")

        check()


def _check_report(spec: ProviderSpec, text: str, what: str) -> None:
    try:
        report = spec.detect_status(text)
    except Exception as exc:
        raise AssertionError(f"detect_status raised {type(exc).__name__}: {exc} on {what}: "
                             f"{text[:300]!r}") from exc
    assert isinstance(report, StatusReport), f"detect_status returned {type(report).__name__} on {what}"
    assert isinstance(report.status, TerminalStatus)
    assert report.evidence.strip(), (f"detect_status gave empty evidence ({report.status.value}) on {what}: "
                                     f"{text[:300]!r}")


def _check_prompt(reader: Callable[[str], Any], text: str, what: str) -> Any:
    from cao_hookspecs import Prompt

    try:
        read = reader(text)
    except Exception as exc:
        raise AssertionError(f"read_prompt raised {type(exc).__name__}: {exc} on {what}: {text[:300]!r}") from exc
    assert read is None or isinstance(read, Prompt), f"read_prompt returned {type(read).__name__} on {what}"
    if read is not None:
        assert read.options or read.free_text, f"read_prompt gave a prompt with no option and no text on {what}"
    return read


def _check_extraction(spec: ProviderSpec, text: str, what: str) -> None:
    try:
        answer = spec.extract_last_message(text)
    except ValueError:
        return
    except Exception as exc:
        raise AssertionError(f"extract_last_message raised {type(exc).__name__}: {exc} on {what}: "
                             f"{text[:300]!r} (it may raise ValueError only)") from exc
    assert isinstance(answer, str), f"extract_last_message returned {type(answer).__name__} on {what}"
