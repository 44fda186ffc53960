//! The run-time loader's half that is generated: one trampoline per UCX function the
//! bindings declare, and the table they jump through (see `src/sys/loader.rs` for why).
//!
//! For every `pub fn NAME(` of the bindings, `$OUT_DIR/trampolines.rs` gets:
//!
//! * a hidden global symbol `NAME`: `jmp [ucx_sys_fn_table + 8 * i]` (x86-64 only), so the
//!   bindings' `extern "C"` declarations link against it and every argument register
//!   reaches the real function untouched;
//! * the table entry `i`, first pointing at a stub that saves the argument registers, asks
//!   `loader::resolve_slot(i)` for the real address (loading UCX on the first call) and
//!   jumps there;
//! * `NAMES[i]`, the C name `dlsym` looks up.

use std::fmt::Write as _;
use std::path::Path;

/// The function names declared by the generated bindings, in order.
pub fn function_names(bindings: &str) -> Vec<String> {
    bindings
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub fn "))
        .filter_map(|rest| rest.split('(').next())
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Writes `$OUT_DIR/trampolines.rs` for the functions of `bindings_rs`.
pub fn generate(bindings_rs: &Path, out: &Path) {
    let text = std::fs::read_to_string(bindings_rs)
        .unwrap_or_else(|e| panic!("reading {}: {e}", bindings_rs.display()));
    let names = function_names(&text);
    assert!(
        !names.is_empty(),
        "no functions in {}: the bindings changed shape",
        bindings_rs.display()
    );
    let n = names.len();
    let mut s = String::new();
    writeln!(s, "/// How many UCX functions the bindings declare.").unwrap();
    writeln!(s, "pub(crate) const COUNT: usize = {n};").unwrap();
    writeln!(s, "/// Their C names, in table order.").unwrap();
    writeln!(s, "pub(crate) static NAMES: [&std::ffi::CStr; COUNT] = [").unwrap();
    for name in &names {
        writeln!(s, "    c\"{name}\",").unwrap();
    }
    writeln!(s, "];").unwrap();
    writeln!(s, "core::arch::global_asm!(").unwrap();
    let mut asm = |line: &str| writeln!(s, "    \"{line}\",").unwrap();
    // The table: each slot starts at its lazy stub.
    asm(".pushsection .data.ucx_sys_fn_table,\\\"aw\\\",@progbits");
    asm(".p2align 3");
    asm(".globl ucx_sys_fn_table");
    asm(".hidden ucx_sys_fn_table");
    asm("ucx_sys_fn_table:");
    for i in 0..n {
        asm(&format!(".quad .Lucx_sys_lazy_{i}"));
    }
    asm(".popsection");
    asm(".pushsection .text.ucx_sys_trampolines,\\\"ax\\\",@progbits");
    for (i, name) in names.iter().enumerate() {
        asm(&format!(".globl {name}"));
        asm(&format!(".hidden {name}"));
        asm(&format!(".type {name},@function"));
        asm(".p2align 4");
        asm(&format!("{name}:"));
        asm(&format!(
            "jmp qword ptr [rip + ucx_sys_fn_table + {}]",
            8 * i
        ));
        asm(&format!(".size {name}, . - {name}"));
    }
    for i in 0..n {
        asm(&format!(".Lucx_sys_lazy_{i}:"));
        asm(&format!("mov r11d, {i}"));
        asm("jmp .Lucx_sys_lazy_common");
    }
    // Entered by a jump from a trampoline, so the stack is the caller's: the return
    // address on top (rsp = 8 mod 16). Seven pushes realign it for the call.
    asm(".Lucx_sys_lazy_common:");
    for r in ["rdi", "rsi", "rdx", "rcx", "r8", "r9", "rax"] {
        asm(&format!("push {r}"));
    }
    asm("sub rsp, 128");
    for x in 0..8 {
        asm(&format!("movdqu xmmword ptr [rsp + {}], xmm{x}", 16 * x));
    }
    asm("mov edi, r11d");
    asm("call {resolve}");
    asm("mov r11, rax");
    for x in 0..8 {
        asm(&format!("movdqu xmm{x}, xmmword ptr [rsp + {}]", 16 * x));
    }
    asm("add rsp, 128");
    for r in ["rax", "r9", "r8", "rcx", "rdx", "rsi", "rdi"] {
        asm(&format!("pop {r}"));
    }
    asm("jmp r11");
    asm(".popsection");
    writeln!(s, "    resolve = sym resolve_slot,").unwrap();
    writeln!(s, ");").unwrap();
    std::fs::write(out, s).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
