#!/usr/bin/env python3
"""exit-status.py N CMD...: run CMD, pass its output through, and succeed only
if it exited with status N (not merely non-zero, and not by a signal)."""
import subprocess
import sys

expected = int(sys.argv[1])
status = subprocess.run(sys.argv[2:]).returncode
if status != expected:
    print(f"exit-status.py: expected exit status {expected}, got {status}", file=sys.stderr)
    sys.exit(1)
