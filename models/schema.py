"""The I/O model's schema (docs/model-format.md) and its validation.

The schema is a JSON Schema subset (type, enum, required, properties, items,
minimum, maximum, const) kept as data; `validate` walks it and reports the first
problem as one ModelError naming the field ("phases[3].rep: ...").
"""
import difflib
import re
import reprlib

FORMAT = "iomodel-model"
VERSION = 1

_INT = {"type": "integer", "minimum": 0}
_POS = {"type": "integer", "minimum": 1}
MAX_NP = 2 ** 24                  # processes of one run, at most
_NP = {"type": "integer", "minimum": 1, "maximum": MAX_NP}
_NUM = {"type": "number", "minimum": 0}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_NULL_OR = lambda s: {"anyOf": [s, {"type": "null"}]}  # noqa: E731
_MODE = {"enum": ["strided", "sequential", "random", "unknown"]}
_RANGES = {"type": "string", "pattern": "ranks"}

_GRID = {"type": "array", "items": _POS}     # a process grid, the array's fastest-varying axis first
# a model made by `iomodel extrapolate`: from which models, by which laws (models/extrapolate.py)
_EXTRAPOLATED = {
    "type": "object", "required": ["from", "np", "size", "laws", "approximate", "assumed"],
    "properties": {
        "from": {"type": "array", "items": {"type": "object", "required": ["path", "np", "size"],
                                            "properties": {"path": _STR, "np": _NP, "size": _NUM,
                                                           "grid": _GRID}}},
        "np": _NP, "size": _NULL_OR(_NUM), "grid": _GRID, "nearest": _STR,
        "laws": {"type": "array", "items": {
            "type": "object", "required": ["field", "law", "kind", "exact", "value"],
            "properties": {"field": _STR, "law": _STR, "kind": {"enum": ["constant", "power", "affine", "by rank", "by grid", "measured"]},
                           "c0": {"type": "number"}, "c1": {"type": "number"}, "a": _STR, "b": _STR,
                           "exact": _BOOL, "max_residual": _NUM, "value": {"type": "number"}}}},
        "approximate": {"type": "array", "items": _STR},
        "assumed": {"type": "array", "items": _STR},
    },
}

SCHEMA = {
    "type": "object",
    "required": ["format", "version", "application", "source", "analysis", "files", "phases",
                 "runs", "order", "weight", "storage_capacity"],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "application": {
            "type": "object",
            "required": ["name", "command", "np", "hosts", "run_time_s", "io_time_s", "features"],
            "properties": {
                "name": _STR,
                "command": {"type": "array", "items": _STR},
                "np": _NP,
                "hosts": {"type": "object", "values": _POS},
                "run_time_s": _NULL_OR(_NUM),
                "io_time_s": _NULL_OR(_NUM),
                "process_io_time_s": _NULL_OR({"type": "object", "required": ["max", "mean"],
                                               "properties": {"max": _NUM, "mean": _NUM}}),
                "features": {
                    "type": "object",
                    "required": ["explicit_offsets", "individual_pointers", "shared_pointers",
                                 "blocking", "nonblocking", "collective", "independent"],
                    "values": _NULL_OR(_BOOL),
                },
            },
        },
        "source": {
            "type": "object",
            "required": ["kind", "unavailable", "inferred"],
            "properties": {
                "kind": {"enum": ["trace", "darshan", "paper", "extrapolated"]},
                "path": _NULL_OR(_STR),
                "unavailable": {"type": "array", "items": _STR},
                "inferred": {"type": "array", "items": _STR},
                "module": _STR,             # a Darshan log's: the module the operations came from
                "extrapolated": _EXTRAPOLATED,
                "partial": {"type": "object", "required": ["missing_ranks", "empty_ranks",
                                                           "stopped_ranks", "notes"],
                            "properties": {"missing_ranks": _NULL_OR(_RANGES),
                                           "empty_ranks": _NULL_OR(_RANGES),
                                           "stopped_ranks": _NULL_OR(_RANGES),
                                           "unended_ranks": _NULL_OR(_RANGES),
                                           "notes": {"type": "array", "items": _STR}}},
            },
        },
        "analysis": {
            "type": "object",
            "required": ["max_comm_gap", "max_idle_s", "threshold_rule"],
            "properties": {
                "max_comm_gap": _NULL_OR(_INT),
                "max_idle_s": _NULL_OR(_NUM),
                "threshold_rule": _STR,
                "iomodel_version": _STR,
            },
        },
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "name", "paths", "access_type", "np", "access_mode", "role",
                             "iof_size", "inf_size", "size"],
                "properties": {
                    "id": _INT, "name": _STR, "paths": {"type": "array", "items": _STR},
                    "access_type": {"enum": ["shared", "unique"]}, "np": _NP,
                    "access_mode": _MODE, "role": {"enum": ["input", "output", "inout"]},
                    "iof_size": _INT, "inf_size": _INT, "size": _INT, "extent": _NULL_OR(_INT),
                },
            },
        },
        "phases": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "file", "operation", "np", "ranks", "iop", "request_sizes", "rs",
                             "rep", "weight", "access_mode", "offsets"],
                "properties": {
                    "id": _POS, "file": _INT, "operation": {"enum": ["write", "read"]},
                    "routine": _NULL_OR(_STR), "collective": _NULL_OR(_BOOL),
                    "interface": _NULL_OR({"enum": ["MPI-IO", "POSIX", "STDIO"]}),
                    "np": _NP, "ranks": _RANGES, "iop": _POS,
                    "request_sizes": {"type": "array", "items": _INT},
                    "rs": _INT, "rs_min": _INT, "rs_max": _INT,
                    "rs_groups": {"type": "array", "items": {
                        "type": "object", "required": ["ranks", "rs", "request_sizes"],
                        "properties": {"ranks": _RANGES, "rs": _INT,
                                       "request_sizes": {"type": "array", "items": _INT}}}},
                    "rep": _POS, "weight": _INT, "access_mode": _MODE,
                    "offsets": {
                        "type": "object", "required": ["first", "per_rank", "stride", "contiguous"],
                        "properties": {"first": _NULL_OR({"type": "integer"}),
                                       "per_rank": _NULL_OR({"type": "integer"}),
                                       "starts": {"type": "array", "items": {"type": "integer"}},
                                       "stride": _NULL_OR({"type": "integer"}),
                                       "nested": {"type": "array", "items": {
                                           "type": "array", "items": {"type": "integer"},
                                           "minItems": 2, "maxItems": 2}},
                                       "contiguous": _NULL_OR(_BOOL),
                                       "piece": _POS}},
                    "logical_time": {"type": "object", "properties": {
                        "first": _NULL_OR(_INT), "comm_between": _NULL_OR(_INT)}},
                    "start_s": _NULL_OR({"type": "number"}), "end_s": _NULL_OR({"type": "number"}),
                    "duration_s": _NULL_OR(_NUM), "io_time_s": _NULL_OR(_NUM),
                    "done_early_s": _NUM,
                    "arrival_skew_s": _NUM,
                    "compute_s": _NUM,
                    "aggregators": {"type": "object", "required": ["ranks", "bytes"],
                                    "properties": {"ranks": _STR, "bytes": _INT,
                                                   "time_s": _NULL_OR(_NUM),
                                                   "others_time_s": _NULL_OR(_NUM)}},
                    "reread_bytes": _INT,
                    # of its writes, how many extend the file in lockstep (analyzer/extending.py)
                    "extending_writes": _INT,
                    "synced": _BOOL,
                    "own_open": _BOOL,
                    "metadata": _BOOL,
                    "buffer_offset": {"type": "integer", "minimum": 0, "maximum": 4095},
                    "bandwidth_Bps": _NULL_OR(_NUM),
                    "gap_s": _NULL_OR({"type": "number"}), "gap_comm": _NULL_OR(_INT),
                },
            },
        },
        "runs": {"type": "array", "items": {"type": "array", "items": _POS}},
        "order": {"type": "array", "items": {"type": "array", "items": _POS}},
        "weight": _INT,
        "storage_capacity": _INT,
    },
}


class ModelError(ValueError):
    """A model that does not follow the format; the message names the field."""


INT64 = 2 ** 63 - 1      # what the model's numbers become in numpy and Arrow


def _type_ok(value, t):
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool) and -INT64 <= value <= INT64
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and \
            abs(value) <= INT64 and value == value       # finite: not inf, not NaN
    return isinstance(value, {"string": str, "boolean": bool, "object": dict, "array": list,
                              "null": type(None)}[t])


def _describe(schema):
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(repr(x) for x in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_describe(s) for s in schema["anyOf"])
    t = schema.get("type", "value")
    article = "an" if t[0] in "aeiou" else "a"
    if schema.get("pattern") == "ranks":
        return "a rank list such as '0-3,5'"
    if "minimum" in schema and "maximum" in schema:
        return f"{article} {t} from {schema['minimum']} to {schema['maximum']}"
    if "minimum" in schema:
        return f"{article} {t} >= {schema['minimum']}"
    return f"{article} {t}"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 2, 4, 4, 60, 60


def _show(value):
    """A value as a message shows it: short, however large."""
    if isinstance(value, int) and abs(value) >= 10 ** 20:
        return f"an integer of {len(str(abs(value)))} digits"
    return _REPR.repr(value)


def _where(path):
    """('phases', 3, 'rep') -> 'phases[3].rep'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _compile(schema):
    """A checker of `schema`: check(value, path) -> None if value fits it, else
    the problem.  The schema's branches are chosen once here, not at each
    value of a model of thousands of phases.  The path to the field is a
    tuple, turned into text only for the message."""
    if "anyOf" in schema:
        subs = [_compile(s) for s in schema["anyOf"]]
        desc = _describe(schema)

        def check_any(value, path):
            if any(c(value, path) is None for c in subs):
                return None
            return f"{_where(path)}: expected {desc}, got {_show(value)}"
        return check_any
    bad = _bad_value(schema)
    desc = _describe(schema)
    t = schema.get("type")
    if t == "object":
        return _compile_object(schema, bad, desc)
    if t == "array" and "items" in schema:
        return _compile_array(schema, bad, desc)

    def check_value(value, path):
        return f"{_where(path)}: expected {desc}, got {_show(value)}" if bad(value) else None
    return check_value


def _bad_value(schema):
    """Whether a value is not of the schema's constant, enum, type, range or
    rank-list pattern (its fields, not its items or properties)."""
    has_const, const, enum = "const" in schema, schema.get("const"), schema.get("enum")
    t, ranks = schema.get("type"), schema.get("pattern") == "ranks"
    has_lo, lo = "minimum" in schema, schema.get("minimum")
    has_hi, hi = "maximum" in schema, schema.get("maximum")

    def bad(value):
        return (has_const and value != const) or (enum is not None and value not in enum) or \
            (t and not _type_ok(value, t)) or (has_lo and value < lo) or (has_hi and value > hi) or \
            (ranks and count_ranks(value) is None)
    return bad


def _compile_object(schema, bad, desc):
    required = tuple(schema.get("required", ()))
    props = schema.get("properties")
    subs = [(k, _compile(s)) for k, s in (props or {}).items()]
    values = _compile(schema["values"]) if "values" in schema else None

    def check_object(value, path):
        if bad(value):
            return f"{_where(path)}: expected {desc}, got {_show(value)}"
        for k in required:
            if k not in value:
                return f"{_where(path + (k,))}: missing"
        if props is not None:
            for k in value:
                if k not in props:
                    near = difflib.get_close_matches(str(k), list(props), n=1)
                    hint = f" (did you mean {near[0]!r}?)" if near else ""
                    return f"{_where(path + (str(k),))}: unknown field{hint}"
        for k, check in subs:
            if k in value:
                err = check(value[k], path + (k,))
                if err:
                    return err
        if values is not None:
            for k, v in value.items():
                err = values(v, path + (k,))
                if err:
                    return err
        return None
    return check_object


def _compile_array(schema, bad, desc):
    items = _compile(schema["items"])
    least, most = schema.get("minItems", 0), schema.get("maxItems")

    def check_array(value, path):
        if bad(value):
            return f"{_where(path)}: expected {desc}, got {_show(value)}"
        if not least <= len(value) <= (len(value) if most is None else most):
            return f"{_where(path)}: {len(value)} items, expected " + \
                (f"{least}" if least == most else f"at least {least}")
        for i, v in enumerate(value):
            err = items(v, path + (i,))
            if err:
                return err
        return None
    return check_array


_CHECK = []     # SCHEMA's checker, compiled at the first validation


def validate(model):
    """Raise ModelError for the first problem: schema, then cross-references."""
    if not isinstance(model, dict):
        raise ModelError(f"the model must be a JSON object, got {type(model).__name__}")
    if model.get("format") == FORMAT and model.get("version") not in (None, VERSION):
        raise ModelError(f"version: this iomodel reads model format {VERSION}, "
                         f"the file is version {model.get('version')!r}")
    if not _CHECK:
        _CHECK.append(_compile(SCHEMA))
    err = _CHECK[0](model, ())
    if err:
        raise ModelError(err)
    nfiles = len(model["files"])
    for i, f in enumerate(model["files"]):
        if f["id"] != i:
            raise ModelError(f"files[{i}].id: expected {i} (files are listed by id), got {f['id']}")
    ids = [p["id"] for p in model["phases"]]
    if ids != list(range(1, len(ids) + 1)):
        raise ModelError("phases: ids must be 1, 2, ... in order")
    np_ = model["application"]["np"]
    for i, p in enumerate(model["phases"]):
        w = f"phases[{i}]"
        if p["file"] >= nfiles:
            raise ModelError(f"{w}.file: no file with id {p['file']} ({nfiles} files)")
        count, last = count_ranks(p["ranks"])
        if count != p["np"]:
            raise ModelError(f"{w}.np: {p['np']}, but ranks {p['ranks']!r} lists {count}")
        if last >= np_:
            raise ModelError(f"{w}.ranks: rank {last} but the application has {np_} processes")
        if len(p["request_sizes"]) != p["iop"]:
            raise ModelError(f"{w}.request_sizes: {len(p['request_sizes'])} sizes for iop {p['iop']}")
        if "rs_groups" not in p and p["weight"] != p["np"] * p["rs"] * p["rep"]:
            raise ModelError(f"{w}.weight: {p['weight']} is not np * rs * rep = "
                             f"{p['np'] * p['rs'] * p['rep']}")
        _check_sizes(p, w)
        if "extending_writes" in p and (p["operation"] != "write" or
                                        p["extending_writes"] > p["np"] * p["iop"] * p["rep"]):
            raise ModelError(f"{w}.extending_writes: only a write phase's, at most its writes "
                             f"({p['np'] * p['iop'] * p['rep']}), got {p['extending_writes']} in a "
                             f"{p['operation']} phase")
        if "reread_bytes" in p and (p["operation"] != "read" or p["reread_bytes"] > p["weight"]):
            raise ModelError(f"{w}.reread_bytes: only a read phase rereads, at most its weight "
                             f"({p['weight']}), got {p['reread_bytes']} in a {p['operation']} phase")
    for key in ("runs", "order"):
        for j, pair in enumerate(model[key]):
            if len(pair) != 2 or not all(1 <= x <= len(ids) for x in pair):
                raise ModelError(f"{key}[{j}]: expected [id, id] of existing phases, got {_show(pair)}")
    # runs: the phases cut into runs of consecutive ids, each [first, last], in order
    covered = 1
    for j, (a, b) in enumerate(model["runs"]):
        if a != covered or b < a:
            raise ModelError(f"runs[{j}]: expected [{covered}, last id of the run], got {[a, b]}: the "
                             f"runs cover the phases 1 to {len(ids)} in order, each once")
        covered = b + 1
    if covered != len(ids) + 1:
        raise ModelError(f"runs: they cover phases 1 to {covered - 1} of {len(ids)}")
    # order: a rank that takes part in two phases met them in some order
    edges = [tuple(e) for e in model["order"]]
    if len(set(edges)) != len(edges) or any(a == b for a, b in edges):
        raise ModelError("order: an edge is listed twice, or goes from a phase to itself")
    if not edges and sum(p["np"] for p in model["phases"]) > _covered(p["ranks"] for p in model["phases"]):
        raise ModelError("order: empty, but some process takes part in two phases")
    return model


def _check_sizes(p, w):
    """A phase's sizes agree: rs is its request sizes' sum (each group's, where
    processes move different amounts: then rs_min and rs_max are the groups'
    least and most, the groups split the phase's ranks and the weight is their
    exact sum); rs_min <= rs <= rs_max."""
    groups = p.get("rs_groups")
    if groups is None:
        if p["rs"] != sum(p["request_sizes"]):
            raise ModelError(f"{w}.rs: {p['rs']}, but its request sizes add up to {sum(p['request_sizes'])}")
        sizes = [p["rs"]]
    else:
        for j, g in enumerate(groups):
            if g["rs"] != sum(g["request_sizes"]):
                raise ModelError(f"{w}.rs_groups[{j}].rs: {g['rs']}, but its request sizes add up to "
                                 f"{sum(g['request_sizes'])}")
        counts = [count_ranks(g["ranks"]) for g in groups]
        if None in counts or sum(c for c, _ in counts) != p["np"] or \
                _covered([g["ranks"] for g in groups] + [p["ranks"]]) != p["np"]:
            raise ModelError(f"{w}.rs_groups: their ranks are not the phase's ({p['ranks']}), each once")
        total = sum(c * g["rs"] * p["rep"] for (c, _), g in zip(counts, groups))
        if p["weight"] != total:
            raise ModelError(f"{w}.weight: {p['weight']}, but its groups of ranks move {total}")
        sizes = [g["rs"] for g in groups]
    lo, hi = p.get("rs_min", min(sizes)), p.get("rs_max", max(sizes))
    if (lo, hi) != (min(sizes), max(sizes)) or not lo <= p["rs"] <= hi:
        raise ModelError(f"{w}.rs_min, rs_max: {lo} and {hi}, but the phase's sizes are {min(sizes)} to "
                         f"{max(sizes)}, rs {p['rs']}")


_RANGES = re.compile(r"(\d+)(?:-(\d+))?")


def count_ranks(text):
    """'0-3,5' -> (5, 5): how many ranks and the last; None if malformed.
    Checks what parse_ranks does without listing the ranks."""
    if not isinstance(text, str) or not text:
        return None
    count, last = 0, -1
    for part in text.split(","):
        m = _RANGES.fullmatch(part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo <= last or hi < lo:
            return None
        count += hi - lo + 1
        last = hi
    return count, last


def _covered(rank_lists):
    """How many distinct ranks the rank lists name together, counted by intervals."""
    spans = sorted((int(m.group(1)), int(m.group(2) or m.group(1)))
                   for text in rank_lists for m in map(_RANGES.fullmatch, text.split(",")))
    count, end = 0, -1
    for lo, hi in spans:
        if hi > end:
            count += hi - max(lo, end + 1) + 1
            end = hi
    return count


def parse_ranks(text):
    """'0-3,5' -> [0, 1, 2, 3, 5]."""
    out = []
    if not isinstance(text, str):
        raise ValueError(text)
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        lo, hi = int(a), int(b) if b else int(a)
        if lo < 0 or hi < lo:
            raise ValueError(text)
        out.extend(range(lo, hi + 1))
    if out != sorted(set(out)):
        raise ValueError(text)
    return out


def format_ranks(ranks):
    """[0, 1, 2, 3, 5] -> '0-3,5' (the model's size does not grow with np); a
    range of step 1 by its ends, never listed."""
    if isinstance(ranks, range) and ranks.step == 1:
        return "" if not len(ranks) else str(ranks.start) if len(ranks) == 1 else \
            f"{ranks.start}-{ranks.stop - 1}"
    import numpy as np
    r = np.unique(np.asarray(ranks, dtype=np.int64))
    if not len(r):
        return ""
    cut = np.flatnonzero(np.diff(r) != 1) + 1
    lo = r[np.concatenate([[0], cut])]
    hi = r[np.concatenate([cut - 1, [len(r) - 1]])]
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(lo.tolist(), hi.tolist()))


def json_schema():
    """The schema as a JSON Schema document (draft 2020-12 keywords)."""
    def conv(s):
        out = {}
        for k, v in s.items():
            if k == "values":
                out["additionalProperties"] = conv(v)
            elif k == "pattern":
                out["pattern"] = r"^\d+(-\d+)?(,\d+(-\d+)?)*$"
            elif k in ("properties",):
                out[k] = {name: conv(x) for name, x in v.items()}
            elif k == "items":
                out[k] = conv(v)
            elif k == "anyOf":
                out[k] = [conv(x) for x in v]
            else:
                out[k] = v
        return out
    doc = conv(SCHEMA)
    doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    doc["title"] = "iomodel I/O model, version 1"
    return doc
