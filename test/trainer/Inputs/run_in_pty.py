"""Runs a command with stdout and stderr on a pseudo-terminal (as in a
terminal session) and prints what it wrote there, with '\\r' shown as
'<CR>' so FileCheck can see the progress line being rewritten in place.
Exits with the command's status.

usage: run_in_pty.py COMMAND [ARG...]
"""
import os
import pty
import sys

chunks = []


def read(fd):
    data = os.read(fd, 65536)
    chunks.append(data)
    return data


status = pty.spawn(sys.argv[1:], read)
text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
sys.stdout.write(text.replace("\r", "<CR>"))
sys.exit(os.waitstatus_to_exitcode(status))
