//! Compiled matches: [`Pattern`]s (masked key words and props), the [`Shape`]s of BASIC and
//! HASH templates, and the hash over their words.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{off, FieldMatch, Key, KEY_WORDS};

/// A compiled match: masked words of the `Key` and the props a frame must have.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// (word index, mask, value & mask).
    pub words: Box<[(u16, u64, u64)]>,
    /// `props` bits required.
    pub need: u32,
}

impl Pattern {
    #[inline]
    pub(super) fn hit(&self, k: &Key) -> bool {
        k.props & self.need == self.need
            && self
                .words
                .iter()
                .all(|&(i, m, v)| k.word(usize::from(i)) & m == v)
    }

    /// Whether the pattern reads the L4 checksum flags of the parser metadata.
    pub fn reads_l4_checksums(&self) -> bool {
        reads_l4_csum(self.words.iter().map(|&(i, m, _)| (i, m)))
    }

    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    /// The pattern of legacy field matches.
    pub fn of_fields(matches: &[FieldMatch]) -> Pattern {
        let mut b = PatternBuilder::default();
        for m in matches {
            m.add_to(&mut b);
        }
        b.pattern()
    }
}

fn reads_l4_csum(mut words: impl Iterator<Item = (u16, u64)>) -> bool {
    let probe = |at: usize| {
        let (w, byte) = (at / 8, at % 8);
        let mut m = [0u8; 8];
        m[byte] = 0xff;
        (w as u16, u64::from_ne_bytes(m))
    };
    let (wo, mo) = probe(off::PM_OUTER_L4_CSUM_OK);
    let (wi, mi) = probe(off::PM_INNER_L4_CSUM_OK);
    words.any(|(i, m)| (i == wo && m & mo != 0) || (i == wi && m & mi != 0))
}

/// Builds a [`Pattern`] (or a [`Shape`] and its values) byte by byte.
#[derive(Clone)]
pub struct PatternBuilder {
    mask: [u8; off::INNER + off::hf::SIZE],
    value: [u8; off::INNER + off::hf::SIZE],
    /// `props` bits required.
    pub need: u32,
}

impl std::fmt::Debug for PatternBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternBuilder")
            .field("pattern", &self.pattern())
            .finish()
    }
}

impl Default for PatternBuilder {
    fn default() -> Self {
        PatternBuilder {
            mask: [0; off::INNER + off::hf::SIZE],
            value: [0; off::INNER + off::hf::SIZE],
            need: 0,
        }
    }
}

impl PatternBuilder {
    /// Compares `mask` bits of the key bytes at `at` with `value`.
    pub fn bytes(&mut self, at: usize, mask: &[u8], value: &[u8]) {
        for (i, (m, v)) in mask.iter().zip(value).enumerate() {
            self.mask[at + i] |= m;
            self.value[at + i] = (self.value[at + i] & !m) | (v & m);
        }
    }

    fn word(b: &[u8], i: usize) -> u64 {
        let s = &b[i * 8..i * 8 + 8];
        u64::from_ne_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
    }

    /// The pattern built.
    pub fn pattern(&self) -> Pattern {
        let words = (0..KEY_WORDS)
            .filter_map(|i| {
                let m = Self::word(&self.mask, i);
                (m != 0).then(|| (i as u16, m, Self::word(&self.value, i) & m))
            })
            .collect();
        Pattern {
            words,
            need: self.need,
        }
    }

    /// The shape of the bytes compared (for BASIC and HASH pipes).
    pub fn shape(&self) -> Shape {
        let p = self.pattern();
        Shape {
            idx: p.words.iter().map(|w| w.0).collect(),
            mask: p.words.iter().map(|w| w.1).collect(),
            need: p.need,
        }
    }

    /// The values of `shape`'s words (masked).
    pub fn values(&self, shape: &Shape) -> Box<[u64]> {
        shape
            .idx
            .iter()
            .zip(shape.mask.iter())
            .map(|(&i, &m)| Self::word(&self.value, usize::from(i)) & m)
            .collect()
    }
}

/// The words a BASIC or HASH pipe compares (the same for all its entries) and the props
/// frames must have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// Key word indexes.
    pub idx: Box<[u16]>,
    /// Their masks.
    pub mask: Box<[u64]>,
    /// `props` bits required.
    pub need: u32,
}

impl Shape {
    /// The masked words of `k` into `out`; returns how many.
    #[inline]
    pub(super) fn extract(&self, k: &Key, out: &mut [u64; KEY_WORDS]) -> usize {
        for (n, (&i, &m)) in self.idx.iter().zip(self.mask.iter()).enumerate() {
            out[n] = k.word(usize::from(i)) & m;
        }
        self.idx.len()
    }

    pub(super) fn reads_l4_checksums(&self) -> bool {
        reads_l4_csum(self.idx.iter().copied().zip(self.mask.iter().copied()))
    }
}

/// The hash a HASH pipe computes over masked key words (also `doca_flow_pipe_calc_hash`).
pub fn words_hash(words: &[u64]) -> u32 {
    let mut h = FxHasher::default();
    for w in words {
        h.write_u64(*w);
    }
    let x = h.finish();
    (x ^ (x >> 32)) as u32
}

/// The IDENTITY map of a HASH pipe: the masked bytes of the key as one big-endian number.
pub(super) fn identity_of(shape: &Shape, k: &Key) -> u64 {
    let mut acc = 0u64;
    for (&i, &m) in shape.idx.iter().zip(shape.mask.iter()) {
        let w = k.word(usize::from(i)).to_ne_bytes();
        let mb = m.to_ne_bytes();
        for (b, mb) in w.iter().zip(mb.iter()) {
            if *mb != 0 {
                acc = (acc << 8) | u64::from(b & mb);
            }
        }
    }
    acc
}

/// A fast, non-cryptographic hasher for the exact-match tables (keys are packet fields, no
/// adversary controls the table size).
#[derive(Default)]
pub(super) struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
}

pub(super) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
