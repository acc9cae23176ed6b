#!/usr/bin/env python3
"""Faults in a distributed run (docs/distributed.md#faults): fashion_mlp on
2 ranks under mpirun, the cpu target, synthetic data.

  test_faults.py TCC WORK

- a rank that hangs (SIGSTOP), rank 1 and then rank 0: the other names it
  in one `error:` line after --comm-timeout and the job ends well within
  a bound; the --checkpoint-every file stays a valid, resumable checkpoint;
- a rank killed (SIGKILL), rank 1 and then rank 0 (the one that writes the
  checkpoints): mpirun ends the job, the checkpoint stays valid;
- SIGTERM to one rank: every rank stops after the same step and exits 143,
  rank 0 saves once, and the file equals the one-process run's after as
  many steps; SIGINT: 130;
- SIGTERM to mpirun itself: the job ends (Open MPI sends the ranks SIGTERM
  after a second and SIGKILL a second later); a --save it wrote is valid;
- a diverging step (lr 1e30): every rank exits 1, one `error:` line,
  no MPI_Abort;
- --comm-timeout values: one `error:` line for a bad one; a one-process
  trainer warns that it has no effect.
Every wait has a generous bound; nothing depends on the machine's speed
but those bounds. Exit 77 (skipped) without Open MPI.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_ranks  # noqa: E402  (the helpers: check, mpirun, run, prepare)
from test_ranks import FAILURES, ROOT, check, compare_trainers, mpirun, run  # noqa: E402

TIMEOUT = 10     # --comm-timeout of the hang cases, seconds
BOUND = 120      # a job must end this long after the fault, seconds
EPOCHS = "100000"  # runs that last until the fault ends them
# Each rank's exit status, written by a wrapper that outlives mpirun's
# SIGTERM to it (mpirun ends the others once one exits non-zero).
WRAPPER = 'trap "" TERM INT; "$@"; s=$?; echo $s > "$STATUS_DIR/$OMPI_COMM_WORLD_RANK"; exit $s'


def error_lines(text):
    return [line for line in text.splitlines() if line.startswith("error:")]


class Job:
    """mpirun and its ranks, started in the background."""

    def __init__(self, cmd, exe, work, name):
        self.exe = exe
        self.out = open(os.path.join(work, name + ".out"), "w+")
        self.err = open(os.path.join(work, name + ".err"), "w+")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err, text=True)
        self.ranks = {}

    def find_ranks(self, n, bound=60):
        """rank -> pid of the trainer processes under mpirun."""
        deadline = time.time() + bound
        while len(self.ranks) < n and time.time() < deadline and self.proc.poll() is None:
            for pid in descendants(self.proc.pid):
                info = process_info(pid)
                if info and info[0] == self.exe and info[1] is not None:
                    self.ranks[info[1]] = pid
            time.sleep(0.1)
        return check(len(self.ranks) == n, f"found {len(self.ranks)} of the {n} ranks' processes")

    def wait(self, bound=BOUND):
        """mpirun's exit status and the seconds it took; None if it ran past `bound`."""
        start = time.time()
        try:
            self.proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            self.cleanup()
            return None, bound
        return self.proc.returncode, time.time() - start

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def cleanup(self):
        """Whatever is left of the job, stopped ranks too, ends."""
        for pid in self.ranks.values():
            info = process_info(pid)
            if info and info[0] == self.exe:  # still this job's (not a reused pid)
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def process_info(pid):
    """(argv[0], OMPI_COMM_WORLD_RANK or None) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv0 = f.read().split(b"\0")[0].decode()
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    except OSError:
        return None
    rank = env.get(b"OMPI_COMM_WORLD_RANK")
    return argv0, int(rank) if rank is not None else None


def wait_for(what, ready, job, bound=BOUND):
    deadline = time.time() + bound
    while time.time() < deadline and job.proc.poll() is None:
        if ready():
            return True
        time.sleep(0.05)
    return check(False, f"{what}: not within {bound} s (mpirun exit {job.proc.poll()}): "
                        f"{job.stderr()[-1500:]}")


def metrics_lines(path):
    try:
        with open(path) as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def valid_checkpoint(what, exe1, data, path):
    """The file loads, and the one-process trainer resumes it for a step."""
    if not check(os.path.exists(path), f"{what}: no checkpoint '{path}'"):
        return None
    try:
        state = compare_trainers.read_safetensors(path)
    except Exception as e:  # noqa: BLE001 (any failure to read is the finding)
        check(False, f"{what}: the checkpoint does not load: {e}")
        return None
    r = run([exe1, "--data", data, "--resume", path, "--steps", "1", "--quiet"])
    check(r.returncode == 0, f"{what}: resuming the checkpoint: exit {r.returncode}: "
                             f"{r.stderr.strip()[-800:]}")
    return state


def hung_rank(exe2, exe1, data, work, rank):
    """SIGSTOP on `rank`: the other names it after --comm-timeout."""
    what = f"rank {rank} stopped (SIGSTOP)"
    save = os.path.join(work, f"hung{rank}.safetensors")
    job = Job(mpirun(2) + [exe2, "--data", data, "--epochs", EPOCHS, "--seed", "3",
                           "--save", save, "--checkpoint-every", "4",
                           "--comm-timeout", str(TIMEOUT), "--quiet"], exe2, work, f"hung{rank}")
    try:
        if not job.find_ranks(2) or not wait_for(what + ": a first checkpoint",
                                                 lambda: os.path.exists(save), job):
            return
        os.kill(job.ranks[rank], signal.SIGSTOP)
        status, seconds = job.wait()
        err = job.stderr()
        errors = error_lines(err)
        check(status not in (None, 0), f"{what}: mpirun exit {status} after {seconds:.0f} s")
        check(len(errors) == 1 and errors[0].startswith(
                  f"error: rank {rank} did not reach collective ") and
              f"within {TIMEOUT} s: it died or hangs" in errors[0] and
              "raise --comm-timeout" in errors[0] and f"--save '{save}'" in errors[0],
              f"{what}: one error line naming rank {rank}: {err[-1500:]}")
        print(f"{what}: the job ended {seconds:.1f} s later (--comm-timeout {TIMEOUT}): "
              f"{errors[0] if errors else ''}", flush=True)
    finally:
        job.cleanup()
    valid_checkpoint(what, exe1, data, save)


def killed_rank(exe2, exe1, data, work, rank):
    """SIGKILL on `rank`: mpirun ends the others."""
    what = f"rank {rank} killed (SIGKILL)"
    save = os.path.join(work, f"killed{rank}.safetensors")
    job = Job(mpirun(2) + [exe2, "--data", data, "--epochs", EPOCHS, "--seed", "3",
                           "--save", save, "--checkpoint-every", "4", "--quiet"],
              exe2, work, f"killed{rank}")
    try:
        if not job.find_ranks(2) or not wait_for(what + ": a first checkpoint",
                                                 lambda: os.path.exists(save), job):
            return
        os.kill(job.ranks[rank], signal.SIGKILL)
        status, seconds = job.wait()
        check(status not in (None, 0), f"{what}: mpirun exit {status} after {seconds:.0f} s")
        print(f"{what}: the job ended {seconds:.1f} s later, mpirun exit {status}", flush=True)
    finally:
        job.cleanup()
    valid_checkpoint(what, exe1, data, save)


def compare_states(what, a, b):
    """Every tensor within 1e-4 of its max (test_ranks.py's bound), the step
    exactly; the largest difference."""
    if not check(sorted(a) == sorted(b), f"{what}: other tensors: {sorted(set(a) ^ set(b))}"):
        return None
    worst = 0.0
    for name in a:
        x, y = a[name].astype("float64"), b[name].astype("float64")
        if not check(x.shape == y.shape, f"{what}: tensor {name} has shape {x.shape}, "
                                         f"the one-process run's {y.shape}"):
            continue
        difference = abs(x - y).max() / max(abs(y).max(), 1e-30) if x.size else 0.0
        check(difference <= (0 if name == "step" else 1e-4),
              f"{what}: tensor {name} differs from the one-process run's by {difference:.2e}")
        worst = max(worst, difference)
    return worst


def signalled_rank(exe2, exe1, data, work, rank, sig):
    """`sig` to one rank: every rank stops after the same step, rank 0 saves once."""
    name = signal.Signals(sig).name
    what = f"{name} to rank {rank}"
    tag = f"{name.lower()}{rank}"
    save, metrics = (os.path.join(work, f"{tag}.{ext}") for ext in ("safetensors", "jsonl"))
    statuses = os.path.join(work, f"{tag}-status")
    os.makedirs(statuses, exist_ok=True)
    job = Job(mpirun(2, "-x", "STATUS_DIR=" + statuses) +
              ["sh", "-c", WRAPPER, "sh", exe2, "--data", data, "--epochs", EPOCHS,
               "--seed", "3", "--save", save, "--metrics", metrics, "--log-every", "8",
               "--quiet"], exe2, work, tag)
    try:
        if not job.find_ranks(2) or not wait_for(what + ": a first metrics record",
                                                 lambda: metrics_lines(metrics) > 0, job):
            return
        os.kill(job.ranks[rank], sig)
        status, seconds = job.wait()
    finally:
        job.cleanup()
    err = job.stderr()
    code = 128 + sig
    ranks = {}
    for r in (0, 1):
        try:
            with open(os.path.join(statuses, str(r))) as f:
                ranks[r] = int(f.read())
        except (OSError, ValueError):
            ranks[r] = None
    check(status == code and ranks == {0: code, 1: code},
          f"{what}: mpirun exit {status}, the ranks {ranks}, expected {code}: {err[-1500:]}")
    saved = [line for line in err.splitlines() if line.startswith(f"interrupted by {name}")]
    if not check(len(saved) == 1 and f"saved the state to '{save}'" in saved[0] and
                 "resume with: mpirun -np 2 " in saved[0] and not error_lines(err),
                 f"{what}: one line of the save by rank 0: {err[-1500:]}"):
        return
    step = int(saved[0].split(" after step ")[1].split()[0])
    state = valid_checkpoint(what, exe1, data, save)
    print(f"{what}: every rank exited {code} after step {step}, saved once", flush=True)
    if state is None or not check(int(state["step"].reshape(-1)[0]) == step,
                                  f"{what}: the checkpoint's step is {state['step']}, not {step}"):
        return
    if sig == signal.SIGTERM:
        one = os.path.join(work, f"{tag}-one.safetensors")
        r = run([exe1, "--data", data, "--epochs", EPOCHS, "--seed", "3", "--steps", str(step),
                 "--save", one, "--quiet"])
        if check(r.returncode == 0, f"{what}: the one-process run: {r.stderr[-800:]}"):
            worst = compare_states(what, state, compare_trainers.read_safetensors(one))
            if worst is not None:
                print(f"{what}: the checkpoint vs a one-process run of {step} steps: "
                      f"largest difference {worst:.2e} of a tensor's max", flush=True)


def signalled_mpirun(exe2, exe1, data, work):
    """SIGTERM to mpirun: Open MPI ends the job (SIGTERM to the ranks a second
    later, SIGKILL a second after that); what rank 0 saved meanwhile is valid."""
    what = "SIGTERM to mpirun"
    save, metrics = (os.path.join(work, "mpirun-term." + ext) for ext in ("safetensors", "jsonl"))
    job = Job(mpirun(2) + [exe2, "--data", data, "--epochs", EPOCHS, "--seed", "3",
                           "--save", save, "--metrics", metrics, "--log-every", "8", "--quiet"],
              exe2, work, "mpirun-term")
    try:
        if not job.find_ranks(2) or not wait_for(what + ": a first metrics record",
                                                 lambda: metrics_lines(metrics) > 0, job):
            return
        job.proc.send_signal(signal.SIGTERM)
        status, seconds = job.wait()
    finally:
        job.cleanup()
    check(status not in (None, 0), f"{what}: mpirun exit {status}")
    saved = os.path.exists(save)
    if saved:
        valid_checkpoint(what, exe1, data, save)
    print(f"{what}: the job ended {seconds:.1f} s later, mpirun exit {status}; rank 0 "
          f"{'saved' if saved else 'did not save'} before the SIGKILL", flush=True)


def diverging(tcc, data, work):
    """lr 1e30: the loss is NaN on the global totals; every rank exits 1."""
    what = "a diverging step"
    model = json.load(open(os.path.join(ROOT, "examples", "fashion_mlp.json")))
    model["name"] = "diverging_mlp"
    model["train"]["optimizer"] = {"type": "sgd", "lr": 1e30}
    model["train"].pop("schedule")
    path, exe = os.path.join(work, "diverging.json"), os.path.join(work, "mlp-diverging")
    with open(path, "w") as f:
        json.dump(model, f)
    r = run([tcc, "compile", path, "--ranks=2", "-o", exe])
    if not check(r.returncode == 0, f"tcc compile {path}: {r.stderr.strip()}"):
        return
    statuses = os.path.join(work, "diverging-status")
    os.makedirs(statuses, exist_ok=True)
    save = os.path.join(work, "diverging.safetensors")
    r = run(mpirun(2, "-x", "STATUS_DIR=" + statuses) +
            ["sh", "-c", WRAPPER, "sh", exe, "--data", data, "--steps", "20", "--save", save],
            timeout=BOUND)
    ranks = sorted(os.listdir(statuses))
    codes = [open(os.path.join(statuses, r_)).read().strip() for r_ in ranks]
    errors = error_lines(r.stderr)
    check(r.returncode == 1 and ranks == ["0", "1"] and codes == ["1", "1"] and
          len(errors) == 1 and "training diverged" in errors[0] and
          "MPI_ABORT" not in r.stderr and not os.path.exists(save),
          f"{what}: mpirun exit {r.returncode}, the ranks {dict(zip(ranks, codes))}: "
          f"{r.stderr[-1500:]}")
    print(f"{what}: every rank exited 1, one error line: {errors[0] if errors else ''}",
          flush=True)


def timeout_values(exe2, exe1, data):
    for bad in ("0", "-3", "abc", "nan", "inf", ""):
        r = run([exe1, "--data", data, "--steps", "1", "--comm-timeout=" + bad])
        check(r.returncode == 1 and r.stderr.startswith(
                  "error: --comm-timeout: expected a positive number of seconds") and
              r.stderr.count("\n") == 1,
              f"--comm-timeout={bad!r}: exit {r.returncode}: {r.stderr.strip()}")
    r = run(mpirun(2) + [exe2, "--data", data, "--steps", "1", "--comm-timeout", "0"],
            timeout=BOUND)
    check(r.returncode == 1 and len(error_lines(r.stderr)) == 1 and
          "error: --comm-timeout: expected a positive number" in r.stderr,
          f"--comm-timeout 0 on 2 ranks: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    r = run([exe1, "--data", data, "--steps", "1", "--comm-timeout", "5", "--quiet"])
    check(r.returncode == 0 and r.stderr.startswith("warning: --comm-timeout has no effect"),
          f"--comm-timeout on one process: exit {r.returncode}: {r.stderr.strip()}")
    r = run(mpirun(2) + [exe2, "--help"], timeout=BOUND)
    check(r.returncode == 0 and "--comm-timeout SECONDS" in r.stdout and
          "default: 300" in r.stdout, f"--help on 2 ranks: {r.stdout[-800:]}{r.stderr}")


def main():
    tcc, work = sys.argv[1], sys.argv[2]
    data = test_ranks.prepare(work)
    if data is None:
        return 77
    exes = {}
    for ranks in (1, 2):
        exes[ranks] = os.path.join(work, f"mlp{ranks}")
        r = run([tcc, "compile", os.path.join(ROOT, "examples", "fashion_mlp.json"),
                 f"--ranks={ranks}", "-o", exes[ranks]])
        if r.returncode != 0 and "needs MPI" in r.stderr:
            print("SKIP: " + r.stderr.strip())
            return 77
        if not check(r.returncode == 0, f"tcc compile --ranks={ranks}: {r.stderr.strip()}"):
            return 1
    exe2, exe1 = exes[2], exes[1]

    timeout_values(exe2, exe1, data)
    for rank in (1, 0):
        hung_rank(exe2, exe1, data, work, rank)
    for rank in (1, 0):
        killed_rank(exe2, exe1, data, work, rank)
    signalled_rank(exe2, exe1, data, work, 1, signal.SIGTERM)
    signalled_rank(exe2, exe1, data, work, 0, signal.SIGINT)
    signalled_mpirun(exe2, exe1, data, work)
    diverging(tcc, data, work)
    print("FAIL" if FAILURES else "PASS")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
