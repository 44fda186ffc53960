//! The XDP program that hands an interface's frames to our AF_XDP sockets: a socket map
//! (XSKMAP) indexed by receive queue, and five eBPF instructions assembled here,
//!
//! ```text
//! r2 = *(u32 *)(r1 + 16)      ; ctx->rx_queue_index
//! r1 = map                    ; the XSKMAP (two-slot load of the map's descriptor)
//! r3 = XDP_PASS               ; what to do when the queue has no socket
//! call bpf_redirect_map
//! exit
//! ```
//!
//! loaded with the `bpf()` system call and attached with a BPF link (`BPF_LINK_CREATE`,
//! Linux >= 5.9): closing the link's descriptor detaches the program, so a port that goes
//! away (or a process that dies) leaves the interface as it found it. Frames of a queue
//! whose socket is not in the map go on to the kernel's stack untouched.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::xdp_ring::{os_err, Why};
use crate::error::DocaError;

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_UPDATE_ELEM: i32 = 2;
const BPF_MAP_DELETE_ELEM: i32 = 3;
const BPF_PROG_LOAD: i32 = 5;
const BPF_LINK_CREATE: i32 = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `BPF_XDP` of `enum bpf_attach_type`.
const BPF_XDP: u32 = 37;
const BPF_PSEUDO_MAP_FD: u8 = 1;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const XDP_PASS: i32 = 2;
/// Attach flags: generic (skb) mode and driver (native) mode.
pub(super) const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
pub(super) const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// `struct bpf_insn`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Insn {
    code: u8,
    /// dst_reg in the low nibble, src_reg in the high one.
    regs: u8,
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: dst | (src << 4),
        off,
        imm,
    }
}

/// The `map_create` member of `union bpf_attr`.
#[repr(C)]
#[derive(Default)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// The element-access member of `union bpf_attr`.
#[repr(C)]
#[derive(Default)]
struct MapElem {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// The `prog_load` member of `union bpf_attr` (up to `expected_attach_type`).
#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// The `link_create` member of `union bpf_attr` (up to `flags`).
#[repr(C)]
#[derive(Default)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// `bpf(cmd, attr, sizeof attr)`; returns the non-negative result.
fn bpf<T>(cmd: i32, attr: &mut T, what: &str) -> Why<i32> {
    // SAFETY: attr is a live, zero-padded bpf_attr prefix of the size passed; the kernel
    // accepts a shorter attr as long as the missing tail would be zero.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as u32,
        )
    };
    if r < 0 {
        return Err(os_err(what));
    }
    Ok(r as i32)
}

fn owned(fd: i32) -> OwnedFd {
    // SAFETY: fd is a fresh descriptor returned by bpf(); we own it.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// The map, the program and its attachment to one interface. Dropping it detaches the
/// program (the link goes first, then the program and the map).
pub(super) struct XdpProgram {
    link: Option<OwnedFd>,
    _prog: OwnedFd,
    map: OwnedFd,
    /// Attach flags the link got (skb or driver mode).
    pub mode: u32,
}

impl XdpProgram {
    /// Creates an XSKMAP of `queues` slots, loads the redirect program and attaches it to
    /// `ifindex` in `mode` (XDP_FLAGS_SKB_MODE or XDP_FLAGS_DRV_MODE).
    pub(super) fn attach(ifindex: u32, queues: u32, mode: u32) -> Why<XdpProgram> {
        let mut mc = MapCreate {
            map_type: BPF_MAP_TYPE_XSKMAP,
            key_size: 4,
            value_size: 4,
            max_entries: queues.max(1),
            ..Default::default()
        };
        mc.map_name[..8].copy_from_slice(b"doca_xsk");
        let map = owned(bpf(BPF_MAP_CREATE, &mut mc, "bpf(MAP_CREATE XSKMAP)")?);
        let fd = map.as_raw_fd();
        let code = [
            // LDX | MEM | W
            insn(0x61, 2, 1, 16, 0),
            // LD | IMM | DW, two slots; src = BPF_PSEUDO_MAP_FD
            insn(0x18, 1, BPF_PSEUDO_MAP_FD, 0, fd),
            insn(0, 0, 0, 0, 0),
            // ALU64 | MOV | K
            insn(0xb7, 3, 0, 0, XDP_PASS),
            // JMP | CALL
            insn(0x85, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
            // JMP | EXIT
            insn(0x95, 0, 0, 0, 0),
        ];
        let license = c"MIT OR Apache-2.0";
        let mut log = vec![0u8; 4096];
        let mut pl = ProgLoad {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: code.len() as u32,
            insns: code.as_ptr() as u64,
            license: license.as_ptr() as u64,
            log_level: 1,
            log_size: log.len() as u32,
            log_buf: log.as_mut_ptr() as u64,
            expected_attach_type: BPF_XDP,
            ..Default::default()
        };
        pl.prog_name[..8].copy_from_slice(b"doca_xsk");
        let prog = match bpf(BPF_PROG_LOAD, &mut pl, "bpf(PROG_LOAD XDP)") {
            Ok(fd) => owned(fd),
            Err((e, why)) => {
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                let vlog = String::from_utf8_lossy(&log[..end]);
                return Err((e, format!("{why} {}", vlog.trim())));
            }
        };
        let mut lc = LinkCreate {
            prog_fd: prog.as_raw_fd() as u32,
            target_ifindex: ifindex,
            attach_type: BPF_XDP,
            flags: mode,
        };
        let link = owned(bpf(BPF_LINK_CREATE, &mut lc, "bpf(LINK_CREATE XDP)")?);
        Ok(XdpProgram {
            link: Some(link),
            _prog: prog,
            map,
            mode,
        })
    }

    /// Points queue `queue` of the interface at socket `xsk`.
    pub(super) fn insert(&self, queue: u32, xsk: &OwnedFd) -> Why<()> {
        let key = queue;
        let value = xsk.as_raw_fd() as u32;
        let mut a = MapElem {
            map_fd: self.map.as_raw_fd() as u32,
            key: &key as *const u32 as u64,
            value: &value as *const u32 as u64,
            ..Default::default()
        };
        bpf(BPF_MAP_UPDATE_ELEM, &mut a, "bpf(MAP_UPDATE_ELEM)").map(drop)
    }

    /// Sends queue `queue`'s frames back to the kernel's stack.
    pub(super) fn remove(&self, queue: u32) {
        let key = queue;
        let mut a = MapElem {
            map_fd: self.map.as_raw_fd() as u32,
            key: &key as *const u32 as u64,
            ..Default::default()
        };
        // ENOENT (never inserted) is fine: the slot is empty either way.
        let _ = bpf(BPF_MAP_DELETE_ELEM, &mut a, "bpf(MAP_DELETE_ELEM)");
    }
}

impl Drop for XdpProgram {
    fn drop(&mut self) {
        // Closing the last descriptor of the link detaches the program from the interface.
        drop(self.link.take());
    }
}

/// Whether a failed attach is worth retrying in generic mode (the driver has no native
/// XDP) rather than a reason to give up.
pub(super) fn native_unsupported(e: &(DocaError, String)) -> bool {
    e.1.contains("Operation not supported") || e.1.contains("Invalid argument")
}
