//! Library-owned `doca_buf`s for UROM command tasks: the payload area a client packs a
//! command into and the response area holding a notification body. They are plain
//! [`Buf`]s of the core runtime that belong to no inventory or mmap (the task owns the
//! memory), so every `doca_buf_*` accessor works on them.

use crate::buf::Buf;

/// A buffer over `mem` (which must outlive it) whose data section covers all of it.
pub(crate) fn task_buf(mem: &mut [u8]) -> Buf {
    let head = mem.as_mut_ptr() as usize;
    Buf {
        inv: std::ptr::null(),
        mmap: None,
        head,
        len: mem.len(),
        data: head,
        data_len: mem.len(),
        refcount: 1,
        next: std::ptr::null_mut(),
        prev: std::ptr::null_mut(),
    }
}

/// Copies `bytes` (truncated to the capacity) to the head and makes them the data section.
pub(crate) fn fill(b: &mut Buf, bytes: &[u8]) {
    let n = bytes.len().min(b.len);
    // SAFETY: head has room for len >= n bytes (task_buf); the regions do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.head as *mut u8, n) };
    b.data = b.head;
    b.data_len = n;
}

/// The data section.
pub(crate) fn data_bytes(b: &Buf) -> &[u8] {
    let (p, n) = b.data();
    if n == 0 {
        return &[];
    }
    // SAFETY: the data section lies inside the buffer (set_data checks bounds), whose
    // memory the owning task keeps alive.
    unsafe { std::slice::from_raw_parts(p, n) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::{doca_buf_get_data_len, doca_buf_set_data};
    use crate::error::DocaError;
    use std::ffi::c_void;

    #[test]
    fn task_bufs_work_with_the_doca_buf_calls() {
        let mut mem = vec![0u8; 16];
        let mut b = task_buf(&mut mem);
        let base = b.head as *mut u8;
        // SAFETY: b is live; pointers are inside or just outside `mem`.
        unsafe {
            assert_eq!(doca_buf_set_data(&mut b, base.add(4) as *mut c_void, 12), 0);
            assert_eq!(
                doca_buf_set_data(&mut b, base.add(4) as *mut c_void, 13),
                DocaError::INVALID_VALUE.0
            );
            let mut n = 0;
            assert_eq!(doca_buf_get_data_len(&b, &mut n), 0);
            assert_eq!(n, 12);
        }
        fill(&mut b, b"abc");
        assert_eq!(data_bytes(&b), b"abc");
    }
}
