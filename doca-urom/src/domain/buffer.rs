//! [`DomainBuffer`]: memory a domain exports to its workers, owned by the domain while it
//! lives.

use crate::error::{Error, Result};
use std::alloc::Layout;
use std::ptr::NonNull;

/// Alignment of a domain buffer (a page: what memory registration works in).
const ALIGN: usize = 4096;

/// Memory exported to a domain's workers, with its packed memory handle and remote key.
///
/// Workers of the domain may write it remotely (UCX RMA) at any time while the domain
/// lives, so the buffer owns its memory and [`Domain::start`](crate::Domain::start) takes
/// the buffer: the memory is freed only after the domain is destroyed, and never while
/// workers may still write it (a domain that is leaked leaks its buffers with it). Read and
/// write it through [`Domain::buffer`](crate::Domain::buffer) and
/// [`Domain::buffer_mut`](crate::Domain::buffer_mut).
///
/// A buffer cannot be made over memory it does not own:
///
/// ```compile_fail
/// let mut mine = vec![0u8; 64];
/// // No public constructor takes a pointer: the fields are private.
/// let b = doca_urom::DomainBuffer { addr: mine.as_mut_ptr().cast(), len: 64, memh: vec![], mkey: vec![] };
/// ```
///
/// The memory is zeroed and page aligned. Register it with your transport
/// ([`as_ptr`](Self::as_ptr), [`len`](Self::len)), then give the packed handle and key:
///
/// ```
/// let mut b = doca_urom::DomainBuffer::new(4096)?;
/// let (addr, len) = (b.as_ptr(), b.len()); // e.g. ucp_mem_map + ucp_rkey_pack over these
/// assert_eq!(addr as usize % 4096, 0);
/// b.set_keys(vec![1, 2, 3], vec![4, 5]);
/// b.write(8, b"hello")?;
/// let mut out = [0u8; 5];
/// b.read(8, &mut out)?;
/// assert_eq!(&out, b"hello");
/// # let _ = len;
/// # Ok::<(), doca_urom::Error>(())
/// ```
pub struct DomainBuffer {
    ptr: NonNull<u8>,
    len: usize,
    memh: Vec<u8>,
    mkey: Vec<u8>,
}

// SAFETY: the buffer owns its memory; reads through `&self` are volatile copies (remote
// writers are outside this process's threads), writes need `&mut self`.
unsafe impl Send for DomainBuffer {}
// SAFETY: as above: no two threads of this process can write it at once.
unsafe impl Sync for DomainBuffer {}

impl DomainBuffer {
    /// `len` zeroed bytes, page aligned, without keys yet.
    pub fn new(len: usize) -> Result<DomainBuffer> {
        let layout = Layout::from_size_align(len, ALIGN)
            .ok()
            .filter(|_| len > 0)
            .ok_or_else(|| Error::InvalidArgument(format!("domain buffer of {len} bytes")))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or_else(|| Error::InvalidArgument(format!("cannot allocate {len} bytes")))?;
        Ok(DomainBuffer {
            ptr,
            len,
            memh: Vec::new(),
            mkey: Vec::new(),
        })
    }

    /// Sets the packed memory handle and remote key of the registration over this memory.
    pub fn set_keys(&mut self, memh: Vec<u8>, mkey: Vec<u8>) {
        self.memh = memh;
        self.mkey = mkey;
    }

    /// The start of the memory (for registering it).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never empty (a zero-length buffer is refused); for symmetry with [`len`](Self::len).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed memory handle.
    pub fn memh(&self) -> &[u8] {
        &self.memh
    }

    /// The packed remote key.
    pub fn mkey(&self) -> &[u8] {
        &self.mkey
    }

    fn range(&self, offset: usize, n: usize) -> Result<()> {
        match offset.checked_add(n) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "{n} bytes at offset {offset} of a domain buffer of {}",
                self.len
            ))),
        }
    }

    /// Copies `dst.len()` bytes at `offset` into `dst` (volatile reads: workers may be
    /// writing them).
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.range(offset, dst.len())?;
        for (i, d) in dst.iter_mut().enumerate() {
            // SAFETY: in bounds (checked above) of memory this buffer owns.
            *d = unsafe { self.ptr.as_ptr().add(offset + i).read_volatile() };
        }
        Ok(())
    }

    /// Copies `src` to `offset` (volatile writes: workers may be reading them).
    pub fn write(&mut self, offset: usize, src: &[u8]) -> Result<()> {
        self.range(offset, src.len())?;
        for (i, s) in src.iter().enumerate() {
            // SAFETY: in bounds (checked above) of memory this buffer owns.
            unsafe { self.ptr.as_ptr().add(offset + i).write_volatile(*s) };
        }
        Ok(())
    }
}

impl Drop for DomainBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout (valid there), freed once.
        unsafe {
            std::alloc::dealloc(
                self.ptr.as_ptr(),
                Layout::from_size_align_unchecked(self.len, ALIGN),
            )
        };
    }
}

impl std::fmt::Debug for DomainBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DomainBuffer")
            .field("addr", &self.ptr)
            .field("len", &self.len)
            .field("memh_len", &self.memh.len())
            .field("mkey_len", &self.mkey.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_zeroed_aligned_and_bounds_checked() {
        assert!(matches!(
            DomainBuffer::new(0),
            Err(Error::InvalidArgument(_))
        ));
        let mut b = DomainBuffer::new(100).unwrap();
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 100);
        let mut all = [1u8; 100];
        b.read(0, &mut all).unwrap();
        assert_eq!(all, [0u8; 100]);
        b.write(98, &[5, 6]).unwrap();
        assert!(b.write(99, &[5, 6]).is_err());
        assert!(b.read(usize::MAX, &mut [0u8; 2]).is_err());
        let mut two = [0u8; 2];
        b.read(98, &mut two).unwrap();
        assert_eq!(two, [5, 6]);
        b.set_keys(vec![1], vec![2, 3]);
        assert_eq!((b.memh(), b.mkey()), (&[1u8][..], &[2u8, 3][..]));
    }
}
