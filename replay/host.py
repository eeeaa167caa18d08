"""What the machine iomodel runs on says about its own load."""
import os
import time


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


# A run that lost this much of its wall time to the hypervisor (steal, summed over
# the CPUs) measured the host's other guests too; below it a tick of steal mostly
# falls in the launch, not in the I/O timed (docs/accuracy.md, "The hypervisor's steal").
STOLEN_SHARE = 0.05


def lost_to_steal(entry):
    """Whether a run ({"steal_s", "seconds"}) lost STOLEN_SHARE of its wall time
    or more to the hypervisor."""
    steal, secs = entry.get("steal_s"), entry.get("seconds")
    return bool(steal and secs and steal >= STOLEN_SHARE * secs)


def until_calm(attempt, retries, on_stolen=None, pause=0.0):
    """attempt() -> (result, wall_s, steal_s), made again while it lost
    STOLEN_SHARE of its wall time or more to the hypervisor, at most `retries`
    times more; on_stolen(j, wall_s, steal_s) is called for attempt j before the
    next (to move its files away, to say so), then `pause` seconds pass: the
    host's load comes in stretches.  The last attempt is kept whatever it lost.
    Returns its result and steal, and the attempts set aside ({"wall_s",
    "steal_s"})."""
    if retries < 0:
        raise ValueError(f"retries {retries}: expected 0 or more")
    aside = []
    for j in range(retries + 1):
        out, wall, steal = attempt()
        if j == retries or not lost_to_steal({"steal_s": steal, "seconds": wall}):
            return out, steal, aside
        aside.append({"wall_s": round(wall, 3), "steal_s": steal})
        if on_stolen is not None:
            on_stolen(j, wall, steal)
        time.sleep(pause)
