#!/usr/bin/env python3
"""A killed `tcc compile` leaves nothing behind (docs/reliability.md).

usage: compile_signals.py TCC MODEL.json

SIGTERM, SIGINT and SIGHUP during the trainer's C++ build: tcc dies of the
signal, the compiler's process group is gone within seconds, and neither
$TMPDIR nor -o's folder holds a temporary. SIGKILL cannot be caught: the next
compile removes what the killed one left (its pid is in the names), and
nothing of a live process. It once left the compiler running for 20 s and a
full OUT.tmp.PID beside -o, and $TMPDIR/tcc-build-* for ever.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def processes():
    """pid -> (ppid, pgid) of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                table[int(name)] = (int(fields[1]), int(fields[2]))
            except (OSError, IndexError):
                pass
    return table


def wait_for(condition, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start(tcc, model, out, env):
    """Starts a compile and returns it once its compiler runs, with the
    compiler's process group."""
    # A background job inherits SIGINT ignored (lit runs tests so), and tcc
    # rightly keeps an ignored signal ignored: this user presses Ctrl-C.
    def default_signals():
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)

    p = subprocess.Popen([tcc, "compile", model, "--target=cpu", "-o", out], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=default_signals)
    groups = []

    def compiling():
        groups[:] = [pgid for pid, (ppid, pgid) in processes().items() if ppid == p.pid]
        return bool(groups) or p.poll() is not None

    if not wait_for(compiling, 300) or p.poll() is not None:
        sys.exit("FAIL: tcc compile ended before its compiler ran: %s" % p.stderr.read())
    return p, groups[0]


def main():
    tcc, model = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="tcc-signals-")
    failures = []
    try:
        tmp, outdir = os.path.join(work, "tmp"), os.path.join(work, "out")
        os.makedirs(tmp)
        os.makedirs(outdir)
        env = dict(os.environ, TMPDIR=tmp)
        out = os.path.join(outdir, "train")
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            p, group = start(tcc, model, out, env)
            os.kill(p.pid, sig)
            p.wait(timeout=120)
            name = signal.Signals(sig).name
            if p.returncode != -sig:
                failures.append("%s: tcc exited with %s, not by the signal" % (name, p.returncode))
            if not wait_for(lambda: all(g != group for _, g in processes().values()), 60):
                failures.append("%s: the compiler's process group still runs" % name)
            left = os.listdir(tmp) + os.listdir(outdir)
            if left:
                failures.append("%s: temporaries left: %s" % (name, left))

        p, group = start(tcc, model, out, env)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        wait_for(lambda: all(g != group for _, g in processes().values()), 60)
        # What SIGKILL leaves, and what a live process (this one) owns.
        with open("%s.tmp.%d.abcdef" % (out, p.pid), "w") as f:
            f.write("a half-linked trainer")
        live = [os.path.join(tmp, "tcc-build-%d-abcdef.cpp" % os.getpid()),
                "%s.tmp.%d.abcdef" % (out, os.getpid())]
        for path in live:
            open(path, "w").close()
        left = [n for n in os.listdir(tmp) if n.startswith("tcc-build-%d-" % p.pid)]
        if not left:
            failures.append("SIGKILL left no tcc-build-%d-* to clean (the test tests nothing)"
                            % p.pid)
        r = subprocess.run([tcc, "compile", model, "--target=cpu", "-o", out], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("the compile after SIGKILL failed: %s" % r.stderr)
        expected = sorted([os.path.basename(live[0])])
        if sorted(os.listdir(tmp)) != expected:
            failures.append("after SIGKILL and a new compile, $TMPDIR holds %s, not %s"
                            % (sorted(os.listdir(tmp)), expected))
        expected = sorted(["train", os.path.basename(live[1])])
        if sorted(os.listdir(outdir)) != expected:
            failures.append("after SIGKILL and a new compile, -o's folder holds %s, not %s"
                            % (sorted(os.listdir(outdir)), expected))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
