"""iomodel.models: the I/O model, its schema and validation, and the paper's example models."""
import json
from pathlib import Path

from iomodel.outputs import write_atomic

from .schema import FORMAT, VERSION, ModelError, format_ranks, json_schema, parse_ranks, validate

__all__ = ["FORMAT", "VERSION", "ModelError", "load_model", "save_model", "validate", "rereads",
           "order_graph", "parse_ranks", "format_ranks", "json_schema", "identical", "find_runs"]


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ModelError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _no_constant(name):
    raise ModelError(f"{name} is not a number JSON allows")


def load_model(path):
    """Read and validate a model file; ModelError names the file and the field."""
    path = Path(path)
    try:
        model = json.loads(path.read_bytes().decode("utf-8"), object_pairs_hook=_no_duplicates,
                           parse_constant=_no_constant)
    except OSError as e:
        raise ModelError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not JSON: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise ModelError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ModelError(f"{path}: not a model: nested too deeply") from None
    except (ModelError, ValueError) as e:    # a duplicate key; an integer of over 4300 digits
        raise ModelError(f"{path}: not a model: {e}") from None
    try:
        return validate(model)
    except ModelError as e:
        raise ModelError(f"{path}: {e}") from None
    except RecursionError:
        raise ModelError(f"{path}: not a model: nested too deeply") from None


def save_model(model, path, check=True):
    """Write a model (validated first, unless the caller just built it validated),
    whole or not at all (a full disk leaves no empty model.json behind)."""
    if check:
        validate(model)
    write_atomic(path, dumps(model))


def dumps(model):
    """The model as JSON text: one line per top-level field, per file and per
    phase, so that a model reads like its phase table and writes fast."""
    def block(items):
        return "[\n" + ",\n".join("  " + json.dumps(x) for x in items) + "\n ]" if items else "[]"
    lines = []
    for k, v in model.items():
        text = block(v) if k in ("files", "phases") else json.dumps(v)
        lines.append(f" {json.dumps(k)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def order_graph(model):
    """The order of the phases as a networkx DiGraph (nodes: phase ids, with their fields)."""
    import networkx as nx
    g = nx.DiGraph()
    for p in model["phases"]:
        g.add_node(p["id"], **p)
    g.add_edges_from(tuple(e) for e in model["order"])
    return g


# What may differ between the phases of a run ("1 to 40" in Table V, "1 to 5"
# over S3D-IO's five checkpoint files in Table VIII).  The buffer's place too: a
# program that allocates a new buffer per step gets one place per step from malloc
# (py_io's first write 16 B past a page, the next ones 208), the access the same.
_VARYING = {"id", "file", "start_s", "end_s", "duration_s", "io_time_s", "bandwidth_Bps", "gap_s",
            "gap_comm", "logical_time", "buffer_offset", "done_early_s", "arrival_skew_s", "compute_s",
            "aggregators"}


def rereads(phase):
    """A read phase whose every byte its processes had written through the
    same open (its reads may come from the client's cache)."""
    return phase["operation"] == "read" and phase["weight"] > 0 and \
        phase.get("reread_bytes") == phase["weight"]


def identical(a, b):
    """Same pattern: equal but for the file, offsets' first byte, times and logical time."""
    ka = {k: v for k, v in a.items() if k not in _VARYING}
    kb = {k: v for k, v in b.items() if k not in _VARYING}
    oa, ob = dict(ka.pop("offsets")), dict(kb.pop("offsets"))
    oa.pop("first", None), ob.pop("first", None)
    return ka == kb and oa == ob


def find_runs(phases):
    """Maximal runs of consecutive identical phases, as [first_id, last_id]."""
    runs = []
    for p in phases:
        if runs and identical(phases[runs[-1][1] - 1], p) and runs[-1][1] == p["id"] - 1:
            runs[-1][1] = p["id"]
        else:
            runs.append([p["id"], p["id"]])
    return runs
