//! The GPU architectures every fatbin targets, in a module of their own: the recipe
//! ([`crate::Fatbin`]) and the older-driver build ([`crate::older_driver`]) both read them.

/// GPU architectures whose machine code (SASS) every fatbin carries.
pub const SASS_ARCHS: [u32; 2] = [80, 90];

/// The virtual architecture whose PTX every fatbin carries (JIT-compiled on other GPUs).
pub const PTX_ARCH: u32 = 80;

/// The `-gencode` arguments of the recipe ([`SASS_ARCHS`] as SASS, [`PTX_ARCH`] as PTX).
pub fn gencode_args() -> Vec<String> {
    let mut v = Vec::new();
    for a in SASS_ARCHS {
        v.push("-gencode".to_string());
        v.push(format!("arch=compute_{a},code=sm_{a}"));
    }
    v.push("-gencode".to_string());
    v.push(format!("arch=compute_{PTX_ARCH},code=compute_{PTX_ARCH}"));
    v
}
