"""The machine a benchmark ran on, recorded beside its figures."""
import datetime
import os
import platform
import subprocess


def machine(**extra):
    """CPU model, cores, kernel and MPI of this machine, `extra` fields, and today's date."""
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    ompi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(), "mpi": ompi,
            **extra, "date": datetime.date.today().isoformat()}
