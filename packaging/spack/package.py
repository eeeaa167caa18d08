# Spack package recipe for iomodel (docs/install.md).  Copy it into a Spack
# repository as packages/iomodel/package.py, then `spack install iomodel`
# (or `iomodel ^mpich`, `iomodel ^cray-mpich`...).
from spack.package import *

try:  # Spack 1.0 and later keep the build systems in the builtin repository
    from spack_repo.builtin.build_systems.python import PythonPackage
except ImportError:  # earlier Spack: spack.package has it
    pass


class Iomodel(PythonPackage):
    """I/O models of MPI applications, traced once and replayed with IOR to
    predict their I/O time and cost on candidate clusters (PAS2P-IO's method)."""

    # iomodel has no public repository yet: set these to the clone you install
    # from (a URL, or file:// of a local clone), or use `spack develop`.
    homepage = "https://github.com/iomodel/iomodel"
    git = "https://github.com/iomodel/iomodel.git"

    version("main", branch="main")

    # The tracer and the replayer are built against the MPI of the spec, as
    # Darshan's runtime and IOR are.
    depends_on("c", type="build")
    depends_on("mpi")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("zlib-api")
    depends_on("zstd")           # the job trace file's compressor (deflate without it)
    depends_on("python@3.9:", type=("build", "run"))
    depends_on("py-scikit-build-core@0.10:", type="build")
    depends_on("py-numpy", type=("build", "run"))
    depends_on("py-pyarrow", type=("build", "run"))
    depends_on("py-networkx", type=("build", "run"))
    depends_on("py-pyyaml", type=("build", "run"))

    def config_settings(self, spec, prefix):
        # Open MPI's ABI, or MPICH's (MPICH, Intel MPI, Cray MPICH, MVAPICH)
        family = "openmpi" if spec["mpi"].name == "openmpi" else "mpich"
        return {
            "cmake.define.MPI_C_COMPILER": spec["mpi"].mpicc,
            "cmake.define.IOMODEL_MPI": family,
        }
