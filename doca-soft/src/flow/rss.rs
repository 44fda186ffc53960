//! RSS configurations from the C struct, for RSS forwards and shared RSS resources.

use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::rss::{self, RssCfg};

/// An RSS configuration from the C struct (queues copied).
pub(crate) fn rss_cfg(
    r: &sys::doca_flow_resource_rss_cfg_v1,
    key: Option<&[u8]>,
) -> DocaResult<RssCfg> {
    if r.nr_queues <= 0 || r.queues_array.is_null() {
        sdk_err!("flow", "RSS forward without queues");
        return Err(DocaError::INVALID_VALUE);
    }
    if (r.outer_flags | r.inner_flags) & !rss::RSS_KNOWN != 0 {
        sdk_err!(
            "flow",
            "RSS flags {:#x}/{:#x} have unknown bits",
            r.outer_flags,
            r.inner_flags
        );
        return Err(DocaError::INVALID_VALUE);
    }
    if r.rss_hash_func > sys::DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ {
        sdk_err!(
            "flow",
            "RSS hash function {} is out of range",
            r.rss_hash_func
        );
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: the caller passes nr_queues readable ids at queues_array (C API contract);
    // they are copied, as the application's array may be gone once the call returns.
    let q = unsafe { std::slice::from_raw_parts(r.queues_array, r.nr_queues as usize) };
    Ok(RssCfg {
        queues: q.into(),
        outer: r.outer_flags,
        inner: r.inner_flags,
        symmetric: r.rss_hash_func == sys::DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ,
        seed: key.map_or(rss::DEFAULT_SEED, rss::seed_of_key),
    })
}
