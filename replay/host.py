"""What the machine iomodel runs on says about its own load."""
import os


def steal_s():
    """CPU time the hypervisor has taken from this virtual machine since boot, in
    seconds (all CPUs; /proc/stat's steal, counted in ticks of 1/SC_CLK_TCK s),
    or None where the kernel does not say.  A run during which the host kept
    this machine's processors busy with its other guests measures them, not
    the storage (docs/accuracy.md, "The hypervisor's steal")."""
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def stolen_since(before):
    """Steal since `before` (a steal_s() reading), None when either is unknown."""
    now = steal_s()
    return None if before is None or now is None else round(now - before, 3)
