//! A plugin library built from a Rust crate exports the plugin ABI and nothing else: the
//! two symbols DOCA's plugin interface names (`urom_plugin_get_iface`,
//! `urom_plugin_get_version`) and the two doca-soft extensions `export_plugin!` adds
//! (`doca_soft_urom_plugin_name`, `doca_soft_urom_plugin_arm`), not the runtime the crate
//! links (the plugin crates link with `--exclude-libs,ALL`, see their build.rs). Read from
//! the ELF dynamic symbol table of the libraries the UROM tests load.

mod support;

use std::collections::BTreeSet;
use support::bins;

/// What every Rust plugin exports.
const PLUGIN_ABI: [&str; 4] = [
    "urom_plugin_get_iface",
    "urom_plugin_get_version",
    "doca_soft_urom_plugin_name",
    "doca_soft_urom_plugin_arm",
];

/// What some linkers add to the dynamic table of a shared library by themselves: section
/// boundary symbols and the init/fini entry points. Neither LLD (rustc's default linker on
/// x86_64 Linux) nor GNU ld 2.40 adds any of them to these plugins; allowed in case another
/// linker or version does.
const TOOLCHAIN: [&str; 5] = ["_edata", "_end", "__bss_start", "_init", "_fini"];

fn u16_at(b: &[u8], o: usize) -> usize {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap()) as usize
}
fn u32_at(b: &[u8], o: usize) -> usize {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize
}
fn u64_at(b: &[u8], o: usize) -> usize {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize
}

/// The names of the global and weak symbols an ELF64 little-endian shared library defines
/// in its dynamic symbol table (`nm -D --defined-only`).
fn defined_dynamic_symbols(elf: &[u8]) -> BTreeSet<String> {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!((elf[4], elf[5]), (2, 1), "not ELF64 little-endian");
    let (shoff, shentsize, shnum) = (u64_at(elf, 0x28), u16_at(elf, 0x3a), u16_at(elf, 0x3c));
    let section = |i: usize| &elf[shoff + i * shentsize..shoff + (i + 1) * shentsize];
    const SHT_DYNSYM: usize = 11;
    let dynsym = (0..shnum)
        .map(section)
        .find(|s| u32_at(s, 4) == SHT_DYNSYM)
        .expect("no .dynsym section");
    let (off, size, link, entsize) = (
        u64_at(dynsym, 0x18),
        u64_at(dynsym, 0x20),
        u32_at(dynsym, 0x28),
        u64_at(dynsym, 0x38),
    );
    let strtab = section(link);
    let strings = &elf[u64_at(strtab, 0x18)..][..u64_at(strtab, 0x20)];
    let mut names = BTreeSet::new();
    for sym in elf[off..off + size].chunks_exact(entsize) {
        let (name, info, shndx) = (u32_at(sym, 0), sym[4], u16_at(sym, 6));
        let binding = info >> 4; // 1 global, 2 weak
        if shndx == 0 || !(binding == 1 || binding == 2) {
            continue; // undefined, or local
        }
        let end = strings[name..].iter().position(|&c| c == 0).unwrap();
        names.insert(String::from_utf8_lossy(&strings[name..name + end]).into_owned());
    }
    names
}

#[test]
fn rust_plugins_export_only_the_plugin_abi() {
    for plugin in ["worker_graph", "worker_sandbox"] {
        let path = bins().plugin(plugin);
        let elf = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let exported = defined_dynamic_symbols(&elf);
        for abi in PLUGIN_ABI {
            assert!(exported.contains(abi), "{plugin} does not export {abi}");
        }
        let extra: Vec<&String> = exported
            .iter()
            .filter(|s| !PLUGIN_ABI.contains(&s.as_str()) && !TOOLCHAIN.contains(&s.as_str()))
            .collect();
        assert!(
            extra.is_empty(),
            "{plugin} ({}) exports {} symbols beyond the plugin ABI, for example {:?}",
            path.display(),
            extra.len(),
            &extra[..extra.len().min(10)]
        );
    }
}

#[test]
fn the_reader_sees_the_runtime_a_library_exports() {
    // The runtime's own library exports the C API: the reader finds it (so an empty result
    // above is not the reader failing).
    let so = bins().dir.join("libdoca_soft.so");
    let elf = std::fs::read(&so).unwrap_or_else(|e| panic!("{}: {e}", so.display()));
    let exported = defined_dynamic_symbols(&elf);
    assert!(
        exported.contains("doca_pe_create"),
        "{} symbols",
        exported.len()
    );
    assert!(exported.iter().filter(|s| s.starts_with("doca_")).count() > 200);
}
