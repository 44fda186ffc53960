#!/usr/bin/env python3
"""Generate include/doca_ctsd_flow.h, the versioned half of DOCA Flow's headers.

DOCA 3.3 declares every Flow struct that may grow, and every call taking one, twice: the plain
declarations in doca_flow_net.h, doca_flow_crypto.h and doca_flow.h, then `_v1` copies at the
end of doca_flow.h (doca_ctsd_flow.h) together with macros that rewrite every later use of a
plain name into its `_v1` name (reference flow-3.3-layout.md section 2). The copies must stay
identical to the plain declarations, so they are generated from them:

  * for each of the 44 versioned tags: the three rename macros, a forward declaration, the
    definition with every versioned tag inside it renamed, and the initialiser macros
    (DOCA_FLOW_STRUCT_<N>_INIT and its _mid/_versioned/_V1 chain, parameters per section 2.5);
  * for each of the 25 versioned calls: the three rename macros and the `_v1` prototype (with
    the attribute changes of section 2.3).

Usage:
  ctsd_flow.py            rewrite include/doca_ctsd_flow.h
  ctsd_flow.py --check    exit 1 if the committed file is not what this script makes
"""

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent.parent / "include"
OUT = INCLUDE / "doca_ctsd_flow.h"
SOURCES = ["doca_flow_net.h", "doca_flow_crypto.h", "doca_flow.h"]

# Section 2.4: the versioned struct tags (and the one union tag).
TAGS = """action_desc action_descs actions crypto crypto_action crypto_encap_action crypto_key_cfg
desc_field encap_action entropy_format fwd header_eth header_eth_vlan header_format header_geneve
header_ib_bth header_icmp header_ip4 header_ip6 header_l4_port header_psp header_roce_v2
header_tcp header_udp match match_condition meta monitor nat64_action ordered_list
ordered_list_element parser_meta push_action push_vlan_action resource_decap_cfg
resource_encap_cfg resource_ipsec_sa_cfg resource_meter_cfg resource_psp_cfg resource_query
resource_rss_cfg shared_resource_cfg tun geneve_option""".split()
UNION_TAGS = {"geneve_option"}

FUNCTIONS = """init pipe_acl_add_entry pipe_acl_update_entry pipe_basic_add_entry
pipe_basic_update_entry pipe_calc_hash pipe_cfg_set_actions pipe_cfg_set_match
pipe_cfg_set_monitor pipe_cfg_set_ordered_lists pipe_control_add_entry pipe_create
pipe_hash_add_entry pipe_lpm_add_entry pipe_lpm_update_entry pipe_ordered_list_add_entry
pipe_update_miss port_calc_entropy port_query_default_miss port_shared_resource_set_cfg
port_shared_resources_query resource_query_entry resource_query_pipe_miss
shared_resource_set_cfg shared_resources_query""".split()

# Section 2.3: stable in plain form, experimental as _v1.
EXPERIMENTAL_V1 = {
    "pipe_cfg_set_match",
    "pipe_cfg_set_actions",
    "pipe_cfg_set_monitor",
    "pipe_cfg_set_ordered_lists",
    "pipe_update_miss",
    "resource_query_entry",
    "resource_query_pipe_miss",
}

# Section 2.5: initialiser parameters -> members, in member order, and arrays set to zero.
# Tags not listed here take no parameters ({ }).
INIT = {
    "resource_rss_cfg": ["outer_flags", "inner_flags", "queues_array", "nr_queues", "rss_hash_func"],
    "meta": ["pkt_meta", "=u32"],
    "parser_meta": [
        "port_id", "random", "ipsec_syndrome", "ipsec_ar_syndrome", "psp_syndrome", "meter_color",
        "outer_l2_type", "outer_l3_type", "outer_l4_type", "inner_l2_type", "inner_l3_type",
        "inner_l4_type", "outer_ip_fragmented", "inner_ip_fragmented", "outer_l3_ok",
        "outer_ip4_checksum_ok", "outer_l4_ok", "outer_l4_checksum_ok", "inner_l3_ok",
        "inner_ip4_checksum_ok", "inner_l4_ok", "inner_l4_checksum_ok",
    ],
    "header_eth": ["=src_mac", "=dst_mac", "type"],
    "header_eth_vlan": ["tci"],
    "header_l4_port": ["src_port", "dst_port"],
    "header_geneve": ["ver_opt_len", "o_c", "next_proto", "vni"],
    "header_psp": ["nexthdr", "hdrextlen", "res_cryptofst", "s_d_ver_v", "spi", "iv", "vc"],
    "crypto_key_cfg": ["key_type", "key"],
    "header_ip4": [
        "src_ip", "dst_ip", "version_ihl", "dscp_ecn", "total_len", "identification",
        "flags_fragment_offset", "next_proto", "ttl",
    ],
    "header_ip6": ["src_ip[4]", "dst_ip[4]", "traffic_class", "flow_label", "payload_len",
                   "next_proto", "hop_limit"],
    "header_icmp": ["type", "code", "ident"],
    "header_ib_bth": ["opcode", "sempt", "pkey", "flags0", "=dest_qp", "flags1", "=psn"],
    "desc_field": ["field_string", "bit_offset"],
    "nat64_action": ["original_l3_type"],
    "crypto_encap_action": ["action_type", "net_type", "icv_size", "data_size", "=encap_data"],
    "tun": ["type"],
    "header_udp": ["l4_port"],
    "match_condition": ["operation"],
    "encap_action": ["outer", "tun"],
    "push_vlan_action": ["eth_type", "vlan_hdr"],
    "push_action": ["type"],
    "crypto_action": ["action_type", "resource_type", "crypto_id"],
    "resource_encap_cfg": ["is_l2", "encap"],
    "resource_decap_cfg": ["is_l2", "eth", "l2_valid_headers", "=eth_vlan"],
    "actions": [
        "decap_type", "pop_vlan", "meta", "parser_meta", "outer", "tun", "encap_type", "has_push",
        "push", "nat64", "has_crypto_encap", "crypto_encap", "crypto",
    ],
    "crypto": ["has_crypto_encap", "crypto_encap", "crypto"],
    "fwd": ["type"],
    "resource_meter_cfg": ["limit_type", "color_mode", "alg", "cir", "cbs"],
    "resource_psp_cfg": ["key_cfg"],
    "resource_ipsec_sa_cfg": [
        "key_cfg", "salt", "implicit_iv", "icv_len", "sn_offload_type", "win_size", "esn_en",
        "sn_initial", "lifetime_threshold",
    ],
    "shared_resource_cfg": [],
    "monitor": ["meter_type", "counter_type", "aging_sec"],
    "action_desc": ["type"],
    "action_descs": ["nb_action_desc", "desc_array"],
    "ordered_list_element": ["type"],
    "ordered_list": ["idx", "size", "elements"],
    "resource_query": [],
}

LICENCE = "/* SPDX-License-Identifier: MIT OR Apache-2.0 */\n"

HEAD = """/*
 * doca-soft: DOCA Flow's versioned names (LIB_FLOW_VERSION 1).
 *
 * GENERATED by doca-soft/tests/gen/ctsd_flow.py from doca_flow_net.h, doca_flow_crypto.h and
 * doca_flow.h: do not edit; change those headers and run the script again.
 *
 * Included at the end of doca_flow.h. For each versioned struct and call it defines:
 *   - NAME, NAME_versioned_mid(V) and NAME_versioned(V): from here on NAME means NAME_v1;
 *   - the `_v1` struct (same members and layout as the plain one) or prototype: the symbol
 *     programs link is the `_v1` one;
 *   - for structs, DOCA_FLOW_STRUCT_<NAME>_INIT(...) (via _INIT_mid, _INIT_versioned and
 *     _INIT_V1), a brace initialiser setting the members it takes, in member order. Its
 *     arguments are macro-expanded first, so an argument containing a top-level comma (a
 *     nested brace initialiser) must be passed as a variable or in parentheses.
 */
"""


def fail(msg):
    sys.stderr.write(f"ctsd_flow.py: {msg}\n")
    sys.exit(2)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def definitions(text):
    """Top-level `struct|union NAME {` ... `};` blocks, by name."""
    out = {}
    for m in re.finditer(r"^(struct|union) (doca_flow_\w+) \{\n(.*?)^\};\n", text, re.S | re.M):
        out[m.group(2)] = (m.group(1), m.group(3))
    return out


def prototypes(text):
    """(attribute, name, text) of every DOCA_STABLE/DOCA_EXPERIMENTAL prototype."""
    out = []
    for m in re.finditer(r"^(DOCA_STABLE|DOCA_EXPERIMENTAL) (.*?);\n", text, re.S | re.M):
        decl = m.group(2)
        name = re.search(r"(\w+)\s*\(", decl).group(1)
        out.append((m.group(1), name, decl))
    return out


def rename_tags(text):
    def sub(m):
        kind, name = m.group(1), m.group(2)
        short = name[len("doca_flow_"):]
        if short in TAGS:
            return f"{kind} {name}_v1"
        return m.group(0)

    return re.sub(r"\b(struct|union) (doca_flow_\w+)\b", sub, text)


def rename_macros(name):
    return [
        f"#define {name} {name}_versioned_mid(LIB_FLOW_VERSION)",
        f"#define {name}_versioned_mid(VERSION) {name}_versioned(VERSION)",
        f"#define {name}_versioned(VERSION) {name}_v##VERSION",
    ]


def init_macros(short):
    kind = "UNION" if short in UNION_TAGS else "STRUCT"
    base = f"DOCA_FLOW_{kind}_{short.upper()}_INIT"
    lines = [
        f"#undef {base}",
        f"#define {base}(...) {base}_mid(LIB_FLOW_VERSION, __VA_ARGS__)",
        f"#define {base}_mid(VERSION, ...) {base}_versioned(VERSION)(__VA_ARGS__)",
        f"#define {base}_versioned(VERSION) {base}_V##VERSION",
    ]
    if short in UNION_TAGS:
        lines.append(
            f"#define {base}_V1(UNION_INSTANCE, FIELD, VALUE)"
            " \\\n\tdo { \\\n\t\t(UNION_INSTANCE).data = 0; \\\n"
            "\t\t(UNION_INSTANCE).FIELD = (VALUE); \\\n\t} while (0)"
        )
        return lines
    params, members = [], []
    for item in INIT.get(short, []):
        if item.startswith("="):
            members.append(f".{item[1:]} = {{0}}")
            continue
        arr = re.fullmatch(r"(\w+)\[(\d+)\]", item)
        if arr:
            field, n = arr.group(1), int(arr.group(2))
            names = [f"{field.upper()}{i}" for i in range(n)]
            params += names
            members.append(f".{field} = {{" + ", ".join(f"({p})" for p in names) + "}")
            continue
        params.append(item.upper())
        members.append(f".{item} = ({item.upper()})")
    body = "{ " + ", ".join(members) + " }" if members else "{ }"
    head = f"#define {base}_V1({', '.join(params)})"
    if len(head) + len(body) > 96 and members:
        body = "\\\n\t{ \\\n" + ", \\\n".join(f"\t\t{m}" for m in members) + " \\\n\t}"
        lines.append(f"{head} {body}")
    else:
        lines.append(f"{head} {body}")
    return lines


def generate():
    defs, protos = {}, []
    for src in SOURCES:
        text = (INCLUDE / src).read_text()
        for name, d in definitions(text).items():
            defs[name] = (src, d)
        protos += prototypes(text)
    order = []
    for src in SOURCES:
        text = (INCLUDE / src).read_text()
        for m in re.finditer(r"^(?:struct|union) (doca_flow_\w+) \{$", text, re.M):
            short = m.group(1)[len("doca_flow_"):]
            if short in TAGS:
                order.append(short)
    missing = [t for t in TAGS if t not in order]
    if missing:
        fail(f"versioned tags not defined by {SOURCES}: {missing}")
    by_name = {name: (attr, decl) for attr, name, decl in protos}
    missing = [f for f in FUNCTIONS if f"doca_flow_{f}" not in by_name]
    if missing:
        fail(f"versioned calls not declared: {missing}")

    out = [LICENCE, HEAD, "#ifndef DOCA_CTSD_FLOW_H\n#define DOCA_CTSD_FLOW_H\n\n"]
    out.append("/* Included at the end of doca_flow.h; included alone, it brings doca_flow.h. */\n")
    out.append('#include "doca_flow.h"\n\n')
    out.append("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
    out.append("/* ---- versioned struct and union tags ---- */\n\n")
    for short in order:
        out.append("\n".join(rename_macros(f"doca_flow_{short}")) + "\n")
    out.append("\n")
    for short in order:
        kind = "union" if short in UNION_TAGS else "struct"
        out.append(f"{kind} doca_flow_{short}_v1;\n")
    out.append("\n")
    for short in order:
        kind, body = defs[f"doca_flow_{short}"][1]
        body = rename_tags(strip_comments(body))
        body = "\n".join(l for l in body.split("\n") if l.strip()) + "\n"
        out.append(f"{kind} doca_flow_{short}_v1 {{\n{body}}};\n\n")
    out.append("/* ---- versioned calls ---- */\n\n")
    for f in FUNCTIONS:
        out.append("\n".join(rename_macros(f"doca_flow_{f}")) + "\n")
    out.append("\n")
    for f in FUNCTIONS:
        attr, decl = by_name[f"doca_flow_{f}"]
        if f in EXPERIMENTAL_V1:
            attr = "DOCA_EXPERIMENTAL"
        decl = rename_tags(decl)
        decl = re.sub(rf"\bdoca_flow_{f}\s*\(", f"doca_flow_{f}_v1(", decl, count=1)
        if f == "pipe_basic_add_entry":
            decl = decl.replace("*monitor,", "*mon,")
        decl = re.sub(r"\s+", " ", decl).replace("( ", "(")
        params = decl[decl.index("(") + 1 : decl.rindex(")")].split(", ")
        head = decl[: decl.index("(") + 1]
        out.append(f"{attr} {head}" + (",\n\t\t".join(params)) + ");\n")
    out.append("\n/* ---- initialisers ---- */\n\n")
    for short in order:
        out.append("\n".join(init_macros(short)) + "\n\n")
    out.append("#ifdef __cplusplus\n}\n#endif\n\n#endif /* DOCA_CTSD_FLOW_H */\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = generate()
    if args.check:
        if not OUT.is_file() or OUT.read_text() != text:
            sys.stderr.write(f"{OUT} is stale: run {Path(__file__).name}\n")
            sys.exit(1)
        return
    OUT.write_text(text)


if __name__ == "__main__":
    main()
