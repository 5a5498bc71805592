"""Vendor the web console's front-end libraries from the npm registry, without Node.

    python scripts/vendor_web.py          # fetch the pinned packages and (re)write the vendored files
    python scripts/vendor_web.py --check  # offline: the committed files are the ones the manifest names

The console's terminal page runs xterm.js. Installing or running cao needs no Node and no network, so the
files it uses are committed under ``plugins/cao-web/src/cao_web/static/vendor`` and ship in the wheel.
This script is how they got there: for each pinned package it reads the registry's metadata for that
version, downloads the tarball, refuses it unless its SHA-512 is the metadata's ``dist.integrity``,
and extracts only the files the page loads, with the package's licence. A trailing
``//# sourceMappingURL=`` line is dropped (the maps are not shipped, and a browser would ask for them).

``manifest.json`` beside the files records each package's version, tarball and integrity, and each
written file's SHA-512, so ``--check`` proves without the network that the committed files are exactly
what this script writes for the pins below. Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import sys
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "plugins" / "cao-web" / "src" / "cao_web" / "static" / "vendor"
MANIFEST = VENDOR / "manifest.json"
REGISTRY = "https://registry.npmjs.org"

# package -> (version, {path in the tarball: path under vendor/})
PINS: dict[str, tuple[str, dict[str, str]]] = {
    "@xterm/xterm": ("6.0.0", {
        "package/lib/xterm.mjs": "xterm/xterm.mjs",
        "package/css/xterm.css": "xterm/xterm.css",
        "package/LICENSE": "xterm/LICENSE",
    }),
    "@xterm/addon-fit": ("0.11.0", {
        "package/lib/addon-fit.mjs": "addon-fit/addon-fit.mjs",
        "package/LICENSE": "addon-fit/LICENSE",
    }),
}


class VendorError(Exception):
    """A download that does not match its registry metadata, or files that do not match the manifest."""


def sri_sha512(data: bytes) -> str:
    """``data``'s digest in the registry's Subresource Integrity form (``sha512-<base64>``)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def strip_source_map(name: str, data: bytes) -> bytes:
    """``data`` without its last line when that line points at a source map we do not ship."""
    if not name.endswith((".js", ".mjs", ".css")):
        return data
    lines = data.rstrip(b"\n").split(b"\n")
    if lines and lines[-1].lstrip().startswith((b"//# sourceMappingURL=", b"/*# sourceMappingURL=")):
        lines.pop()
    return b"\n".join(lines) + b"\n"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - a fixed https registry
        return response.read()


def fetch(package: str, version: str) -> tuple[dict[str, str], bytes]:
    """The registry's ``dist`` record of ``package@version`` and its tarball, checked against it."""
    meta = json.loads(_get(f"{REGISTRY}/{urllib.parse.quote(package, safe='@')}/{version}"))
    dist = meta["dist"]
    integrity = dist.get("integrity", "")
    if not integrity.startswith("sha512-"):
        raise VendorError(f"{package}@{version}: the registry gives no sha512 integrity ({integrity!r})")
    tarball = _get(dist["tarball"])
    if sri_sha512(tarball) != integrity:
        raise VendorError(f"{package}@{version}: the tarball's sha512 is not the registry's {integrity}")
    return {"tarball": dist["tarball"], "integrity": integrity}, tarball


def extract(tarball: bytes, wanted: dict[str, str]) -> dict[str, bytes]:
    """The ``wanted`` members of ``tarball`` by their vendored names, source map lines dropped."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive.getmembers():
            target = wanted.get(member.name)
            if target is None or not member.isfile():
                continue
            handle = archive.extractfile(member)
            assert handle is not None
            out[target] = strip_source_map(target, handle.read())
    missing = sorted(set(wanted.values()) - set(out))
    if missing:
        raise VendorError(f"not in the tarball: {', '.join(missing)}")
    return out


def vendor() -> dict[str, object]:
    """Fetch every pin, write its files under ``VENDOR`` and the manifest; returns the manifest."""
    packages: dict[str, object] = {}
    files: dict[str, dict[str, str]] = {}
    written: dict[str, bytes] = {}
    for package, (version, wanted) in PINS.items():
        dist, tarball = fetch(package, version)
        packages[package] = {"version": version, **dist}
        for name, data in extract(tarball, wanted).items():
            written[name] = data
            files[name] = {"package": package, "sha512": sri_sha512(data)}
    # Written only once every package checked out: a failed run leaves the committed files alone.
    for name, data in written.items():
        path = VENDOR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    manifest = {"packages": packages, "files": dict(sorted(files.items()))}
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def check(vendor_dir: Path = VENDOR) -> list[str]:
    """What is wrong with the vendored files in ``vendor_dir`` (nothing: an empty list)."""
    manifest_path = vendor_dir / MANIFEST.name
    if not manifest_path.is_file():
        return [f"no {MANIFEST.name} in {vendor_dir}"]
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    problems = []
    for package, (version, wanted) in PINS.items():
        recorded = manifest["packages"].get(package, {})
        if recorded.get("version") != version:
            problems.append(f"{package}: pinned {version}, vendored {recorded.get('version')}")
        for name in wanted.values():
            if manifest["files"].get(name, {}).get("package") != package:
                problems.append(f"{name}: the manifest does not list it as {package}'s")
    listed = set(manifest["files"])
    for name, entry in manifest["files"].items():
        path = vendor_dir / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sri_sha512(path.read_bytes()) != entry["sha512"]:
            problems.append(f"{name}: differs from the manifest (rerun scripts/vendor_web.py)")
    extra = sorted(str(p.relative_to(vendor_dir)) for p in vendor_dir.rglob("*")
                   if p.is_file() and p != manifest_path and str(p.relative_to(vendor_dir)) not in listed)
    problems += [f"{name}: not in the manifest" for name in extra]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vendor_web.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="verify the committed files against the manifest, offline (exit 1 when not)")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for problem in problems:
            print(f"vendor_web: {problem}", file=sys.stderr)
        return 1 if problems else 0
    try:
        manifest = vendor()
    except (VendorError, OSError) as exc:
        print(f"vendor_web: {exc}", file=sys.stderr)
        return 1
    for package, entry in manifest["packages"].items():  # type: ignore[union-attr]
        print(f"{package}@{entry['version']}  {entry['integrity']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
