#!/usr/bin/env python3
"""Generate the tracer's MPI wrappers from wrappers.tmpl and the installed mpi.h.

Usage: gen_wrappers.py TEMPLATE MPI_H OUT_C OUT_H

For every MPI template line this writes MPI_X and PMPI_X with one shared body,
a pointer to the real PMPI_X and an op id, and the same for the routine's MPI-4
large-count form MPI_X_c where mpi.h has one; for a `uses` line only the pointer.
The pointers, declared in OUT_H, are found in the application's own MPI
library (the tracer links none: docs/mpi.md).
The body is the class macro of wrap_macros.h; the prototype, and so the
parameter names the macro uses, come from mpi.h, so the wrappers always match
the MPI they are built against.  A POSIX or stdio line gives its prototype
itself (the C library's headers are not parsed; the compiler checks it
against them) and its body is a class macro of posix_macros.h.  Generated code
is never edited by hand.
"""
import os
import re
import sys

# Parameters each class macro refers to by name (checked against mpi.h).
CLASS_PARAMS = {
    "init": (), "init_thread": ("provided",), "finalize": (), "abort": (),
    "open": ("comm", "filename", "amode", "fh"), "close": ("fh",),
    "delete": ("filename",),
    "set_view": ("fh", "disp", "etype", "filetype", "datarep"),
    "fcall": ("fh",), "io": ("fh", "buf", "count", "datatype"),
    "ipost": ("fh", "buf", "count", "datatype", "request"),
    "begin": ("fh", "buf", "count", "datatype"), "end": ("fh",),
    "wait_one": ("request",), "test_one": ("request", "flag"),
    "wait_all": ("count", "array_of_requests"),
    "test_all": ("count", "array_of_requests", "flag"),
    "wait_any": ("count", "array_of_requests", "index"),
    "test_any": ("count", "array_of_requests", "index", "flag"),
    "wait_some": ("incount", "array_of_requests", "outcount", "array_of_indices"),
    "test_some": ("incount", "array_of_requests", "outcount", "array_of_indices"),
    "request_free": ("request",), "comm": (), "uses": (),
}
# POSIX and stdio classes (posix_macros.h): their parameters, checked against the
# prototype the template line gives.  p_* classes get a second op, the call made
# inside a traced MPI call ("NAME under MPI"), recorded with IOMODEL_UNDER_MPI=1.
POSIX_PARAMS = {
    "p_open": ("path", "flags"), "p_openat": ("dirfd", "path", "flags"), "p_creat": ("path", "mode"),
    "p_close": ("fd",), "p_dup": ("oldfd",), "p_unlink": ("path",), "p_io": ("fd", "buf", "count"),
    "p_iov": ("fd", "iov", "iovcnt"), "p_count": ("fd",), "p_seek": ("fd", "offset", "whence"),
    "p_call": ("fd",),
    "s_open": ("path", "mode"), "s_fdopen": ("fd", "mode"), "s_reopen": ("path", "mode", "stream"),
    "s_close": ("stream",),
    "s_io": ("ptr", "size", "nmemb", "stream"), "s_char": ("stream",), "s_puts": ("s", "stream"),
    "s_gets": ("s", "stream"), "s_count": ("stream",), "s_scan": ("stream",),
    "s_seek": ("stream", "offset", "whence"), "s_setpos": ("stream",), "s_rewind": ("stream",),
    "s_unget": ("stream",), "s_tell": ("stream",), "s_call": ("stream",),
}
# The data-access classes: each needs one of read/write (and p_*, one of at/cur).
POSIX_DATA = ("p_io", "p_iov", "p_count", "s_io", "s_char", "s_puts", "s_gets", "s_count", "s_scan")
LOCAL = re.compile(r"^(?P<name>[a-z_]\w*)=(?P<value>.+)$")
POSIX_PROTO = re.compile(r"^(?P<ret>.*?[\w*])\s*\b(?P<name>\w+)\s*\((?P<params>.*)\)\s*$")
FLAG_BITS = {"coll": "IOM_F_COLL", "write": "IOM_F_WRITE", "read": "IOM_F_READ"}
POSITION = {"at": "IOM_POS_AT", "ind": "IOM_POS_IND", "shared": "IOM_POS_SHARED"}
PROTO = re.compile(r"\bint\s+(P?)MPI_(\w+)\s*\(([^()]*)\)\s*[^;]*;", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

# The MPI standard's parameter names, for a header that declares a routine
# without them (MPICH's mpio.h declares PMPI_File_open(MPI_Comm, const char *,
# ...)): the names the class macros use, for the routines whose prototypes may
# lack them.  Other parameters get names of their own (p0, p1, ...).
STANDARD_NAMES = {
    "MPI_Init": ("argc", "argv"), "MPI_Init_thread": ("argc", "argv", "required", "provided"),
    "MPI_File_open": ("comm", "filename", "amode", "info", "fh"), "MPI_File_close": ("fh",),
    "MPI_File_delete": ("filename", "info"),
    "MPI_File_set_view": ("fh", "disp", "etype", "filetype", "datarep", "info"),
    "MPI_File_seek": ("fh", "offset", "whence"), "MPI_File_seek_shared": ("fh", "offset", "whence"),
    "MPI_File_set_size": ("fh", "size"), "MPI_File_preallocate": ("fh", "size"),
    "MPI_File_sync": ("fh",), "MPI_File_set_atomicity": ("fh", "flag"),
    **{f"MPI_File_{op}{ptr}{coll}": (("fh", "offset") if ptr == "_at" else ("fh",)) +
       ("buf", "count", "datatype", "status")
       for op in ("read", "write") for ptr in ("_at", "", "_shared") for coll in ("", "_all")
       if not (ptr == "_shared" and coll)},
    "MPI_File_write_ordered": ("fh", "buf", "count", "datatype", "status"),
    "MPI_File_read_ordered": ("fh", "buf", "count", "datatype", "status"),
    **{f"MPI_File_i{op}{ptr}{coll}": (("fh", "offset") if ptr == "_at" else ("fh",)) +
       ("buf", "count", "datatype", "request")
       for op in ("read", "write") for ptr in ("_at", "", "_shared") for coll in ("", "_all")
       if not (ptr == "_shared" and coll)},
    **{f"MPI_File_{op}{ptr}_begin": (("fh", "offset") if ptr == "_at_all" else ("fh",)) +
       ("buf", "count", "datatype")
       for op in ("read", "write") for ptr in ("_at_all", "_all", "_ordered")},
    **{f"MPI_File_{op}{ptr}_end": ("fh", "buf", "status")
       for op in ("read", "write") for ptr in ("_at_all", "_all", "_ordered")},
    "MPI_Wait": ("request", "status"), "MPI_Test": ("request", "flag", "status"),
    "MPI_Waitall": ("count", "array_of_requests", "array_of_statuses"),
    "MPI_Testall": ("count", "array_of_requests", "flag", "array_of_statuses"),
    "MPI_Waitany": ("count", "array_of_requests", "index", "status"),
    "MPI_Testany": ("count", "array_of_requests", "index", "flag", "status"),
    "MPI_Waitsome": ("incount", "array_of_requests", "outcount", "array_of_indices", "array_of_statuses"),
    "MPI_Testsome": ("incount", "array_of_requests", "outcount", "array_of_indices", "array_of_statuses"),
    "MPI_Request_free": ("request",),
}


class TemplateError(Exception):
    pass


def read_template(path):
    """[(line, class, routine, flags, prototype or None)]: MPI lines, and POSIX
    lines that give their prototype after ':'."""
    entries = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            text, _, proto = line.split("#", 1)[0].partition(":")
            words = text.split()
            if not words:
                continue
            if words[0] in POSIX_PARAMS:
                if len(words) < 2 or not proto.strip():
                    raise TemplateError(f"{path}:{lineno}: expected 'CLASS routine [flags] : prototype', "
                                        f"got {line.strip()!r}")
                entries.append((lineno, words[0], words[1], words[2:], " ".join(proto.split())))
            elif len(words) < 2 or words[0] not in CLASS_PARAMS or proto.strip():
                raise TemplateError(f"{path}:{lineno}: expected 'CLASS MPI_Routine [flags]', got {line.strip()!r}")
            else:
                entries.append((lineno, words[0], words[1], words[2:], None))
    return entries


def header_text(mpi_h, seen=None):
    """mpi.h and the headers of its own directory it includes (MPICH's
    mpi_proto.h and mpio.h), comments removed."""
    seen = set() if seen is None else seen
    path = os.path.realpath(mpi_h)
    if path in seen:
        return ""
    seen.add(path)
    with open(path) as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    here = os.path.dirname(path)
    for name in INCLUDE.findall(text):
        inc = os.path.join(here, name)
        if os.path.isfile(inc):
            text += "\n" + header_text(inc, seen)
    return text


def read_prototypes(mpi_h):
    """{MPI_X: its parameter list}: of MPI_X or PMPI_X, whichever names its
    parameters (a header may declare PMPI_X without names and MPI_X with)."""
    protos = {}
    for m in PROTO.finditer(header_text(mpi_h)):
        params = " ".join(m.group(3).split())
        name = "MPI_" + m.group(2)
        if name not in protos or (not _named(protos[name]) and _named(params)):
            protos[name] = params
    return protos


def _named(params):
    """Does every parameter of the list have a name?"""
    try:
        param_names(params)
        return True
    except TemplateError:
        return False


TYPE_WORDS = {"int", "char", "void", "const", "long", "unsigned", "short", "double", "float",
              "signed", "struct", "MPI_Offset", "MPI_Aint", "MPI_Count"}


def param_names(params):
    """The parameters' names; TemplateError when one has none (`MPI_Comm`,
    `const char *`, `int []`)."""
    if params in ("", "void"):
        return []
    names = []
    for p in params.split(","):
        m = re.search(r"(\w+)\s*(\[\s*\d*\s*\])*\s*$", p.strip())
        words = re.findall(r"\w+", p)
        if not m or len(words) < 2 or m.group(1) in TYPE_WORDS or m.group(1).startswith("MPI_") \
                or p.strip().endswith("*"):
            raise TemplateError(f"parameter {p.strip()!r} has no name")
        names.append(m.group(1))
    return names


def name_params(name, params):
    """The parameter list with the names the class macros use: the standard's
    (STANDARD_NAMES) for the routines it lists, whatever the header calls them
    (MPICH's MPI_Waitany has `indx`), else the header's own, else p0, p1..."""
    standard = STANDARD_NAMES.get(name[:-2] if name.endswith("_c") else name)
    if standard is None and _named(params):
        return params
    parts = [p.strip() for p in params.split(",")]
    names = standard or tuple(f"p{i}" for i in range(len(parts)))
    if len(names) != len(parts):
        raise TemplateError(f"{name}: {len(parts)} parameters, the standard names {len(names)}")
    out = []
    for p, n in zip(parts, names):
        m = re.match(r"^(.*?)(\s*(?:\[\s*\d*\s*\])*)$", p)     # `int x[]` or `int []`
        typ, dims = m.group(1), m.group(2).strip()
        if _named(p):
            typ = typ[:typ.rindex(param_names(p)[0])]
        typ = typ.rstrip()
        out.append(f"{typ}{'' if typ.endswith('*') else ' '}{n}{dims}")
    return ", ".join(out)


def body(cls, name, flags, call):
    """The class macro invocation that forms the wrapper's body."""
    op = f"IOM_OP_{name}"
    bits = " | ".join(FLAG_BITS[f] for f in flags if f in FLAG_BITS) or "0"
    if cls in ("io", "ipost", "begin"):
        pos = [POSITION[f] for f in flags if f in POSITION]
        if len(pos) != 1:
            raise TemplateError(f"{name}: a data-access routine needs exactly one of at/ind/shared")
        return f"IOM_{cls.upper()}({op}, {bits}, {pos[0]}, {call})"
    if cls == "fcall":
        arg = next((f[4:] for f in flags if f.startswith("ARG=")), None)
        arg_expr = f"(int64_t)({arg})" if arg else "0"
        extra = "(int64_t)whence" if "WHENCE" in flags else "0"
        return f"IOM_FCALL({op}, {bits}, {arg_expr}, {extra}, {call})"
    if cls == "comm":
        return f"IOM_COMM({call})"
    return f"IOM_{cls.upper()}({op}, {call})"


def posix_wrapper(template, lineno, cls, name, flags, proto, listed):
    """The C of one POSIX or stdio wrapper: the real function's pointer, and
    the function itself with the template's prototype, its body the class macro.
    Flags beside at/cur/read/write: ARG=param (p_call's stored argument),
    VIA=routine (a variadic routine forwards its va_list to that one's real
    function, listed before it), name=value (a local the class macro uses for a
    parameter the routine lacks: stream=stdout), NEWLINE (puts' newline), LABEL
    (defined under another C name with the symbol as its assembler label, where
    the C library's header redirects or defines the name: glibc's fscanf is
    __isoc99_fscanf)."""
    m = POSIX_PROTO.match(proto)
    if not m or m.group("name") != name:
        raise TemplateError(f"{template}:{lineno}: the prototype {proto!r} is not that of {name}")
    ret, params = m.group("ret").strip(), m.group("params").strip()
    variadic = params.endswith("...")
    fixed = params[:-3].rstrip(" ,") if variadic else params
    args = param_names(fixed)
    local = {x.group("name"): x.group("value") for x in map(LOCAL.match, flags) if x}
    via = next((f[4:] for f in flags if f.startswith("VIA=")), None)
    missing = [p for p in POSIX_PARAMS[cls] if p not in args and p not in local]
    missing += [f[4:] for f in flags if f.startswith("ARG=") and f[4:] not in args]
    if missing:
        raise TemplateError(f"{template}:{lineno}: {name} ({cls}) lacks parameter(s) {missing}")
    opening = cls in ("p_open", "p_openat")
    if variadic and not opening and via not in listed:
        raise TemplateError(f"{template}:{lineno}: {name} is variadic: VIA= must name its va_list "
                            "form, listed before it")
    if cls in POSIX_DATA and ("read" in flags) == ("write" in flags):
        raise TemplateError(f"{template}:{lineno}: {name}: a data access needs exactly one of read/write")
    if cls.startswith("p_") and cls in POSIX_DATA and ("at" in flags) == ("cur" in flags):
        raise TemplateError(f"{template}:{lineno}: {name}: a data access needs exactly one of at/cur")
    types = ", ".join(p.rsplit(a, 1)[0].strip() for p, a in zip(fixed.split(","), args)) if args else "void"
    bits = " | ".join(FLAG_BITS[f] for f in flags if f in FLAG_BITS) or "0"
    under = f"IOM_OPU_{name}" if cls.startswith("p_") else "-1"
    real = via or name
    call_args = args + (["mode"] if opening and variadic else ["ap"] if variadic else [])
    call = f"iom_real_{real}({', '.join(call_args)})"
    if ret == "void":           # the macros time and return a value: give the call one
        call = f"({call}, 0)"
    arg = next((f"(int64_t)({f[4:]})" for f in flags if f.startswith("ARG=")), "0")
    pos = "(int64_t)offset" if "at" in flags else "IOM_CUR"
    op = f"IOM_OP_{name}"
    macro = {"p_io": f"IOM_P_IO({real}, {op}, {under}, {bits}, {pos}, {call})",
             "p_iov": f"IOM_P_IOV({real}, {op}, {under}, {bits}, {pos}, {call})",
             "p_count": f"IOM_P_COUNT({real}, {op}, {under}, {bits}, {pos}, {call})",
             "p_call": f"IOM_P_CALL({real}, {op}, {under}, {arg}, {call})",
             "s_puts": f"IOM_S_PUTS({real}, {op}, {bits}, {int('NEWLINE' in flags)}, {call})",
             # dup2 and dup3 name the new descriptor, which they close first if open
             "p_dup": f"IOM_P_DUP({real}, {op}, {under}, {'newfd' if 'newfd' in args else '-1'}, {call})",
             }.get(cls, f"IOM_{cls.upper()}({real}, {op}, {bits}, {call})" if cls in POSIX_DATA
                   else f"IOM_{cls.upper()}({real}, {op}, {under}, {call})")
    head = "".join(f"__auto_type {k} = {v}; " for k, v in local.items())
    if opening and variadic:        # open's mode: only there with O_CREAT or O_TMPFILE
        head += (f"mode_t mode = 0; if (IOM_OPEN_NEEDS_MODE(flags)) {{ va_list ap; va_start(ap, {args[-1]}); "
                 f"mode = (mode_t)va_arg(ap, int); va_end(ap); }} ")
    cname = f"iom_w_{name}" if "LABEL" in flags else name
    real_params = f"{types}, ..." if variadic else types
    out = [f"/* {name}: {cls} {' '.join(flags)} */",
           f"IOM_HIDDEN {ret} (*iom_real_{name})({real_params});"]
    if "LABEL" in flags:
        out.append(f'{ret} {cname}({params}) __asm__("{name}");')
    if (variadic and not opening) or ret == "void":
        # the body in a function of its own: a variadic routine's takes its va_list
        inner = f"{fixed}, va_list ap" if variadic else (fixed or "void")
        inner_args = ", ".join(args + (["ap"] if variadic else []))
        inner_ret = "int" if ret == "void" else ret
        result = "(void)" if ret == "void" else f"{ret} iom_r = "
        out += [f"static {inner_ret} iom_do_{name}({inner})",
                f"{{ {head}{macro} }}",
                f"{ret} {cname}({params})",
                (f"{{ va_list ap; va_start(ap, {args[-1]}); {result}iom_do_{name}({inner_args}); va_end(ap); "
                 f"{'' if ret == 'void' else 'return iom_r; '}}}") if variadic else
                f"{{ {result}iom_do_{name}({inner_args}); }}", ""]
    else:
        out += [f"{ret} {cname}({params})", f"{{ {head}{macro} }}", ""]
    return out


def with_large_count_forms(entries, protos):
    """Each MPI line, and after it the same line for the routine's MPI-4
    large-count form (MPI_X_c, its counts MPI_Count) when mpi.h has one."""
    out = []
    for lineno, cls, name, flags, proto in entries:
        out.append((lineno, cls, name, flags, proto))
        if proto is None and cls != "uses" and name + "_c" in protos:
            out.append((lineno, cls, name + "_c", flags, proto))
    return out


def generate(template, mpi_h):
    protos = read_prototypes(mpi_h)
    entries = with_large_count_forms(read_template(template), protos)
    seen = set()
    out = ["/* Generated by tracer/gen_wrappers.py from tracer/wrappers.tmpl and "
           f"{mpi_h}. Do not edit. */",
           "#define _GNU_SOURCE",
           "#undef _FORTIFY_SOURCE",
           "#undef _FILE_OFFSET_BITS",
           '#include "wrap_macros.h"',
           '#include "posix_macros.h"', ""]
    ops, names, unders, reals = [], [], [], []
    for lineno, cls, name, flags, proto in entries:
        if name in seen:
            raise TemplateError(f"{template}:{lineno}: {name} listed twice")
        seen.add(name)
        if proto is not None:
            ops.append(f"#define IOM_OP_{name} {len(names)}")
            names.append(name)
            if cls.startswith("p_"):
                unders.append(name)
            out += posix_wrapper(template, lineno, cls, name, flags, proto, seen)
            continue
        if name not in protos:
            raise TemplateError(f"{template}:{lineno}: {name} has no prototype in {mpi_h}")
        reals.append(name)
        if cls == "uses":
            out += [f"IOM_HIDDEN __typeof__(P{name}) *iom_real_{name};", ""]
            continue
        params = name_params(name, protos[name])
        args = param_names(params)
        missing = [p for p in CLASS_PARAMS[cls] if p not in args]
        if cls == "fcall":
            missing += [f[4:] for f in flags if f.startswith("ARG=") and f[4:] not in args]
        if missing:
            raise TemplateError(f"{template}:{lineno}: {name} ({cls}) lacks parameter(s) {missing} in mpi.h")
        if cls != "comm":       # communication is counted, never recorded: no routine id
            ops.append(f"#define IOM_OP_{name} {len(names)}")
            names.append(name)
        pname = "P" + name
        call = f"iom_real_{name}({', '.join(args)})"
        out += [
            f"/* {name}: {cls} {' '.join(flags)} */",
            f"IOM_HIDDEN __typeof__({pname}) *iom_real_{name};",
            f"static IOM_NOINLINE int iom_do_{name}({params})",
            f"{{ {body(cls, name, flags, call)} }}",
            f"int {name}({params}) {{ IOM_FORWARD({call}, iom_do_{name}({', '.join(args)})) }}",
            f"int {pname}({params}) {{ IOM_FORWARD({call}, iom_do_{name}({', '.join(args)})) }}",
            "",
        ]
    # a POSIX call made inside a traced MPI call: its own op, after all the others
    for k, name in enumerate(unders):
        ops.append(f"#define IOM_OPU_{name} {len(names) + k}")
    all_names = names + [f"{n} under MPI" for n in unders]
    header = ["", *ops, f"#define IOM_NOPS {len(all_names)}",
              '_Static_assert(IOM_NOPS < IOM_OP_EXTENSION, "routine ids must fit below the extension id");', ""]
    posix = {e[2] for e in entries if e[4] is not None}
    table = ["const int iom_nops = IOM_NOPS;",
             "const char *const iom_op_names[IOM_NOPS] = {",
             *[f'    "{n}",' for n in all_names], "};", "",
             "/* Resolve every real function once, when the library is loaded (a POSIX",
             " * wrapper called before that resolves its own); the MPI ones again from the",
             " * application's own MPI library when it is of the other ABI family. */",
             "void iom_resolve_reals(void)", "{"]
    table += [f'    iom_real_{n} = (__typeof__(iom_real_{n}))iom_dlsym_next("{n}");'
              for n in names if n in posix]
    table += ["    iom_resolve_mpi(iom_dlsym_next);", "}", "",
              "void iom_resolve_mpi(void *(*find)(const char *))", "{"]
    table += [f'    iom_real_{n} = (__typeof__(iom_real_{n}))find("P{n}");' for n in reals]
    table += ["}", ""]
    # Op ids must be known before the bodies that use them.
    top = 7
    code = "\n".join(out[:top] + header + out[top:] + table)
    decls = "\n".join([f"/* Generated by tracer/gen_wrappers.py from tracer/wrappers.tmpl and {mpi_h}. */",
                       "/* The real MPI routines, found in the application's MPI library. */",
                       "#ifndef IOMODEL_WRAPPERS_H", "#define IOMODEL_WRAPPERS_H", "#include <mpi.h>",
                       *[f"extern __typeof__(P{n}) *iom_real_{n} __attribute__((visibility(\"hidden\")));"
                         for n in reals], "#endif", ""])
    return code, decls


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2])
    try:
        code, decls = generate(argv[1], argv[2])
    except (TemplateError, OSError) as e:
        sys.exit(f"gen_wrappers: {e}")
    with open(argv[3], "w") as f:
        f.write(code)
    with open(argv[4], "w") as f:
        f.write(decls)


if __name__ == "__main__":
    main(sys.argv)
