#!/usr/bin/env python3
"""Generate compile-time layout and value checks from the DOCA 3.3 reference fact sheets.

Reads the tables and value lists of the fact sheets (sizes, alignments, member offsets, enum
and macro values) and writes C files made only of static assertions, which the tests compile
against doca-soft's headers as C and as C++:

  tests/c/layout_facts_host.c   GPUNetIO host headers, RDMA / Verbs / DMA / UAR, the verbs
                                definitions shared with device code, doca_types.h
  tests/c/layout_facts_flow.c   DOCA Flow (doca_flow.h, doca_flow_net.h)

Usage:
  layout_facts.py [--facts DIR]            rewrite the two files
  layout_facts.py [--facts DIR] --check    exit 1 (and say which) if a committed file is stale

DIR defaults to $DOCA_FACTS_DIR, else the first `shared/reference` found above this file.

The sheets name constants in shorthand (`_UC` after `DOCA_VERBS_QP_TYPE_RC`, `RC=0` under an
enum); the expansion rules are below, and a form the rules do not know stops the generator
instead of being guessed at.
"""

import argparse
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
OUT_HOST = TESTS / "c" / "layout_facts_host.c"
OUT_FLOW = TESTS / "c" / "layout_facts_flow.c"
RDMA_SHEET = "gpunetio-rdma-verbs-dma.md"
FLOW_SHEET = "flow-3.3-layout.md"

# Constant prefixes of enums whose rows give short names only (the sheet states the family
# prefix `DOCA_GPUNETIO_VERBS_<X>` for verbs device enums; host enums follow their type name).
ENUM_PREFIX = {
    "doca_gpu_dev_verbs_qp_type": "DOCA_GPUNETIO_VERBS_",
    "doca_gpu_dev_verbs_exec_scope": "DOCA_GPUNETIO_VERBS_EXEC_SCOPE_",
    "doca_gpu_dev_verbs_sync_scope": "DOCA_GPUNETIO_VERBS_SYNC_SCOPE_",
    "doca_gpu_dev_verbs_resource_sharing_mode": "DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_",
    "doca_gpu_dev_verbs_nic_handler": "DOCA_GPUNETIO_VERBS_NIC_HANDLER_",
    "doca_gpu_dev_verbs_mcst_mode": "DOCA_GPUNETIO_VERBS_MCST_",
    "doca_gpu_dev_verbs_gpu_code_opt": "DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_",
    "doca_gpu_dev_verbs_signal_op": "DOCA_GPUNETIO_VERBS_SIGNAL_OP_",
    "doca_gpu_dev_verbs_blocking_mode": "DOCA_GPUNETIO_VERBS_BLOCKING_MODE_",
    "anonymous DBR offsets": "DOCA_GPUNETIO_MLX5_",
    "doca_rdma_transport_type": "DOCA_RDMA_TRANSPORT_TYPE_",
    "doca_rdma_addr_type": "DOCA_RDMA_ADDR_TYPE_",
    "doca_rdma_opcode": "DOCA_RDMA_OPCODE_",
    "doca_mtu_size": "DOCA_MTU_SIZE_",
    "doca_verbs_qp_state": "DOCA_VERBS_QP_STATE_",
    "doca_verbs_addr_type": "DOCA_VERBS_ADDR_TYPE_",
    "doca_verbs_qp_atomic_mode": "DOCA_VERBS_QP_ATOMIC_MODE_",
    "doca_verbs_qp_scatter_to_cqe": "DOCA_VERBS_QP_SCATTER_TO_CQE_",
    "doca_verbs_qp_send_dbr_mode": "DOCA_VERBS_QP_SEND_DBR_MODE_",
    "doca_verbs_cq_entry_size": "DOCA_VERBS_CQ_ENTRY_SIZE_",
    "doca_verbs_atomic_cap": "DOCA_VERBS_ATOMIC_CAP_",
    "doca_verbs_srq_type": "DOCA_VERBS_SRQ_TYPE_",
    "doca_uar_allocation_type": "DOCA_UAR_ALLOCATION_TYPE_",
}

# Short names the sheet writes differently from the constant (MTU sizes drop "_BYTES").
SHORT_NAME = {
    ("doca_mtu_size", "256B"): "256_BYTES",
    ("doca_mtu_size", "512B"): "512_BYTES",
    ("doca_mtu_size", "1K"): "1K_BYTES",
    ("doca_mtu_size", "2K"): "2K_BYTES",
    ("doca_mtu_size", "4K"): "4K_BYTES",
}

# Slash lists ("A/B/C") the sheets use, spelled out.
SLASH_FORMS = {
    "DOCA_DEVINFO_IPV4/IPV6_ADDR_SIZE": ["DOCA_DEVINFO_IPV4_ADDR_SIZE", "DOCA_DEVINFO_IPV6_ADDR_SIZE"],
    "DOCA_VERBS_TS_SOURCE_DEFAULT/FREE_RUNNING/REAL_TIME": [
        "DOCA_VERBS_TS_SOURCE_DEFAULT",
        "DOCA_VERBS_TS_SOURCE_FREE_RUNNING",
        "DOCA_VERBS_TS_SOURCE_REAL_TIME",
    ],
    "UP_TO_8/16/32/64/128/256BYTES": [
        "UP_TO_8BYTES",
        "UP_TO_16BYTES",
        "UP_TO_32BYTES",
        "UP_TO_64BYTES",
        "UP_TO_128BYTES",
        "UP_TO_256BYTES",
    ],
}

# Shorthand the general rule would expand differently from how the sheet reads: the BTH
# field-length macros are DST_QP and PSN (both 3 bytes), not DST_PSN. (Our reading.)
SUFFIX_OVERRIDE = {
    ("DOCA_FLOW_IB_BTH_DST_QP_LEN", "_PSN_LEN"): "DOCA_FLOW_IB_BTH_PSN_LEN",
}

# Headers each output includes.
HOST_INCLUDES = [
    "doca_types.h",
    "doca_dev.h",
    "doca_gpunetio.h",
    "doca_rdma.h",
    "doca_verbs.h",
    "doca_uar.h",
]
FLOW_INCLUDES = ["doca_flow.h", "doca_flow_net.h"]

INT = r"-?(?:0x[0-9A-Fa-f]+|\d+)"


class Facts:
    """Assertions of one output file, in sheet order, without repeats."""

    def __init__(self):
        self.lines = []
        self.seen = set()

    def section(self, title):
        self.lines.append(f"\n/* {title} */")

    def add(self, expr, what):
        if expr in self.seen:
            return
        self.seen.add(expr)
        self.lines.append(f'LAYOUT_FACT({expr}, "{what}");')

    def count(self):
        return len(self.seen)


def fail(msg):
    sys.stderr.write(f"layout_facts.py: {msg}\n")
    sys.exit(2)


def join_suffix(first, suffix):
    """Expand `_SUFFIX` written after the full name `first` (no enum prefix known): the
    suffix replaces `first` from the last component equal to the suffix's first component,
    else as many trailing components as the suffix has."""
    if (first, suffix) in SUFFIX_OVERRIDE:
        return SUFFIX_OVERRIDE[(first, suffix)]
    comps = first.split("_")
    scomps = suffix.lstrip("_").split("_")
    for i in range(len(comps) - 1, 0, -1):
        if comps[i] == scomps[0]:
            return "_".join(comps[:i] + scomps)
    if len(scomps) >= len(comps):
        fail(f"cannot expand {suffix} after {first}")
    return "_".join(comps[: len(comps) - len(scomps)] + scomps)


def with_prefix(prefix, name):
    """prefix + name, where name may repeat the end of the prefix (SYNC_SCOPE_SYS under
    DOCA_GPUNETIO_VERBS_SYNC_SCOPE_) or start with `_`."""
    if name.startswith("DOCA_") or name.startswith("MLX5_"):
        return name
    name = name.lstrip("_")
    pcomps = prefix.rstrip("_").split("_")
    ncomps = name.split("_")
    for k in range(min(len(pcomps), len(ncomps) - 1), 0, -1):
        if pcomps[-k:] == ncomps[:k]:
            return "_".join(pcomps[:-k] + ncomps)
    return prefix + name


def value_expr(text):
    """A C constant expression for a value cell: 0x1F, 3, 1<<5, INT_MAX."""
    text = text.strip()
    m = re.fullmatch(rf"({INT})\s*<<\s*(\d+)", text)
    if m:
        return f"({m.group(1)} << {m.group(2)})"
    if re.fullmatch(INT, text):
        return text
    if text in ("INT_MAX", "UINT32_MAX"):
        return text
    return None


# ---------------------------------------------------------------- value lists ("A=0, B=1")


def enum_items(enum, body, out, what):
    """Items of one enum: `NAME=v`, `NAME v`, `_NAME v`, `A/B=0..1`, with comments in
    parentheses dropped."""
    prefix = ENUM_PREFIX.get(enum)
    body = re.sub(r"\([^)]*\)", "", body)
    body = body.split(" — ")[0].split(";")[0]
    for item in [i.strip() for i in body.split(",") if i.strip()]:
        item = item.replace("`", "")
        m = re.fullmatch(r"([A-Za-z0-9_/]+)\s*(?:=|\s)\s*(\S+(?:\s*<<\s*\d+)?)", item)
        if not m:
            fail(f"{what}: cannot read item {item!r} of {enum}")
        name, val = m.group(1), m.group(2)
        if "/" in name:
            names = SLASH_FORMS.get(name) or fail(f"{what}: unknown slash form {name}")
            r = re.fullmatch(r"(\d+)\.\.(\d+)", val)
            vals = [str(v) for v in range(int(r.group(1)), int(r.group(2)) + 1)] if r else val.split("/")
            if len(vals) != len(names):
                fail(f"{what}: {name} has {len(names)} names but {val}")
            pairs = list(zip(names, vals))
        else:
            pairs = [(name, val)]
        for short, v in pairs:
            short = SHORT_NAME.get((enum, short), short)
            if prefix is None:
                fail(f"{what}: no constant prefix known for enum {enum}")
            full = with_prefix(prefix, short)
            expr = value_expr(v)
            if expr is None:
                fail(f"{what}: value {v!r} of {full}")
            out.add(f"{full} == {expr}", f"{what}: {full}")


def define_list(segment, out, what):
    """`FULL_NAME` v, `_SUFFIX` v, ... (macros named in full, then by suffix)."""
    first = None
    for item in [i.strip() for i in segment.split(",") if i.strip()]:
        m = re.fullmatch(r"`([A-Za-z0-9_/]+)`\s+(\S+)", item)
        if not m:
            fail(f"{what}: cannot read define {item!r}")
        name, val = m.group(1), m.group(2)
        if "/" in name:
            names = SLASH_FORMS.get(name) or fail(f"{what}: unknown slash form {name}")
            vals = val.split("/")
            if len(vals) != len(names):
                fail(f"{what}: {name} has {len(names)} names but {val}")
            for n, v in zip(names, vals):
                out.add(f"{n} == {value_expr(v)}", f"{what}: {n}")
            continue
        full = join_suffix(first, name) if name.startswith("_") else name
        first = first or full
        expr = value_expr(val)
        if expr is None:
            fail(f"{what}: value {val!r} of {full}")
        out.add(f"{full} == {expr}", f"{what}: {full}")


# ---------------------------------------------------------------- the RDMA / verbs sheet


def rdma_sheet(text, out):
    lines = text.splitlines()

    out.section("gpunetio-rdma-verbs-dma.md 2.2: doca_rdma.h enums, GID")
    line = next(l for l in lines if l.startswith("Enums: `doca_rdma_transport_type`"))
    for seg in line[len("Enums: ") :].rstrip(".").split(" · "):
        m = re.match(r"`(\w+)`\s*(?:\([^)]*\))?\s*(.*)", seg)
        enum_items(m.group(1), m.group(2), out, "2.2")
    line = next(l for l in lines if "struct doca_rdma_gid {" in l)
    m = re.search(r"`struct (doca_rdma_gid) \{[^}]*\}` \((\d+) B\)", line)
    out.add(f"sizeof(struct {m.group(1)}) == {m.group(2)}", "2.2: sizeof doca_rdma_gid")
    if "typedef uint64_t doca_dpa_dev_rdma_t;" in line:
        out.add("sizeof(doca_dpa_dev_rdma_t) == 8", "2.2: doca_dpa_dev_rdma_t is 64-bit")

    out.section("gpunetio-rdma-verbs-dma.md 2.5: doca_verbs.h defines, enums, attr mask, GID")
    line = next(l for l in lines if l.startswith("Defines/enums: "))
    for seg in line[len("Defines/enums: ") :].rstrip(".").split(" · "):
        m = re.match(r"`(doca_\w+)`\s*(.*)", seg)
        if m:
            enum_items(m.group(1), m.group(2), out, "2.5")
        else:
            define_list(seg, out, "2.5")
    line = next(l for l in lines if l.startswith("QP attr mask bits "))
    m = re.match(r"QP attr mask bits `(\w+)\*`: (.*)", line)
    for item in m.group(2).rstrip(".").split(","):
        name, val = item.split()
        out.add(f"{m.group(1)}{name} == {value_expr(val)}", f"2.5: {m.group(1)}{name}")
    line = next(l for l in lines if "struct doca_verbs_gid {" in l)
    m = re.search(r"struct doca_verbs_gid \{ uint8_t raw\[(\d+)\]; \}", line)
    out.add(f"sizeof(struct doca_verbs_gid) == {m.group(1)}", "2.5: sizeof doca_verbs_gid")

    out.section("gpunetio-rdma-verbs-dma.md 2.6: doca_uar.h")
    line = next(l for l in lines if "`enum doca_uar_allocation_type`" in l)
    m = re.search(r"`enum (doca_uar_allocation_type)` ([^·]*)", line)
    enum_items(m.group(1), m.group(2), out, "2.6")

    out.section("gpunetio-rdma-verbs-dma.md 2.8: DOCA constants")
    line = next(l for l in lines if "`DOCA_GID_BYTE_LENGTH`" in l)
    for name, val in re.findall(r"`(DOCA_[A-Z0-9_/]+)` (\d+(?:/\d+)*)", line):
        define_list(f"`{name}` {val}", out, "2.8")

    out.section("gpunetio-rdma-verbs-dma.md 3.1: doca_gpunetio_verbs_def.h enums")
    start = lines.index("| Enum | Constants = values |")
    for row in lines[start + 2 :]:
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in row.strip("|").split("|")]
        head, body = cells[0], cells[1]
        m = re.search(r"`(DOCA_\w+_)\*`", head) or re.search(r"\(prefix `(DOCA_\w+_)`\)", body)
        name = re.match(r"`(\w+)`", head)
        enum = name.group(1) if name else head
        if m:
            ENUM_PREFIX.setdefault(enum, m.group(1))
        enum_items(enum, body, out, "3.1")
    line = next(l for l in lines if l.startswith("Typedef `doca_gpu_dev_verbs_ticket_t`"))
    if "= `uint64_t`" in line:
        out.add("sizeof(doca_gpu_dev_verbs_ticket_t) == 8", "3.1: ticket is 64-bit")

    out.section("gpunetio-rdma-verbs-dma.md 3.1: doca_gpunetio_verbs_def.h struct layouts")
    start = lines.index("| Struct (sizeof) | Fields in order (offset) |")
    for row in lines[start + 2 :]:
        if not row.startswith("|"):
            break
        head, body = [c.strip() for c in row.strip("|").split("|")][:2]
        m = re.fullmatch(r"`(\w+)` \((\d+)(?:, packed)?(?:, align (\d+))?\)", head)
        if not m:
            fail(f"3.1: cannot read struct cell {head!r}")
        tag = f"struct {m.group(1)}"
        out.add(f"sizeof({tag}) == {m.group(2)}", f"3.1: sizeof {m.group(1)}")
        if m.group(3):
            out.add(f"LAYOUT_ALIGNOF({tag}) == {m.group(3)}", f"3.1: alignof {m.group(1)}")
        prev = None
        for decl, off in re.findall(r"`([^`]+)`\((\d+)\)", body):
            field = re.sub(r"\[.*\]$", "", decl.split()[-1].lstrip("*"))
            if field.startswith("_") and prev:
                field = join_suffix(prev, field)
            prev = field
            out.add(f"offsetof({tag}, {field}) == {off}", f"3.1: {m.group(1)}.{field}")


# ---------------------------------------------------------------- the Flow sheet


def table_rows(lines, header):
    """Rows (lists of cells) of every table whose header line is `header`."""
    rows = []
    for i, l in enumerate(lines):
        if l == header:
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
    return rows


def flow_sheet(text, host, flow):
    lines = text.splitlines()

    host.section("flow-3.3-layout.md 3.2: doca_types.h macros")
    flow.section("flow-3.3-layout.md 3: macros with plain integer values")
    for cells in table_rows(lines, "| macro | value / expansion | meaning |") + table_rows(
        lines, "| macro | value | meaning |"
    ):
        names = re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[0])
        if not names or re.search(r"`\w+\(", cells[0]) or " … " in cells[0]:
            continue
        values = [v.strip() for v in cells[1].split(" / ")]
        doca_types = "(doca_types.h)" in cells[0]
        if "/" in cells[0]:
            if len(values) != len(names):
                continue
            full = [names[0]] + [join_suffix(names[0], n) for n in names[1:]]
        else:
            full, values = [names[0]], [cells[1]]
        for name, val in zip(full, values):
            bold = re.search(r"=\s*\*\*(\d+)\*\*", val) or re.search(rf"=\s*({INT})\b", val)
            m = re.match(rf"({INT})(?:\s|$)", val)
            ident = re.fullmatch(r"`([A-Z][A-Z0-9_]*)`(?: \(see [0-9.]+\))?", val)
            expr = bold.group(1) if bold else m.group(1) if m else ident.group(1) if ident else None
            if expr is None:
                continue
            target = host if doca_types else flow
            target.add(f"{name} == {expr}", f"flow 3: {name}")

    flow.section("flow-3.3-layout.md 4: enum constants and enum sizes")
    for cells in table_rows(lines, "| enum | header | constants = value |"):
        m = re.match(r"`enum (\w+)`", cells[0])
        size = 1 if "1 byte" in cells[0] else 4
        flow.add(f"sizeof(enum {m.group(1)}) == {size}", f"flow 4: sizeof enum {m.group(1)}")
        for name, val in re.findall(rf"`(\w+)`=({INT})", cells[2]):
            flow.add(f"{name} == {val}", f"flow 4: {name}")

    flow.section("flow-3.3-layout.md 6.1: sizes and alignments")
    for cells in table_rows(lines, "| type | sizeof | alignof | versioned | header |"):
        m = re.fullmatch(r"`((?:struct|union) \w+)`", cells[0])
        flow.add(f"sizeof({m.group(1)}) == {cells[1]}", f"flow 6.1: sizeof {m.group(1)}")
        flow.add(f"LAYOUT_ALIGNOF({m.group(1)}) == {cells[2]}", f"flow 6.1: alignof {m.group(1)}")

    flow.section("flow-3.3-layout.md 6.2: member offsets and sizes")
    tag = None
    for i, l in enumerate(lines):
        m = re.match(r"#### `((?:struct|union) \w+)`", l)
        if m:
            tag = m.group(1)
            continue
        if tag and l.startswith("| ") and re.match(r"\| \d+ \| \d+ \|", l):
            off, size, member = [c.strip() for c in l.strip("|").split("|")][:3]
            name = re.search(r"`([\w.]+)`", member)
            if not name:
                continue  # anonymous struct/union rows: their members follow
            path = name.group(1)
            flow.add(f"offsetof({tag}, {path}) == {off}", f"flow 6.2: {tag}.{path}")
            flow.add(f"LAYOUT_SIZEOF_MEMBER({tag}, {path}) == {size}", f"flow 6.2: size {tag}.{path}")
        elif l.startswith("### 6.3"):
            break

    flow.section("flow-3.3-layout.md 6.3: absolute offsets of member paths")
    for cells in table_rows(lines, "| struct | member path | offset | size |"):
        tag = "struct " + cells[0].strip("`")
        path = cells[1].strip("`")
        flow.add(f"offsetof({tag}, {path}) == {cells[2]}", f"flow 6.3: {tag}.{path}")
        flow.add(f"LAYOUT_SIZEOF_MEMBER({tag}, {path}) == {cells[3]}", f"flow 6.3: size {tag}.{path}")


# ---------------------------------------------------------------- output


def render(facts, includes, sources, purpose):
    head = f"""/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * GENERATED by doca-soft/tests/gen/layout_facts.py from {", ".join(sources)}:
 * do not edit; change the sheets or the generator and run it again.
 *
 * {purpose}
 * {facts.count()} static assertions; compiled as C and as C++ by tests/layout_facts.rs.
 */
"""
    body = "".join(f"#include <{h}>\n" for h in includes)
    body += """#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define LAYOUT_FACT(cond, what) static_assert(cond, what)
#define LAYOUT_ALIGNOF(type) alignof(type)
#else
#define LAYOUT_FACT(cond, what) _Static_assert(cond, what)
#define LAYOUT_ALIGNOF(type) _Alignof(type)
#endif
#define LAYOUT_SIZEOF_MEMBER(type, member) sizeof(((type *)0)->member)
"""
    return head + "\n" + body + "\n".join(facts.lines) + "\n"


def find_facts_dir(arg):
    if arg:
        return Path(arg)
    if os.environ.get("DOCA_FACTS_DIR"):
        return Path(os.environ["DOCA_FACTS_DIR"])
    for parent in HERE.parents:
        candidate = parent / "shared" / "reference"
        if (candidate / RDMA_SHEET).is_file():
            return candidate
    fail("fact sheets not found: pass --facts DIR or set DOCA_FACTS_DIR")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", help="directory holding the fact sheets")
    ap.add_argument("--check", action="store_true", help="only report stale outputs")
    args = ap.parse_args()
    facts_dir = find_facts_dir(args.facts)

    host, flow = Facts(), Facts()
    rdma_sheet((facts_dir / RDMA_SHEET).read_text(encoding="utf-8"), host)
    flow_sheet((facts_dir / FLOW_SHEET).read_text(encoding="utf-8"), host, flow)

    outputs = {
        OUT_HOST: render(
            host,
            HOST_INCLUDES,
            [RDMA_SHEET, FLOW_SHEET + " (doca_types.h rows)"],
            "Values and layouts of the GPUNetIO host, RDMA, Verbs and UAR headers and of the\n"
            " * verbs definitions shared with device code.",
        ),
        OUT_FLOW: render(
            flow,
            FLOW_INCLUDES,
            [FLOW_SHEET],
            "Values and layouts of DOCA Flow as DOCA 3.3 has them.",
        ),
    }
    stale = []
    for path, text in outputs.items():
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        if old != text:
            stale.append(path)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        for p in stale:
            sys.stderr.write(f"stale: {p} (run {Path(__file__).relative_to(TESTS.parent.parent)})\n")
        return 1
    for path, text in outputs.items():
        print(f"{path.name}: {text.count('LAYOUT_FACT(') - 2} assertions" + (" (rewritten)" if path in stale and not args.check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
