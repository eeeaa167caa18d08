"""Install the iomodel Python package and its `iomodel` command.

The Python code lives in the architecture's folders (analyzer/, models/,
replay/, tracer/) and is installed under the `iomodel` namespace.  The C
tracer is built by CMake (see scripts/setup.sh), which installs the library
into tracer/lib/ where iomodel.tracer finds it.
"""
from setuptools import setup

setup(
    name="iomodel",
    version="0.1.0",
    description="I/O models of MPI applications and I/O time/cost prediction on candidate clusters",
    python_requires=">=3.9",
    packages=["iomodel", "iomodel.analyzer", "iomodel.tracer", "iomodel.models", "iomodel.replay"],
    package_dir={"iomodel": "iomodel", "iomodel.analyzer": "analyzer", "iomodel.tracer": "tracer",
                 "iomodel.models": "models", "iomodel.replay": "replay"},
    package_data={"iomodel.tracer": ["lib/*/*.so", "lib/*/iomodel_replay", "lib/*/build.json"], "iomodel.replay": ["clusters/*.yaml"], "iomodel.models": ["examples/*.json"]},
    install_requires=["numpy", "pyarrow", "networkx", "pyyaml"],
    extras_require={"darshan": ["darshan"], "plot": ["matplotlib"],
                    "test": ["pytest", "hypothesis", "mpi4py", "darshan", "matplotlib"]},
    entry_points={"console_scripts": ["iomodel = iomodel.cli:main"]},
)
