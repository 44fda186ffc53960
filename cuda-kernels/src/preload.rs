//! Loading every kernel of the fatbin up front.
//!
//! With CUDA's lazy module loading (the default since CUDA 12.2) a kernel's code reaches
//! the GPU when its function is first looked up, and that loading may wait for the kernels
//! already running in the context to finish. Kernels that run together and wait for each
//! other (the RDMA client/server pair, the verbs latency pairs in one process) then
//! deadlock: the first one spins, waiting for the second, whose loading waits for the first.
//! Looking every kernel up when the module is loaded, before any runs, avoids that without
//! asking users for `CUDA_MODULE_LOADING=EAGER`.
//!
//! The names come from the fatbin itself: each SASS image is an ELF file whose functions
//! have sections named `.text.<name>` (kernels and any device function nvcc kept out of
//! line; looking the latter up fails and is ignored).

/// A little-endian integer of `N` bytes at `at`, if inside `b`.
fn le<const N: usize>(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(N)?)?;
    Some(s.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
}

/// The ELF images (SASS) of a fatbin: entries of kind 2 whose payload is an ELF file.
fn elf_images(fatbin: &[u8]) -> Vec<&[u8]> {
    let mut v = Vec::new();
    if le::<4>(fatbin, 0) != Some(0xba55_ed50) {
        return v;
    }
    let (Some(head), Some(size)) = (le::<2>(fatbin, 6), le::<8>(fatbin, 8)) else {
        return v;
    };
    let (mut at, end) = (head as usize, (head as usize).saturating_add(size as usize));
    while at < end {
        let (Some(kind), Some(h), Some(n)) = (
            le::<2>(fatbin, at),
            le::<4>(fatbin, at + 4),
            le::<8>(fatbin, at + 8),
        ) else {
            break;
        };
        let start = at.saturating_add(h as usize);
        let Some(payload) = fatbin.get(start..start.saturating_add(n as usize)) else {
            break;
        };
        if kind == 2 && payload.starts_with(b"\x7fELF") {
            v.push(payload);
        }
        if h == 0 && n == 0 {
            break;
        }
        at = start.saturating_add(n as usize);
    }
    v
}

/// The section names of a 64-bit ELF image, in order; empty when it is malformed.
fn section_names(elf: &[u8]) -> Vec<&str> {
    let parse = || -> Option<Vec<&str>> {
        let shoff = le::<8>(elf, 0x28)? as usize;
        let shentsize = le::<2>(elf, 0x3a)? as usize;
        let shnum = le::<2>(elf, 0x3c)? as usize;
        let shstrndx = le::<2>(elf, 0x3e)? as usize;
        let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
        let strtab = header(shstrndx)?;
        let (str_off, str_size) = (le::<8>(elf, strtab + 0x18)?, le::<8>(elf, strtab + 0x20)?);
        let strings =
            elf.get(str_off as usize..(str_off as usize).checked_add(str_size as usize)?)?;
        let mut names = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let name_at = le::<4>(elf, header(i)?)? as usize;
            let rest = strings.get(name_at..)?;
            let len = rest.iter().position(|&c| c == 0)?;
            names.push(std::str::from_utf8(&rest[..len]).ok()?);
        }
        Some(names)
    };
    parse().unwrap_or_default()
}

/// The names of the functions with code in the fatbin's SASS images (sorted, once each).
pub(crate) fn function_names(fatbin: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = elf_images(fatbin)
        .into_iter()
        .flat_map(section_names)
        .filter_map(|s| s.strip_prefix(".text."))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_fatbin_names_every_kind_of_kernel() {
        let names = function_names(crate::FATBIN);
        for k in [
            "doca_rs_rdma_cs_client",
            "doca_rs_rdma_cs_server",
            "doca_rs_verbs_write_lat_client",
            "doca_rs_verbs_write_lat_server",
            "doca_rs_simple_receive_warp",
            "doca_rs_sum_u32",
        ] {
            assert!(names.iter().any(|n| n == k), "{k} missing from {names:?}");
        }
    }

    #[test]
    fn malformed_input_gives_no_names_and_no_panic() {
        assert!(function_names(&[]).is_empty());
        assert!(function_names(b"not a fatbin at all").is_empty());
        // A valid container header whose entry runs past the end.
        let mut bin = vec![0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0];
        bin.extend_from_slice(&1000u64.to_le_bytes());
        bin.extend_from_slice(&[2, 0, 0, 0, 64, 0, 0, 0]);
        assert!(function_names(&bin).is_empty());
        // An ELF entry whose section table points nowhere.
        let mut elf = b"\x7fELF".to_vec();
        elf.resize(64, 0xff);
        assert!(section_names(&elf).is_empty());
        // Every truncation of the real fatbin is handled.
        for cut in [1, 15, 17, 100, crate::FATBIN.len() / 2] {
            let _ = function_names(&crate::FATBIN[..cut.min(crate::FATBIN.len())]);
        }
    }
}
