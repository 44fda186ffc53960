//! [`MemMap`]: memory registered with a context (`ucp_mem_map`), and its packed remote key
//! for peers.

use super::context::{Context, ContextInner};
use crate::result::{Result, Status};
use crate::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// Registered memory; unmapped (`ucp_mem_unmap`) on drop, and freed too when UCX
/// allocated it.
pub struct MemMap {
    raw: sys::ucp_mem_h,
    address: *mut u8,
    len: usize,
    ctx: Arc<ContextInner>,
}

// SAFETY: the handle is only used with its context, which is thread-safe (see Context);
// the memory itself is the owner's to share or not.
unsafe impl Send for MemMap {}
// SAFETY: as above; `&self` methods only read the mapping.
unsafe impl Sync for MemMap {}

impl MemMap {
    fn map(ctx: &Context, params: sys::ucp_mem_map_params_t) -> Result<MemMap> {
        let mut raw: sys::ucp_mem_h = std::ptr::null_mut();
        // SAFETY: live context; params valid for the call; raw is an out pointer.
        let s = unsafe { sys::ucp_mem_map(ctx.inner.raw, &params, &mut raw) };
        Status(s).check("ucp_mem_map")?;
        let mut attr = sys::ucp_mem_attr_t {
            field_mask: (sys::ucp_mem_attr_field_UCP_MEM_ATTR_FIELD_ADDRESS
                | sys::ucp_mem_attr_field_UCP_MEM_ATTR_FIELD_LENGTH) as u64,
            ..Default::default()
        };
        let mut m = MemMap {
            raw,
            address: std::ptr::null_mut(),
            len: 0,
            ctx: ctx.inner.clone(),
        };
        // SAFETY: live memory handle; attr writable.
        let s = unsafe { sys::ucp_mem_query(raw, &mut attr) };
        Status(s).check("ucp_mem_query")?;
        m.address = attr.address as *mut u8;
        m.len = attr.length;
        Ok(m)
    }

    /// Lets UCX allocate and register `len` bytes.
    pub fn allocate(ctx: &Context, len: usize) -> Result<MemMap> {
        Self::map(
            ctx,
            sys::ucp_mem_map_params_t {
                field_mask: (sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_ADDRESS
                    | sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_LENGTH
                    | sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_FLAGS)
                    as u64,
                address: std::ptr::null_mut(),
                length: len,
                flags: sys::UCP_MEM_MAP_ALLOCATE,
                ..Default::default()
            },
        )
    }

    /// Registers `len` bytes the caller owns at `address`.
    ///
    /// # Safety
    /// The memory stays valid until the map is dropped.
    pub unsafe fn register(ctx: &Context, address: *mut u8, len: usize) -> Result<MemMap> {
        Self::map(
            ctx,
            sys::ucp_mem_map_params_t {
                field_mask: (sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_ADDRESS
                    | sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_LENGTH)
                    as u64,
                address: address as *mut c_void,
                length: len,
                ..Default::default()
            },
        )
    }

    /// Start of the mapped memory.
    pub fn address(&self) -> *mut u8 {
        self.address
    }

    /// Length of the mapped memory.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed remote key a peer unpacks to access this memory (`ucp_rkey_pack`).
    pub fn pack_rkey(&self) -> Result<Vec<u8>> {
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live context and memory handle; out pointers.
        let s = unsafe { sys::ucp_rkey_pack(self.ctx.raw, self.raw, &mut buf, &mut len) };
        Status(s).check("ucp_rkey_pack")?;
        // SAFETY: UCX handed us `len` bytes at `buf` until released just below.
        let v = unsafe { std::slice::from_raw_parts(buf as *const u8, len) }.to_vec();
        // SAFETY: `buf` came from ucp_rkey_pack; released once.
        unsafe { sys::ucp_rkey_buffer_release(buf) };
        Ok(v)
    }

    /// The raw handle (valid while this map lives).
    pub fn as_raw(&self) -> sys::ucp_mem_h {
        self.raw
    }
}

impl Drop for MemMap {
    fn drop(&mut self) {
        // SAFETY: live mapping of this live context, unmapped once.
        unsafe { sys::ucp_mem_unmap(self.ctx.raw, self.raw) };
    }
}
