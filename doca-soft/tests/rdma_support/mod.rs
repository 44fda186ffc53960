//! Helpers of the DOCA RDMA tests: one side of a connection built through the C API only
//! (device `lo`, a `doca_rdma` on the host data path of the testing hooks, memory maps
//! exported for RDMA, buffer arrays), the child process the two-process tests talk to over
//! its pipes, and hex for the blobs they exchange.
#![allow(dead_code)]

use std::ffi::c_void;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use doca_soft::capi::doca_buf_array::*;
use doca_soft::capi::doca_ctx::*;
use doca_soft::capi::doca_dev::*;
use doca_soft::capi::doca_mmap::*;
use doca_soft::capi::doca_rdma::*;
use doca_soft::testing::rdma::{buf_arr_entries, rdma_set_host_datapath, CpuRdma};
use doca_soft::testing::GpuBufEntry;

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// `LOCAL_READ_WRITE | RDMA_WRITE`, what the sample gives its buffers.
pub const PERMS: u32 = 1 | 4;

/// The device `lo`, opened.
pub fn open_lo() -> *mut Dev {
    let mut list = std::ptr::null_mut();
    let mut n = 0u32;
    // SAFETY: valid out-pointers; the list lives until destroyed below.
    unsafe {
        assert_eq!(doca_devinfo_create_list(&mut list, &mut n), 0);
        let infos = std::slice::from_raw_parts(list, n as usize);
        let mut dev = std::ptr::null_mut();
        for &i in infos {
            let mut name = [0 as std::ffi::c_char; 64];
            if doca_devinfo_get_ibdev_name(i, name.as_mut_ptr(), 64) == 0
                && std::ffi::CStr::from_ptr(name.as_ptr()).to_bytes() == b"soft_lo"
            {
                assert_eq!(doca_dev_open(i, &mut dev), 0);
            }
        }
        assert_eq!(doca_devinfo_destroy_list(list), 0);
        assert!(!dev.is_null(), "no soft_lo device");
        dev
    }
}

/// A `doca_rdma` on `dev` with the sample's settings, on the host data path, started.
pub fn started_rdma(dev: *mut Dev, connections: u16, queue: u32) -> *mut Rdma {
    let mut r = std::ptr::null_mut();
    // SAFETY: live device; valid out-pointer; the context is used through its handle only.
    unsafe {
        assert_eq!(doca_rdma_create(dev, &mut r), 0);
        assert_eq!(doca_rdma_set_permissions(r, PERMS), 0);
        assert_eq!(doca_rdma_set_send_queue_size(r, queue), 0);
        assert_eq!(doca_rdma_set_recv_queue_size(r, queue), 0);
        assert_eq!(doca_rdma_set_grh_enabled(r, 1), 0);
        assert_eq!(doca_rdma_set_max_num_connections(r, connections), 0);
        rdma_set_host_datapath(r.cast()).expect("host data path");
        assert_eq!(doca_ctx_start(doca_rdma_as_ctx(r)), 0);
    }
    r
}

/// The CPU device over a started context's handle.
pub fn cpu_device(r: *mut Rdma) -> CpuRdma {
    let mut h: *mut c_void = std::ptr::null_mut();
    // SAFETY: a started context; valid out-pointer.
    unsafe {
        assert_eq!(doca_rdma_get_gpu_handle(r, &mut h), 0);
        CpuRdma::new(h).expect("handle")
    }
}

/// Exports connection details: (blob, connection).
pub fn export(r: *mut Rdma) -> (Vec<u8>, *mut RdmaConnection) {
    let (mut p, mut n, mut c) = (std::ptr::null(), 0usize, std::ptr::null_mut());
    // SAFETY: a started context; valid out-pointers; the blob lives with the context.
    unsafe {
        assert_eq!(doca_rdma_export(r, &mut p, &mut n, &mut c), 0);
        (std::slice::from_raw_parts(p, n).to_vec(), c)
    }
}

/// Stops and destroys a context.
pub fn destroy_rdma(r: *mut Rdma) {
    // SAFETY: a live context, not used afterwards.
    unsafe {
        assert_eq!(doca_ctx_stop(doca_rdma_as_ctx(r)), 0);
        assert_eq!(doca_rdma_destroy(r), 0);
    }
}

/// Host memory registered for RDMA through an mmap, with its export and a buffer array.
pub struct Region {
    pub mem: Vec<u8>,
    pub mmap: *mut Mmap,
    pub arr: *mut BufArr,
    pub blob: Vec<u8>,
}

impl Region {
    /// `n` elements of `elem` bytes, filled with `fill`, with the sample's permissions.
    pub fn new(dev: *mut Dev, n: usize, elem: usize, fill: u8) -> Region {
        Region::with_perms(dev, n, elem, fill, PERMS)
    }

    /// As [`Region::new`], with `perms` (`doca_access_flag` bits).
    pub fn with_perms(dev: *mut Dev, n: usize, elem: usize, fill: u8, perms: u32) -> Region {
        let mut mem = vec![fill; n * elem];
        let (mut m, mut a) = (std::ptr::null_mut(), std::ptr::null_mut());
        let (mut p, mut len) = (std::ptr::null(), 0usize);
        // SAFETY: live device; `mem` is moved into the Region, which outlives the mmap
        // (Drop destroys the mmap first; the Vec's heap buffer never moves).
        unsafe {
            assert_eq!(doca_mmap_create(&mut m), 0);
            assert_eq!(doca_mmap_set_permissions(m, perms), 0);
            assert_eq!(
                doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), mem.len()),
                0
            );
            assert_eq!(doca_mmap_add_dev(m, dev), 0);
            assert_eq!(doca_mmap_start(m), 0);
            assert_eq!(doca_mmap_export_rdma(m, dev, &mut p, &mut len), 0);
            let blob = std::slice::from_raw_parts(p.cast::<u8>(), len).to_vec();
            assert_eq!(doca_buf_arr_create(n, &mut a), 0);
            assert_eq!(doca_buf_arr_set_params(a, m, elem, 0), 0);
            assert_eq!(doca_buf_arr_start(a), 0);
            Region {
                mem,
                mmap: m,
                arr: a,
                blob,
            }
        }
    }

    /// The entries a kernel would read.
    pub fn bufs(&self) -> Vec<GpuBufEntry> {
        // SAFETY: a started array.
        unsafe { buf_arr_entries(self.arr.cast()) }.expect("entries")
    }

    /// A volatile copy of the memory (the NIC writes it behind our back).
    pub fn snapshot(&self) -> Vec<u8> {
        // SAFETY: our own buffer.
        (0..self.mem.len())
            .map(|i| unsafe { std::ptr::read_volatile(self.mem.as_ptr().add(i)) })
            .collect()
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: live handles, destroyed once.
        unsafe {
            let _ = doca_buf_arr_destroy(self.arr);
            let _ = doca_mmap_destroy(self.mmap);
        }
    }
}

/// A peer's memory (`doca_mmap_create_from_export`) with a buffer array over it.
pub struct Remote {
    pub mmap: *mut Mmap,
    pub arr: *mut BufArr,
}

impl Remote {
    pub fn new(dev: *mut Dev, blob: &[u8], n: usize, elem: usize) -> Remote {
        let (mut m, mut a) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: live device, readable blob, valid out-pointers.
        unsafe {
            assert_eq!(
                doca_mmap_create_from_export(
                    std::ptr::null(),
                    blob.as_ptr().cast(),
                    blob.len(),
                    dev,
                    &mut m
                ),
                0
            );
            assert_eq!(doca_buf_arr_create(n, &mut a), 0);
            assert_eq!(doca_buf_arr_set_params(a, m, elem, 0), 0);
            assert_eq!(doca_buf_arr_start(a), 0);
        }
        Remote { mmap: m, arr: a }
    }

    pub fn bufs(&self) -> Vec<GpuBufEntry> {
        // SAFETY: a started array.
        unsafe { buf_arr_entries(self.arr.cast()) }.expect("entries")
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        // SAFETY: live handles, destroyed once.
        unsafe {
            let _ = doca_buf_arr_destroy(self.arr);
            let _ = doca_mmap_destroy(self.mmap);
        }
    }
}

/// The child process: this test binary re-run on one ignored test, talking in lines.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

/// Marks the child's answers among the harness's own output.
pub const TAG: &str = "@@rdma ";

impl Peer {
    /// Starts `<this test binary> --exact <test> --ignored --nocapture` with `env`.
    pub fn spawn(test: &str, env: &[(&str, &str)]) -> Peer {
        let exe = std::env::current_exe().expect("test binary");
        let mut cmd = Command::new(exe);
        cmd.args([
            "--exact",
            test,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DOCA_SOFT_RDMA_CHILD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn child");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = l.strip_prefix(TAG) {
                    if tx.send(rest.to_owned()).is_err() {
                        break;
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Peer {
            child,
            stdin,
            lines: rx,
        }
    }

    pub fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().expect("child stdin");
        writeln!(s, "{line}").expect("write to child");
        s.flush().unwrap();
    }

    /// The next answer, within `t`.
    pub fn recv(&mut self, t: Duration) -> String {
        self.lines
            .recv_timeout(t)
            .unwrap_or_else(|_| panic!("the child did not answer within {t:?}"))
    }

    /// The next answer, which must start with `word`; the rest.
    pub fn expect(&mut self, word: &str) -> String {
        let l = self.recv(Duration::from_secs(30));
        let rest = l
            .strip_prefix(word)
            .unwrap_or_else(|| panic!("expected '{word} ...' from the child, got '{l}'"));
        rest.trim().to_owned()
    }

    /// Kills the child (a peer that vanishes).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes its stdin and waits for it to exit; its exit status.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("wait child")
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// In the child: writes an answer line.
pub fn answer(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "\n{TAG}{s}");
    let _ = o.flush();
}

/// In the child: the next command line from the parent (None at EOF).
pub fn command() -> Option<String> {
    let mut l = String::new();
    match std::io::stdin().lock().read_line(&mut l) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(l.trim().to_owned()),
    }
}
