//! From `struct doca_flow_match` (value, mask, BASIC template) to the classifier's
//! [`Pattern`]s, [`Shape`]s and per-entry values.
//!
//! Semantics:
//! * A match with a mask compares, for every field whose mask is non-zero, the masked
//!   bits. Without a mask, every non-zero field is compared exactly.
//! * A BASIC (or HASH) pipe's template selects the fields its entries compare. In the
//!   template a field of all ones (of its width) is *changeable*: each entry gives its
//!   value; so is a zero field under a non-zero template mask. Any other non-zero value is a
//!   constant every entry inherits. Entries' other fields are ignored.
//! * `l3_type`, `l4_type_ext`, `vxlan_type` and `gre_type` say which union member holds a
//!   layer's fields and are not compared; a field of a header implies that the frame has
//!   that header (an `outer.udp` port never matches a TCP frame). `tun.type` makes the match
//!   require that tunnel.
//! * Enum fields (and the selectors) out of their enum's range are INVALID_VALUE; fields
//!   the runtime cannot see are NOT_SUPPORTED, each refusal logged once with the field name.

use super::fields::{match_fields, match_views, ne32, tun_need, FieldDef, Kind, TunView, Views};
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{PatternBuilder, Shape};
use crate::packet::key::{off, KEY_BYTES};

/// The bytes of a match struct.
pub(crate) type MatchBytes = [u8; KEY_BYTES];

fn is_ones(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0xff)
}

fn is_zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// INVALID_VALUE (logged) for an enum field whose value is beyond its enum.
fn check_enum(f: &FieldDef, v: &[u8], allow_ones: bool) -> DocaResult<()> {
    let Some(max) = f.enum_max else {
        return Ok(());
    };
    let x = ne32(v, 0);
    if x > max && !(allow_ones && x == u32::MAX) {
        sdk_err!("flow", "{} = {x} is out of range (0..={max})", f.name);
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(())
}

/// NOT_SUPPORTED (logged) for a field the runtime cannot match.
fn unsupported(f: &FieldDef) -> DocaError {
    sdk_err!("flow", "matching {} is not supported", f.name);
    DocaError::NOT_SUPPORTED
}

/// The tunnel requirement of a match naming a tunnel type (NOT_SUPPORTED for tunnels the
/// parser does not know).
fn tunnel_need(views: &Views) -> DocaResult<u32> {
    match views.tun {
        TunView::MplsOUdp => {
            sdk_err!("flow", "matching MPLS-over-UDP tunnels is not supported");
            Err(DocaError::NOT_SUPPORTED)
        }
        TunView::Psp => {
            sdk_err!("flow", "matching PSP tunnels is not supported");
            Err(DocaError::NOT_SUPPORTED)
        }
        TunView::Gre(1) => {
            sdk_err!("flow", "matching NVGRE tunnels is not supported");
            Err(DocaError::NOT_SUPPORTED)
        }
        v => Ok(tun_need(v)),
    }
}

/// The field bytes of `b` for `f`.
fn field<'a>(b: &'a MatchBytes, f: &FieldDef) -> &'a [u8] {
    &b[f.off..f.off + f.len]
}

/// The views of a match read with its mask: the selectors (and parser-metadata types) of
/// the match, the fields set in either.
fn views_of(m: &MatchBytes, mask: Option<&MatchBytes>) -> Views {
    let Some(k) = mask else {
        return match_views(m);
    };
    let mut merged = *m;
    for (x, y) in merged.iter_mut().zip(k.iter()) {
        *x |= *y;
    }
    for at in [
        off::PM_OUTER_L3,
        off::PM_OUTER_L4,
        off::PM_INNER_L3,
        off::PM_INNER_L4,
        off::OUTER + off::hf::L3_TYPE,
        off::OUTER + off::hf::L4_TYPE,
        off::INNER + off::hf::L3_TYPE,
        off::INNER + off::hf::L4_TYPE,
        off::TUN + off::tun::TYPE,
        off::TUN + off::tun::U,
    ] {
        merged[at..at + 4].copy_from_slice(&m[at..at + 4]);
    }
    match_views(&merged)
}

/// The comparisons of a match and its optional mask (a CONTROL entry, or a whole pattern).
pub(crate) fn compile_match(
    m: &MatchBytes,
    mask: Option<&MatchBytes>,
) -> DocaResult<PatternBuilder> {
    let views = views_of(m, mask);
    let mut b = PatternBuilder::default();
    let ones = [0xffu8; 256];
    for f in match_fields(&views) {
        let v = field(m, &f);
        check_enum(&f, v, false)?;
        let k = match mask {
            Some(k) => field(k, &f),
            None if is_zero(v) => continue,
            None => &ones[..f.len],
        };
        if is_zero(k) {
            continue;
        }
        match f.kind {
            Kind::Selector => {}
            Kind::Unsupported => return Err(unsupported(&f)),
            Kind::Match => {
                b.bytes(f.off, k, v);
                b.need |= f.need;
            }
        }
    }
    if views.tun != TunView::None {
        b.need |= tunnel_need(&views)?;
    }
    Ok(b)
}

/// A changeable field of a template: where it is and the bits compared.
#[derive(Clone, Debug)]
struct Changeable {
    off: usize,
    mask: Vec<u8>,
    def: FieldDef,
}

/// A BASIC or HASH pipe's match template.
#[derive(Clone)]
pub(crate) struct Template {
    base: PatternBuilder,
    changeable: Vec<Changeable>,
    /// The words every entry compares.
    pub shape: Shape,
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template")
            .field("shape", &self.shape)
            .field("changeable", &self.changeable.len())
            .finish_non_exhaustive()
    }
}

impl Default for Template {
    /// The template of a pipe without a match: compares nothing.
    fn default() -> Self {
        let base = PatternBuilder::default();
        Template {
            shape: base.shape(),
            base,
            changeable: Vec::new(),
        }
    }
}

/// A BASIC or HASH pipe's template from its match (NULL: all zero) and optional mask.
pub(crate) fn compile_template(m: &MatchBytes, mask: Option<&MatchBytes>) -> DocaResult<Template> {
    // With only a mask (HASH pipes), its bytes say which views are meant.
    let views = views_of(m, mask);
    let mut base = PatternBuilder::default();
    let mut changeable = Vec::new();
    let ones = [0xffu8; 256];
    for f in match_fields(&views) {
        let v = field(m, &f);
        let k = match mask {
            Some(k) => field(k, &f),
            None if is_zero(v) => continue,
            None => &ones[..f.len],
        };
        if f.kind == Kind::Selector {
            check_enum(&f, v, false)?;
            continue;
        }
        if is_zero(k) {
            continue;
        }
        if f.kind == Kind::Unsupported {
            return Err(unsupported(&f));
        }
        let is_changeable = is_ones(v) || (mask.is_some() && is_zero(v));
        if is_changeable {
            changeable.push(Changeable {
                off: f.off,
                mask: k.to_vec(),
                def: f,
            });
            base.bytes(f.off, k, &vec![0; f.len]);
        } else {
            check_enum(&f, v, false)?;
            base.bytes(f.off, k, v);
        }
        base.need |= f.need;
    }
    if views.tun != TunView::None {
        base.need |= tunnel_need(&views)?;
    }
    Ok(Template {
        shape: base.shape(),
        base,
        changeable,
    })
}

impl Template {
    /// The values of an entry's match (NULL: the template's constants, changeable fields
    /// zero) for the template's words. INVALID_VALUE for an enum field out of range.
    pub(crate) fn entry_values(&self, m: Option<&MatchBytes>) -> DocaResult<Box<[u64]>> {
        if self.changeable.is_empty() || m.is_none() {
            return Ok(self.base.values(&self.shape));
        }
        let m = m.unwrap_or(&[0; KEY_BYTES]);
        let mut b = self.base.clone();
        for c in &self.changeable {
            let v = &m[c.off..c.off + c.def.len];
            check_enum(&c.def, v, false)?;
            b.bytes(c.off, &c.mask, v);
        }
        Ok(b.values(&self.shape))
    }

    /// Whether entries give values (the template has changeable fields).
    #[cfg(test)]
    pub(crate) fn has_changeable(&self) -> bool {
        !self.changeable.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(b: &mut MatchBytes, at: usize, v: &[u8]) {
        b[at..at + v.len()].copy_from_slice(v);
    }

    #[test]
    fn template_constants_and_changeable_fields() {
        let mut m = [0u8; KEY_BYTES];
        put(&mut m, off::PM_OUTER_L4, &2u32.to_ne_bytes()); // constant UDP
        put(&mut m, off::OUTER + off::hf::L3_TYPE, &1u32.to_ne_bytes());
        put(&mut m, off::OUTER + off::hf::L4_TYPE, &2u32.to_ne_bytes());
        put(&mut m, off::OUTER + off::hf::L4 + 2, &[0xff, 0xff]); // changeable port
        let t = compile_template(&m, None).unwrap();
        assert!(t.has_changeable());
        assert_eq!(t.shape.idx.len(), 2, "parser_meta word and the port word");
        let mut e = [0u8; KEY_BYTES];
        put(&mut e, off::OUTER + off::hf::L4 + 2, &53u16.to_be_bytes());
        let a = t.entry_values(Some(&e)).unwrap();
        put(&mut e, off::OUTER + off::hf::L4 + 2, &54u16.to_be_bytes());
        let b = t.entry_values(Some(&e)).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn bad_enums_and_unsupported_fields_are_refused() {
        let mut m = [0u8; KEY_BYTES];
        put(&mut m, off::OUTER + off::hf::L3_TYPE, &77u32.to_ne_bytes());
        assert_eq!(
            compile_match(&m, None).unwrap_err(),
            DocaError::INVALID_VALUE
        );
        assert_eq!(
            compile_template(&m, None).unwrap_err(),
            DocaError::INVALID_VALUE
        );
        let mut m = [0u8; KEY_BYTES];
        put(&mut m, off::PM_OUTER_L3, &9u32.to_ne_bytes());
        assert_eq!(
            compile_match(&m, None).unwrap_err(),
            DocaError::INVALID_VALUE
        );
        let mut m = [0u8; KEY_BYTES];
        put(&mut m, off::PM_RANDOM, &[0, 1]);
        assert_eq!(
            compile_match(&m, None).unwrap_err(),
            DocaError::NOT_SUPPORTED
        );
        let mut m = [0u8; KEY_BYTES];
        put(&mut m, off::TUN, &5u32.to_ne_bytes()); // MPLS over UDP
        assert_eq!(
            compile_match(&m, None).unwrap_err(),
            DocaError::NOT_SUPPORTED
        );
        // A changeable enum field in a template is fine; its entry value is checked.
        let mut t = [0u8; KEY_BYTES];
        put(&mut t, off::PM_OUTER_L3, &u32::MAX.to_ne_bytes());
        let tpl = compile_template(&t, None).unwrap();
        let mut e = [0u8; KEY_BYTES];
        put(&mut e, off::PM_OUTER_L3, &3u32.to_ne_bytes());
        assert_eq!(
            tpl.entry_values(Some(&e)).unwrap_err(),
            DocaError::INVALID_VALUE
        );
    }

    #[test]
    fn masks_pick_bits_and_imply_headers() {
        let mut m = [0u8; KEY_BYTES];
        m[off::OUTER + off::hf::L4 + 5] = 0x02; // tcp.flags SYN (TCP view inferred)
        let mut k = [0u8; KEY_BYTES];
        k[off::OUTER + off::hf::L4 + 5] = 0x07;
        let p = compile_match(&m, Some(&k)).unwrap().pattern();
        assert_eq!(p.words.len(), 1);
        assert_ne!(p.need, 0, "TCP header required");
    }
}
