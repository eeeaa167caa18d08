"""The testbed's storage VCs (issue 5): a throttled disk (ext4 on a loop device over
a file of throttlefs, a FUSE file system pacing requests like one disk head) and a one-server GlusterFS volume in a network namespace behind
an htb-shaped veth. For each: start it, replay a small model there with the
built-in replayer, check that every byte went through the limit (the kernel's
block and tc counters) and that no run beat it, stop it,
and nothing is left (mounts, loop device, processes, namespace, veth,
/etc/hosts line)."""
import json
import mmap
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_testbed_slurm import slurm  # noqa: F401 (a fixture)
from conftest import ROOT, running
from iomodel.cluster.placement import placement, server_of

TESTBED = ROOT / "testbed"
IOMODEL = [sys.executable, "-m", "iomodel"]
MiB = 1 << 20


def mounted(path):
    return any(line.split()[1] == str(path) for line in open("/proc/self/mounts"))



def sh(script, env, *args, timeout=60):
    return subprocess.run(["bash", TESTBED / script, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


SCALE = 256          # 4 KiB requests -> 1 MiB: 24 MiB per phase, long enough to measure a limit


def scaled(m, k):
    """The model with every request k times larger (sizes, offsets, weights scaled alike)."""
    for p in m["phases"]:
        p["request_sizes"] = [x * k for x in p["request_sizes"]]
        for f in ("rs", "rs_min", "rs_max", "weight"):
            p[f] *= k
        p["offsets"] = {f: (v * k if f in ("first", "per_rank", "stride") else v)
                        for f, v in p["offsets"].items()}
    for f in m["files"]:
        for x in ("iof_size", "inf_size", "size", "extent"):
            f[x] *= k
    for x in ("weight", "storage_capacity"):
        if isinstance(m.get(x), (int, float)):
            m[x] *= k
    return m


@pytest.fixture
def model(traced, tmp_path):
    """ior_like segmented, 4 ranks (one write phase, one read phase), scaled to 24 MiB a phase."""
    r = traced("ior_like", 4, "segmented")
    path = tmp_path / "m.json"
    assert subprocess.run(IOMODEL + ["analyze", str(r.trace_dir), "-o", str(path), "-q"]).returncode == 0
    path.write_text(json.dumps(scaled(json.loads(path.read_text()), SCALE)))
    return path


def replay(model, yaml_name, default_workdir, workdir, env, tmp_path):
    vc = tmp_path / yaml_name
    vc.write_text((TESTBED / yaml_name).read_text().replace(default_workdir, str(workdir)))
    out = tmp_path / "replay"
    p = subprocess.run([*IOMODEL, "replay", str(model), "--vc", str(vc), "--backend",
                        "builtin", "-o", str(out)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    runs = list(json.loads((out / "results.json").read_text())["runs"].values())
    assert len(runs) == len(json.loads(model.read_text())["runs"])
    for e in runs:
        assert e["ok"] and e["bandwidth_Bps"] > 0, e
    return runs


def by_operation(runs):
    """{operation: [bandwidth B/s]}."""
    bw = {}
    for e in runs:
        bw.setdefault(e["operation"], []).append(e["bandwidth_Bps"])
    return bw


def start_twice(vc, env):
    """Start a testbed VC, then again (start is idempotent); seconds the first start took."""
    t0 = time.monotonic()
    up = sh(f"{vc}/start.sh", env)
    assert up.returncode == 0, up.stdout + up.stderr
    started = time.monotonic() - t0
    again = sh(f"{vc}/start.sh", env)
    assert again.returncode == 0 and f"{vc} up" in again.stdout, again.stderr
    return started


def sectors_written(dev):
    """512-byte sectors the block device has written since boot (/sys/block/*/stat)."""
    return int((Path("/sys/block") / Path(dev).name / "stat").read_text().split()[6])


def moved(runs):
    """{operation: bytes the replay's timed repetitions moved}."""
    total = {}
    for e in runs:
        total[e["operation"]] = total.get(e["operation"], 0) + e["bytes"] * e["repetitions"]
    return total


def root_only():
    if os.geteuid() != 0:
        pytest.fail("the storage testbed needs root (loop devices, FUSE, namespaces)")


# ------------------------------------------------------------------ throttled disk

DISK_BPS = 40 * MiB


@pytest.fixture
def disk(tmp_path):
    root_only()
    env = {**os.environ, "IOMODEL_TESTBED_STATE": str(tmp_path / "state"),
           "IOMODEL_DISK_MOUNT": str(tmp_path / "disk"), "IOMODEL_DISK_SIZE": "256M",
           "IOMODEL_DISK_WRITE_BPS": str(DISK_BPS)}
    yield env, start_twice("disk", env)
    sh("disk/stop.sh", env, "--purge")


def test_disk_vc_throttles_every_write_then_nothing_is_left(disk, model, tmp_path):
    env, started = disk
    state = tmp_path / "state" / "disk"
    mnt = tmp_path / "disk"
    dev = (state / "loopdev").read_text().strip()
    pid = int((state / "throttlefs.pid").read_text())
    assert running([pid]) and mounted(mnt) and mounted(state / "fuse")
    opts = next(line.split()[3] for line in open("/proc/self/mounts") if line.split()[1] == str(mnt))
    assert "sync" in opts.split(",")                 # write-through: unsynced writes are throttled
    # no burst: after the device was idle, 4 MiB written through O_DIRECT still take 4 MiB
    # at the limit (cgroup blkio let a whole 100 ms slice of bytes through at once)
    time.sleep(0.3)
    t0 = time.monotonic()
    fd = os.open(mnt / "burst", os.O_WRONLY | os.O_CREAT | os.O_DIRECT)
    buf = mmap.mmap(-1, MiB)                         # page-aligned, as O_DIRECT needs
    for _ in range(4):
        assert os.write(fd, buf) == MiB
    os.close(fd)
    assert time.monotonic() - t0 >= 0.95 * 4 * MiB / DISK_BPS
    before = sectors_written(dev)
    runs = replay(model, "testbed-disk.yaml", "/tmp/iomodel-testbed/disk/work", mnt / "work", env,
                  tmp_path)
    written = 512 * (sectors_written(dev) - before)
    bw = by_operation(runs)
    for e in runs:
        assert "-e" not in e["command"]              # no fsync: the mount makes writes reach the disk
    print(f"\ndisk VC: start {started:.2f} s, write limit {DISK_BPS / MiB:.0f} MiB/s, measured "
          + ", ".join(f"{op} {', '.join(f'{b / MiB:.1f}' for b in v)} MiB/s" for op, v in bw.items()))
    # writes: every byte reached the loop device before the replay ended (the kernel's
    # exact counter, not a speed, shows it), and at most at the limit (+10%). Reads are
    # not checked: on one node they come from the page cache the setup write filled
    # (-C cannot help), far above the limit.
    assert bw["write"] and written >= moved(runs)["write"], (written, moved(runs))
    assert all(b < 1.1 * DISK_BPS for b in bw["write"])
    assert started < 10

    t0 = time.monotonic()
    down = sh("disk/stop.sh", env)
    stopped = time.monotonic() - t0
    assert down.returncode == 0, down.stdout + down.stderr
    print(f"disk VC: stop {stopped:.2f} s")
    assert not mounted(mnt) and not mounted(state / "fuse") and not running([pid])
    attached = subprocess.run(["losetup", "-n", "-O", "NAME,BACK-FILE"], capture_output=True,
                              text=True).stdout
    assert str(state / "disk.img") not in attached and dev not in attached.split()
    assert stopped < 10


# ------------------------------------------------------------------ GlusterFS

GLUSTER_RATE_BPS = 200e6 / 8          # 200mbit


def link_sent():
    """Bytes each end of the one-server VC's shaped link has sent through its htb class:
    {"write": host -> server, "read": server -> host}. Exact counters, so the test can
    show every byte crossed the link without asserting a speed."""
    def sent(ns, dev):
        out = subprocess.run(["tc", *ns, "-s", "class", "show", "dev", dev],
                             capture_output=True, text=True, check=True).stdout
        return int(out.split(" Sent ", 1)[1].split()[0])
    return {"write": sent([], "iomodel-gl-h"), "read": sent(["-n", "iomodel-gl"], "iomodel-gl-n")}


def gluster_pids(state):
    files = [state / "glusterd.pid", state / "client.pid", *(state / "run").rglob("*.pid")]
    return [f.read_text().strip() for f in files if f.is_file() and f.read_text().strip()]


def gluster_env(tmp_path, **extra):
    root_only()
    for b in ("glusterd", "mount.glusterfs"):
        if subprocess.run(["which", b], capture_output=True).returncode != 0:
            pytest.fail(f"{b} missing: apt-get install glusterfs-server glusterfs-client")
    return {**os.environ, "IOMODEL_TESTBED_STATE": str(tmp_path / "state"),
            "IOMODEL_GLUSTER_MOUNT": str(tmp_path / "gluster"), "IOMODEL_GLUSTER_RATE": "200mbit",
            **extra}


@pytest.fixture
def gluster(tmp_path):
    env = gluster_env(tmp_path)
    yield env, start_twice("gluster", env)
    sh("gluster/stop.sh", env, "--purge")


def test_a_second_gluster_vc_neither_joins_nor_stops_the_first(gluster, tmp_path):
    """The namespace, links and host names are the machine's: a VC with another
    state (a test's, beside a bench's VC) is refused at start with a message
    naming the one that runs, and its stop leaves that one running."""
    env, _ = gluster
    state = tmp_path / "state" / "gluster"
    other = {**env, "IOMODEL_TESTBED_STATE": str(tmp_path / "other"),
             "IOMODEL_GLUSTER_MOUNT": str(tmp_path / "other-mnt")}
    up = sh("gluster/start.sh", other)
    assert up.returncode == 1 and f"the Gluster VC of {state} runs in namespace iomodel-gl" in up.stderr, \
        up.stdout + up.stderr
    down = sh("gluster/stop.sh", other, "--purge")
    assert down.returncode == 0 and f"belongs to the Gluster VC of {state}: left running" in down.stderr, \
        down.stdout + down.stderr
    pids = gluster_pids(state)
    assert len(pids) == 3 and running(pids) == pids
    (tmp_path / "gluster" / "still").write_bytes(b"x" * 4096)
    assert (tmp_path / "gluster" / "still").read_bytes() == b"x" * 4096
    assert "iomodel-gluster" in open("/etc/hosts").read()
    (tmp_path / "gluster" / "still").unlink()


def test_gluster_vc_is_shaped_then_nothing_is_left(gluster, model, tmp_path):
    env, started = gluster
    state = tmp_path / "state" / "gluster"
    mnt = tmp_path / "gluster"
    pids = gluster_pids(state)
    assert len(pids) == 3 and running(pids) == pids                 # glusterd, brick, FUSE client
    assert mounted(mnt)
    assert "iomodel-gluster" in open("/etc/hosts").read()
    before = link_sent()
    runs = replay(model, "testbed-gluster.yaml", "/tmp/iomodel-testbed/gluster/work",
                  mnt / "work", env, tmp_path)
    after = link_sent()
    bw = by_operation(runs)
    print(f"\ngluster VC: start {started:.2f} s, link {GLUSTER_RATE_BPS / MiB:.1f} MiB/s, measured "
          + ", ".join(f"{op} {', '.join(f'{b / MiB:.1f}' for b in v)} MiB/s" for op, v in bw.items()))
    # every byte crosses the shaped link (writes fsynced, FUSE reads not served from the
    # cache): each end's htb class sent at least the bytes moved its way (the counters,
    # not a speed, show it); and the link caps the pace (+10% for htb's one-packet bucket)
    assert bw["write"] and bw["read"]
    for op, n in moved(runs).items():
        assert after[op] - before[op] >= n, (op, after[op] - before[op], n)
    assert all(b < 1.1 * GLUSTER_RATE_BPS for v in bw.values() for b in v)
    assert started < 20

    t0 = time.monotonic()
    down = sh("gluster/stop.sh", env)
    stopped = time.monotonic() - t0
    assert down.returncode == 0 and "3 processes" in down.stdout, down.stdout + down.stderr
    print(f"gluster VC: stop {stopped:.2f} s")
    assert running(pids) == [] and gluster_pids(state) == []
    assert not mounted(mnt)
    assert "iomodel-gl" not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                              text=True).stdout
    assert subprocess.run(["ip", "link", "show", "iomodel-gl-h"], capture_output=True).returncode != 0
    assert "iomodel-testbed" not in open("/etc/hosts").read()
    assert stopped < 20
    # the volume is kept (no --purge) with its one brick: two servers are refused
    again = sh("gluster/start.sh", {**env, "IOMODEL_GLUSTER_SERVERS": "2"})
    assert again.returncode == 1 and "made for 1 data server(s); remove it (stop.sh --purge)" \
        in again.stderr, again.stdout + again.stderr
    assert "iomodel-gl" not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                              text=True).stdout


def test_gluster_vc_of_two_servers_spreads_a_file_over_both_links(tmp_path):
    """Two data servers: two bricks, each on its own name, address and shaped link;
    a 64 MiB file (sixteen 4 MB shards, placed by the hash of a random id: all on one
    brick with probability 2^-15) has data on both bricks, and bytes crossed both
    links; both ends of both links pin TCP cubic on their routes, and the
    connections use it; stop removes both links and both
    /etc/hosts lines."""
    env = gluster_env(tmp_path, IOMODEL_GLUSTER_SERVERS="2")
    try:
        start_twice("gluster", env)
        state = tmp_path / "state" / "gluster"
        pids = gluster_pids(state)
        assert len(pids) == 4 and running(pids) == pids      # glusterd, 2 bricks, FUSE client
        hosts = [line.split()[:2] for line in open("/etc/hosts") if "# iomodel-testbed iomodel-gl" in line]
        assert hosts == [["10.213.0.2", "iomodel-gluster"], ["10.213.1.2", "iomodel-gluster-2"]]
        for dev in ("iomodel-gl-h", "iomodel-gl-h2"):
            q = subprocess.run(["tc", "class", "show", "dev", dev], capture_output=True, text=True).stdout
            assert q.startswith("class htb 1:1 root") and "rate 200Mbit" in q, q
        # both ends of each link: the host's routes and the servers' (which send the reads)
        for ns, dev in (([], "iomodel-gl-h"), ([], "iomodel-gl-h2"),
                        (["-n", "iomodel-gl"], "iomodel-gl-n"), (["-n", "iomodel-gl"], "iomodel-gl-n2")):
            r = subprocess.run(["ip", *ns, "route", "show", "dev", dev], capture_output=True, text=True).stdout
            assert "congctl cubic" in r, (dev, r)

        def algorithms(prefix, peers):
            """The congestion control of each established connection to `peers`."""
            filt = [w for p in peers for w in ("or", "dst", p)][1:]
            out = subprocess.run([*prefix, "ss", "-tinH", "state", "established", *filt],
                                 capture_output=True, text=True).stdout
            return [line.split()[0] for line in out.splitlines() if line.startswith(("\t", " "))], out
        # the client's connections to the bricks (one per server) and the bricks' ends of
        # them use it, whatever the machine's default
        for prefix, peers in (([], ("10.213.0.2", "10.213.1.2")),
                              (["ip", "netns", "exec", "iomodel-gl"], ("10.213.0.1", "10.213.1.1"))):
            algos, out = algorithms(prefix, peers)
            assert len(algos) >= 2 and set(algos) == {"cubic"}, out

        def tx(dev):
            return int(open(f"/sys/class/net/{dev}/statistics/tx_bytes").read())
        before = [tx("iomodel-gl-h"), tx("iomodel-gl-h2")]
        data = bytes(range(256)) * (64 * MiB // 256)
        (tmp_path / "gluster" / "big").write_bytes(data)
        sent = [tx("iomodel-gl-h") - before[0], tx("iomodel-gl-h2") - before[1]]
        assert (tmp_path / "gluster" / "big").read_bytes() == data
        # shard 0 is the file itself on one brick; shards 1-15 in .shard/ on the bricks
        # their names hash to: together 64 MiB, and both links carried a share of it
        on_brick = [sum(f.stat().st_size for f in (state / b).rglob("*") if f.is_file()
                        and ".glusterfs" not in f.parts) for b in ("brick", "brick2")]
        assert sum(on_brick) == 64 * MiB and sum(sent) > 64 * MiB, (on_brick, sent)
        assert all(b > 0 for b in on_brick) and all(s > 4 * MiB * 0.9 for s in sent), (on_brick, sent)
        (tmp_path / "gluster" / "big").unlink()
        characterize_spreads_files_over_both_bricks(env, state, tmp_path)
        down = sh("gluster/stop.sh", env)
        assert down.returncode == 0 and "4 processes" in down.stdout, down.stdout + down.stderr
        assert running(pids) == [] and not mounted(tmp_path / "gluster")
        for dev in ("iomodel-gl-h", "iomodel-gl-h2"):
            assert subprocess.run(["ip", "link", "show", dev], capture_output=True).returncode != 0
        assert "iomodel-testbed" not in open("/etc/hosts").read()
    finally:
        sh("gluster/stop.sh", env, "--purge")


def characterize_spreads_files_over_both_bricks(env, state, tmp_path):
    """`iomodel characterize` on the two-server VC: its file-per-process points at
    np 2 (64 KiB writes, collective and independent) name their files so that each
    server holds one (the placement it records, and the bricks' own listing of the
    files its names make), and write 4 MiB (the VC's stripe) per file, not the
    8 MiB that --bytes 16m gives two processes; no file is left."""
    vc = tmp_path / "gluster2.yaml"
    vc.write_text((TESTBED / "testbed-gluster2.yaml").read_text().replace(
        "/tmp/iomodel-testbed/gluster/work", str(tmp_path / "gluster" / "work")))
    out = tmp_path / "char"
    (tmp_path / "gluster" / "work").mkdir()   # the user's: kept after the sweep, to look in below
    p = subprocess.run([*IOMODEL, "characterize", "--vc", str(vc), "--backend", "builtin",
                        "--sizes", "64k", "--np", "2", "--ops", "write", "--access", "unique",
                        "--bytes", "16m", "--no-one-op", "-o", str(out)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    entries = list(json.loads((out / "results.json").read_text())["runs"].values())
    assert len(entries) == 2 and all(e["ok"] for e in entries), entries
    bricks = {str(state / b) for b in ("brick", "brick2")}
    for e in entries:
        assert e["point"]["ops_per_process"] == 64                 # 4 MiB / 64 KiB
        placed = e["point"]["placement"]
        assert sorted(placed.values()) == [1, 1] and {k.split(":", 1)[1] for k in placed} == bricks
        base = next(a for a in e["command"] if str(tmp_path / "gluster" / "work") in a)
        for r in range(2):
            Path(f"{base}.{r:08d}").write_bytes(b"x")
        found = sorted(f.parent.parent.name for b in bricks for f in Path(b).rglob("*.0000000?")
                       if ".glusterfs" not in f.parts)
        assert found == ["brick", "brick2"], found
        # asked about a file that is there, placement names its brick and keeps it
        on = {f.name: f.parent.parent.name for b in bricks for f in Path(b).rglob("*.0000000?")
              if ".glusterfs" not in f.parts}
        assert {b.rsplit("/", 1)[1]: n for b, n in placement(base, 2).items()} == \
            {v: 1 for v in on.values()}
        assert all(Path(f"{base}.{r:08d}").exists() for r in range(2))
        assert server_of(f"{base}.{0:08d}").endswith("/" + on[Path(f"{base}.00000000").name])
        for r in range(2):
            Path(f"{base}.{r:08d}").unlink()
    left = [f for f in (tmp_path / "gluster" / "work").iterdir()]
    assert left == [], left


# --------------------------------------------- the CI-sized test of issue 5

def test_slurm_and_a_gluster_vc_replay_through_srun_in_under_two_minutes(slurm, gluster, model,
                                                                          tmp_path):
    """Start Slurm and a one-server Gluster VC (the fixtures), replay through
    srun on the Gluster mount, check the result, tear everything down."""
    t0 = time.monotonic()
    slurm_env, _ = slurm
    gl_env, _ = gluster
    env = {**gl_env, "SLURM_CONF": slurm_env["SLURM_CONF"]}
    mnt = tmp_path / "gluster"
    text = (TESTBED / "testbed-gluster.yaml").read_text()
    srun_yaml = "testbed-gluster-srun.yaml"
    vc_text = text.replace("launcher: mpirun", "launcher: srun").replace(
        'launcher_options: ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]',
        'launcher_options: ["--mpi=pmix", "--export=ALL,OMPI_MCA_mpi_yield_when_idle=1"]')
    assert vc_text != text and "launcher: srun" in vc_text
    vc = tmp_path / srun_yaml
    vc.write_text(vc_text.replace("/tmp/iomodel-testbed/gluster/work", str(mnt / "work")))
    out = tmp_path / "replay-srun"
    before = link_sent()
    p = subprocess.run([*IOMODEL, "replay", str(model), "--vc", str(vc), "--backend", "builtin",
                        "-o", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    runs = list(json.loads((out / "results.json").read_text())["runs"].values())
    assert runs and all(e["ok"] and e["command"][:4] == ["srun", "-n", "4", "--mpi=pmix"] for e in runs)
    after = link_sent()
    for op, n in moved(runs).items():
        assert after[op] - before[op] >= n, (op, after[op] - before[op], n)
    assert all(e["bandwidth_Bps"] < 1.1 * GLUSTER_RATE_BPS for e in runs)
    pids = gluster_pids(tmp_path / "state" / "gluster")
    assert sh("gluster/stop.sh", gl_env).returncode == 0
    assert subprocess.run(["bash", TESTBED / "slurm" / "stop.sh"], env=env,
                          capture_output=True).returncode == 0
    assert running(pids) == [] and not mounted(mnt)
    assert time.monotonic() - t0 < 120
