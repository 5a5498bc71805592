"""The provider conformance kit (``cao_kernel.testing.conformance``) judged by running it.

A generated test module subclasses ``ProviderConformance`` once per case and runs in a pytest
subprocess (pytester): the mock provider with its recorded screens must pass every check; providers
with one defect each (registered through a real entry point by a fixture distribution written here,
built on the mock provider) and damaged copies of the mock's screens must fail exactly the checks
meant to catch them, with messages naming the version, the screen and the evidence.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
MOCK_SCREENS = ROOT / "providers" / "cao-provider-mock" / "tests" / "screens"
MOCK_VERSION = "0.1.0"

# Providers with one defect each, all built on the mock provider's record.
FIXTURE_PLUGIN = '''
"""Providers with one defect each (test fixture of the conformance kit)."""

import attrs

from cao_hookspecs import StartupDialog, StatusReport, TerminalStatus, hookimpl
from cao_provider_mock.provider import mock_provider

BASE = mock_provider()
COMPLETED = TerminalStatus.COMPLETED
PROCESSING = TerminalStatus.PROCESSING


def misread(screen):
    report = BASE.detect_status(screen)
    if report.status == COMPLETED:
        return StatusReport(status="idle", evidence="mock_cli: read as idle on purpose")
    return report


def raises_on_blank(screen):
    if not screen.strip():
        raise IndexError("no rows to read")
    return BASE.detect_status(screen)


def no_evidence(screen):
    return StatusReport(status=BASE.detect_status(screen).status, evidence="")


def shouting(text):
    return BASE.extract_last_message(text).upper()


def key_error_on_blank(text):
    if not text.strip():
        raise KeyError("no rows")
    return BASE.extract_last_message(text)


def answer_anywhere(screen):
    # Blind to a running turn: any answer on screen means done.
    if "> MOCK:" in screen:
        return StatusReport(status="completed", evidence="an answer somewhere on screen")
    return BASE.detect_status(screen)


def needs_banner(screen):
    # Right on every recorded screen, wrong once the banner row is gone.
    report = BASE.detect_status(screen)
    if report.status == PROCESSING and "MockCli ready." not in screen.split("\\n"):
        return StatusReport(status="completed", evidence="no banner, so done")
    return report


def variant(name, **changes):
    return attrs.evolve(BASE, name=name, **changes)


@hookimpl
def cao_register_providers():
    return [
        variant("misread", detect_status=misread),
        variant("raises", detect_status=raises_on_blank),
        variant("no_evidence", detect_status=no_evidence),
        variant("shouting", extract_last_message=shouting),
        variant("key_error", extract_last_message=key_error_on_blank),
        variant("blind", detect_status=answer_anywhere),
        variant("needs_banner", detect_status=needs_banner),
        variant("Bad Name!", install_hint="", exit_command=" ", tested_versions=(),
                model_endpoint=lambda env: "ftp://nowhere"),
        variant("invented_dialog", startup_dialogs=[StartupDialog(name="trust", pattern="Trust this folder",
                                                                  keys=("Enter",))]),
        variant("greedy_dialog", startup_dialogs=[StartupDialog(name="banner", pattern=r"MockCli ready\\.",
                                                                keys=("Enter",))]),
        variant("deaf_dialog", startup_dialogs=[StartupDialog(name="banner", pattern="Welcome aboard",
                                                              keys=("Enter",))]),
        variant("old_versions", tested_versions=("0.1.0", "0.0.9")),
    ]
'''

MODULE_HEAD = '''
from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance
from cao_provider_mock.contract import PROMPT_GLYPH

SCREENS = Path({screens!r})
DAMAGED = Path({damaged!r})
DIALOG = Path({dialog!r})
EXTRA = Path({extra!r})


class MockBase(ProviderConformance):
    screens_dir = SCREENS
    required_statuses = ("idle", "processing", "completed", "error")
    busy_lines = ("\\u276f __mock_sleep_30", "\\u23fa reading the notes")
    check_extraction_outside_completed = False
    hypothesis_examples = 5

    def insert_busy_line(self, screen, line):
        rows = screen.split("\\n")
        last = max(i for i, row in enumerate(rows) if row.strip())
        assert rows[last].rstrip() == PROMPT_GLYPH
        return "\\n".join([*rows[:last], line, *rows[last + 1:]])


class Broken(MockBase):
    entry_point = "kit_fixture"
'''

#: Settings of a class running the mock's own provider.
MOCK = {"entry_point": '"mock_cli"', "provider_name": '"mock_cli"'}


def _broken(provider: str, **more: str) -> dict[str, str]:
    """Settings of a class running the fixture plugin's provider named ``provider``."""
    return {"provider_name": f'"{provider}"', **more}


#: The generated module's test classes, in order: name, base class, and the class's settings as source.
CASE_CLASSES: dict[str, tuple[str, dict[str, str]]] = {
    "TestMock": ("MockBase", {**MOCK, "hypothesis_examples": "40"}),
    "TestMisread": ("Broken", _broken("misread")),
    "TestRaises": ("Broken", _broken("raises")),
    "TestNoEvidence": ("Broken", _broken("no_evidence")),
    "TestShouting": ("Broken", _broken("shouting")),
    "TestKeyError": ("Broken", _broken("key_error")),
    "TestBlind": ("Broken", _broken("blind")),
    "TestNeedsBanner": ("Broken", _broken("needs_banner", hypothesis_examples="40")),
    "TestBadSpec": ("Broken", _broken("Bad Name!")),
    "TestInventedDialog": ("Broken", _broken("invented_dialog")),
    "TestGreedyDialog": ("Broken", _broken("greedy_dialog")),
    "TestDeafDialog": ("Broken", _broken("deaf_dialog", screens_dir="DIALOG")),
    "TestDamagedManifest": ("MockBase", {**MOCK, "screens_dir": "DAMAGED"}),
    "TestExtraVersion": ("MockBase", {**MOCK, "screens_dir": "EXTRA"}),
    "TestMissingVersion": ("Broken", _broken("old_versions")),
    "TestExtractionOutsideCompleted": ("MockBase",
                                       {**MOCK, "check_extraction_outside_completed": "True"}),
    "TestNoBusyLines": ("MockBase", {**MOCK, "busy_lines": "()"}),
    "TestInventedBusyLine": ("MockBase", {**MOCK, "busy_lines": '("\\u276f a turn nobody recorded",)'}),
    "TestDefaultInsertion": ("MockBase",
                             {**MOCK, "insert_busy_line": "ProviderConformance.insert_busy_line"}),
    "TestUnknownEntryPoint": ("MockBase", {**MOCK, "entry_point": '"no_such_plugin"'}),
}
CASES = "".join(f"\n\nclass {name}({base}):\n" + "".join(f"    {k} = {v}\n" for k, v in lines.items())
                for name, (base, lines) in CASE_CLASSES.items())


def _fixture_distribution(folder: Path) -> Path:
    """A distribution on disk (module + dist-info) whose entry point ``kit_fixture`` is in group cao."""
    folder.mkdir()
    (folder / "cao_fixture_kit.py").write_text(FIXTURE_PLUGIN, encoding="utf-8")
    info = folder / "cao_fixture_kit-1.0.dist-info"
    info.mkdir()
    metadata = "Metadata-Version: 2.1\nName: cao-fixture-kit\nVersion: 1.0\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text("[cao]\nkit_fixture = cao_fixture_kit\n", encoding="utf-8")
    return folder


def _copy_screens(target: Path) -> Path:
    shutil.copytree(MOCK_SCREENS, target)
    return target


def _edit_manifest(folder: Path, edit) -> None:  # noqa: ANN001
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    edit(manifest)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _damaged(target: Path) -> Path:
    """The mock's screens with one of each manifest mistake."""
    root = _copy_screens(target)
    version = root / MOCK_VERSION
    (version / "stray.txt").write_text("MockCli ready.\n\u276f\n", encoding="utf-8")

    def damage(manifest: dict) -> None:
        screens = manifest["screens"]
        screens["ghost"] = {"status": "idle", "size": [220, 50]}
        screens["idle"]["last_message"] = "hello"
        screens["processing"]["status"] = "busy"
        screens["error"]["answer"] = "none"
        screens["completed"]["dialog"] = "nope"
        screens["idle_interrupted"]["size"] = [10, 2]
        manifest["source"] = "guessed"

    _edit_manifest(version, damage)
    return root


def _with_dialog_screen(target: Path) -> Path:
    """The mock's screens with ``idle`` marked as the start-up dialog ``banner``."""
    root = _copy_screens(target)
    _edit_manifest(root / MOCK_VERSION, lambda m: m["screens"]["idle"].update(dialog="banner"))
    return root


def _with_extra_version(target: Path) -> Path:
    """The mock's screens plus a documented-only version the provider does not list, and a recorded
    version without error screens."""
    root = _copy_screens(target)
    documented = root / "0.0.9"
    documented.mkdir()
    shutil.copy(root / MOCK_VERSION / "idle.txt", documented / "idle.txt")
    (documented / "manifest.json").write_text(json.dumps({
        "package": "cao-provider-mock", "version": "0.0.9", "version_output": "", "source": "documented",
        "recorded_with": "", "screens": {"idle": {"status": "idle", "size": [220, 50]}},
    }), encoding="utf-8")

    def drop_errors(manifest: dict) -> None:
        for name in [n for n, e in manifest["screens"].items() if e["status"] == "error"]:
            del manifest["screens"][name]
            (root / MOCK_VERSION / f"{name}.txt").unlink()

    _edit_manifest(root / MOCK_VERSION, drop_errors)
    return root


CLASSES = list(CASE_CLASSES)
_RESULTS: dict[str, dict[str, tuple[str, str]]] = {}


def run_kit(pytester: pytest.Pytester, *classes: str) -> dict[str, dict[str, tuple[str, str]]]:
    """{class: {test id: (outcome, report text)}} for ``classes`` of the generated module.

    The whole module runs once per process, in the first test that asks (a pytest run costs seconds),
    in process through ``pytester``.
    """
    if not _RESULTS:
        base = pytester.path
        pytester.syspathinsert(_fixture_distribution(base / "plugin"))
        source = textwrap.dedent(MODULE_HEAD).format(
            screens=str(MOCK_SCREENS), damaged=str(_damaged(base / "damaged")),
            dialog=str(_with_dialog_screen(base / "dialog")), extra=str(_with_extra_version(base / "extra")),
        ) + CASES
        pytester.makepyfile(test_kit=source)
        result = pytester.runpytest("-p", "no:cacheprovider")
        found: dict[str, dict[str, tuple[str, str]]] = {name: {} for name in CLASSES}
        for report in result.reprec.getreports("pytest_runtest_logreport"):
            if report.when == "call" or report.outcome != "passed":
                _, cls, test = report.nodeid.split("::")
                found[cls][test] = (report.outcome, report.longreprtext)
        assert all(found.values()), f"a class ran no test:\n{result.stdout.str()[-3000:]}"
        _RESULTS.update(found)
    return {name: _RESULTS[name] for name in classes}


def failures(results: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {name: text for name, (outcome, text) in results.items() if outcome != "passed"}


def test_the_mock_provider_passes_every_check(pytester):
    mock = run_kit(pytester, "TestMock")["TestMock"]
    assert len(mock) > 40
    failed = failures(mock)
    assert not failed, "\n\n".join(f"{name}: {text}" for name, text in failed.items())
    # Parametrized over screens as <version>/<name>, and over busy lines in completed screens.
    assert f"test_screen_reads_as_recorded[{MOCK_VERSION}/completed]" in mock
    assert f"test_busy_line_makes_a_completed_screen_processing[{MOCK_VERSION}/completed+busy1]" in mock
    assert f"test_manifest_is_well_formed[{MOCK_VERSION}]" in mock


def test_detector_defects_fail_the_checks_meant_for_them(pytester):
    found = run_kit(pytester, "TestMisread", "TestRaises", "TestNoEvidence", "TestBlind", "TestNeedsBanner")

    misread = failures(found["TestMisread"])
    text = misread[f"test_screen_reads_as_recorded[{MOCK_VERSION}/completed]"]
    assert f"{MOCK_VERSION}/completed: recorded as completed, read as idle" in text
    assert "read as idle on purpose" in text  # the evidence
    assert "> MOCK: Summarise the repository." in text  # the screen's rows
    expected = ("test_screen_reads_as_recorded[", "test_busy_line_makes")
    assert all(name.startswith(expected) for name in misread), sorted(misread)

    raises = failures(found["TestRaises"])
    assert "IndexError: no rows to read" in raises["test_detector_never_raises_on_any_text"]

    silent = failures(found["TestNoEvidence"])
    assert "with empty evidence" in silent[f"test_screen_reads_as_recorded[{MOCK_VERSION}/idle]"]
    assert "empty evidence" in silent["test_detector_never_raises_on_any_text"]

    # Blind to a running turn: a busy row put into a completed screen still reads completed.
    blind = failures(found["TestBlind"])
    busy = [name for name in blind if name.startswith("test_busy_line_makes_a_completed_screen_processing[")]
    assert busy, sorted(blind)
    assert "still read as completed" in blind[busy[0]]
    assert "a screen with a spinner or a running tool is never completed" in blind[busy[0]]

    # Right on every recorded screen, fooled once a row other than the busy ones is edited.
    banner = failures(found["TestNeedsBanner"])
    assert set(banner) == {"test_processing_screens_stay_busy_under_edits"}, sorted(banner)
    assert "read as completed ('no banner, so done') though its busy rows are untouched" in \
        banner["test_processing_screens_stay_busy_under_edits"]


def test_extractor_defects_fail(pytester):
    found = run_kit(pytester, "TestShouting", "TestKeyError", "TestExtractionOutsideCompleted")

    shouting = failures(found["TestShouting"])
    text = shouting[f"test_last_message[{MOCK_VERSION}/completed]"]
    assert "returned 'SUMMARISE THE REPOSITORY.', the recorded answer is 'Summarise the repository.'" in text
    assert not any(name.startswith("test_screen_reads") for name in shouting)

    key_error = failures(found["TestKeyError"])["test_extractor_raises_only_value_error_on_any_text"]
    assert "KeyError" in key_error and "it may raise ValueError only" in key_error

    # The mock returns the earlier answer while a later turn runs: allowed only by opting out.
    strict = failures(found["TestExtractionOutsideCompleted"])
    text = strict[f"test_last_message[{MOCK_VERSION}/processing]"]
    assert "a processing screen gave the answer 'Summarise the repository.'; expected ValueError" in text
    assert f"test_last_message[{MOCK_VERSION}/completed]" not in strict


def test_record_and_dialog_defects_fail(pytester):
    found = run_kit(pytester, "TestBadSpec", "TestInventedDialog", "TestGreedyDialog", "TestDeafDialog",
                    "TestUnknownEntryPoint")

    text = failures(found["TestBadSpec"])["test_spec_is_sane"]
    for part in ("name 'Bad Name!' must be", "install_hint must be a non-empty string",
                 "exit_command must be", "tested_versions is empty", "returned 'ftp://nowhere'"):
        assert part in text, text

    invented = failures(found["TestInventedDialog"])
    assert set(invented) == {"test_every_startup_dialog_is_recorded"}, sorted(invented)
    assert "start-up dialog(s) 'trust' have no screen" in invented["test_every_startup_dialog_is_recorded"]

    greedy = failures(found["TestGreedyDialog"])
    text = greedy[f"test_startup_dialogs_match_only_their_screens[{MOCK_VERSION}/completed]"]
    assert "not a start-up dialog screen (completed), yet dialog pattern(s) ['banner'] match it" in text

    deaf = failures(found["TestDeafDialog"])
    text = deaf[f"test_startup_dialogs_match_only_their_screens[{MOCK_VERSION}/idle]"]
    assert "recorded as start-up dialog 'banner', but the dialogs matching it are none" in text
    assert "test_every_startup_dialog_is_recorded" not in deaf

    unknown = failures(found["TestUnknownEntryPoint"])["test_spec_is_sane"]
    assert "no entry point 'no_such_plugin' in group 'cao' is installed" in unknown


def test_screen_folder_defects_fail(pytester):
    found = run_kit(pytester, "TestDamagedManifest", "TestExtraVersion", "TestMissingVersion")

    text = failures(found["TestDamagedManifest"])[f"test_manifest_is_well_formed[{MOCK_VERSION}]"]
    for part in (
        f"{MOCK_VERSION}/stray: stray.txt has no entry in manifest.json",
        f"{MOCK_VERSION}/ghost: listed in manifest.json but ghost.txt is missing",
        f"{MOCK_VERSION}/processing: status 'busy' is not one of",
        f"{MOCK_VERSION}/idle: 'last_message' is given on a 'idle' screen",
        f"{MOCK_VERSION}/error: unknown key 'answer'",
        f"{MOCK_VERSION}/completed: dialog 'nope' is not a start-up dialog of the provider",
        f"{MOCK_VERSION}/idle_interrupted: the screen has",
        f"{MOCK_VERSION}: 'source' must be one of 'recorded', 'documented', got 'guessed'",
    ):
        assert part in text, (part, text)

    extra = failures(found["TestExtraVersion"])
    assert "has screens of 0.0.9, which tested_versions (0.1.0) does not list" in \
        extra["test_screens_match_tested_versions"]
    text = extra[f"test_version_covers_required_statuses[{MOCK_VERSION}]"]
    assert f"{MOCK_VERSION}: no recorded screen in status error" in text
    # Documented-only versions are allowed (not held to every status) and marked in the ids.
    assert "test_screen_reads_as_recorded[0.0.9/idle-documented]" in found["TestExtraVersion"]
    assert "test_version_covers_required_statuses[0.0.9-documented]" in found["TestExtraVersion"]
    assert "test_version_covers_required_statuses[0.0.9-documented]" not in extra

    missing = failures(found["TestMissingVersion"])["test_screens_match_tested_versions"]
    assert "tested_versions lists 0.0.9 but" in missing and "has no folder for it" in missing


def test_busy_line_declarations_are_checked(pytester):
    found = run_kit(pytester, "TestNoBusyLines", "TestInventedBusyLine", "TestDefaultInsertion")
    none = failures(found["TestNoBusyLines"])
    assert "set busy_lines to the rows of recorded processing screens" in none["test_busy_lines_are_recorded"]
    empty = none["test_busy_line_makes_a_completed_screen_processing[no-busy-lines]"]
    assert "no busy_lines declared" in empty
    invented = failures(found["TestInventedBusyLine"])
    assert "is in no recorded processing screen" in invented["test_busy_lines_are_recorded"]
    # The default puts the row above the last block of rows; mock_cli draws a running turn in place of
    # its prompt, so the mock must say where (its own conformance test does).
    default = failures(found["TestDefaultInsertion"])
    assert any(name.startswith("test_busy_line_makes_a_completed_screen_processing[") for name in default)


def test_default_insertion_goes_above_the_last_block():
    from cao_kernel.testing.conformance import insert_above_last_block

    screen = "banner\n\n> answer\n\nprompt\nfooter\n\n"
    assert insert_above_last_block(screen, "BUSY") == "banner\n\n> answer\n\nBUSY\nprompt\nfooter\n\n"
    assert insert_above_last_block("", "BUSY") == "BUSY\n"


def test_default_insertion_goes_above_an_input_box_drawn_as_two_rules():
    from cao_kernel.testing.conformance import insert_above_last_block

    # The empty input row between the rules splits the box into two blocks: the row still goes above it.
    rule = "─" * 30
    box = f"{rule}\n\n{rule}\n~/project\n"
    assert insert_above_last_block(f"answer\n\n{box}", "BUSY") == f"answer\n\nBUSY\n{box}"
    # With corners, and a status row drawn right on the top edge, which stays with the box.
    top, bottom = "╭" + rule + "╮", "╰" + rule + "╯"
    screen = f"answer\n\nstatus\n{top}\n\n{bottom}\nfooter"
    assert insert_above_last_block(screen, "BUSY") == f"answer\n\nBUSY\nstatus\n{top}\n\n{bottom}\nfooter"
    # A lone rule with text above it, not a box: the row goes above the last block as before.
    assert insert_above_last_block(f"answer\n\n{rule}\nfooter", "BUSY") == f"answer\n\nBUSY\n{rule}\nfooter"


def test_loading_screens_never_raises_on_bad_content(tmp_path):
    from cao_kernel.testing.screens import load_screens, manifest_problems

    (tmp_path / "1.0").mkdir()
    (tmp_path / "1.0" / "manifest.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "2.0").mkdir()
    (tmp_path / "2.0" / "manifest.json").write_text("[]", encoding="utf-8")
    (tmp_path / "3.0").mkdir()
    versions = load_screens(tmp_path)
    assert [v.version for v in versions] == ["1.0", "2.0", "3.0"]
    problems = [manifest_problems(v, []) for v in versions]
    assert re.search(r"^1\.0: manifest\.json cannot be read", problems[0][0])
    assert problems[1] == ["2.0: manifest.json holds list, not a JSON object"]
    assert problems[2][0].startswith("3.0: no manifest.json")
    assert load_screens(tmp_path / "missing") == []
