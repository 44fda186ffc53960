//! User memory registrations (`doca_umem.h`): a range of host or GPU memory a program gives a
//! device for queue rings and doorbell records ("external umem" of DOCA Verbs CQs and QPs).
//!
//! In doca-soft the queue rings the soft NIC and the kernels share always live in memory the
//! runtime allocates itself (device-mapped pinned memory, so that both the proxy thread and
//! GPU code reach them; see `verbs/mod.rs`). A umem therefore records and checks what the
//! program registered (range, rights, GPU or host, large enough for the queue that names
//! it), and its memory is not written by the runtime.

use crate::dev::DevInfo;
use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::mmap::ACCESS_ALL_BITS;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// The C `struct doca_umem`.
pub struct Umem {
    id: u32,
    addr: u64,
    size: u32,
    gpu: Option<Weak<GpuShared>>,
    _dev: Arc<DevInfo>,
}

impl Umem {
    /// A registration of `[addr, addr + size)`; `gpu`: memory from `doca_gpu_mem_alloc`
    /// (checked against the allocation registry).
    pub(crate) fn new(
        dev: Arc<DevInfo>,
        addr: u64,
        size: usize,
        access: u32,
        gpu: bool,
    ) -> DocaResult<Umem> {
        if addr == 0 || size == 0 || access & !ACCESS_ALL_BITS != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        // doca_umem_get_size reports 32 bits.
        let Ok(size32) = u32::try_from(size) else {
            sdk_err!("umem", "a umem is at most 4 GiB - 1 (asked {size} bytes)");
            return Err(DocaError::INVALID_VALUE);
        };
        let owner = if gpu {
            let Some(r) = crate::gpu::registry::lookup(addr, size) else {
                sdk_err!(
                    "umem",
                    "{addr:#x}+{size} is not memory from doca_gpu_mem_alloc (doca_umem_gpu_create)"
                );
                return Err(DocaError::INVALID_VALUE);
            };
            Some(Arc::downgrade(&r.gpu))
        } else {
            None
        };
        Ok(Umem {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            addr,
            size: size32,
            gpu: owner,
            _dev: dev,
        })
    }

    /// The id (`doca_umem_get_id`): unique in the process, never 0.
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// Start address.
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }

    /// Length in bytes.
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// The GPU owning the memory (`doca_umem_gpu_create`), None for host memory (or a
    /// GPU already destroyed).
    pub(crate) fn gpu(&self) -> Option<Arc<GpuShared>> {
        self.gpu.as_ref().and_then(Weak::upgrade)
    }

    /// `INVALID_VALUE` unless `need` bytes fit from `offset` on (what a queue over this umem
    /// at that offset occupies).
    pub(crate) fn check_room(&self, offset: u64, need: u64, what: &str) -> DocaResult<()> {
        match offset.checked_add(need) {
            Some(end) if end <= self.size as u64 => Ok(()),
            _ => {
                sdk_err!(
                    "verbs",
                    "{what}: umem {} of {} bytes has no room for {need} bytes at offset {offset}",
                    self.id,
                    self.size
                );
                Err(DocaError::INVALID_VALUE)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dev::PortSpec;

    fn info() -> Arc<DevInfo> {
        Arc::new(crate::testing::dev_info(
            "aa:00.0",
            "w0",
            [0; 6],
            PortSpec::Wire {
                name: "w".into(),
                side: 0,
            },
        ))
    }

    #[test]
    fn host_umems_check_arguments_and_room() {
        let buf = vec![0u8; 4096];
        let a = buf.as_ptr() as u64;
        let u = Umem::new(info(), a, 4096, 15, false).unwrap();
        let v = Umem::new(info(), a, 16, 1, false).unwrap();
        assert_ne!(u.id(), v.id());
        assert_ne!(u.id(), 0);
        assert_eq!((u.addr(), u.size()), (a, 4096));
        assert!(u.check_room(0, 4096, "t").is_ok());
        assert!(u.check_room(64, 4096, "t").is_err());
        assert!(u.check_room(u64::MAX, 2, "t").is_err());
        assert!(Umem::new(info(), 0, 16, 0, false).is_err());
        assert!(Umem::new(info(), a, 0, 0, false).is_err());
        assert!(Umem::new(info(), a, 16, 0x80, false).is_err());
        assert!(Umem::new(info(), a, 1 << 32, 0, false).is_err());
        assert!(
            Umem::new(info(), a, 4096, 1, true).is_err(),
            "host memory is not GPU memory"
        );
    }
}
