"""Prediction accuracy against real runs on the testbed VCs (issue 5).

    .venv/bin/python bench/accuracy.py [--vcs tmpfs,disk,gluster,gluster2] [--repeat 3] [--tmpfs-runs 9]
                                       [--gluster-runs 5] [--launch-each]
                                       [--disk-mibps 60] [--gluster-rate 300mbit]
                                       [--gluster2-rate 100mbit] [--apps A,B] [--no-readme]
                                       [--bt-classes S,W] [--vendor DIR] [--keep] [--resume WORKDIR]
    .venv/bin/python bench/accuracy.py --check-builds [--apps A,B] [--resume WORKDIR]
    .venv/bin/python bench/accuracy.py --render RUN.json [--combine RUN2.json,...] [-o OUT] [--no-readme]

For each testbed VC it can start (tmpfs: a work dir in /dev/shm; the throttled
disk, testbed/disk, mounted sync; GlusterFS with one data server behind a shaped
link, and with two, testbed/gluster), it characterizes the VC once (a small
sweep, np 1 and every application's ranks, each point also with one operation per
process, and the shared points also through views of pieces; every point --repeat
times, the median). Then for each (app, size) of bench/accuracy_apps.py (six
examples at --np ranks; NAS BT-IO full and simple, class S and W, and S3D-IO
blocking and nonblocking at 32^3 and 50^3, 4 ranks, built from ../shared/vendor
into the work directory, and recorded as missing, and why, where they cannot be)
it traces the application once on tmpfs (the home cluster),
analyzes it, and for every VC: predicts offline from the VC's profile
(predicted_io_time_s; on the Gluster VCs, with rereads read from the servers instead
of the client's cache too: predicted_uncached_io_time_s), predicts from a replay of the model on the VC
(replayed_io_time_s, IOR-style repetitions in one launch, or with --launch-each each
in a launch of its own), and runs the application itself
--repeat times on the VC under the tracer (tmpfs: --tmpfs-runs times, the Gluster VCs:
--gluster-runs times, and their replays as many repetitions), its data directory on
the VC's mount. The
measured time of a phase is the median over those runs of its `io_time_s` (the
slowest process's time inside the phase's I/O calls; of a collective phase, its
calls each from the last process's entry to the last one's exit; its span `duration_s`,
which also counts the computation between the calls, is kept as
`measured_span_s`); the measured I/O time (`measured_io_time_s`, what `predict`
sums) is their sum. The
first run's `application.io_time_s` (wall clock with at least one phase in
progress) is recorded too. Errors are (x - measured) / measured. The CPU time the
hypervisor took from this machine (/proc/stat's steal) is recorded over every
application run (measured_steal_s, one per run), replay (replayed_steal_s,
modelled_steal_s) and characterization (characterize.VC.steal_s). An application
run or replay that lost 5% of its wall time or more to it is set aside and made
again, at most --steal-retries times (the last one kept whatever it lost), as
the profile leaves such passes out of its medians; what was set aside is kept in
the row (measured_set_aside, replayed_set_aside, modelled_set_aside) and its
files in the work directory's stolen/.

Rows go to bench/results/accuracy.json, the full tables to docs/accuracy.md and
a summary to the README (between their <!-- bench:accuracy --> markers). Every VC is stopped at the end, even after an
error. Needs root (loop device, network namespace, FUSE).
Scoring and combining results is in bench/accuracy_score.py, the tables in
bench/accuracy_render.py.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iomodel.replay.host import steal_s, stolen_since, until_calm
import machine_info
from accuracy_apps import BT_CLASSES, NP, PAPER_APPS, VENDOR, app_cmd, app_table, build, missing_rows, row_key
from accuracy_render import publish, render
from accuracy_score import combine, err, measure_row, record_again, score, worst_error

ROOT = Path(__file__).resolve().parent.parent
IOMODEL = [str(ROOT / ".venv" / "bin" / "iomodel")]
MiB = 1 << 20
# seconds a VC's characterization may take per repetition of its points (gluster2,
# two servers behind 100 Mbit/s links, took 1200 s with one and 4856 s with three before
# --one-stripe added about 100 points a pass)
CHAR_TIMEOUT = 2400


# The Open MPI settings of every run here (applications, profiles, replays).
# yield_when_idle: a rank waiting in MPI yields its core, which the VC's storage
# daemons (throttlefs, Gluster's client and servers) share with the ranks here.
# pml ob1: the point-to-point layer Open MPI selects here anyway; named, each launch
# skips probing the cm layer's network transports first (0.3 s of MPI_Init, which
# over a VC's 2000 profile launches is 10 minutes; no run's I/O changes).
MPI_ENV = {"OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_pml": "ob1"}


def char_args(nps, repeat, job_np=None):
    """The sweep of every VC: at 1 and each application's ranks (nps); job_np:
    characterize's --job-np where it is not the largest."""
    # --repeat: a point's time is the median of its repetitions, as a replay's and the
    # applications' are (one 7 ms tmpfs write ranged 6.3-8.4 ms over 42 repetitions);
    # passes over the whole sweep, not repetitions back to back
    return ["--sizes", "512,4k,16k,64k,256k,1m,4m,16m", "--np", ",".join(map(str, nps)),
            "--ops", "write,read,reread", "--access", "shared,unique",
            "--collective", "collective,independent", "--bytes", "16m",
            # pieces of 128 KiB too: a FUSE client sends at most 128 KiB per request, and on
            # the Gluster VCs views of smaller pieces cost 0.9 to 1.15 times contiguous
            # transfers while pieces from 128 KiB on cost about the same (docs/accuracy.md,
            # "The testbed and the early model"): the factor steps there, between 64k and 256k
            "--pieces", "16k,64k,128k,256k,1m", "--repeat", str(repeat),
            # reads, rereads and independent writes with buffers 16 B past a page too, where
            # malloc puts the examples' large buffers (btio_like's, fpp_io 256KiBx16's):
            # copies from the page cache into them are slower (bench/buffer_offset.py), and
            # through Gluster's FUSE mount each 256 KiB transfer is one request more
            "--buffer-offsets", "16",
            # on the two-server Gluster VC, the shared points again on files of one 4 MiB shard:
            # such a file sits on one server, its 16 KiB writes 7% slower than the sweep's
            # 16 MiB file's (docs/accuracy.md, "Where shards go"); the other VCs: a note
            "--one-stripe",
            # the independent points of 2 processes again computing between operations: at
            # 1 ms (about as long as a 64 KiB write's wait on the disk and Gluster) how much
            # of the applications' computing between writes each VC gives back to the
            # other's waits (the disk none, Gluster most: bench/think_time.py); at 30 us to
            # 250 us, the examples' computing between independent operations (random_io 35
            # to 65 us, fpp_io 160 to 880 us), how much slower an operation is after it (the
            # disk's rereads from the page cache: docs/accuracy.md)
            "--think", "30us,60us,250us,1ms",
            # no --random: on the testbed's disk random_io's writes cost the same in a random
            # order as in order (bench/random_order.py; docs/accuracy.md, "Random order
            # costs nothing on the disk")
            # the shared independent points of fewer processes than the largest (an
            # application's header by rank 0) launched in a job of the examples' ranks,
            # as with them alone: S3D-IO's header is then measured with 2 processes
            # holding the file, not its 4
            *(["--job-np", str(job_np)] if job_np else [])]


def sweep_nps(apps, np):
    """characterize's --np and --job-np for these apps: 1 and every app's ranks;
    --job-np the examples' ranks where the paper's take more."""
    nps = sorted({1, *(a.ranks(np) for a in apps)})
    return nps, (np if np in nps and max(nps) > np else None)


def code_version():
    """The commit the bench ran (`-dirty` with uncommitted changes), None outside git."""
    r = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                       capture_output=True, text=True)
    return r.stdout.strip() or None


def machine():
    gl = subprocess.run(["glusterfs", "--version"], capture_output=True, text=True).stdout.splitlines()
    return machine_info.machine(glusterfs=gl[0] if gl else None, python=platform.python_version())


def stolen(fn, *args, **kw):
    """fn's result, its wall time and the CPU time the hypervisor took from the
    machine while it ran (s, 10 ms ticks): on a shared host a run slowed by it
    is the machine, not the model."""
    before, t0 = steal_s(), time.monotonic()
    out = fn(*args, **kw)
    return out, time.monotonic() - t0, stolen_since(before)


# Seconds between an attempt set aside for steal and the next: the host's load
# comes in stretches (docs/accuracy.md, "The hypervisor's steal").
STEAL_PAUSE_S = 10


def sh(cmd, env, timeout=900, check=True, log=None, cwd=None):
    t0 = time.monotonic()
    # a session of its own: on a timeout the whole group goes (the mpirun and ranks of an
    # iomodel command too, which would otherwise keep the VC's mount busy for its stop)
    with subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.PIPE, cwd=cwd,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as p:
        try:
            out, errs = p.communicate(timeout=timeout)
        except BaseException:  # a timeout, or the bench interrupted (Ctrl-C) or terminated
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:  # the group had already ended
                pass
            p.communicate()
            # the group's last processes must be gone before the VC's stop unmounts
            for _ in range(100):
                try:
                    os.killpg(p.pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            raise
    p = subprocess.CompletedProcess(p.args, p.returncode, out, errs)
    if log is not None:
        where = f"(in {cwd}) " if cwd else ""
        log.write(f"$ {where}{' '.join(map(str, cmd))}  [{time.monotonic() - t0:.1f} s, rc {p.returncode}]\n"
                  f"{p.stdout[-3000:]}{p.stderr[-3000:]}\n")
        log.flush()
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd[:6]))}... failed ({p.returncode}):\n"
                           f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


class VC:
    """A testbed VC: start/stop, its cluster YAML and environment."""

    def __init__(self, name, work, env, args):
        self.name, self.env, self.script = name, dict(env), name
        self.started = False
        # runs of each application and repetitions of each replay: tmpfs's phases last
        # milliseconds and its runs are cheap but jittery (one run in ten of s3d_like 48^3
        # took 15-30% longer), so it gets more of them
        # BT-IO's rereads on Gluster fall in one of two modes by a race in Gluster's FUSE
        # client (19% of the runs on the two-server VC take the slow one), which a median
        # of 3 lands in about one row in ten, a median of 5 one in twenty
        self.runs = {"tmpfs": args.tmpfs_runs, "gluster": args.gluster_runs,
                     "gluster2": args.gluster_runs}.get(name, args.repeat)
        # a replay's repetitions in one launch (IOR -i), or with --launch-each each in
        # a launch of its own, as each application run is: on tmpfs a launch
        # of one repetition took 8% to 14% longer than one of nine, by hand in ten
        # rounds with the application, whose median was nearer the one launch's
        self.launches = self.runs if args.launch_each else 1
        base = work / "vc" / name
        base.mkdir(parents=True, exist_ok=True)
        self.yaml = base / f"testbed-{name}.yaml"
        if name == "tmpfs":
            if self.yaml.exists():   # --resume: the same work dir, so the same runs' keys
                wd = next(l.split(":", 1)[1].strip() for l in self.yaml.read_text().splitlines()
                          if l.strip().startswith("workdir:"))
                self.mount = Path(wd).parent
                self.mount.mkdir(parents=True, exist_ok=True)
            else:
                self.mount = Path(tempfile.mkdtemp(prefix="iomodel-acc-tmpfs-", dir="/dev/shm"))
            text = (ROOT / "cluster" / "shipped" / "local.yaml").read_text()
            text = (text.replace("name: local", "name: testbed-tmpfs")
                    .replace("workdir: /tmp/iomodel-replay", f"workdir: {self.mount}/work")
                    .replace("description: This machine (one node, 2 cores), for local replays",
                             "description: tmpfs (/dev/shm) on this machine, the home cluster"))
            self.network = "-"
        elif name == "disk":
            self.mount = Path("/tmp/iomodel-acc/disk")
            bps = int(args.disk_mibps * MiB)
            self.env.update(IOMODEL_TESTBED_STATE=str(work / "state"), IOMODEL_DISK_MOUNT=str(self.mount),
                            IOMODEL_DISK_SIZE="1G", IOMODEL_DISK_WRITE_BPS=str(bps),
                            IOMODEL_DISK_READ_BPS=str(bps))
            src = "testbed-disk.yaml"
            text = (ROOT / "testbed" / src).read_text().replace(
                "/tmp/iomodel-testbed/disk/work", f"{self.mount}/work").replace(
                "throttled to 100 MiB/s", f"throttled to {args.disk_mibps:g} MiB/s")
            self.network = f"throttlefs {args.disk_mibps:g} MiB/s"
        elif name in ("gluster", "gluster2"):
            servers, rate = (1, args.gluster_rate) if name == "gluster" else (2, args.gluster2_rate)
            self.mount = Path(f"/tmp/iomodel-acc/{name}")
            self.script = "gluster"
            self.env.update(IOMODEL_TESTBED_STATE=str(work / "state"), IOMODEL_GLUSTER_MOUNT=str(self.mount),
                            IOMODEL_GLUSTER_RATE=rate, IOMODEL_GLUSTER_SERVERS=str(servers))
            src = "testbed-gluster.yaml" if servers == 1 else "testbed-gluster2.yaml"
            default = 'network: "1 Gbit/s"' if servers == 1 else 'network: "300 Mbit/s"'
            text = (ROOT / "testbed" / src).read_text().replace(
                "/tmp/iomodel-testbed/gluster/work", f"{self.mount}/work").replace(
                default, f'network: "{rate}"').replace(default.split('"')[1] + " htb", f"{rate} htb")
            self.network = f"{servers} server{'s' * (servers > 1)}, htb {rate} each, TCP cubic"
        else:
            raise ValueError(name)
        if name != "tmpfs":   # the file's header comment describes its defaults, not this run's
            body = text[text.index("format:"):]
            text = f"# {src}, as run by bench/accuracy.py: {self.network}\n{body}"
        self.yaml.write_text(text)
        self.cluster_name = next(l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("name:"))

    def start(self, log):
        if self.name != "tmpfs":
            self.started = True
            sh(["bash", ROOT / "testbed" / self.script / "start.sh"], self.env, timeout=120, log=log)
        (self.mount / "work").mkdir(parents=True, exist_ok=True)

    def stop(self, log):
        if self.name == "tmpfs":
            shutil.rmtree(self.mount, ignore_errors=True)
        elif self.started:
            sh(["bash", ROOT / "testbed" / self.script / "stop.sh", "--purge"], self.env, timeout=180,
               check=False, log=log)
            self.started = False

    def run(self, cmd, **kw):
        return sh(cmd, self.env, **kw)


def trace_and_model(runner, cmd, tdir, mpath, log, cwd=None):
    """The application traced (in directory cwd) and its model: (model, wall_s,
    steal_s) of the traced run."""
    shutil.rmtree(tdir, ignore_errors=True)
    _, wall, st = stolen(runner, [*IOMODEL, "trace", "-o", tdir, "--", *cmd], log=log, cwd=cwd)
    sh([*IOMODEL, "analyze", tdir, "-o", mpath, "-q"], os.environ, log=log)
    return json.loads(Path(mpath).read_text()), wall, st


def reuse_or_trace(runner, cmd_cwd, tdir, mpath, log, resume):
    """trace_and_model of app_cmd's (command, directory), or with --resume the
    model a run before made (its wall time and steal unknown)."""
    if resume and Path(mpath).is_file():
        return json.loads(Path(mpath).read_text()), None, None
    return trace_and_model(runner, cmd_cwd[0], tdir, mpath, log, cwd=cmd_cwd[1])


def set_aside(work, *paths, what):
    """until_calm's on_stolen: attempt j's files into work/stolen/ (NAME.j), and a line saying so."""
    def move(j, wall, steal):
        (work / "stolen").mkdir(exist_ok=True)
        for p in paths:
            if p.exists():
                p.rename(work / "stolen" / f"{p.name}.{j}")
        print(f"  {what}: lost {steal:.2f} s of {wall:.2f} s to steal, set aside", flush=True)
    return move


def own_computing_points(vc, model, mpath, cdir, args, log, paper=False):
    """A model whose collective phases computed before their operations (a
    solver's dumps: cluster/characterize.py's model_points gives it points
    computing that long) gets `characterize --for` it on the VC, beside the
    sweep, whose --think points are microseconds and independent: the
    profile's directory, or None.  So does every model of the paper's
    applications (`paper`), as their users characterize for their own code
    (BT-IO simple's 240-byte writes are no size of the sweep)."""
    from iomodel.cluster.characterize import model_points
    if not getattr(args, "for_every_model", False) and not paper and \
            not any(pt.get("think_s") and pt["collective"] for pt in model_points([model])):
        return None
    stolen(vc.run, [*IOMODEL, "characterize", "--vc", vc.yaml, "--for", mpath, "--bytes", "16m",
                    "--repeat", str(args.repeat), "-o", cdir], log=log, timeout=CHAR_TIMEOUT)
    return cdir


def predict(model_path, vc, extra, log):
    p = sh([*IOMODEL, "predict", model_path, "--vc", vc.yaml, *extra, "--json"], vc.env, log=log)
    return json.loads(p.stdout)


def remeasure(result, work):
    """Analyze every trace a kept run (--keep) saved in `work` again (after a
    change to the analyzer) and measure every row again from those models."""
    def model(trace):
        out = trace.with_suffix(".json")
        sh([*IOMODEL, "analyze", trace, "-o", out, "-q"], os.environ)
        return json.loads(out.read_text())
    for r in result["rows"]:
        if r.get("error"):
            continue
        key = row_key(r["app"], r["size"])
        model(work / f"{key}.home.trace")       # what --repredict predicts from
        measure_row(r, [model(t) for t in sorted(work.glob(f"{key}.{r['vc']}.*.trace"),
                                                 key=lambda t: int(t.suffixes[-2][1:]))])
    result["remeasured"] = (f"{datetime.date.today().isoformat()}: every trace analyzed again and the "
                            f"rows measured again by {code_version()} (bench/accuracy.py --render --remeasure)")
    return result


def uncached(pred_phase):
    """A reread phase's prediction read from the servers instead (predict's
    time_uncached_s), where predict gives one."""
    t = pred_phase.get("time_uncached_s")
    return {} if t is None else {"predicted_uncached_s": t}


def repredict(result, work):
    """Predict every row again from what a kept run (--keep) saved in `work`: the
    home model and the VC's description and profile (predictions need no run)."""
    for r in result["rows"]:
        if r.get("error"):
            continue
        key = row_key(r["app"], r["size"])
        yaml = work / "vc" / r["vc"] / f"testbed-{r['vc']}.yaml"
        name = next(l.split(":", 1)[1].strip() for l in yaml.read_text().splitlines() if l.startswith("name:"))
        own = work / f"char-for-{r['vc']}-{key}" / "profile.parquet"      # own_computing_points'
        own = ["--profile", f"{name}={own}"] if own.exists() else []
        p = sh([*IOMODEL, "predict", work / f"{key}.home.json", "--vc", yaml, "--profile",
                f"{name}={work / ('char-' + r['vc']) / 'profile.parquet'}", *own, "--json"], os.environ)
        pred = json.loads(p.stdout)
        for ph, pp in zip(r["phases"], pred["phases"]):
            ph.update(predicted_s=pp["time_s"], error_predicted=err(pp["time_s"], ph["measured_s"]),
                      predict_note=pp.get("note"), predicted_passes_s=pp.get("time_passes_s"), **uncached(pp))
        again = work / f"char-{r['vc']}-again" / "profile.parquet"
        if again.exists():
            p2 = json.loads(sh([*IOMODEL, "predict", work / f"{key}.home.json", "--vc", yaml, "--profile",
                                f"{name}={again}", *own, "--json"], os.environ).stdout)
            record_again(r, p2["io_time_s"], pred["io_time_s"])
        r.update(predicted_io_time_s=pred["io_time_s"],
                 predicted_passes_io_time_s=pred.get("io_time_passes_s"),
                 predicted_uncached_io_time_s=pred.get("io_time_uncached_s"),
                 error_predicted=err(pred["io_time_s"], r["measured_io_time_s"]),
                 worst_phase_error_predicted=worst_error(r["phases"], "error_predicted"),
                 predict_notes=sorted({p.get("note", "") for p in pred["phases"]})[:5])
    result["repredicted"] = (f"{datetime.date.today().isoformat()}: predicted_* recomputed by {code_version()} "
                             "from the run's saved models and profiles (bench/accuracy.py --render --repredict)")
    return result


def finish(result, args):
    score(result)
    Path(args.o).parent.mkdir(parents=True, exist_ok=True)
    Path(args.o).write_text(json.dumps(result, indent=1) + "\n")
    text = render(result)
    print("\n" + text)
    if not args.no_readme:
        publish(result, args.block)


def recheck(vc, work, char, timeout, homes, rows, profiles, log):
    """Characterize the VC again, now that its applications have run, and predict
    every row of it from that second profile too: a VC whose own speed moves
    between the two (tmpfs, at memory speed on shared cores) moves every estimate
    made on it by as much, whatever the model."""
    t0 = time.monotonic()
    cdir = work / f"char-{vc.name}-again"
    _, _, st = stolen(vc.run, [*IOMODEL, "characterize", "--vc", vc.yaml, "--backend", "builtin", *char,
                               "-o", cdir], log=log, timeout=timeout)
    profiles[vc.name].update(again_seconds=round(time.monotonic() - t0, 1), again_steal_s=st)
    for r in rows:
        if r["vc"] != vc.name or r.get("error"):
            continue
        _, mpath, _ = homes[(r["app"], r["size"])]
        own = ["--profile", f"{vc.cluster_name}={r['for_profile']}/profile.parquet"] if r.get("for_profile") else []
        pred = predict(mpath, vc, ["--profile", f"{vc.cluster_name}={cdir}/profile.parquet", *own], log)
        record_again(r, pred["io_time_s"], r["predicted_io_time_s"])
    print(f"[{vc.name}] characterized again in {time.monotonic() - t0:.0f} s", flush=True)


def check_builds(apps, progs, why, env, np, log):
    """--check-builds: each application that built run once, untraced, in a
    directory in /dev/shm at its ranks, and the files it wrote there; the number
    missing, failed or writing nothing."""
    bad = 0
    for a in apps:
        if a.prog in why:
            print(f"{a.app} {a.size}: MISSING, {why[a.prog]}", flush=True)
            bad += 1
            continue
        d = Path(tempfile.mkdtemp(prefix="iomodel-acc-check-", dir="/dev/shm"))
        try:
            cmd, cwd = app_cmd(progs, a, d, np)
            t0 = time.monotonic()
            p = sh(cmd, env, check=False, log=log, cwd=cwd)
            files = sorted(f for f in d.rglob("*") if f.is_file())
            print(f"{a.app} {a.size}: np {a.ranks(np)}{f', in {cwd}' if cwd else ''}, exit {p.returncode}, "
                  f"{time.monotonic() - t0:.1f} s, wrote "
                  + (", ".join(f"{f.relative_to(d)} ({f.stat().st_size} B)" for f in files) or "nothing"),
                  flush=True)
            bad += p.returncode != 0 or not files
        finally:
            shutil.rmtree(d, ignore_errors=True)
    return bad


def main():
    # kill or a scheduler's time limit (SIGTERM) unwinds as Ctrl-C does: the finally
    # blocks end the running command's process group and stop every VC started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vcs", default="tmpfs,disk,gluster,gluster2")
    ap.add_argument("--apps", default=None, help="comma-separated app names (default: all)")
    ap.add_argument("--bt-classes", default="S,W", help="NPB classes of the BT-IO rows (default: %(default)s)")
    ap.add_argument("--vendor", type=Path, default=VENDOR,
                    help="where the archives of NAS BT-IO and S3D-IO are (default: ../shared/vendor beside "
                         "the checkout); without them their rows are recorded as missing")
    ap.add_argument("--check-builds", action="store_true",
                    help="only build the applications (into --resume's work directory, or a new one) and "
                         "run each (application, size) once, untraced, in /dev/shm at its ranks, listing "
                         "the files it wrote")
    ap.add_argument("--disk-mibps", type=float, default=60)
    ap.add_argument("--gluster-rate", default="300mbit", help="the one-server Gluster VC's link")
    ap.add_argument("--gluster2-rate", default="100mbit", help="each link of the two-server Gluster VC")
    ap.add_argument("--np", type=int, default=NP, help="ranks of the example applications' runs (default: "
                    "%(default)s; NAS BT-IO and S3D-IO run on 4: 2x2, 2x2x1)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each application on each VC (per phase the median), and IOR "
                         "repetitions of each replay and of each profile point (-i, their median)")
    ap.add_argument("--tmpfs-runs", type=int, default=9,
                    help="--repeat for the tmpfs VC's application runs and replays, whose phases "
                         "last milliseconds (default: %(default)s; its profile keeps --repeat)")
    ap.add_argument("--gluster-runs", type=int, default=5,
                    help="--repeat for both Gluster VCs' application runs and replays, where "
                         "BT-IO's rereads take one of two modes by a race in the FUSE client "
                         "(default: %(default)s; their profiles keep --repeat)")
    ap.add_argument("--launch-each", action="store_true",
                    help="each replay repetition in a launch of its own (`replay --launches` as "
                         "many), as each application run is, rather than all in one (IOR -i N)")
    ap.add_argument("--steal-retries", type=int, default=3, metavar="N",
                    help="an application run or replay that lost 5%% of its wall time or more to "
                         f"the hypervisor (steal) is made again, at most N times, {STEAL_PAUSE_S} s "
                         "apart (default: %(default)s; 0: never)")
    ap.add_argument("--recheck", default="tmpfs", metavar="VCS",
                    help="VCs characterized a second time after their applications ran, every row "
                         "predicted from both profiles: how far the VC itself moved meanwhile "
                         "(default: %(default)s; '' for none)")
    ap.add_argument("--no-readme", action="store_true",
                    help="do not put the tables into the README and docs/accuracy.md")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--block", default="accuracy", metavar="KEY",
                    help="the README's and docs/accuracy.md's <!-- bench:KEY --> blocks the tables go "
                         "into (default: %(default)s; accuracy-real: a sitting of the paper's "
                         "applications alone)")
    ap.add_argument("--for-every-model", action="store_true",
                    help="characterize --for every model on every VC (its own points: sizes, views' pieces, "
                         "buffers), not only those that compute before collective phases")
    ap.add_argument("--resume", metavar="WORKDIR",
                    help="go on in the work directory of a bench that stopped (implies --keep): its "
                         "traces and models are reused, characterize and replay go on from their "
                         "results.json, the rest is measured anew")
    ap.add_argument("-o", default=str(ROOT / "bench" / "results" / "accuracy.json"))
    ap.add_argument("--render", metavar="JSON", help="only score and render results already measured "
                    "(e.g. bench/results/accuracy.json) to -o and the README")
    ap.add_argument("--combine", metavar="JSON[@VC+VC],...", help="with --render: the rows of these "
                    "results too (of only the VCs after @), other VCs measured on the same machine "
                    "with the same sweep (less --think's points, said in the footnote) in runs of "
                    "their own")
    ap.add_argument("--repredict", metavar="WORKDIR", help="with --render: predict every row again from "
                    "the models and profiles a --keep run left in WORKDIR (after a change to predict)")
    ap.add_argument("--remeasure", metavar="WORKDIR", help="with --render: analyze every trace a --keep "
                    "run left in WORKDIR again and measure every row again (after a change to analyze)")
    args = ap.parse_args()
    if args.combine and not args.render:
        ap.error("--combine needs --render")
    if args.steal_retries < 0:
        ap.error(f"--steal-retries {args.steal_retries}: expected 0 or more")
    classes = args.bt_classes.split(",")
    if not set(classes) <= set(BT_CLASSES):
        ap.error(f"--bt-classes {args.bt_classes}: expected some of {','.join(BT_CLASSES)}")
    table = app_table(classes)
    unknown = sorted(set(args.apps.split(",")) - {a.app for a in table}) if args.apps else []
    if unknown:
        ap.error(f"--apps: no application {', '.join(unknown)} (there are "
                 f"{', '.join(dict.fromkeys(a.app for a in table))})")
    apps = [a for a in table if args.apps is None or a.app in args.apps.split(",")]
    if args.render:
        result = json.loads(Path(args.render).read_text())
        if args.combine:
            combine(result, args.combine.split(","))
        if args.remeasure:
            remeasure(result, Path(args.remeasure))
        if args.repredict:
            repredict(result, Path(args.repredict))
        return finish(result, args)
    if os.geteuid() != 0 and not args.check_builds:
        sys.exit("bench/accuracy.py needs root (loop device, network namespace, FUSE)")
    # the applications' MPI-IO: s3d_like's check of its files with stdio is no part of
    # the workload (and the tracer then records as it did before it followed POSIX)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", **MPI_ENV,
           "IOMODEL_POSIX": "0"}
    if args.resume:      # what a stopped bench recorded is reused, the rest measured
        work = Path(args.resume)
        if not (work / "log.txt").is_file():
            sys.exit(f"bench/accuracy.py: {work}: not a work directory of this bench (no log.txt)")
        args.keep = True
    else:
        work = Path(tempfile.mkdtemp(prefix="iomodel-accuracy-", dir="/tmp"))
    work = work.resolve()        # the paper's applications run in directories of their own
    log = open(work / "log.txt", "a")
    print(f"work dir {work} (log: {work}/log.txt)")
    bindir = work / "bin"
    bindir.mkdir(exist_ok=True)
    t0 = time.monotonic()
    progs, why = build(apps, bindir, args.vendor, lambda c, cwd: sh(c, env, log=log, cwd=cwd, timeout=1800))
    print(f"built in {time.monotonic() - t0:.0f} s")

    def leave(status):      # nothing measured: the work directory goes, unless kept
        log.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        sys.exit(status)
    if args.check_builds:
        leave(1 if check_builds(apps, progs, why, env, args.np, log) else 0)
    missing = missing_rows(apps, why, args.np, args.vcs.split(","))
    for m in missing:
        print(f"{m['app']} {m['size']}: not run, {m['why']}", flush=True)
    apps = [a for a in apps if a.prog not in why]
    if not apps:
        leave("bench/accuracy.py: no application to run (" + "; ".join(
            f"{m['app']} {m['size']}: {m['why']}" for m in missing) + ")")
    vcs = [VC(n, work, env, args) for n in args.vcs.split(",")]
    home = Path(tempfile.mkdtemp(prefix="iomodel-acc-home-", dir="/dev/shm"))
    rows, profiles, t_start = [], {}, time.monotonic()
    try:
        # the home cluster: every app traced once on tmpfs
        homes = {}
        for a in apps:
            key = row_key(a.app, a.size)
            d = home / key
            d.mkdir()
            mpath = work / f"{key}.home.json"
            try:
                m, _, _ = reuse_or_trace(lambda c, **kw: sh(c, env, **kw), app_cmd(progs, a, d, args.np),
                                         work / f"{key}.home.trace", mpath, log, args.resume)
            except Exception as e:   # the other applications keep their rows
                missing += missing_rows([a], {a.prog: f"its traced run on tmpfs failed: {str(e)[-600:]}"},
                                        args.np, args.vcs.split(","))
                print(f"home trace {a.app} {a.size}: FAILED {str(e)[:300]}", flush=True)
                continue
            finally:
                shutil.rmtree(d, ignore_errors=True)
            homes[(a.app, a.size)] = (key, mpath, m)
            print(f"home trace {a.app} {a.size}: {len(m['phases'])} phases, {m['weight'] / MiB:.2f} MiB, "
                  f"I/O {m['application']['io_time_s']:.3f} s, np {a.ranks(args.np)}")
        apps = [a for a in apps if (a.app, a.size) in homes]
        nps, job_np = sweep_nps(apps, args.np)     # the profiles cover every app's ranks
        char = char_args(nps, args.repeat, job_np)
        for vc in vcs:
            try:
                t0 = time.monotonic()
                cdir = work / f"char-{vc.name}"
                resumed = (cdir / "results.json").exists()
                try:
                    vc.start(log)
                    _, _, char_steal = stolen(vc.run, [*IOMODEL, "characterize", "--vc", vc.yaml, "--backend",
                                                       "builtin", *char, "-o", cdir],
                                              log=log, timeout=CHAR_TIMEOUT * args.repeat)
                except Exception as e:   # the VCs before and after it keep their rows
                    profiles[vc.name] = {"dir": str(cdir), "error": str(e)[-1500:]}
                    print(f"[{vc.name}] start or characterize FAILED {str(e)[:300]} (rerun with --resume {work} "
                          f"to go on from what it measured)", flush=True)
                    continue
                profiles[vc.name] = {"dir": str(cdir), "seconds": round(time.monotonic() - t0, 1),
                                     "steal_s": None if resumed else char_steal,
                                     **({"resumed": True} if resumed else {})}
                print(f"[{vc.name}] characterized in {time.monotonic() - t0:.0f} s")
                for a in apps:
                    app, size = a.app, a.size
                    key, mpath, m = homes[(app, size)]
                    row = {"app": app, "size": size, "vc": vc.name, "np": a.ranks(args.np),
                           "weight_bytes": m["weight"]}
                    try:
                        profs = ["--profile", f"{vc.cluster_name}={cdir}/profile.parquet"]
                        fdir = own_computing_points(vc, m, mpath, work / f"char-for-{vc.name}-{key}", args, log,
                                                    paper=app in PAPER_APPS)
                        if fdir:
                            profs += ["--profile", f"{vc.cluster_name}={fdir}/profile.parquet"]
                            row["for_profile"] = str(fdir)
                        pred = predict(mpath, vc, profs, log)
                        def replay(rdir, *extra):
                            def attempt():
                                shutil.rmtree(vc.mount / "work", ignore_errors=True)
                                (vc.mount / "work").mkdir()
                                return stolen(vc.run, [*IOMODEL, "replay", mpath, "--vc", vc.yaml, "--backend",
                                                       "builtin", *extra, "--repeat", str(vc.runs), "--launches",
                                                       str(vc.launches), "-o", rdir], log=log)
                            _, st, aside = until_calm(attempt, args.steal_retries, pause=STEAL_PAUSE_S,
                                                      on_stolen=set_aside(work, rdir, what=f"[{vc.name}] {rdir.name}"))
                            return predict(mpath, vc, ["--replay", rdir], log), st, aside
                        # back to back, as the paper replays (IOR's layout)
                        repl, repl_steal, repl_aside = replay(work / f"replay-{vc.name}-{key}", "--back-to-back")
                        # and as modelled (the default): the phases' offsets, the idle time between them and within
                        modl, modl_steal, modl_aside = replay(work / f"replay-modelled-{vc.name}-{key}",
                                                              "--as-modelled")
                        # the application itself, vc.runs times: per phase the median duration
                        runs, steals, run_aside = [], [], []
                        for k in range(vc.runs):
                            data = vc.mount / "work" / f"app-{key}"
                            tdir, jpath = work / f"{key}.{vc.name}.{k}.trace", work / f"{key}.{vc.name}.{k}.json"

                            def attempt():
                                shutil.rmtree(data, ignore_errors=True)
                                data.mkdir(parents=True)
                                m_, wall, st = reuse_or_trace(vc.run, app_cmd(progs, a, data, args.np),
                                                              tdir, jpath, log, args.resume)
                                return (m_, wall), wall, st
                            run, st, aside = until_calm(attempt, args.steal_retries, pause=STEAL_PAUSE_S,
                                                        on_stolen=set_aside(work, tdir, jpath,
                                                                            what=f"[{vc.name}] {key} run {k}"))
                            runs.append(run)
                            steals.append(st)    # None: reused (--resume)
                            run_aside += [{"run": k, **x} for x in aside]
                            shutil.rmtree(data, ignore_errors=True)
                        same = all(len(vm["phases"]) == len(m["phases"]) and
                                   [p["operation"] for p in vm["phases"]] == [p["operation"] for p in m["phases"]]
                                   for vm, _ in runs)
                        if not same:
                            raise RuntimeError("a run on the VC has other phases than the home run: "
                                               + ", ".join(str(len(vm["phases"])) for vm, _ in runs))
                        phases = []
                        for i, hp in enumerate(m["phases"]):
                            pp, rp, mp = pred["phases"][i], repl["phases"][i], modl["phases"][i]
                            phases.append({"id": hp["id"], "operation": hp["operation"], "np": hp["np"],
                                           "rs": hp["rs"], "rep": hp["rep"], "weight": hp["weight"],
                                           "predicted_s": pp["time_s"], "replayed_s": rp["time_s"],
                                           "modelled_s": mp["time_s"], "predict_note": pp.get("note"),
                                           "predicted_passes_s": pp.get("time_passes_s"),
                                           **uncached(pp)})
                        vm, wall = runs[0]
                        row.update(predicted_io_time_s=pred["io_time_s"], replayed_io_time_s=repl["io_time_s"],
                                   predicted_passes_io_time_s=pred.get("io_time_passes_s"),
                                   predicted_uncached_io_time_s=pred.get("io_time_uncached_s"),
                                   modelled_io_time_s=modl["io_time_s"], measured_wall_s=wall,
                                   measured_steal_s=steals, replayed_steal_s=repl_steal,
                                   modelled_steal_s=modl_steal, measured_set_aside=run_aside,
                                   replayed_set_aside=repl_aside, modelled_set_aside=modl_aside, phases=phases,
                                   replay_notes=sorted({p.get("note", "") for p in repl["phases"]})[:5],
                                   predict_notes=sorted({p.get("note", "") for p in pred["phases"]})[:5])
                        measure_row(row, [vm for vm, _ in runs])
                        measured = row["measured_io_time_s"]
                        print(f"[{vc.name}] {app} {size}: measured {measured:.3f} s, predicted "
                              f"{pred['io_time_s']:.3f} s ({row['error_predicted'] * 100:+.0f}%), replayed "
                              f"{repl['io_time_s']:.3f} s ({row['error_replayed'] * 100:+.0f}%), as modelled "
                              f"{modl['io_time_s']:.3f} s ({row['error_modelled'] * 100:+.0f}%)"
                              + (f"; steal in its runs {steals} s" if any(steals) else "")
                              + (f"; set aside for steal: {len(run_aside)} run(s), "
                                 f"{len(repl_aside) + len(modl_aside)} replay(s)"
                                 if run_aside or repl_aside or modl_aside else ""), flush=True)
                    except Exception as e:  # one failed row must not lose the others
                        row["error"] = str(e)[-1500:]
                        print(f"[{vc.name}] {app} {size}: FAILED {str(e)[:300]}", flush=True)
                    rows.append(row)
                if vc.name in args.recheck.split(","):
                    recheck(vc, work, char, CHAR_TIMEOUT * args.repeat, homes, rows, profiles, log)
            finally:
                vc.stop(log)
    finally:
        for vc in vcs:
            vc.stop(log)
        shutil.rmtree(home, ignore_errors=True)
        log.close()

    mach = machine()
    result = {"machine": mach, "code": code_version(), "vcs": {vc.name: {"yaml": vc.yaml.read_text(), "limit": vc.network}
                                       for vc in vcs},
              "characterize": {"args": char, **profiles},
              "mpi_env": MPI_ENV,
              "measured_io_time": "per phase the median over the runs of the phase's io_time_s (the slowest "
                                  "process's time inside the phase's I/O calls; of a collective phase, its calls "
                                  "each from the last process's entry to the last one's exit), summed; measured_span_s: "
                                  "the same with duration_s (first start to last end)",
              "error": "(x - measured) / measured", "wall_s": round(time.monotonic() - t_start, 1),
              "repeat": args.repeat, "runs": {vc.name: vc.runs for vc in vcs},
              "replay_launches": {vc.name: vc.launches for vc in vcs}, "np": args.np, "rows": rows,
              "missing": missing,
              **({"resumed": "the work directory of a bench that stopped, its measurements reused "
                             "(wall_s: this run's part)"} if args.resume else {})}
    finish(result, args)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}")


if __name__ == "__main__":
    main()
