"""The accuracy bench's applications (bench/accuracy.py): six examples, and the
method paper's own two, NAS BT-IO and S3D-IO, built from ../shared/vendor into
the bench's work directory; each (application, size) with its ranks, its
command line and the directory it runs in.  Without ../shared/vendor (or an
archive of it, or a build) the paper's rows are recorded as missing, and why."""
import re
import shutil
import tarfile
from pathlib import Path
from typing import NamedTuple, Optional

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# the sources of the paper's applications sit beside the checkout, never in it
VENDOR = ROOT.parent / "shared" / "vendor"
NP = 2          # ranks of the examples (--np): one per core of this 2-core machine
# NPB's BT needs a square number of processes, S3D-IO a process grid: both 2x2 (x1)
PAPER_NP = 4
PAPER_APPS = ("bt-io-full", "bt-io-simple", "s3d-io-blocking", "s3d-io-nonblocking")
BT_CLASSES = ("S", "W", "A", "B", "C")
OUT = "{outdir}"    # where an application's arguments take its data directory


class App(NamedTuple):
    app: str
    size: str            # the label the tables show
    prog: str            # the executable's name (built examples, vendor builds) or a script's
    args: tuple          # after the program; OUT: its data directory
    np: Optional[int] = None      # ranks; None: the bench's --np
    in_dir: bool = False          # runs with its data directory as working directory
    source: Optional[str] = None  # the ../shared/vendor archive it is built from

    def ranks(self, default):
        return self.np or default


# Six example applications (BT-IO-like, S3D-IO-like, file per process, random
# access, an mpi4py program, a solver), two problem sizes each, --np ranks
EXAMPLES = [
    App("btio_like", "32^3x8", "btio_like", (OUT, "32", "32", "32", "8")),
    App("btio_like", "48^3x6", "btio_like", (OUT, "48", "48", "48", "6")),
    App("s3d_like", "32^3", "s3d_like", (OUT, "blocking", "32", "32", "32")),
    App("s3d_like", "48^3", "s3d_like", (OUT, "blocking", "48", "48", "48")),
    App("fpp_io", "64KiBx16", "fpp_io", (OUT, "65536", "16")),
    App("fpp_io", "256KiBx16", "fpp_io", (OUT, "262144", "16")),
    App("random_io", "16KiBx64", "random_io", (OUT, "16384", "64")),
    App("random_io", "16KiBx256", "random_io", (OUT, "16384", "256")),
    App("py_io", "256KiBx8", "py_io.py", (OUT, "256", "8")),
    App("py_io", "1MiBx8", "py_io.py", (OUT, "1024", "8")),
    # a solver computing between its collective dumps (ADI sweeps, 10 steps a dump:
    # about 0.2 s and 0.6 s between dumps here); expected model: tests/test_analyzer.py
    App("solver_like", "48^3x4", "solver_like", (OUT, "48", "48", "48", "4", "10")),
    App("solver_like", "64^3x4", "solver_like", (OUT, "64", "64", "64", "4", "10")),
]
SOURCES = {"btio_like": ROOT / "examples" / "btio_like.c",
           "s3d_like": ROOT / "tests" / "programs" / "s3d_like.c",
           "fpp_io": ROOT / "examples" / "fpp_io.c",
           "random_io": ROOT / "examples" / "random_io.c",
           "solver_like": ROOT / "examples" / "solver_like.c"}
NPB, S3D = "npb3.4-mpi.tar.gz", "s3d-io.tar.gz"


def paper_apps(bt_classes=("S", "W")):
    """NAS BT-IO (full and simple MPI-IO, one binary per class and subtype: NPB
    fixes both when it compiles) and S3D-IO (blocking and nonblocking PnetCDF,
    grids of 32^3 and 50^3 on 2x2x1), PAPER_NP ranks.  BT-IO writes
    ./btio.SUBTYPE.out, so it runs in its data directory; S3D-IO takes the
    directory as its last argument ("NX NY NZ PX PY PZ 0|1 restart DIR")."""
    bt = [App(f"bt-io-{sub}", cls, f"bt.{cls}.x.mpi_io_{sub}", (), PAPER_NP, in_dir=True, source=NPB)
          for sub in ("full", "simple") for cls in bt_classes]
    s3d = [App(f"s3d-io-{mode}", f"{n}^3 2x2x1", "s3d_io.x", (n, n, n, "2", "2", "1", flag, "F", OUT),
               PAPER_NP, source=S3D)
           for mode, flag in (("blocking", "0"), ("nonblocking", "1")) for n in ("32", "50")]
    return bt + s3d


def app_table(bt_classes=("S", "W")):
    return EXAMPLES + paper_apps(bt_classes)


def row_key(app, size):
    """An (application, size)'s name in the work directory."""
    return f"{app}-{size}".replace("^", "").replace(" ", "-")


def mpirun(np):
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(np)]


def app_cmd(progs, app, outdir, np):
    """The application's command line (its ranks: app.np, else np) with its data
    directory `outdir`, and the directory it must run in (None: any)."""
    path = Path(progs[app.prog])
    prog = [PYTHON, path] if path.suffix == ".py" else [path]
    args = [outdir if a == OUT else a for a in app.args]
    return [*mpirun(app.ranks(np)), *prog, *args], (outdir if app.in_dir else None)


def build(apps, bindir, vendor, run):
    """Every program the apps need: the examples compiled into bindir, the
    paper's built under bindir/vendor from vendor's archives (each once: a
    bench resumed in the same work directory finds them built).  run(cmd, cwd)
    runs a command or raises.  ({prog: path}, {prog: why it is missing})."""
    progs, missing = {"py_io.py": ROOT / "examples" / "py_io.py"}, {}
    Path(bindir).mkdir(parents=True, exist_ok=True)
    for prog in dict.fromkeys(a.prog for a in apps if a.prog in SOURCES):
        run(["mpicc", "-O2", "-o", bindir / prog, SOURCES[prog], "-lm"], None)
        progs[prog] = bindir / prog
    for archive in dict.fromkeys(a.source for a in apps if a.source):
        tar = vendor / archive
        for prog in dict.fromkeys(a.prog for a in apps if a.source == archive):
            if not vendor.is_dir():
                missing[prog] = f"{vendor}: no such directory (the paper's applications are built from it)"
                continue
            if not tar.is_file():
                missing[prog] = f"{tar}: no such file"
                continue
            try:
                progs[prog] = BUILDERS[archive](unpack(tar, bindir / "vendor"), prog, run)
            except Exception as e:     # the other programs and the examples still run
                missing[prog] = f"building {prog} from {tar} failed: {str(e).strip()[-600:]}"
    return progs, missing


def missing_rows(apps, missing, np, vcs):
    """What the results say of the rows that could not run: per (application,
    size) its ranks, the VCs it would have run on and why not."""
    return [{"app": a.app, "size": a.size, "np": a.ranks(np), "vcs": list(vcs), "why": missing[a.prog]}
            for a in apps if a.prog in missing]


def unpack(tar, into):
    """The archive's top directory under `into`, unpacked once."""
    with tarfile.open(tar) as t:
        top = t.getnames()[0].split("/")[0]
        if not (into / top).is_dir():
            tmp = into / f".{top}.unpacking"
            shutil.rmtree(tmp, ignore_errors=True)
            t.extractall(tmp, filter="data")
            (tmp / top).rename(into / top)
            tmp.rmdir()
    return into / top


def build_npb(src, prog, run):
    """bt.CLASS.x.mpi_io_SUBTYPE in src/bin (vendor/README.md's steps)."""
    out = src / "bin" / prog
    if not out.is_file():
        _, cls, _, sub = prog.split(".")
        # gfortran 10 and later refuse NPB's calls of MPI routines with buffers of several types
        make_def = re.sub(r"(?m)^FFLAGS\s*=.*$", "FFLAGS\t= -O2 -fallow-argument-mismatch",
                          (src / "config" / "make.def.template").read_text())
        (src / "config" / "make.def").write_text(make_def)
        (src / "bin").mkdir(exist_ok=True)
        run(["make", "bt", f"CLASS={cls}", f"SUBTYPE={sub.split('_')[-1]}"], src)
    if not out.is_file():
        raise RuntimeError(f"make left no {out}")
    return out


def build_s3d(src, prog, run):
    """s3d_io.x in src, against Debian's PnetCDF (libpnetcdf-dev)."""
    out = src / prog
    if not out.is_file():
        mod = next(Path("/usr/lib").rglob("pnetcdf.mod"), None)
        if mod is None:
            raise RuntimeError("no pnetcdf.mod under /usr/lib (Debian: apt-get install libpnetcdf-dev)")
        run(["make", "MPIF90=mpif90", f"FCFLAGS=-O2 -I{mod.parent}", "PNETCDF_DIR=/usr", "INC=",
             "LIBS=-lpnetcdf"], src)
    if not out.is_file():
        raise RuntimeError(f"make left no {out}")
    return out


BUILDERS = {NPB: build_npb, S3D: build_s3d}
