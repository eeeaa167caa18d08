"""The accuracy bench's tables (bench/accuracy.py): rows, VC rankings, goals and
per-VC counts in Markdown, with the footnote that says how they were measured,
the README's summary and docs/accuracy.md's full tables (between their
<!-- bench:accuracy --> markers)."""
import statistics

from doc_blocks import put_block

from accuracy_apps import PAPER_APPS
from accuracy_score import KINDS, STEADY, STEADY_PHASE, again_by, kinds, launches_of_vc, mpi_env_of_vc, spread

MiB = 1 << 20
# what each testbed VC is (testbed/README.md); its limits come from the run
STORAGE = {"tmpfs": "tmpfs (memory)", "disk": "a disk throttled by FUSE",
           "gluster": "GlusterFS", "gluster2": "GlusterFS"}


def table(rows, missing=()):
    """Every row, then the rows not run (`missing`: the applications that could
    not be built or traced, the VCs they would have run on and why)."""
    ks = kinds(rows)
    short = {"predicted": "pred", "replayed": "repl", "modelled": "mod"}
    out = ["| app | size | VC | MiB | measured s (span) | runs spread | "
           + " | ".join(f"{KINDS[k].split(' (')[0]} s (err)" for k in ks)
           + f" | worst phase err {' / '.join(short[k] for k in ks)} | phases |",
           "|---|---|---|---|---|---|" + "---|" * len(ks) + "---|---|"]

    def pct(e):
        return "-" if e is None else f"{e * 100:+.0f}%"
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['app']} | {r['size']} | {r['vc']} | | failed: {r['error'][:60]} | |"
                       + " |" * (len(ks) + 2))
            continue
        out.append(f"| {r['app']} | {r['size']} | {r['vc']} | {r['weight_bytes'] / MiB:.2f} | "
                   f"{r['measured_io_time_s']:.3f} ({r['measured_span_s']:.3f}) | "
                   f"{'-' if spread(r) is None else f'{spread(r) * 100:.0f}%'} | "
                   + "".join(f"{r[f'{k}_io_time_s']:.3f} ({pct(r[f'error_{k}'])}) | " for k in ks)
                   + " / ".join(pct(r[f"worst_phase_error_{k}"]) for k in ks)
                   + f" | {len(r['phases'])} |")
    for m in missing:
        out.append(f"| {m['app']} | {m['size']} | {', '.join(m['vcs'])} | | not run: {first_line(m['why'], 60)} | |"
                   + " |" * (len(ks) + 2))
    return "\n".join(out)


def vc_groups(rows):
    """Per VC (vc, label, rows): the method paper's applications (NAS BT-IO,
    S3D-IO) apart from the examples, labelled so where the VC has both."""
    out = []
    for vc in dict.fromkeys(r["vc"] for r in rows):
        rs = [r for r in rows if r["vc"] == vc]
        paper = [r for r in rs if r.get("app") in PAPER_APPS]
        examples = [r for r in rs if r.get("app") not in PAPER_APPS]
        if examples:
            out.append((vc, f"{vc}: examples" if paper else vc, examples))
        if paper:
            out.append((vc, f"{vc}: BT-IO, S3D-IO", paper))
    return out


def np_text(result):
    """'np 2', or with rows of other ranks 'np 2 (bt-io-full, ...: np 4)'."""
    apps = {}
    for r in result["rows"] + result.get("missing", []):
        apps.setdefault(r.get("np") or result.get("np", 4), {})[r.get("app")] = None
    if len(apps) < 2:
        return f"np {next(iter(apps), result.get('np', 4))}"
    first, *others = apps
    return f"np {first} (" + "; ".join(f"{', '.join(apps[n])}: np {n}" for n in others) + ")"


def missing_lines(result):
    """One sentence per reason rows were not run, naming them and their VCs."""
    by = {}
    for m in result.get("missing", []):
        by.setdefault((m["why"], tuple(m["vcs"])), []).append(f"{m['app']} {m['size']}")
    return [f"Not run on {', '.join(vcs)}: {', '.join(names)}; {first_line(why, 200)}"
            for (why, vcs), names in by.items()]


def first_line(text, n):
    """A reason in a table's cell or a sentence: its first line, at most n characters."""
    return text.strip().splitlines()[0][:n].rstrip(".:")


def ranking_lines(rankings):
    ks = [k for k in KINDS if rankings and all(k in v for v in rankings.values())]
    out = []
    for name, v in rankings.items():
        out.append(f"| {name} | {' < '.join(v['measured'])} | " + " | ".join(
            f"{' < '.join(v[k])} ({'same' if v[k] == v['measured'] else 'differs'})" for k in ks) + " |")
    head = ["app, size", "measured (fastest first)", *(KINDS[k] for k in ks)]   # one VC: no ranking
    return "\n".join([f"| {' | '.join(head)} |", "|" + "---|" * len(head), *out])


def goal_lines(goals):
    ks = [k for k in KINDS if k in goals]
    out = [f"| goal | {' | '.join(KINDS[k] for k in ks)} |", "|---|" + "---|" * len(ks)]
    for label, key, of in (("total within 5%", "total_within_5pct", "rows"),
                           ("total within 10%", "total_within_10pct", "rows"),
                           (f"total within 5%, rows whose runs agree within {STEADY:.0%}",
                            "steady_total_within_5pct", "steady_rows"),
                           ("phase within 10%", "phases_within_10pct", "phases"),
                           (f"phase within 10%, phases whose runs agree within {STEADY_PHASE:.0%}",
                            "steady_phases_within_10pct", "steady_phases"),
                           ("VC ranking as measured", "rankings_same", "rankings")):
        if all(key in goals[k] for k in ks):
            out.append(f"| {label} | " + " | ".join(f"{goals[k][key]} of {goals[k][of]}" for k in ks) + " |")
    return "\n".join(out)


def per_vc_lines(rows):
    """Per VC (the paper's applications apart), against the time in calls: totals
    within 5% and 10%, phases within 10%."""
    rows = [r for r in rows if not r.get("error")]
    ks = kinds(rows)
    out = ["| VC | totals within 5% | totals within 10% | phases within 10% |", "|---|---|---|---|"]
    for _, label, rs in vc_groups(rows):
        ps = [p for r in rs for p in r["phases"]]

        def count(items, key, lim):
            return " / ".join(str(sum(abs(x[f"error_{k}"]) <= lim for x in items if x[f"error_{k}"] is not None))
                              for k in key)
        out.append(f"| {label} | {count(rs, ks, 0.05)} of {len(rs)} | {count(rs, ks, 0.10)} of {len(rs)} | "
                   f"{count(ps, ks, 0.10)} of {len(ps)} |")
    return "\n".join(out)


def pass_range_lines(rows):
    """One sentence per VC whose profile was measured in passes: how many of its
    measured totals fall inside the range of the predictions from each pass alone."""
    out = []
    rows = [r for r in rows if not r.get("error") and r.get("predicted_passes_io_time_s")]
    for vc in dict.fromkeys(r["vc"] for r in rows):
        rs = [r for r in rows if r["vc"] == vc]
        inside = sum(min(r["predicted_passes_io_time_s"]) <= r["measured_io_time_s"]
                     <= max(r["predicted_passes_io_time_s"]) for r in rs)
        widths = sorted((max(r["predicted_passes_io_time_s"]) - min(r["predicted_passes_io_time_s"]))
                        / r["predicted_io_time_s"] for r in rs)
        out.append(f"{vc}: predicted from each of its profile's "
                   f"{len(rs[0]['predicted_passes_io_time_s'])} passes alone, the totals span "
                   f"{widths[0]:.0%} to {widths[-1]:.0%} of the prediction (median "
                   f"{statistics.median(widths):.0%}); {inside} of {len(rs)} measured totals fall inside "
                   "their span.")
    return out


def recheck_lines(rows):
    """One sentence per rechecked VC: how far its second profile moved the predictions."""
    out = []
    for vc in dict.fromkeys(r["vc"] for r in rows if r.get("predicted_moved") is not None):
        rs = [r for r in rows if r["vc"] == vc and r.get("predicted_moved") is not None]
        moved = sorted(r["predicted_moved"] for r in rs)
        within = sum(abs(r["error_predicted_again"]) <= 0.05 for r in rs)
        out.append(f"{vc} characterized again after its applications ran: its {len(rs)} predicted "
                   f"totals moved by {moved[0] * 100:+.0f}% to {moved[-1] * 100:+.0f}% "
                   f"(median {statistics.median(abs(m) for m in moved) * 100:.0f}%); from the second "
                   f"profile, {within} of {len(rs)} totals are within 5% of the measured.")
    return out


def steal_lines(rows):
    """One sentence per VC whose application runs lost CPU time to the hypervisor
    (rows of runs before 2026-11-28 do not record it)."""
    out = []
    for vc in dict.fromkeys(r["vc"] for r in rows if r.get("measured_steal_s")):
        rs = [r for r in rows if r["vc"] == vc and r.get("measured_steal_s")]
        runs = [s for r in rs for s in r["measured_steal_s"] if s is not None]
        hit = [f"{r['app']} {r['size']} ({sum(bool(s) for s in r['measured_steal_s'])})"
               for r in rs if any(r["measured_steal_s"])]
        if runs:
            out.append(f"{vc}: the hypervisor took CPU time from this machine (steal) during "
                       f"{sum(s > 0 for s in runs)} of its {len(runs)} application runs, "
                       f"{max(runs):.2f} s at most" + (f": {', '.join(hit)}." if hit else "."))
    return out


def failed_vc_lines(result):
    """One sentence per VC that could not be started or characterized (it has no rows)."""
    return [f"{vc}: no rows, its start or characterization failed: {v['error'].strip().splitlines()[0][:200]}"
            for vc, v in result["characterize"].items() if isinstance(v, dict) and v.get("error")]


def mpi_env_text(result):
    """The Open MPI settings of the runs, per VC when they differ."""
    groups = {}
    for vc, env in mpi_env_of_vc(result).items():
        groups.setdefault(" ".join(f"{k}={v}" for k, v in sorted(env.items())), []).append(vc)
    if len(groups) == 1:
        return f"`{next(iter(groups))}`"
    return "; ".join(f"`{env}` ({', '.join(vcs)})" for env, vcs in groups.items())


def launch_text(result):
    """How each VC's replays spread their repetitions over launches."""
    launches = launches_of_vc(result)
    own = [vc for vc, n in launches.items() if n > 1]
    if not own:
        return ""
    one = [vc for vc, n in launches.items() if n == 1]
    return (", each repetition in a launch of its own (`--launches` as many)"
            + (f" on {', '.join(own)}, all in one launch on {', '.join(one)}" if one else ""))


def render(result):
    mach, rep = result["machine"], result.get("repeat", 1)
    other = {vc: n for vc, n in result.get("runs", {}).items() if n != rep}
    others = f" ({', '.join(f'{vc}: {n}' for vc, n in other.items())})" if other else ""
    vcs_line = "; ".join(f"{k}: {v['limit']}" for k, v in result["vcs"].items())
    g = result["goals"]
    return (f"{table(result['rows'], result.get('missing', []))}\n\nVC ranking (by I/O time, measured in calls):\n\n"
            f"{ranking_lines(result['rankings']['io_time'])}\n\n"
            f"Goals, against the time in calls (`io_time_s`):\n\n{goal_lines(g['io_time'])}\n\n"
            f"Per VC ({' / '.join(KINDS[k] for k in kinds(result['rows']))}):\n\n{per_vc_lines(result['rows'])}\n\n"
            f"and against the phases' spans (`duration_s`):\n\n{goal_lines(g['span'])}\n\n"
            + "".join(f"{line}\n\n" for line in pass_range_lines(result["rows"]) + recheck_lines(result["rows"])
                                         + steal_lines(result["rows"])
                                         + failed_vc_lines(result) + missing_lines(result)) +
            f"{np_text(result)} on {mach['cpu']}, {mach['cores']} cores, Linux {mach['kernel']}, {mach['mpi']}, "
            f"{mach['glusterfs']}; VCs {vcs_line}; {mach['date']}. "
            f"Measured: per phase the median over {rep}{others} traced runs of the application on the VC of the "
            f"slowest process's time inside the phase's I/O calls, of a collective phase its calls each "
            f"from the last process's entry to the last one's exit (the model's `io_time_s`), summed; span: "
            f"the same with the phases' `duration_s`. Runs spread: (slowest - fastest) of the runs' "
            f"I/O times / the measured I/O time; a phase's runs agree when their times in calls "
            f"do, (slowest - fastest) / median. Replayed: `iomodel replay --back-to-back --repeat {rep}`{others}"
            f"{launch_text(result)}"
            + (" (as modelled: `--as-modelled`, replay's default, the phases' offsets and the application's "
               "idle time between the phases of a run and its computing between a phase's operations)"
               if "modelled" in kinds(result["rows"]) else "") + ". "
            f"Profiles: `iomodel characterize {' '.join(result['characterize']['args'])}`"
            + (f" ({', '.join(result['characterize']['no_think_vcs'])}: without `--think`, run before it "
               f"existed; there predict takes the computing between operations as all given back, its "
               f"rule before the think points)"
               if result["characterize"].get("no_think_vcs") else "")
            + "".join(f" ({', '.join(vcs)}: `--think {pts}` only, run before the other think points "
                      f"existed; there predict reads the computing between operations from those)"
                      for pts, vcs in _by_points(result["characterize"].get("fewer_think_vcs", {})).items())
            + ". "
            f"Open MPI settings of every run: {mpi_env_text(result)}."
            + (f" Code: {result['code']}{again_by(result)}." if result.get("code") else "")
            + (f" Rows of {1 + len(result['combined_from'])} runs on one machine with one sweep"
               + (" (less the think points where said)" if result["characterize"].get("no_think_vcs")
                  or result["characterize"].get("fewer_think_vcs") else "")
               + ", "
               f"each VC's rows from one run (`--combine` {', '.join(result['combined_from'])}): "
               f"the rankings compare VCs measured hours apart." if result.get("combined_from") else ""))


def _by_points(fewer):
    """VCs grouped by the think points they had (fewer_think_vcs: VC -> points)."""
    out = {}
    for vc, pts in fewer.items():
        out.setdefault(pts, []).append(vc)
    return out


def summary(result):
    """The README's table: per VC, how many totals and phases each estimate got
    within the goals, the applications' own spread there, and the rankings."""
    rows = [r for r in result["rows"] if not r.get("error")]
    ks = kinds(rows)
    names = " / ".join(KINDS[k].split(" (")[0] for k in ks)
    out = [f"| VC | storage | runs' own spread (median) | totals within 5% ({names}) | "
           "totals within 10% | phases within 10% |", "|---|---|---|---|---|---|"]
    for vc, label, rs in vc_groups(rows):
        ps = [p for r in rs for p in r["phases"]]
        spreads = [spread(r) for r in rs if spread(r) is not None]

        def count(items, lim):
            return " / ".join(str(sum(x[f"error_{k}"] is not None and abs(x[f"error_{k}"]) <= lim
                                      for x in items)) for k in ks)
        limit = result["vcs"].get(vc, {}).get("limit", "-")
        what = STORAGE.get(vc, vc) + ("" if limit == "-" else f": {limit}")
        out.append(f"| {label} | {what} | "
                   f"{statistics.median(spreads):.0%} | {count(rs, 0.05)} of {len(rs)} | "
                   f"{count(rs, 0.10)} of {len(rs)} | {count(ps, 0.10)} of {len(ps)} |")
    g = result["goals"]["io_time"]
    ranked = " / ".join(f"{g[k]['rankings_same']}" for k in ks if "rankings_same" in g[k])
    n = next((g[k]["rankings"] for k in ks if "rankings" in g[k]), 0)
    mach = result["machine"]
    out += ["", f"VCs ranked by I/O time as measured: {ranked} of {n} (application, size) pairs. "
            + "".join(f"{line}. " for line in missing_lines(result)) +
            f"{np_text(result)}; {mach['cpu']}, {mach['cores']} cores, Linux {mach['kernel']}, "
            f"{mach['mpi']}; {mach['date']}" + (f", code {result['code']}" if result.get("code") else "") + "."]
    return "\n".join(out)


def sentence(result):
    """The README's words for a sitting of its own (--block other than
    accuracy): which applications on which VCs, and the counts of its goals."""
    rows = [r for r in result["rows"] if not r.get("error")]
    ks = kinds(rows)
    names = " / ".join(KINDS[k].split(" (")[0] for k in ks)

    def count(lim):
        return " / ".join(str(sum(r[f"error_{k}"] is not None and abs(r[f"error_{k}"]) <= lim for r in rows))
                          for k in ks)
    g = result["goals"]["io_time"]
    n = next((g[k]["rankings"] for k in ks if "rankings" in g[k]), 0)
    ranked = " / ".join(f"{g[k]['rankings_same']}" for k in ks if "rankings_same" in g[k]) + f" of {n}"
    mach = result["machine"]
    return (f"{', '.join(dict.fromkeys(r['app'] for r in rows))} on {', '.join(dict.fromkeys(r['vc'] for r in rows))}, "
            f"in a sitting of their own ({np_text(result)}, {mach['date']}"
            + (f", code {result['code']}" if result.get("code") else "") + f"): totals within 5% ({names}) "
            f"{count(0.05)} of {len(rows)}, within 10% {count(0.10)} of {len(rows)}; VCs ranked as measured "
            f"{ranked}.")


def publish(result, block="accuracy"):
    """The summary into the README, the full tables into docs/accuracy.md,
    between their <!-- bench:BLOCK --> markers (the README: its table for the
    main sitting, a sentence for another)."""
    put_block(block, summary(result) if block == "accuracy" else sentence(result))
    put_block(block, render(result), page="docs/accuracy.md")
