//! `doca_version.h`: the runtime version of this library.

use std::ffi::c_char;

/// The DOCA API version doca-soft implements, as `doca_version_runtime` reports it.
pub const RUNTIME_VERSION: &str = "3.3.0";

/// `const char *doca_version_runtime(void)`: the version of the library in use.
#[no_mangle]
pub extern "C" fn doca_version_runtime() -> *const c_char {
    c"3.3.0".as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn runtime_version_is_3_3() {
        // SAFETY: the function returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(doca_version_runtime()) }
            .to_str()
            .unwrap();
        assert_eq!(v, RUNTIME_VERSION);
        let parts: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(&parts[..2], &[3, 3]);
    }
}
