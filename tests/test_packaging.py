"""Installing on a site's cluster (docs/install.md): `pip install .` builds the
tracer and the replayer against the MPI it is given, and the Spack recipe's
build steps name options the CMake build has."""
import ast
import json
import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile

from conftest import ROOT

RECIPE = ROOT / "packaging" / "spack" / "package.py"


def test_pip_builds_a_wheel_against_the_mpi_given_and_traces_with_it(mpich_build_dir, tmp_path):
    """A wheel built against MPICH holds MPICH's tracer and replayer and no C
    sources; installed in a new environment, its `iomodel trace` picks that
    build for an MPICH program and traces its 2 ranks."""
    wheels = tmp_path / "wheels"
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                        "-C", "cmake.define.MPI_C_COMPILER=mpicc.mpich", "-C", f"build-dir={tmp_path / 'build'}",
                        "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    (wheel,) = wheels.glob("iomodel-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    built = {n for n in names if "/lib/" in n}
    assert built == {f"iomodel/tracer/lib/mpich/{f}" for f in
                     ("libiomodel_trace.so", "iomodel_replay", "build.json")}
    assert not [n for n in names if n.endswith((".c", ".h", ".tmpl", "CMakeLists.txt"))]
    assert {"iomodel/cli.py", "iomodel/analyzer/trace.py", "iomodel/cluster/shipped/local-mpich.yaml",
            "iomodel/models/examples/btio-C-16.json"} <= names
    info = json.loads(zipfile.ZipFile(wheel).read("iomodel/tracer/lib/mpich/build.json"))
    assert info["family"] == "mpich" and info["library"].startswith("MPICH ")

    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    py = env_dir / "bin" / "python"
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the checkout's own iomodel (editable) must not shadow the wheel's
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site,
                        str(wheel)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    data, out = tmp_path / "data", tmp_path / "trace"
    data.mkdir()
    p = subprocess.run([py, "-I", "-m", "iomodel", "trace", "-o", str(out), "--", "mpiexec.mpich", "-n", "2",
                        str(mpich_build_dir / "basic_c"), str(data)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "IOMODEL_POSIX": "0"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.splitlines()[0] == f"iomodel: tracing with the {info['library']} build " \
        "(basic_c links libmpich.so.12)"
    assert sorted(f.name for f in out.iterdir()) == ["job.iot"]
    where = subprocess.run([py, "-I", "-c", "import iomodel.mpi as m; print(m.lib_dir())"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert where == f"{site}/iomodel/tracer/lib"


def cmake_cache_options():
    """The variables the CMake build reads from its command line: its own cache
    entries, and FindMPI's MPI_C_COMPILER."""
    text = "\n".join(p.read_text() for p in ROOT.glob("**/CMakeLists.txt")
                     if ".venv" not in p.parts and "build" not in p.parts)
    return set(re.findall(r"set\((\w+) [^)]*CACHE", text)) | set(re.findall(r"option\((\w+)", text)) \
        | {"MPI_C_COMPILER"}


def test_the_spack_recipe_depends_on_mpi_and_sets_the_builds_options():
    """package.py (Spack is not installed here: read, not run): a PythonPackage
    depending on the virtual `mpi`, on what pyproject.toml's build and
    dependencies name, and whose config settings define only CMake options the
    build has, choosing the ABI family iomodel knows."""
    tree = ast.parse(RECIPE.read_text(), str(RECIPE))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    assert cls.name == "Iomodel" and [b.id for b in cls.bases] == ["PythonPackage"]
    deps = {c.args[0].value: c for c in ast.walk(cls) if isinstance(c, ast.Call)
            and getattr(c.func, "id", None) == "depends_on"}
    assert "mpi" in deps and not deps["mpi"].keywords          # a link and run dependency
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert {f"py-{d}" for d in project["project"]["dependencies"]} <= set(deps)
    (backend,) = project["build-system"]["requires"]
    name, version = re.fullmatch(r"([\w-]+)>=([\d.]+)", backend).groups()
    assert f"py-{name}@{version}:" in deps
    (settings,) = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "config_settings"]
    (ret,) = [n for n in ast.walk(settings) if isinstance(n, ast.Return)]
    keys = [k.value for k in ret.value.keys]
    assert keys and all(k.startswith("cmake.define.") for k in keys)
    assert {k.removeprefix("cmake.define.") for k in keys} <= cmake_cache_options()
    families = {c.value for c in ast.walk(settings) if isinstance(c, ast.Constant)
                and isinstance(c.value, str) and c.value in ("openmpi", "mpich")}
    from iomodel.mpi import FAMILIES
    assert families == set(FAMILIES)
