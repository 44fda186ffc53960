//! What the integration tests of doca-build share: reading a fatbin's entries.

/// One entry of a fatbin: kind (1 PTX, 2 ELF cubin), architecture, payload.
pub struct Entry<'a> {
    pub kind: u16,
    pub arch: u32,
    pub payload: &'a [u8],
}

/// Every entry of a fatbin, in file order. Layout: a 16-byte container header (magic
/// 0xba55ed50, version, header size, payload size), then entries, each a header (kind u16
/// at 0, header size u32 at 4, payload size u64 at 8, arch u32 at 28) followed by its
/// payload.
pub fn walk(bin: &[u8]) -> Vec<Entry<'_>> {
    let u16_at = |o: usize| u16::from_le_bytes(bin[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(bin[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bin[o..o + 8].try_into().unwrap());
    assert_eq!(u32_at(0), 0xba55_ed50, "fatbin magic");
    let start = usize::from(u16_at(6));
    let end = start + u64_at(8) as usize;
    let mut v = Vec::new();
    let mut o = start;
    while o < end {
        let (head, size) = (u32_at(o + 4) as usize, u64_at(o + 8) as usize);
        v.push(Entry {
            kind: u16_at(o),
            arch: u32_at(o + 28),
            payload: &bin[o + head..o + head + size],
        });
        o += head + size;
    }
    v
}

/// (kind, arch) of every entry, sorted.
pub fn entries(bin: &[u8]) -> Vec<(u16, u32)> {
    let mut v: Vec<(u16, u32)> = walk(bin).iter().map(|e| (e.kind, e.arch)).collect();
    v.sort();
    v
}

/// The bytes of every PTX entry, lossily decoded (text only where the entry is stored
/// uncompressed, as the older-driver recipe stores it).
#[allow(dead_code)] // compile.rs does not read PTX text
pub fn ptx_texts(bin: &[u8]) -> Vec<String> {
    walk(bin)
        .iter()
        .filter(|e| e.kind == 1)
        .map(|e| String::from_utf8_lossy(e.payload).into_owned())
        .collect()
}
