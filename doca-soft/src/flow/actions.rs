//! From `struct doca_flow_actions` (a pipe's actions, their masks and descriptors, and an
//! entry's values) to the classifier's compiled [`Actions`].
//!
//! What is emulated: rewriting the outer Ethernet addresses and type, VLAN TCIs, IPv4
//! addresses, DSCP/ECN, identification, flags, protocol and TTL, IPv6 addresses, traffic
//! class, flow label, next header and hop limit, TCP/UDP ports, TCP flags, sequence and
//! acknowledgement numbers, ICMP type, code and identifier (with the checksums fixed);
//! popping and pushing a VLAN tag; writing the programmable metadata; ADD descriptors
//! (add the actions' value to a header field, e.g. 0xff to the TTL to decrement it).
//! Everything else (decap, encap, tunnel rewrites, NAT64, crypto, copying fields, rewriting
//! lengths or the IP version) is NOT_SUPPORTED with one log line naming it.
//!
//! Changeable values follow the match template rule: in a pipe's actions a field of all
//! ones (or zero under a non-zero mask) takes each entry's value; an entry that gives no
//! actions leaves such fields unmodified.

use super::fields::{header_fields, layer_views, ne32, FieldDef, Kind, Set};
use crate::error::{DocaError, DocaResult};
use crate::packet::actions::{Actions, ByteOp, Hdr};
use crate::packet::key::off;

/// Bytes of `struct doca_flow_actions`.
pub(crate) const ACTIONS_BYTES: usize = 1024;
/// The bytes of an actions struct.
pub(crate) type ActionBytes = [u8; ACTIONS_BYTES];

/// Offsets in `struct doca_flow_actions` (asserted against the bindings in `layout`).
pub(crate) mod aoff {
    pub(crate) const DECAP_TYPE: usize = 0;
    pub(crate) const POP_VLAN: usize = 28;
    pub(crate) const META: usize = 32;
    pub(crate) const PARSER_META: usize = 76;
    pub(crate) const OUTER: usize = 120;
    pub(crate) const TUN: usize = 208;
    pub(crate) const ENCAP_TYPE: usize = 480;
    pub(crate) const HAS_PUSH: usize = 856;
    pub(crate) const PUSH: usize = 860;
    pub(crate) const NAT64: usize = 868;
    pub(crate) const HAS_CRYPTO_ENCAP: usize = 872;
    pub(crate) const CRYPTO: usize = 1004;
}

/// `doca_flow_action_type` values.
const ACTION_AUTO: u32 = 0;
const ACTION_ADD: u32 = 1;
const ACTION_COPY: u32 = 2;

/// One action descriptor, copied out of the C struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Desc {
    /// `enum doca_flow_action_type`.
    pub kind: u32,
    /// The destination field's path (`field_op.dst.field_string`).
    pub dst: Option<String>,
    /// Bit offset in the destination field.
    pub dst_bit_offset: u32,
    /// Bits.
    pub width: u32,
}

/// One entry of a pipe's actions array: the actions, their optional mask and descriptors.
#[derive(Clone)]
pub(crate) struct ActionSet {
    pub actions: Box<ActionBytes>,
    pub mask: Option<Box<ActionBytes>>,
    pub descs: Vec<Desc>,
}

impl std::fmt::Debug for ActionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionSet")
            .field("masked", &self.mask.is_some())
            .field("descs", &self.descs)
            .finish_non_exhaustive()
    }
}

fn not_supported(what: &str) -> DocaError {
    sdk_err!("flow", "{what} is not supported");
    DocaError::NOT_SUPPORTED
}

fn any(b: &[u8], from: usize, to: usize) -> bool {
    b[from..to].iter().any(|&x| x != 0)
}

fn is_ones(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0xff)
}

/// The catalog name of a descriptor path: `outer.ipv4.ttl` -> `outer.ip4.ttl`,
/// `outer.tcp.src_port` -> `outer.tcp.l4_port.src_port`.
fn desc_name(path: &str) -> String {
    let p = path.replace(".ipv4.", ".ip4.").replace(".ipv6.", ".ip6.");
    for proto in ["tcp", "udp"] {
        for port in ["src_port", "dst_port"] {
            let short = format!(".{proto}.{port}");
            if p.ends_with(&short) {
                return p.replace(&short, &format!(".{proto}.l4_port.{port}"));
            }
        }
    }
    p
}

/// Refuses what the runtime cannot do, in the order the struct lists it.
fn refuse_unsupported(a: &ActionBytes, what: &str) -> DocaResult<()> {
    let decap = ne32(a, aoff::DECAP_TYPE);
    let encap = ne32(a, aoff::ENCAP_TYPE);
    if decap > 2 || encap > 2 {
        sdk_err!(
            "flow",
            "{what}: decap_type {decap} / encap_type {encap} out of range"
        );
        return Err(DocaError::INVALID_VALUE);
    }
    if decap != 0 {
        return Err(not_supported("the decap action"));
    }
    if any(a, aoff::PARSER_META, aoff::OUTER) {
        return Err(not_supported("copying parser metadata in actions"));
    }
    if any(a, aoff::TUN, aoff::ENCAP_TYPE) {
        return Err(not_supported("rewriting the tunnel header"));
    }
    if encap != 0 {
        return Err(not_supported("the encap action"));
    }
    if ne32(a, aoff::NAT64) != 0 {
        return Err(not_supported("the NAT64 action"));
    }
    if a[aoff::HAS_CRYPTO_ENCAP] != 0 || ne32(a, aoff::CRYPTO) != 0 {
        return Err(not_supported("crypto actions"));
    }
    Ok(())
}

/// A header field write (or addition) as byte ops.
fn field_op(f: &FieldDef, mask: &[u8], value: &[u8], add: bool) -> DocaResult<ByteOp> {
    let mut op = ByteOp {
        inner: false,
        hdr: Hdr::L3,
        off: 0,
        len: 0,
        mask: [0; 16],
        value: [0; 16],
        add,
        need: f.need,
    };
    match f.set {
        Set::Bytes(hdr, o) => {
            op.hdr = hdr;
            op.off = o;
            op.len = f.len as u8;
            op.mask[..f.len].copy_from_slice(mask);
            op.value[..f.len].copy_from_slice(value);
        }
        Set::Ip6Tc | Set::Ip6Flow => {
            if add {
                return Err(not_supported(&format!("adding to {}", f.name)));
            }
            // Inside the first IPv6 word: version (4 bits), traffic class (8), flow (20).
            let (m, v) = if f.set == Set::Ip6Tc {
                (u32::from(mask[0]) << 20, u32::from(value[0]) << 20)
            } else {
                let m = u32::from_be_bytes([mask[0], mask[1], mask[2], mask[3]]);
                let v = u32::from_be_bytes([value[0], value[1], value[2], value[3]]);
                (m & 0x000f_ffff, v & 0x000f_ffff)
            };
            op.len = 4;
            op.mask[..4].copy_from_slice(&m.to_be_bytes());
            op.value[..4].copy_from_slice(&v.to_be_bytes());
        }
        Set::Meta | Set::No => return Err(not_supported(&format!("setting {}", f.name))),
    }
    Ok(op)
}

/// The bytes at key offset `at` (a metadata field) as masked key-word writes.
fn meta_words(out: &mut Vec<(u16, u64, u64)>, at: usize, mask: &[u8], value: &[u8]) {
    for (i, (m, v)) in mask.iter().zip(value).enumerate() {
        if *m == 0 {
            continue;
        }
        let pos = at + i;
        let (w, b) = (pos / 8, pos % 8);
        let mut mb = [0u8; 8];
        let mut vb = [0u8; 8];
        mb[b] = *m;
        vb[b] = v & m;
        let (mw, vw) = (u64::from_ne_bytes(mb), u64::from_ne_bytes(vb));
        match out.iter_mut().find(|x| x.0 == w as u16) {
            Some(x) => {
                x.1 |= mw;
                x.2 |= vw;
            }
            None => out.push((w as u16, mw, vw)),
        }
    }
}

/// Compiles actions. `set` is the pipe's entry of its actions array (or a CONTROL entry's
/// own actions, mask and descriptors); `entry` the entry's values for changeable fields
/// (`template`: the pipe-template rule applies; CONTROL entries are literal).
pub(crate) fn compile(
    set: &ActionSet,
    entry: Option<&ActionBytes>,
    template: bool,
) -> DocaResult<Actions> {
    let a = &*set.actions;
    let mask = set.mask.as_deref();
    refuse_unsupported(a, "actions")?;
    if let Some(k) = mask {
        refuse_unsupported(k, "actions mask")?;
    }
    if let (Some(e), true) = (entry, template) {
        refuse_unsupported(e, "entry actions")?;
    }
    let mut out = Actions {
        pop_vlan: a[aoff::POP_VLAN] != 0,
        ..Actions::default()
    };
    // Which fields the ADD descriptors name.
    let mut adds: Vec<String> = Vec::new();
    for d in &set.descs {
        match d.kind {
            ACTION_AUTO => {}
            ACTION_ADD => {
                let Some(path) = &d.dst else {
                    sdk_err!(
                        "flow",
                        "an ADD action descriptor without a destination field"
                    );
                    return Err(DocaError::INVALID_VALUE);
                };
                adds.push(desc_name(path));
            }
            ACTION_COPY => return Err(not_supported("the COPY action descriptor")),
            k => {
                sdk_err!("flow", "action descriptor type {k} is out of range (0..=2)");
                return Err(DocaError::INVALID_VALUE);
            }
        }
    }
    let ones = [0xffu8; 16];
    // A field named by an ADD descriptor holds the addend (0xff adds -1), never "changeable".
    let value_of = |f: &FieldDef, at: usize, add: bool| -> Option<Vec<u8>> {
        let v = &a[at..at + f.len];
        let k = mask.map(|k| &k[at..at + f.len]);
        let changeable =
            template && !add && (is_ones(v) || (k.is_some() && v.iter().all(|&x| x == 0)));
        if changeable {
            entry.map(|e| e[at..at + f.len].to_vec())
        } else {
            Some(v.to_vec())
        }
    };
    // Metadata (pkt_meta and the ten scratch words).
    for i in 0..11 {
        let at = aoff::META + 4 * i;
        let v = &a[at..at + 4];
        let k = match mask {
            Some(k) => &k[at..at + 4],
            None if v.iter().all(|&x| x == 0) => continue,
            None => &ones[..4],
        };
        if k.iter().all(|&x| x == 0) {
            continue;
        }
        let f = FieldDef {
            name: "meta",
            off: at,
            len: 4,
            need: 0,
            kind: Kind::Match,
            set: Set::Meta,
            enum_max: None,
        };
        if let Some(val) = value_of(&f, at, false) {
            meta_words(&mut out.meta, off::META_PKT + 4 * i, k, &val);
        }
    }
    // Outer headers.
    let view = layer_views(a, aoff::OUTER, None);
    let fields = header_fields(view);
    let mut added: Vec<&str> = Vec::new();
    for f in &fields {
        let at = aoff::OUTER + f.off;
        let v = &a[at..at + f.len];
        // A selector says which header the fields below it are; it is never changeable.
        if let Some(max) = f.enum_max.filter(|&m| ne32(v, 0) > m) {
            sdk_err!(
                "flow",
                "actions: {} = {} is out of range (0..={max})",
                f.name,
                ne32(v, 0)
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let k = match mask {
            Some(k) => &k[at..at + f.len],
            None if v.iter().all(|&x| x == 0) => continue,
            None => &ones[..f.len],
        };
        if f.kind == Kind::Selector || k.iter().all(|&x| x == 0) {
            continue;
        }
        let add = adds.iter().any(|n| n == f.name);
        let Some(val) = value_of(f, at, add) else {
            continue;
        };
        out.ops.push(field_op(f, k, &val, add)?);
        if add {
            added.push(f.name);
        }
    }
    for name in &adds {
        if added.contains(&name.as_str()) {
            continue;
        }
        if fields.iter().any(|f| f.name == name.as_str()) {
            sdk_err!(
                "flow",
                "ADD descriptor on {name}: the actions set no value to add"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        return Err(not_supported(&format!("an ADD descriptor on {name}")));
    }
    for d in set.descs.iter().filter(|d| d.kind == ACTION_ADD) {
        if d.dst_bit_offset != 0 {
            return Err(not_supported("an ADD descriptor with a bit offset"));
        }
    }
    // Push VLAN.
    if a[aoff::HAS_PUSH] != 0 {
        let t = ne32(a, aoff::PUSH);
        if t != 0 {
            sdk_err!(
                "flow",
                "push action type {t} is out of range (only VLAN, 0)"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let tag = &a[aoff::PUSH + 4..aoff::PUSH + 8];
        let tag = if template && is_ones(tag) {
            entry.map(|e| e[aoff::PUSH + 4..aoff::PUSH + 8].to_vec())
        } else {
            Some(tag.to_vec())
        };
        if let Some(t) = tag {
            out.push_vlan = Some([t[0], t[1], t[2], t[3]]);
        }
    }
    Ok(out)
}

/// Whether an actions struct asks for anything at all.
pub(crate) fn is_empty(a: &ActionBytes) -> bool {
    a.iter().all(|&x| x == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(a: ActionBytes, mask: Option<ActionBytes>, descs: Vec<Desc>) -> ActionSet {
        ActionSet {
            actions: Box::new(a),
            mask: mask.map(Box::new),
            descs,
        }
    }

    #[test]
    fn changeable_and_constant_fields() {
        let mut a = [0u8; ACTIONS_BYTES];
        let ip = aoff::OUTER + off::hf::IP;
        a[aoff::OUTER + off::hf::L3_TYPE] = 1;
        a[ip + 4..ip + 8].fill(0xff); // dst changeable
        a[ip + 17] = 9; // TTL constant 9
        let s = set(a, None, vec![]);
        let none = compile(&s, None, true).unwrap();
        assert_eq!(none.ops.len(), 1, "without entry values only the constant");
        let mut e = [0u8; ACTIONS_BYTES];
        e[ip + 4..ip + 8].copy_from_slice(&[10, 0, 0, 9]);
        let with = compile(&s, Some(&e), true).unwrap();
        assert_eq!(with.ops.len(), 2);
        assert_eq!(&with.ops[0].value[..4], &[10, 0, 0, 9]);
        assert_eq!((with.ops[1].off, with.ops[1].value[0]), (8, 9));
    }

    #[test]
    fn add_descriptor_and_refusals() {
        let mut a = [0u8; ACTIONS_BYTES];
        let ip = aoff::OUTER + off::hf::IP;
        a[aoff::OUTER + off::hf::L3_TYPE] = 1;
        a[ip + 17] = 0xff;
        let d = Desc {
            kind: ACTION_ADD,
            dst: Some("outer.ipv4.ttl".into()),
            dst_bit_offset: 0,
            width: 8,
        };
        let c = compile(&set(a, None, vec![d.clone()]), None, false).unwrap();
        assert!(c.ops[0].add, "TTL op is an addition");
        let mut bad = a;
        bad[aoff::DECAP_TYPE] = 2;
        assert_eq!(
            compile(&set(bad, None, vec![]), None, false).unwrap_err(),
            DocaError::NOT_SUPPORTED
        );
        let mut bad = a;
        bad[aoff::TUN] = 1;
        assert_eq!(
            compile(&set(bad, None, vec![]), None, false).unwrap_err(),
            DocaError::NOT_SUPPORTED
        );
        let copy = Desc {
            kind: ACTION_COPY,
            ..d
        };
        assert_eq!(
            compile(&set(a, None, vec![copy]), None, false).unwrap_err(),
            DocaError::NOT_SUPPORTED
        );
        // Total length cannot be rewritten.
        let mut len = [0u8; ACTIONS_BYTES];
        len[aoff::OUTER + off::hf::L3_TYPE] = 1;
        len[ip + 10] = 1;
        assert_eq!(
            compile(&set(len, None, vec![]), None, false).unwrap_err(),
            DocaError::NOT_SUPPORTED
        );
    }
}
