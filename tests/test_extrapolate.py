"""`iomodel extrapolate`: a model at a scale never run, from models at others.

The example applications are traced for real at np 2, 4 and 8 (and btio_like
at two grid sizes) and extrapolated; the result must equal the model of a real
trace at the target in np, ranks, rs, request sizes, rep, weight, the phases
and their runs and order, and the files' sizes.  The paper's own models
(models/examples, Tables V and VIII) are extrapolated to the process counts
the paper also gives.  Hand values: btio_like 16^3 cells of 40 B, 3 dumps,
so G = 163840 B a dump (rs = G / np) and a 491520-B file."""
import json
import subprocess
import sys

import pytest

from conftest import EXAMPLES, IOMODEL, ROOT, mpirun
from iomodel.models import load_model, parse_ranks
from iomodel.models.extrapolate import ExtrapolationError, extrapolate
from iomodel.models.laws import fit
from iomodel.cluster.predict import predict
from iomodel.cluster.profile import Profile
from iomodel.replay.runner import think_time

PAPER = ROOT / "models" / "examples"

# name -> (program, its arguments after OUTDIR)
APPS = {"btio_like": ("btio_like", "16", "16", "16", "3"),
        "btio_like-24": ("btio_like", "24", "24", "24", "3"),
        "btio_like-32": ("btio_like", "32", "32", "32", "3"),
        "s3d_like": ("s3d_like", "blocking"),
        "s3d_like-24": ("s3d_like", "blocking", "24", "24", "24"),
        "s3d_like-32": ("s3d_like", "blocking", "32", "32", "32"),
        "fpp_io": ("fpp_io", "4096", "4"),
        "random_io": ("random_io", "4096", "8"),
        "py_io": ("py_io", "16", "3"),
        "varsize": ("ior_like", "varsize", "1"),
        "bt_simple": ("bt_simple",),
        # IOR's layout (tests/programs/ior_cmd.c): 4 segments of a 64 KiB block in 16 KiB transfers
        # a process (weak scaling), 1 MiB in all (strong: a block of 1024 / np KiB), a file each
        "ior-weak": ("ior_cmd", "-a", "MPIIO", "-s", "4", "-b", "64k", "-t", "16k", "-w", "-r"),
        "ior-strong": lambda n: ("ior_cmd", "-a", "MPIIO", "-s", "4", "-b", f"{1024 // n}k", "-t", "16k",
                                 "-w", "-r"),
        "ior-fpp": ("ior_cmd", "-a", "MPIIO", "-F", "-s", "4", "-b", "64k", "-t", "16k", "-w", "-r"),
        # s3d_like 32^3 on the process grid PX x PY x PZ its name ends with
        **{f"s3d_like-32-{g}": ("s3d_like", "blocking", "32", "32", "32", *g)
           for g in ("112", "122", "222", "224", "114", "118")},
        "alternate": ("ior_like", "alternate", "1")}


@pytest.fixture(scope="module")
def models(build_dir, tmp_path_factory):
    """models(app, np) -> (path, model) of a real traced run, each made once."""
    made = {}
    base = tmp_path_factory.mktemp("extrapolate")

    def get(app, np_):
        if (app, np_) not in made:
            prog, *args = APPS[app](np_) if callable(APPS[app]) else APPS[app]
            cmd = [sys.executable, EXAMPLES / "py_io.py"] if prog == "py_io" else [build_dir / prog]
            data, trace, out = (base / f"{app}-{np_}-{k}" for k in ("data", "trace", "model.json"))
            data.mkdir()
            env = {**__import__("os").environ, "IOMODEL_POSIX": "0"}
            subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--", *mpirun(np_, *cmd, data, *args)],
                           check=True, capture_output=True, timeout=180, env=env)
            subprocess.run(IOMODEL + ["analyze", str(trace), "-o", str(out), "-q"], check=True,
                           capture_output=True, timeout=120)
            made[app, np_] = (str(out), load_model(out))
        return made[app, np_]
    return get


def refused(*args):
    """(exit code, stderr) of `iomodel extrapolate ARGS`."""
    p = subprocess.run(IOMODEL + ["extrapolate", *args], capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


def shape(m):
    """What an extrapolation must get exactly."""
    return {"phases": [(p["file"], p["operation"], p.get("routine"), p["np"], p["ranks"], p["iop"],
                        p["request_sizes"], p["rs"], p["rep"], p["weight"], p.get("logical_time"),
                        p.get("gap_comm"))
                       for p in m["phases"]],
            "runs": m["runs"], "order": m["order"], "np": m["application"]["np"],
            "files": [(f["access_type"], f["role"], f["np"], f["iof_size"], f["inf_size"], f["size"],
                       len(f["paths"])) for f in m["files"]],
            "weight": m["weight"], "storage_capacity": m["storage_capacity"]}


@pytest.mark.parametrize("target", [16, 32])
@pytest.mark.parametrize("app", ["btio_like", "s3d_like", "fpp_io", "random_io", "py_io"])
def test_examples_equal_their_real_trace(models, app, target):
    ext = extrapolate([models(app, n) for n in (2, 4, 8)], target)
    assert shape(ext) == shape(models(app, target)[1])
    assert ext["source"]["kind"] == "extrapolated"
    assert [f["np"] for f in ext["source"]["extrapolated"]["from"]] == [2, 4, 8]


def test_btio_like_at_np_32_by_hand(models):
    ext = extrapolate([models("btio_like", n) for n in (2, 4, 8)], 32)
    # by hand: 3 collective writes of G / 32 = 5120 B a process, the reads rep 3
    assert [(p["operation"], p["np"], p["rs"], p["rep"], p["weight"]) for p in ext["phases"]] == \
        [("write", 32, 5120, 1, 163840)] * 3 + [("read", 32, 5120, 3, 491520)]
    assert [p["offsets"]["first"] for p in ext["phases"]] == [0, 163840, 327680, 0]
    assert ext["runs"] == [[1, 3], [4, 4]] and ext["files"][0]["size"] == 491520
    laws = {x["field"]: x["law"] for x in ext["source"]["extrapolated"]["laws"]}
    assert laws["run 1.request_sizes[0]"] == "163840 * np^-1" and laws["run 1.np"] == "np"
    assert laws["run 1.phases"] == "3" and laws["run 2.rep"] == "3"
    # np 2 splits X only, so its dumps are contiguous: the target takes np 8's pattern, and says so
    assumed = " ".join(ext["source"]["extrapolated"]["assumed"])
    assert "access_mode: 'strided' taken from" in assumed and "(np 8)" in assumed


def test_btio_like_at_a_larger_grid(models):
    """From 16^3 at np 2 and 4 and 32^3 at np 2, the 32^3 grid at np 8: rs = 32^3 * 40 / 8."""
    ins = [models("btio_like", 2), models("btio_like", 4), models("btio_like-32", 2)]
    ext = extrapolate(ins, 8, size=32, sizes=[16, 16, 32])
    assert shape(ext) == shape(models("btio_like-32", 8)[1])
    assert [p["rs"] for p in ext["phases"]] == [163840] * 4 and ext["files"][0]["size"] == 3 * 1310720
    laws = {x["field"]: x["law"] for x in ext["source"]["extrapolated"]["laws"]}
    assert laws["run 1.request_sizes[0]"] == "40 * np^-1 * s^3" and laws["run 1.step"] == "40 * s^3"


def test_s3d_like_at_a_larger_grid(models):
    """16^3 at np 2 and 4, 32^3 at np 2 -> 32^3 at np 8: L = 32^3 * 8 / 8 = 32768 B."""
    ins = [models("s3d_like", 2), models("s3d_like", 4), models("s3d_like-32", 2)]
    ext = extrapolate(ins, 8, size=32, sizes=[16, 16, 32])
    assert shape(ext) == shape(models("s3d_like-32", 8)[1])
    assert ext["phases"][1]["request_sizes"] == [11 * 32768, 32768, 32768, 3 * 32768]
    assert [f["size"] for f in ext["files"]] == [512 + 16 * 8 * 32 ** 3] * 5


def test_s3d_like_header_stays_one_process(models):
    ext = extrapolate([models("s3d_like", n) for n in (2, 4, 8)], 32)
    # 5 files, each: rank 0's 512-B header, then 4 collective writes of 11L, L, L, 3L with
    # L = 16^3 * 8 / 32 = 1024 B
    assert [(p["np"], p["ranks"], p["request_sizes"]) for p in ext["phases"]] == \
        [(1, "0", [512]), (32, "0-31", [11264, 1024, 1024, 3072])] * 5
    assert [f["size"] for f in ext["files"]] == [512 + 16 * 32768] * 5


def test_paper_btio_class_c_from_4_9_16():
    """Table V's NAS BT-IO class C: np 4, 9 and 16 give the paper's np 25 and 36 models,
    rs to the rounding of its table (the paper's mean rounds down)."""
    ins = [(str(PAPER / f"btio-C-{n}.json"), load_model(PAPER / f"btio-C-{n}.json")) for n in (4, 9, 16)]
    for n in (25, 36):
        ext = extrapolate(ins, n)
        paper = load_model(PAPER / f"btio-C-{n}.json")
        got, want = shape(ext), shape(paper)
        assert got == want
        assert {p["weight"] for p in ext["phases"][:40]} == {170061120}
    at25 = extrapolate(ins, 25)
    # 170061120 B over 25 processes is 6802444.8 a process: groups that add up to the weight
    groups = at25["phases"][0]["rs_groups"]
    assert sum(g["rs"] * len(parse_ranks(g["ranks"])) for g in groups) == 170061120
    assert any("do not divide evenly over 25" in x for x in at25["source"]["extrapolated"]["approximate"])


@pytest.mark.parametrize("grid", [200, 400])
def test_paper_s3d_from_8_16(grid):
    ins = [(str(PAPER / f"s3d-{grid}-{n}.json"), load_model(PAPER / f"s3d-{grid}-{n}.json")) for n in (8, 16)]
    assert shape(extrapolate(ins, 32)) == shape(load_model(PAPER / f"s3d-{grid}-32.json"))


def test_laws():
    # BT-IO simple: one request per cell row of a sqrt(np) x sqrt(np) split
    f = fit([4, 16], [1, 1], [2560, 1280])
    assert (str(f.law), f.exact, f.ambiguous) == ("5120 * np^-1/2", True, False)
    # S3D-IO weak scaling: the header plus np blocks; two points cannot check the exponent
    f = fit([8, 16], [1, 1], [588 + 8 * 100, 588 + 16 * 100], target=(32, 1))
    assert (str(f.law), f.ambiguous) == ("588 + 100 * np", True)
    # a third point checks it
    f = fit([8, 16, 32], [1, 1, 1], [588 + 8 * 100, 588 + 16 * 100, 588 + 32 * 100], target=(64, 1))
    assert (str(f.law), f.ambiguous, round(f.law(64))) == ("588 + 100 * np", False, 588 + 6400)
    # no law of the family: none with two points, the best fit (marked) with three
    assert fit([4, 8], [1, 1], [5120, 320], affine=False) is None
    f = fit([2, 4, 8], [1, 1, 1], [7, 100, 3])
    assert not f.exact and f.max_residual > 0.5


def test_a_law_past_a_floats_range_at_the_target():
    """Found by the fuzz bench: --size 1e-300 made 400 * s^-2 1e600 at the
    target, a raw OverflowError (an internal error).  Such a law is not taken,
    as one that goes negative there: of 100 and 25 at sizes 2 and 4, the
    affine 175 - 37.5 s (the line through both points: slope -75 / 2) gives
    175 at s ~ 0."""
    from fractions import Fraction
    from iomodel.models.laws import Law
    assert Law("power", 400.0, Fraction(0), Fraction(-2))(1, 1e-300) == float("inf")
    assert str(fit([1, 1], [2, 4], [100, 25], target=(1, 4)).law) == "400 * s^-2"
    f = fit([1, 1], [2, 4], [100, 25], target=(1, 1e-300))
    assert (str(f.law), round(f.law(1, 1e-300), 6)) == ("175 - 37.5 * s", 175)


def test_inputs_whose_features_differ_take_the_nearest_ones():
    """Found by the fuzz bench: inputs that disagree on a feature (the paper's
    BT-IO class B at np 4 said to use individual file pointers) ended in
    KeyError 'features', and a feature only one input names (the schema takes
    any) in a KeyError of its name.  The target takes the nearest input's
    features (np 16's, for np 64)."""
    ins = [(str(PAPER / f"btio-B-{n}.json"), load_model(PAPER / f"btio-B-{n}.json")) for n in (4, 9, 16)]
    ins[0][1]["application"]["features"]["individual_pointers"] = True
    ins[1][1]["application"]["features"]["explicit_offsets_extra"] = True    # a key the schema lets through
    ext = extrapolate(ins, 64)
    assert ext["application"]["features"] == ins[2][1]["application"]["features"]
    assert ext["application"]["features"]["individual_pointers"] is False


def test_what_cannot_be_extrapolated(models):
    b2, b4 = models("btio_like", 2), models("btio_like", 4)
    with pytest.raises(ExtrapolationError, match=r"models differ in structure at run 1 .*btio_like-2-model"
                       r"\.json has phases 1 to 3 \(write of file 0 \S+/btio\.dat, MPI_File_write_at_all, collective\)"):
        extrapolate([b2, models("s3d_like", 4)], 16)
    with pytest.raises(ExtrapolationError, match=r"both at np 2: give models at different scales \(if they "
                       r"differ in problem size, give each one's with --sizes or --size-arg\)$"):
        extrapolate([b2, b2], 16)
    with pytest.raises(ExtrapolationError, match=r"both at np 2: they are of different programs "
                       r"\(btio_like, s3d_like\): give models of one application$"):
        extrapolate([b2, models("s3d_like", 2)], 16)
    with pytest.raises(ExtrapolationError, match="every input is at size 1: a law in the size needs"):
        extrapolate([b2, b4], 16, size=32, sizes=[1, 1])
    with pytest.raises(ExtrapolationError, match="--size needs each input's size"):
        extrapolate([b2, b4], 16, size=32)
    one = json.loads(json.dumps(b2[1]))
    one["application"]["np"] = 1
    with pytest.raises(ExtrapolationError, match="x.json: a run at np 1 cannot serve as a base"):
        extrapolate([("x.json", one), b4], 16)


def test_a_law_refused_names_the_inputs(models):
    """Issue 78 (fuzz, extrapolate seed 47366): btio_like's real np-2 model
    with its np-4 model claiming np 3 (its phases still at np 4): the phases'
    processes go (2, 2), (3, 4); the power law's least squares c = (2*2 + 3*4)
    / (2^2 + 3^2) = 16/13 fits both to within rounding (2.46, 3.69), and at
    np 16 gives 19.7, 20 processes, more than the target has.  The refusal is
    the inputs' together: it names them (it said only "run 1: ...")."""
    b2, b4 = models("btio_like", 2), models("btio_like", 4)
    odd = json.loads(json.dumps(b4[1]))
    odd["application"]["np"] = 3
    with pytest.raises(ExtrapolationError) as e:
        extrapolate([b2, ("odd.json", odd)], 16)
    assert str(e.value) == f"{b2[0]}, odd.json: run 1: the law of its processes gives 20 at np 16"


def test_cli_writes_a_model_every_command_reads(models, tmp_path):
    ins = [models("btio_like", n)[0] for n in (2, 4, 8)]
    out = tmp_path / "at64.json"
    p = subprocess.run(IOMODEL + ["extrapolate", *ins, "--np", "64", "-o", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "run 1.request_sizes[0]             163840 * np^-1               2560" in p.stdout
    assert "assumed: run 1: access_mode" in p.stderr
    m = load_model(out)
    assert m["application"]["np"] == 64 and m["source"]["kind"] == "extrapolated"
    show = subprocess.run(IOMODEL + ["show", str(out)], capture_output=True, text=True, check=True).stdout
    assert "inferred      extrapolated to np 64 from 3 models" in show
    ior = subprocess.run(IOMODEL + ["ior", str(out)], capture_output=True, text=True, check=True).stdout
    assert "-N 64" in ior or "-np 64" in ior
    pred = subprocess.run(IOMODEL + ["predict", str(out), "--vc", "vc4"], capture_output=True, text=True)
    assert pred.returncode == 0, pred.stderr
    assert "extrapolated to np 64 and vc4's profile measured np up to 32" in pred.stdout
    cmp = subprocess.run(IOMODEL + ["compare", str(out), "--vc", "vc3", "vc4"], capture_output=True, text=True)
    assert cmp.returncode == 0, cmp.stderr
    assert "measured at fewer processes:\n  vc3: the model is extrapolated to np 64" in cmp.stdout
    # between the inputs too, and replayed here: np 4 from np 2 and 8
    mid = tmp_path / "at4.json"
    subprocess.run(IOMODEL + ["extrapolate", ins[0], ins[2], "--np", "4", "-o", str(mid), "-q"],
                   check=True, capture_output=True)
    rep = subprocess.run(IOMODEL + ["replay", str(mid), "--vc", "local", "-o", str(tmp_path / "replay")],
                         capture_output=True, text=True, timeout=300)
    assert rep.returncode == 0, rep.stderr
    runs = json.loads((tmp_path / "replay" / "results.json").read_text())["runs"].values()
    # 3 writes of 163840 / 4 = 40960 B a process, read back: 491520 B each way
    assert sorted((r["phase_ids"], r["operation"], r["np"], r["ok"], r["bytes"]) for r in runs) == \
        [([1, 2, 3], "write", 4, True, 491520), ([4], "read", 4, True, 491520)]
    # the size read from the recorded command lines (argument 2: NX)
    ins32 = ins[:2] + [models("btio_like-32", 2)[0]]
    p = subprocess.run(IOMODEL + ["extrapolate", *ins32, "--np", "8", "--size", "32", "--size-arg", "2",
                                  "-o", str(tmp_path / "s.json"), "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert load_model(tmp_path / "s.json")["phases"][0]["rs"] == 163840
    # an extrapolated model as an input: its size is its own, not its recorded command line's (16)
    again = subprocess.run(IOMODEL + ["extrapolate", str(tmp_path / "s.json"), *ins[:2], "--np", "16",
                                      "--size", "32", "--size-arg", "2", "-o", str(tmp_path / "t.json"), "-q"],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    t = load_model(tmp_path / "t.json")
    assert [x["size"] for x in t["source"]["extrapolated"]["from"]] == [32, 16, 16]
    assert t["phases"][0]["weight"] == 40 * 32 ** 3
    bad = subprocess.run(IOMODEL + ["extrapolate", ins[0], "--np", "8", "--size", "32", "--size-arg", "9"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"iomodel: error: {ins[0]}: its command line (" + " ".join(
        load_model(ins[0])["application"]["command"]) + ") has no argument 9 (0 is the program)"
    assert refused(*ins, "--np", "8", "--size", "32", "--size-arg", "5") == (
        2, "iomodel: error: argument 5 of every model's command line is 3, so a law in it cannot reach "
        "--size 32: is it the size argument? (0 is the program)")
    assert refused(*ins, "--np", "8", "--sizes", "16,32", "--size-arg", "2") == \
        (2, "iomodel: error: --sizes and --size-arg both give the models' sizes: give one of them")


def test_logical_clock_steps_through_a_run(models):
    ext = extrapolate([models("btio_like", n) for n in (2, 4, 8)], 16)
    # btio_like's 120 Sendrecv before each of its 3 dumps; one barrier before the reads
    assert [p["logical_time"] for p in ext["phases"]] == \
        [{"first": 120, "comm_between": 0}, {"first": 240, "comm_between": 0},
         {"first": 360, "comm_between": 0}, {"first": 360, "comm_between": 1}]


def test_processes_moving_more_by_rank(models):
    """ior_like varsize: rank r moves (r+1) * 1000 B at the running sum, 3 times, then reads it
    back; at np 16 a repetition is 1000 * 16 * 17 / 2 = 136000 B."""
    for ins in ((2, 4, 8), (4, 8)):
        ext = extrapolate([models("varsize", n) for n in ins], 16)
        real = models("varsize", 16)[1]
        assert shape(ext) == shape(real)
        for p, q in zip(ext["phases"], real["phases"]):
            assert p["rs_groups"] == q["rs_groups"] == \
                [{"ranks": str(r), "rs": (r + 1) * 1000, "request_sizes": [(r + 1) * 1000]} for r in range(16)]
            assert (p["weight"], p["rs"], p["rs_min"], p["rs_max"], p["offsets"]["stride"]) == \
                (408000, 8500, 1000, 16000, 136000)
            assert p.get("reread_bytes") == q.get("reread_bytes")
        assert ext["files"][0]["extent"] == real["files"][0]["extent"] == 408000
        assert not any("divide" in x for x in ext["source"]["extrapolated"]["approximate"])


def test_two_files_written_in_turn(models):
    """ior_like alternate: write k of 4 goes to A at (k*P + r) * 4096 and to B at (r*4 + k) * 4096."""
    ext = extrapolate([models("alternate", n) for n in (2, 4, 8)], 16)
    assert shape(ext) == shape(models("alternate", 16)[1])
    assert [(p["file"], p["offsets"]["first"], p["offsets"]["per_rank"]) for p in ext["phases"]] == \
        [x for k in range(4) for x in ((0, k * 16 * 4096, 4096), (1, k * 4096, 16384))]
    assert [(f["size"], f["extent"]) for f in ext["files"]] == [(262144, 262144)] * 2


def test_s3d_like_at_a_grid_between(models):
    """From 16^3 (np 2, 4) and 32^3 (np 2) to 24^3 at np 4: two sizes let many laws through for the
    read-back's weight (512 + 8 * 16 * s^3, or a line), its request sizes' laws (512 and 8 * s^3
    a variable) are exact: 5 reads of 512 + 16 * 8 * 24^3 = 1769984 B."""
    ins = [models("s3d_like", 2), models("s3d_like", 4), models("s3d_like-32", 2)]
    ext = extrapolate(ins, 4, size=24, sizes=[16, 16, 32])
    assert shape(ext) == shape(models("s3d_like-24", 4)[1])
    assert [f["size"] for f in ext["files"]] == [512 + 16 * 8 * 24 ** 3] * 5


def test_exact_weight_kept_where_it_does_not_divide(models):
    """btio_like 24^3 at np 7: 40 * 24^3 = 552960 B a dump, 78994.3 a process; the groups add up."""
    ins = [models("btio_like", 2), models("btio_like", 4), models("btio_like-32", 2)]
    ext = extrapolate(ins, 7, size=24, sizes=[16, 16, 32])
    for p in ext["phases"]:
        assert p["weight"] == 552960 * p["rep"] and p["rs"] == 78994
        assert sum(g["rs"] * len(parse_ranks(g["ranks"])) for g in p["rs_groups"]) * p["rep"] == p["weight"]
    assert ext["files"][0]["size"] == 3 * 552960


def test_np_and_size_together_refused(models):
    with pytest.raises(ExtrapolationError, match=r"change np and size together \(np 2 size 16, np 4 size 32\)"):
        extrapolate([models("btio_like", 2), models("btio_like-32", 4)], 8, size=32, sizes=[16, 32])
    with pytest.raises(ExtrapolationError, match="at sizes 16, 32: give the target's with --size"):
        extrapolate([models("btio_like", 2), models("btio_like-32", 4)], 8, sizes=[16, 32])


def test_btio_like_pieces_at_a_grid_between(models):
    """At np 4 a view's piece is 40 B x s x s/2 (X whole, Y halved), fitted on the np-4 inputs
    at 16^3 and 32^3: 11520 B at 24^3, as the real trace's."""
    ins = [models("btio_like", 2), models("btio_like", 4), models("btio_like-32", 2), models("btio_like-32", 4)]
    ext = extrapolate(ins, 4, size=24, sizes=[16, 16, 32, 32])
    real = models("btio_like-24", 4)[1]
    assert shape(ext) == shape(real)
    assert [p["offsets"]["piece"] for p in ext["phases"]] == [p["offsets"]["piece"] for p in real["phases"]] \
        == [20 * 24 ** 2] * 4


def _operations(p):
    """Every operation of a phase: its processes' requests, every repetition."""
    groups = p.get("rs_groups") or [{"ranks": p["ranks"], "request_sizes": p["request_sizes"]}]
    return p["rep"] * sum(len(parse_ranks(g["ranks"])) * len(g["request_sizes"]) for g in groups)


@pytest.mark.parametrize("ins,target", [((4, 9, 25), 16), ((16, 25), 36)])
def test_bt_simple_with_an_uneven_input(models, ins, target):
    """NAS BT-IO simple's rows (tests/programs/bt_simple.c, 12^3 points of 40 B, 3 dumps): at
    np 4, 9, 16 and 36 its cells divide the grid, every row of a process is one size and
    analyze gives rep = the rows, iop 1; at np 25 (widths 3 3 2 2 2) a process writes 28 to 30
    rows of 120 or 80 B with no shorter period: rep 1, iop 29 (the lowest rank's).  Both
    describe 144 q rows a dump (q = sqrt(np)) of 69120 B in all, which the extrapolation fits:
    at np 16, 4 cells of 3 x 3 rows = 36 rows of 120 B a process; at np 36, 6 cells of 2 x 2
    = 24 rows of 80 B."""
    b25 = models("bt_simple", 25)[1]
    assert [(p["iop"], p["rep"], _operations(p), p["weight"]) for p in b25["phases"]] == \
        [(29, 1, 720, 69120)] * 3 + [(29, 3, 2160, 207360)]
    ext = extrapolate([models("bt_simple", n) for n in ins], target)
    assert shape(ext) == shape(models("bt_simple", target)[1])
    rows, size = {16: (36, 120), 36: (24, 80)}[target]
    assert [(p["np"], p["iop"], p["request_sizes"], p["rep"], p["weight"]) for p in ext["phases"]] == \
        [(target, 1, [size], rows, 69120)] * 3 + [(target, 1, [size], 3 * rows, 207360)]
    laws = {x["field"]: x["law"] for x in ext["source"]["extrapolated"]["laws"]}
    assert laws["run 1.operations"] == "144 * np^1/2" and laws["run 2.operations"] == "432 * np^1/2"
    assert any(x.startswith("run 1: the inputs' patterns differ") for x in ext["source"]["extrapolated"]["approximate"])


def test_bt_simple_to_an_uneven_target(models):
    """From np 4, 9 and 16 to 25: 144 x 5 = 720 rows a dump, 28.8 a process, and 69120 B, 1728
    cells of 40 B (the inputs' requests' unit).  As a block division: 720 = 25 x 28 + 20 rows,
    1728 = 25 x 69 + 3 cells, so ranks 0-2 write 29 rows of 70 cells (12 rows of 3 cells, 17
    of 2), ranks 3-19 29 rows of 69 (11 of 3, 18 of 2), ranks 20-24 28 rows of 69 (13 of 3,
    15 of 2).  The read-back: 2160 rows (25 x 86 + 10) of 5184 cells (25 x 207 + 9), rep 1:
    no input repeats an uneven pattern to tell that the application's repeats 3 times.
    The real np 25 (analyze: rows 28, 29 or 30 by the process's Y coordinate) has the same
    operations and bytes."""
    ext = extrapolate([models("bt_simple", n) for n in (4, 9, 16)], 25)
    real = models("bt_simple", 25)[1]

    def sizes(n3, n2):
        return [120] * n3 + [80] * n2
    w = ext["phases"][0]
    assert (w["iop"], w["rep"], w["rs"], w["rs_min"], w["rs_max"], w["weight"]) == (29, 1, 2764, 2760, 2800, 69120)
    assert w["rs_groups"] == [{"ranks": "0-2", "rs": 2800, "request_sizes": sizes(12, 17)},
                              {"ranks": "3-19", "rs": 2760, "request_sizes": sizes(11, 18)},
                              {"ranks": "20-24", "rs": 2760, "request_sizes": sizes(13, 15)}]
    r = ext["phases"][3]
    assert (r["iop"], r["rep"], r["rs"], r["weight"]) == (87, 1, 8294, 207360)
    assert [(g["ranks"], g["rs"], len(g["request_sizes"])) for g in r["rs_groups"]] == \
        [("0-8", 8320, 87), ("9", 8280, 87), ("10-24", 8280, 86)]
    assert [(p["np"], p["ranks"], _operations(p), p["weight"]) for p in ext["phases"]] == \
        [(p["np"], p["ranks"], _operations(p), p["weight"]) for p in real["phases"]]
    assert [p["rs"] for p in real["phases"]] == [2764] * 4        # a repetition: a dump
    assert ext["runs"] == real["runs"] and ext["files"][0]["size"] == real["files"][0]["size"] == 207360
    assert sum("do not divide evenly over 25 processes" in x
               for x in ext["source"]["extrapolated"]["approximate"]) == 2



# s3d_like's array is C order, Z fastest: its grid PX x PY x PZ is PZ x PY x PX fastest first
Z_SPLIT = [("112", 2), ("122", 4), ("222", 8)]         # every input splits Z in 2
Z_ONLY = [("112", 2), ("114", 4), ("118", 8)]          # Z alone, in 2, 4, 8


def fastest_first(g):
    return [int(x) for x in reversed(g)]


@pytest.mark.parametrize("inputs", [Z_SPLIT, Z_ONLY], ids=["z-split-in-2", "z-only"])
def test_pieces_follow_the_process_grid(models, inputs):
    """s3d_like 32^3 at np 16 on 2 x 2 x 4: each process's block is 8 x 16 x 16 points, its
    contiguous ranges run along Z, 32 / 4 = 8 doubles: a piece of 64 B.  The inputs split Z
    first too, in PZ: pieces of 8 x 32 / PZ = 128 B (in 2: a constant that said 128 at 16),
    or 128, 64, 32 at np 2, 4, 8 (Z alone: a law 256 / np that said 16).  With the grids,
    piece x PZ = 256 in every input, over the target's PZ = 4: 64, as the real trace's."""
    ins = [models(f"s3d_like-32-{g}", n) for g, n in inputs]
    real = models("s3d_like-32-224", 16)[1]
    assert [p["offsets"].get("piece") for p in real["phases"]] == [None, 64] * 5
    ext = extrapolate(ins, 16, grid=[4, 2, 2], grids=[fastest_first(g) for g, _ in inputs])
    assert shape(ext) == shape(real)
    assert [p["offsets"].get("piece") for p in ext["phases"]] == [None, 64] * 5
    laws = {x["field"]: x for x in ext["source"]["extrapolated"]["laws"]}
    assert (laws["run 2.offsets.piece"]["law"], laws["run 2.offsets.piece"]["kind"]) == ("256 / p1", "by grid")
    assert ext["source"]["extrapolated"]["grid"] == [4, 2, 2]
    assert [x["grid"] for x in ext["source"]["extrapolated"]["from"]] == [fastest_first(g) for g, _ in inputs]
    # without the grids: the nearest input's piece, said to be assumed, and no law
    blind = extrapolate(ins, 16)
    near = inputs[-1][1]
    assert [p["offsets"].get("piece") for p in blind["phases"]] == [None, 8 * 32 // int(inputs[-1][0][2])] * 5
    assert not any(x["field"].endswith("piece") for x in blind["source"]["extrapolated"]["laws"])
    assert any(x.startswith("runs 2, 4, 6, 8, 10: offsets.piece: ") and f"(np {near}), a view's pieces follow "
               "the process grid, which the inputs do not give" in x for x in blind["source"]["extrapolated"]["assumed"])


def test_pieces_of_an_axis_no_input_splits_first(models):
    """A target that splits X (fastest first: 1 x 1 x 16) where every input splits Z first:
    nothing tells its pieces, said."""
    ins = [models(f"s3d_like-32-{g}", n) for g, n in Z_SPLIT]
    ext = extrapolate(ins, 16, grid=[1, 1, 16], grids=[fastest_first(g) for g, _ in Z_SPLIT])
    assert [p["offsets"].get("piece") for p in ext["phases"]] == [None, 128] * 5
    assert any("offsets.piece: 128 taken from" in x and "no input's grid splits axis 3 first, as the target's "
               "1x1x16 does" in x for x in ext["source"]["extrapolated"]["assumed"])
    with pytest.raises(ExtrapolationError, match=r"^--grid 4x2x2 is 16 processes, not --np 8$"):
        extrapolate(ins, 8, grid=[4, 2, 2], grids=[fastest_first(g) for g, _ in Z_SPLIT])
    with pytest.raises(ExtrapolationError, match=r"s3d_like-32-122-4-model\.json: its grid 2x2x2 is 8 processes, "
                       r"not its np 4$"):
        extrapolate(ins, 16, grid=[4, 2, 2], grids=[[2, 1, 1], [2, 2, 2], [2, 2, 2]])
    with pytest.raises(ExtrapolationError, match=r"^--grid needs each input's grid \(--grids or --grid-args\)$"):
        extrapolate(ins, 16, grid=[4, 2, 2])


def test_cli_reads_the_grids_from_the_command_lines(models, tmp_path):
    """s3d_like's PX PY PZ are its arguments 6, 7, 8: fastest first, 8,7,6."""
    ins = [models(f"s3d_like-32-{g}", n)[0] for g, n in Z_SPLIT]
    out = tmp_path / "at16.json"
    p = subprocess.run(IOMODEL + ["extrapolate", *ins, "--np", "16", "--grid", "4x2x2", "--grid-args", "8,7,6",
                                  "-o", str(out), "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    m = load_model(out)
    assert [p["offsets"].get("piece") for p in m["phases"]] == [None, 64] * 5
    assert [x["grid"] for x in m["source"]["extrapolated"]["from"]] == [[2, 1, 1], [2, 2, 1], [2, 2, 2]]
    assert refused(*ins, "--np", "16", "--grid", "4x2", "--grid-args", "8,7,6") == (
        2, "iomodel: error: --grid and the inputs' grids have different numbers of axes (4x2, 2x1x1, 2x2x1, "
        "2x2x2): give each "
        "with the same axes, fastest-varying first")
    assert refused(*ins, "--np", "16", "--grid", "4x0x2", "--grids", "2x1x1") == (
        2, "iomodel: error: --grid 4x0x2: give the processes along each axis, fastest-varying first, as 4x2x2")


def profile_16k():
    """A profile of 16 KiB independent operations, alone and at np 16, shared file and file
    per process (per operation: writes 15 us alone, 60 us at 16; reads 3 and 12 us): numbers
    given, so that predictions of two models differ only by what the models say."""
    rs = 16384
    return Profile.from_points([{"operation": op, "access_type": at, "collective": False, "rs": rs, "np": n,
                                 "bw_Bps": n * rs / (t * 1e-6)}
                                for op, t1 in (("write", 15), ("read", 3)) for at in ("shared", "unique")
                                for n, t in ((1, t1), (16, 4 * t1))])


@pytest.mark.parametrize("kind", ["weak", "strong", "fpp"])
def test_ior_times_are_the_nearest_inputs(models, kind):
    """IOR's layout at np 2, 4 and 8 (weak: 64 KiB blocks; strong: 1 MiB in all; fpp: a file
    each), extrapolated to 16: every size field is the real np-16 model's (16 transfers of
    16 KiB a process in each phase; strong: 1024 / 16 = 64 KiB a process).  The times are np 8's,
    measured at the same place, scaled by the bytes a process moves: x 1 (weak, fpp: 64 KiB
    at 8 and 16), x 8/16 = 0.5 (strong: 128 KiB at 8, 64 at 16); the computing between a
    process's operations (duration_s less io_time_s, over its operations but one) by the bytes
    an operation moves, 16 KiB at every np: x 1.  predict reads nothing else of them, so
    predict on the extrapolated model is predict on the real np-16 model with np 8's times."""
    ins = [models(f"ior-{kind}", n) for n in (2, 4, 8)]
    real = models(f"ior-{kind}", 16)[1]
    ext = extrapolate(ins, 16)
    assert shape(ext) == shape(real)
    assert [(p["rep"], p["rs"], p["weight"]) for p in ext["phases"]] == [(16, 16384, 16 * 16 * 16384)] * 2
    near = ins[2][1]
    f = 0.5 if kind == "strong" else 1
    hand = json.loads(json.dumps(real))
    for p, q, h in zip(ext["phases"], near["phases"], hand["phases"]):
        assert p["gap_s"] == pytest.approx(max(0.0, q["gap_s"]) * f, abs=1e-9)
        assert p["io_time_s"] == pytest.approx(q["io_time_s"] * f, abs=1e-9)
        assert think_time(p) == pytest.approx(think_time(q), abs=1e-9)
        assert p["compute_s"] == pytest.approx(q["compute_s"] / (q["rep"] - 1) * 15, abs=1e-9)
        assert p["buffer_offset"] == q["buffer_offset"]
        h.update({k: p[k] for k in ("gap_s", "io_time_s", "duration_s", "compute_s", "buffer_offset")})
    laws = {x["field"]: x for x in ext["source"]["extrapolated"]["laws"]}
    assert laws["run 1.gap_s"]["kind"] == "measured" and laws["run 1.gap_s"]["law"].endswith(
        f" s at np 8 x {f:.4g} (bytes a process)")
    vc = __import__("types").SimpleNamespace(name="vc")
    got, want = (predict(m, vc, profile_16k()) for m in (ext, hand))
    assert [(p["time_s"], p["note"]) for p in got["phases"]] == [(p["time_s"], p["note"]) for p in want["phases"]]
    assert all("between operations: per op" in p["note"] for p in got["phases"])


def test_huge_targets_and_impossible_sizes(models, tmp_path):
    """Issue 78: --np 16777216 (the most a model holds) from the paper's BT-IO
    class B models answers at once, its ranks '0-16777215', never listed one
    by one (it took minutes); processes moving a + b * rank bytes would need a
    group each, refused past 65536; sizes that are not positive finite numbers
    are refused in one line, not a math domain error."""
    ex = ROOT / "models" / "examples"
    out = tmp_path / "big.json"
    p = subprocess.run(IOMODEL + ["extrapolate", *(str(ex / f"btio-B-{n}.json") for n in (4, 9, 16)),
                                  "--np", "16777216", "-o", str(out), "-q"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert {q["ranks"] for q in json.loads(out.read_text())["phases"]} == {"0-16777215"}
    varsize = [models("varsize", n) for n in (2, 4)]
    with pytest.raises(ExtrapolationError, match=r"run 1: its processes move 1000 \+ 1000 \* rank bytes, which "
                                                 r"at np 100000 is 100000 groups of processes of their own; at "
                                                 r"most 65536"):
        extrapolate(varsize, 100000)
    b4, b9 = (str(ex / f"btio-B-{n}.json") for n in (4, 9))
    code, err = refused(b4, b9, "--np", "16", "--size", "inf", "--sizes", "1,2")
    assert code == 2 and err.endswith("argument --size: invalid finite number value: 'inf'")
    with pytest.raises(ExtrapolationError, match="a problem size of 0: sizes are positive, finite numbers"):
        extrapolate([(b4, load_model(b4)), (b9, load_model(b9))], 16, size=3, sizes=[0, 2])
