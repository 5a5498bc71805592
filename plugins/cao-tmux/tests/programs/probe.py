"""A test agent: puts its terminal in raw mode and appends every byte it receives to a log file.

Usage: probe.py LOG [--bracketed]. With --bracketed it first asks for bracketed paste (ESC[?2004h),
as agent TUIs do. For each bracketed paste it receives it prints ``paste <bytes> <sha256 prefix>``;
for other input ``keys <repr>``, so tests can wait on the screen and then check the log exactly.
"""

import hashlib
import os
import sys
import tty

START, END = b"\x1b[200~", b"\x1b[201~"


def main() -> None:
    log_path = sys.argv[1]
    tty.setraw(0)
    if "--bracketed" in sys.argv:
        os.write(1, b"\x1b[?2004h")
    os.write(1, b"probe ready\r\n")
    pending = b""
    with open(log_path, "ab", buffering=0) as log:
        while True:
            data = os.read(0, 65536)
            if not data:
                return
            log.write(data)
            pending += data
            while pending:
                if pending.startswith(START):
                    end = pending.find(END)
                    if end < 0:
                        break
                    body = pending[len(START) : end]
                    digest = hashlib.sha256(body).hexdigest()[:12]
                    os.write(1, f"paste {len(body)} {digest}\r\n".encode())
                    pending = pending[end + len(END) :]
                    continue
                cut = pending.find(START)
                keys, pending = (pending, b"") if cut < 0 else (pending[:cut], pending[cut:])
                os.write(1, f"keys {keys!r}\r\n".encode())


main()
