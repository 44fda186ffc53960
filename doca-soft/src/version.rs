//! `doca_version.h`: the runtime version of this library.

use std::ffi::CStr;

/// The DOCA API version doca-soft implements, as `doca_version_runtime` reports it.
pub(crate) const RUNTIME_VERSION: &str = "3.3.0";

/// [`RUNTIME_VERSION`] as a C string (static storage).
pub(crate) const RUNTIME_VERSION_C: &CStr = c"3.3.0";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_version::doca_version_runtime;

    #[test]
    fn runtime_version_is_3_3() {
        assert_eq!(RUNTIME_VERSION_C.to_str().unwrap(), RUNTIME_VERSION);
        // SAFETY: the function returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(doca_version_runtime()) }
            .to_str()
            .unwrap();
        assert_eq!(v, RUNTIME_VERSION);
        let parts: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(&parts[..2], &[3, 3]);
    }
}
