//! [`Context`]: a UCP context (`ucp_context_h`), made by [`ContextBuilder`].

use crate::result::{Error, Result, Status};
use crate::sys;
use std::ffi::CString;
use std::sync::Arc;

bitflags::bitflags! {
    /// The UCP features a context is created with (`ucp_params_t::features`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Features: u64 {
        /// Tag matching (`ucp_tag_*`).
        const TAG = sys::ucp_feature_UCP_FEATURE_TAG as u64;
        /// Remote memory access (`ucp_put/get*`, memory keys).
        const RMA = sys::ucp_feature_UCP_FEATURE_RMA as u64;
        /// 32-bit atomics.
        const AMO32 = sys::ucp_feature_UCP_FEATURE_AMO32 as u64;
        /// 64-bit atomics.
        const AMO64 = sys::ucp_feature_UCP_FEATURE_AMO64 as u64;
        /// Event descriptors for sleeping workers (`ucp_worker_get_efd`/`arm`).
        const WAKEUP = sys::ucp_feature_UCP_FEATURE_WAKEUP as u64;
        /// Byte streams (`ucp_stream_*`).
        const STREAM = sys::ucp_feature_UCP_FEATURE_STREAM as u64;
        /// Active messages.
        const AM = sys::ucp_feature_UCP_FEATURE_AM as u64;
    }
}

/// Owns the `ucp_context_h`; cleaned up when the last [`Context`] (or object made from
/// it) is gone.
pub(crate) struct ContextInner {
    pub(crate) raw: sys::ucp_context_h,
    features: Features,
}

// SAFETY: the context is created with `mt_workers_shared` set, which makes UCX protect it
// for workers of several threads; this type only creates objects on it and cleans it up
// once, when no object refers to it any more.
unsafe impl Send for ContextInner {}
// SAFETY: as above.
unsafe impl Sync for ContextInner {}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // SAFETY: live context, cleaned up once; every worker and memory map holds an Arc
        // of this, so none is left.
        unsafe { sys::ucp_cleanup(self.raw) };
    }
}

/// A UCP context: the transports and features workers are made from. Cheap to clone (an
/// `Arc`); `Send` and `Sync`.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl Context {
    /// A builder with no features and UCX's configuration from the environment.
    pub fn builder() -> ContextBuilder {
        ContextBuilder {
            features: Features::empty(),
            config: Vec::new(),
        }
    }

    /// The features the context was created with.
    pub fn features(&self) -> Features {
        self.inner.features
    }

    /// The raw handle (valid while this context lives).
    pub fn as_raw(&self) -> sys::ucp_context_h {
        self.inner.raw
    }
}

/// Configuration of a [`Context`] before it is created.
#[derive(Debug, Clone)]
pub struct ContextBuilder {
    features: Features,
    config: Vec<(String, String)>,
}

/// `ucp_config_t` from `ucp_config_read`, released on drop.
struct Config(*mut sys::ucp_config_t);

impl Drop for Config {
    fn drop(&mut self) {
        // SAFETY: read by ucp_config_read, released once.
        unsafe { sys::ucp_config_release(self.0) };
    }
}

impl ContextBuilder {
    /// Adds features.
    pub fn features(mut self, f: Features) -> Self {
        self.features |= f;
        self
    }

    /// Sets UCX configuration `name` (without the `UCX_` prefix, e.g. `"TLS"`) to `value`,
    /// over what the environment says.
    pub fn config(mut self, name: &str, value: &str) -> Self {
        self.config.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets `name` to `value` unless the environment sets `UCX_<name>` (a default the user
    /// can override).
    pub fn config_default(self, name: &str, value: &str) -> Self {
        if std::env::var_os(format!("UCX_{name}")).is_some() {
            self
        } else {
            self.config(name, value)
        }
    }

    /// Creates the context (`ucp_config_read`, `ucp_config_modify`, `ucp_init`).
    /// Fails with `ERR_NO_DEVICE` (op `"load libucp.so.0"`) when no UCX could be loaded
    /// ([`library`](crate::library) says where it looked).
    pub fn build(self) -> Result<Context> {
        if crate::sys::library().is_err() {
            return Err(Error::new("load libucp.so.0", Status::ERR_NO_DEVICE));
        }
        let mut raw_config: *mut sys::ucp_config_t = std::ptr::null_mut();
        // SAFETY: valid out pointer; null prefix and file mean "from the environment".
        let s =
            unsafe { sys::ucp_config_read(std::ptr::null(), std::ptr::null(), &mut raw_config) };
        Status(s).check("ucp_config_read")?;
        let config = Config(raw_config);
        for (name, value) in &self.config {
            let bad = || Error::new("ucp_config_modify", Status::ERR_INVALID_PARAM);
            let n = CString::new(name.as_str()).map_err(|_| bad())?;
            let v = CString::new(value.as_str()).map_err(|_| bad())?;
            // SAFETY: live config; NUL-terminated strings valid for the call.
            let s = unsafe { sys::ucp_config_modify(config.0, n.as_ptr(), v.as_ptr()) };
            Status(s).check("ucp_config_modify")?;
        }
        let params = sys::ucp_params_t {
            field_mask: (sys::ucp_params_field_UCP_PARAM_FIELD_FEATURES
                | sys::ucp_params_field_UCP_PARAM_FIELD_MT_WORKERS_SHARED)
                as u64,
            features: self.features.bits(),
            mt_workers_shared: 1,
            ..Default::default()
        };
        let mut raw: sys::ucp_context_h = std::ptr::null_mut();
        // SAFETY: params and config are valid for the call; raw is an out pointer.
        let s = unsafe {
            sys::ucp_init_version(
                sys::UCP_API_MAJOR,
                sys::UCP_API_MINOR,
                &params,
                config.0,
                &mut raw,
            )
        };
        Status(s).check("ucp_init")?;
        Ok(Context {
            inner: Arc::new(ContextInner {
                raw,
                features: self.features,
            }),
        })
    }
}
