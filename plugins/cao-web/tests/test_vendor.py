"""The vendored front-end files are exactly what ``scripts/vendor_web.py`` writes for its pins, with their
licences, and nothing the page loads points at a file that is not shipped."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from cao_testkit.modules import load_file
from cao_web import assets

ROOT = Path(__file__).resolve().parents[3]
VENDOR = load_file(ROOT / "scripts" / "vendor_web.py", "vendor_web_script")


def test_the_committed_files_match_the_manifest_and_the_pins():
    assert VENDOR.check() == []
    assert VENDOR.main(["--check"]) == 0


def test_a_changed_missing_or_unlisted_file_is_caught(tmp_path):
    copy = tmp_path / "vendor"
    shutil.copytree(VENDOR.VENDOR, copy)
    (copy / "xterm" / "xterm.css").write_bytes(b"/* changed */\n")
    (copy / "addon-fit" / "addon-fit.mjs").unlink()
    (copy / "xterm" / "extra.js").write_text("// not vendored by the script\n")
    problems = VENDOR.check(copy)
    assert any(p.startswith("xterm/xterm.css: differs") for p in problems), problems
    assert "addon-fit/addon-fit.mjs: missing" in problems
    assert "xterm/extra.js: not in the manifest" in problems


def test_every_vendored_library_ships_with_its_licence():
    for _package, (_version, wanted) in VENDOR.PINS.items():
        assert any(name.endswith("/LICENSE") for name in wanted.values())
    for name in ("xterm/LICENSE", "addon-fit/LICENSE"):
        assert "Permission is hereby granted" in (VENDOR.VENDOR / name).read_text(encoding="utf-8")


def test_no_shipped_script_or_style_refers_to_a_source_map():
    # A map the page names but the package does not ship would be a 404 in every browser's console.
    for name, body in assets.listing().items():
        if name.endswith((".js", ".mjs", ".css")):
            assert b"sourceMappingURL" not in body, name


def test_a_source_map_line_is_dropped_and_nothing_else():
    script = b"export{a as b};\n//# sourceMappingURL=x.mjs.map\n"
    assert VENDOR.strip_source_map("x.mjs", script) == b"export{a as b};\n"
    assert VENDOR.strip_source_map("x.mjs", b"let a = 1;\n") == b"let a = 1;\n"
    assert VENDOR.strip_source_map("LICENSE", script) == script


def test_the_pages_modules_import_only_shipped_files():
    files = assets.listing()
    for name, body in files.items():
        if not name.endswith((".js", ".mjs")) or name.startswith("vendor/"):
            continue
        for target in re.findall(rb'''(?:from|import)\s*\(?\s*["']([^"']+)["']''', body):
            resolved = (Path("/static") / Path(name).parent / target.decode()).resolve()
            shipped = str(resolved.relative_to("/static"))
            assert shipped in files, f"{name} imports {target.decode()}, which is not shipped"
