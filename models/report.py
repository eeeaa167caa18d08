"""How `iomodel show` presents a model: the phase table (the paper's Table V)
and the metadata (its section III-A-1), or a JSON summary for scripts."""
import os

from iomodel.models import rereads
from iomodel.outputs import comment_text


def human(n):
    """Bytes with binary units, as the paper's MB (MiB)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024


def count(n, word, plural=None):
    """1 process, 4 processes."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def operation_name(phase):
    """MPI_File_write_at_all -> Write_at_all, as the paper's tables name them;
    a POSIX or stdio call by its name and interface: pwrite64 (POSIX)."""
    r = phase.get("routine")
    if not r:
        return phase["operation"] + (f" ({phase['interface']})" if phase.get("interface") else "")
    if not r.startswith("MPI_"):
        return f"{r} ({phase.get('interface') or 'POSIX'})"
    r = r.replace("MPI_File_", "")
    return r[:1].upper() + r[1:]


FEATURE_WORDS = [("explicit_offsets", "explicit offsets"), ("individual_pointers", "individual file pointers"),
                 ("shared_pointers", "shared file pointers"), ("blocking", "blocking I/O operations"),
                 ("nonblocking", "nonblocking I/O operations"), ("collective", "collective operations"),
                 ("independent", "independent operations")]


def metadata_sentence(model):
    """The paper's III-A-1 sentence: features, access modes and types, files."""
    feats = model["application"]["features"]
    words = [w for k, w in FEATURE_WORDS if feats.get(k)]
    unknown = [w for k, w in FEATURE_WORDS if feats.get(k) is None]
    files = model["files"]
    modes = sorted({f["access_mode"] for f in files})
    types = sorted({f["access_type"] for f in files})
    nshared = sum(f["access_type"] == "shared" for f in files)
    nunique = sum(len(f["paths"]) for f in files if f["access_type"] == "unique")
    ifaces = list(dict.fromkeys(p["interface"] for p in model["phases"] if p.get("interface")))
    # no feature known (a Darshan log keeps none) is not "no data access"
    what = ", ".join(words) if words else "data access" if model["phases"] else "no data access"
    parts = [what + (f" through {' and '.join(ifaces)}" if ifaces else "")]
    parts.append(f"{' and '.join(m.capitalize() for m in modes)} access mode" if modes else "")
    parts.append(f"{' and '.join(t.capitalize() for t in types)} access type" if types else "")
    what = []
    if nshared:
        what.append(count(nshared, "shared file"))
    if nunique:
        what.append(f"{count(nunique, 'unique file')} (one per process)")
    parts.append(" and ".join(what))
    s = "; ".join(p for p in parts if p) + "."
    if unknown:
        s += f" Unknown from this source: {', '.join(unknown)}."
    return s[:1].upper() + s[1:]


def phase_rows(model):
    """One row per run of identical phases ("1 to 40")."""
    byid = {p["id"]: p for p in model["phases"]}
    files = model["files"]
    rows = []
    for first, last in model["runs"]:
        p = byid[first]
        f = files[p["file"]]
        names = list(dict.fromkeys(os.path.basename(files[byid[i]["file"]]["name"])
                                   for i in range(first, last + 1)))
        rs = human(p["rs"]) if "rs_groups" not in p else \
            f"{human(p['rs_min'])}..{human(p['rs_max'])}"
        if p["iop"] > 1:
            rs += f" ({p['iop']} ops)"
        rows.append({
            "IdPh": str(first) if first == last else f"{first} to {last}",
            "file": names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]} ({len(names)} files)",
            # a phase of some of the processes says which (rank 0 writing for all)
            "np": str(p["np"]) + (f" (rank{'s' * (p['np'] > 1)} {p['ranks']})"
                                  if p["np"] < model["application"]["np"] else ""),
            "operation": operation_name(p),
            "rs": rs,
            "rep": str(p["rep"]),
            "weight(IdPh)": f"{p['rep']} * {p['np']} * {human(p['rs'])}" if "rs_groups" not in p
            else human(p["weight"]),
            # reread: read back through the open its writes used (docs/model-format.md)
            "access": f"{p['access_mode']}, {f['access_type']}" + (", reread" if rereads(p) else "")
            + (", synced" if p.get("synced") else "") + (", metadata" if p.get("metadata") else ""),
        })
    return rows


def text(model):
    app, an = model["application"], model["analysis"]
    hosts = ", ".join(f"{h} ({n})" for h, n in app["hosts"].items())
    out = [f"application   {app['name']}: {count(app['np'], 'process', 'processes')}"
           + (f" on {hosts}" if hosts else ""),
           f"command       {' '.join(app['command'])}"]
    times = [f"{label}{app[k]:.6f} s" for label, k in (("", "run_time_s"), ("I/O ", "io_time_s"))
             if app.get(k) is not None]
    pio = app.get("process_io_time_s")
    if pio:       # what the application's own timers would say, beside the phases' span
        times.append(f"in I/O calls {pio['max']:.6f} s (slowest process), {pio['mean']:.6f} s (mean)")
    if times:
        out.append(f"run time      {', '.join(times)}")
    out.append(f"metadata      {metadata_sentence(model)}")
    for f in model["files"]:
        out.append(f"file {f['id']:<8} {f['name']}: {f['access_type']}, {f['access_mode']}, "
                   f"{f['role']}, {human(f['size'])} ({len(f['paths'])} path"
                   f"{'s' * (len(f['paths']) > 1)}, {count(f['np'], 'process', 'processes')})")
    out.append(f"weight(app)   {human(model['weight'])}   storage capacity {human(model['storage_capacity'])}")
    if an.get("max_comm_gap") is not None:
        out.append(f"phase rule    max_comm_gap {an['max_comm_gap']} ({an['threshold_rule']})")
    elif an.get("max_idle_s") is not None:
        out.append(f"phase rule    max_idle_s {an['max_idle_s']} ({an['threshold_rule']})")
    for k in ("unavailable", "inferred"):
        for line in model["source"].get(k, []):
            out.append(f"{k:<13} {line}")
    for line in (model["source"].get("partial") or {}).get("notes", []):
        out.append(f"partial       {line}")
    out.append("")
    rows = phase_rows(model)
    cols = ["IdPh", "file", "np", "operation", "rs", "rep", "weight(IdPh)", "access"]
    width = {c: max([len(c)] + [len(r[c]) for r in rows]) for c in cols}
    out.append("  ".join(c.ljust(width[c]) for c in cols))
    for r in rows:
        out.append("  ".join(r[c].ljust(width[c]) for c in cols))
    # a model's strings (names, paths, the command, notes) may hold newlines and
    # terminal escapes: each line is printed as one line of printable text
    return "\n".join(comment_text(line).rstrip() for line in out)


def summary(model):
    """`iomodel show --json`: what scripts need."""
    files = model["files"]
    return {
        "name": model["application"]["name"],
        "np": model["application"]["np"],
        "phases": [{
            "id": p["id"], "file": files[p["file"]]["name"], "np": p["np"], "ranks": p.get("ranks"),
            "operation": p["operation"], "routine": p.get("routine"), "interface": p.get("interface"),
            "collective": p.get("collective"), "rs": p["rs"],
            "request_sizes": p["request_sizes"], "rep": p["rep"], "weight": p["weight"],
            "access_mode": p["access_mode"], "access_type": files[p["file"]]["access_type"],
            "synced": bool(p.get("synced")), "reread": rereads(p), "metadata": bool(p.get("metadata")),
        } for p in model["phases"]],
        "runs": model["runs"],
        "files": [{k: f[k] for k in ("name", "access_type", "access_mode", "role", "size")} for f in files],
        "storage_capacity": model["storage_capacity"],
        "weight": model["weight"],
    }
