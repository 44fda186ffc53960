//! `doca_flow.h`: DOCA Flow on the soft NIC's ports. The versioned functions are exported
//! with their `_v1` names, as the header maps them.
//!
//! # What is emulated
//!
//! * Library, port and pipe configuration, SYSTEM and PORT resource modes, queues with
//!   completion callbacks: an entry takes effect when it is added, and its operation (ADD,
//!   UPD, DEL) completes with status SUCCESS in `doca_flow_entries_process` on its queue,
//!   which runs the entry callback. Pipe events (congestion, resize, destroy) go to the
//!   pipe callback.
//! * BASIC pipes (match template with constant and changeable fields, exact lookup), CONTROL
//!   pipes (per-entry match, mask and priority; a lower priority number wins), HASH pipes
//!   (HASH or IDENTITY map, entries at indexes). Matches cover the programmable metadata,
//!   the parser metadata (port id, L2/L3/L4 types of both layers, fragmentation, header and
//!   checksum validity), the outer and inner Ethernet, VLAN, IPv4, IPv6, TCP, UDP, ICMP and
//!   RoCE v2 headers, and the VXLAN (and -GPE, -GBP), GRE, GTP-U, ESP and GENEVE tunnel
//!   fields.
//! * Actions rewriting the outer headers (with checksums fixed), VLAN pop and push,
//!   metadata writes, ADD descriptors; forwards to RSS (own or shared configuration, inner
//!   hashing, symmetric), a port, a pipe or hash pipe, the kernel, drop, and per-entry
//!   forwards (CHANGEABLE); counters (own and shared), miss counters, the default miss,
//!   aging, resize, hashes and entropy, pipe dumps, MPLS label helpers.
//!
//! # What is refused
//!
//! NOT_SUPPORTED, with one log line naming the feature, at the call asking for it: LPM, CT,
//! ACL and ordered-list pipes and their entry calls, egress and secure domains, meters,
//! match conditions, decap, encap, tunnel rewrites, NAT64, crypto (all of
//! `doca_flow_crypto.h`), COPY descriptors, PSP/IPsec/meter/encap/decap shared resources,
//! representors, GENEVE option parsers, Flow definitions (all of
//! `doca_flow_definitions.h`), tune profiles other than NONE, matching fields the parser
//! cannot see (`parser_meta.random`, syndromes, meter colour, MPLS, PSP, NVGRE, GENEVE
//! options).
//!
//! Stale handles get NOT_FOUND (entries), BAD_STATE (ports) or INVALID_VALUE (pipes), never
//! undefined behaviour.
//!
//! # Files
//!
//! One file per part of the header, all re-exported here: `library` (global and tune
//! configuration, init), `port_cfg` and `port`, `pipe_cfg` and `pipe`, `entry` (the entry
//! calls of every pipe type), `resources` (shared resources and counter queries) and
//! `parser` (GENEVE parsers, MPLS labels).

use std::ffi::c_char;

use super::toolkit::{str_lossy, write_out};
use crate::error::{DocaError, DocaResult};
use crate::flow::actions::{ActionBytes, Desc};
use crate::flow::matching::MatchBytes;

pub use crate::flow::cfg::{
    EntryProcessCb, FlowCfg, PipeCfg, PipeProcessCb, PortCfg, TuneCfg, UnbindCb,
};
pub use crate::flow::handles::FlowPort;
pub use crate::flow::sys::*;

mod entry;
mod library;
mod parser;
mod pipe;
mod pipe_cfg;
mod port;
mod port_cfg;
mod resources;

pub use entry::*;
pub use library::*;
pub use parser::*;
pub use pipe::*;
pub use pipe_cfg::*;
pub use port::*;
pub use port_cfg::*;
pub use resources::*;

/// A required string argument (INVALID_VALUE for NULL; bytes that are not UTF-8 replaced).
///
/// # Safety
/// A non-null `p` is NUL-terminated.
unsafe fn string_arg(p: *const c_char) -> DocaResult<String> {
    // SAFETY: caller contract.
    unsafe { str_lossy(p) }
        .map(|s| s.into_owned())
        .ok_or(DocaError::INVALID_VALUE)
}

/// An optional C struct argument.
///
/// # Safety
/// A non-null `p` points to a valid `T` for the duration of the call.
unsafe fn opt<'a, T>(p: *const T) -> Option<&'a T> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }
}

/// The bytes of a match struct (NULL: none).
///
/// # Safety
/// A non-null `p` points to a `struct doca_flow_match` the caller initialised.
unsafe fn match_bytes<'a>(p: *const doca_flow_match_v1) -> Option<&'a MatchBytes> {
    // SAFETY: caller contract; the struct is 536 bytes (asserted in flow::layout).
    unsafe { p.cast::<MatchBytes>().as_ref() }
}

/// The bytes of an actions struct (NULL: none).
///
/// # Safety
/// A non-null `p` points to a `struct doca_flow_actions` the caller initialised.
unsafe fn action_bytes<'a>(p: *const doca_flow_actions_v1) -> Option<&'a ActionBytes> {
    // SAFETY: caller contract; the struct is 1024 bytes (asserted in flow::layout).
    unsafe { p.cast::<ActionBytes>().as_ref() }
}

/// The descriptors of an action-descriptor array (NULL: none), strings copied.
///
/// # Safety
/// A non-null `p` points to a valid struct whose array holds `nb_action_desc` entries with
/// NULL or NUL-terminated field strings.
unsafe fn descs_of(p: *const doca_flow_action_descs_v1) -> DocaResult<Vec<Desc>> {
    // SAFETY: caller contract.
    let Some(d) = (unsafe { p.as_ref() }) else {
        return Ok(Vec::new());
    };
    if d.nb_action_desc == 0 {
        return Ok(Vec::new());
    }
    if d.desc_array.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: caller contract (nb_action_desc readable entries).
    let arr = unsafe { std::slice::from_raw_parts(d.desc_array, usize::from(d.nb_action_desc)) };
    Ok(arr
        .iter()
        .map(|a| {
            // SAFETY: the union holds plain data; every type uses field_op.
            let op = unsafe { a.__bindgen_anon_1.field_op };
            Desc {
                kind: a.type_,
                // SAFETY: caller contract (NULL or NUL-terminated).
                dst: unsafe { str_lossy(op.dst.field_string) }.map(|s| s.into_owned()),
                dst_bit_offset: op.dst.bit_offset,
                width: op.width,
            }
        })
        .collect())
}

/// Writes packets and bytes as a counter query result.
///
/// # Safety
/// A non-null `out` is writable.
unsafe fn write_query(
    out: *mut doca_flow_resource_query_v1,
    (pkts, bytes): (u64, u64),
) -> DocaResult<()> {
    let mut q = doca_flow_resource_query_v1::default();
    q.__bindgen_anon_1.counter.total_pkts = pkts;
    q.__bindgen_anon_1.counter.total_bytes = bytes;
    // SAFETY: caller contract.
    unsafe { write_out(out, q) }
}

/// One log line and NOT_SUPPORTED.
fn not_supported(what: &str) -> DocaResult<()> {
    sdk_err!("flow", "{what} is not supported");
    Err(DocaError::NOT_SUPPORTED)
}
