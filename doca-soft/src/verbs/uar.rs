//! User access regions (`doca_uar.h`): the doorbell page of a device. DOCA Verbs queues
//! created with an external UAR ring their doorbells in it.
//!
//! In doca-soft each QP gets its own doorbell words in runtime memory (two QPs sharing one
//! UAR page, as DOCA's counter samples do, must still be told apart by the proxy that
//! polls them), so a UAR is a page the program may look at (`doca_uar_page_get`,
//! `doca_uar_reg_addr_get`) and an id; queues record which UAR they were given.

use crate::dev::DevInfo;
use crate::error::{DocaError, DocaResult};
use std::alloc::Layout;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// `DOCA_UAR_ALLOCATION_TYPE_NONCACHE_DEDICATED`, the largest allocation type.
const MAX_ALLOCATION_TYPE: u32 = 2;
/// Bytes of a UAR page.
const PAGE: usize = 4096;
/// Offset of the doorbell register inside the page (where mlx5 puts the first BlueFlame
/// register).
const REG_OFFSET: usize = 0x800;

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// The C `struct doca_uar`.
pub struct Uar {
    id: u32,
    page: *mut u8,
    _dev: Arc<DevInfo>,
}

// SAFETY: the page is owned by the value and only handed out as an address.
unsafe impl Send for Uar {}
// SAFETY: as above.
unsafe impl Sync for Uar {}

impl Uar {
    /// A UAR of allocation type `kind` (BLUEFLAME, NONCACHE, NONCACHE_DEDICATED).
    pub(crate) fn new(dev: Arc<DevInfo>, kind: u32) -> DocaResult<Uar> {
        if kind > MAX_ALLOCATION_TYPE {
            return Err(DocaError::INVALID_VALUE);
        }
        let layout = Layout::from_size_align(PAGE, PAGE).map_err(|_| DocaError::NO_MEMORY)?;
        // SAFETY: a non-zero size.
        let page = unsafe { std::alloc::alloc_zeroed(layout) };
        if page.is_null() {
            return Err(DocaError::NO_MEMORY);
        }
        Ok(Uar {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            page,
            _dev: dev,
        })
    }

    /// `doca_uar_id_get`.
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// `doca_uar_page_get`.
    pub(crate) fn page(&self) -> *mut u8 {
        self.page
    }

    /// `doca_uar_reg_addr_get`.
    pub(crate) fn reg_addr(&self) -> *mut u8 {
        // SAFETY: inside the page.
        unsafe { self.page.add(REG_OFFSET) }
    }
}

impl Drop for Uar {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.page, Layout::from_size_align_unchecked(PAGE, PAGE)) };
    }
}
