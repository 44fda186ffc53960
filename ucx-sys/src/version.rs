//! Which UCX this crate was built against, which one is loaded, and the check that they
//! match well enough.
//!
//! A binary built against the pinned UCX can still load another `libucp.so.0` at run time
//! (the soname is the same for every 1.x: Debian's 1.13 included) when its rpath or
//! `LD_LIBRARY_PATH` does not point at the pinned one. [`check_version`] turns that into
//! one clear error at start instead of obscure failures later.

use crate::sys;
use std::ffi::CStr;
use std::fmt;
use std::sync::OnceLock;

/// A UCX version (`major.minor.release`; the headers only carry `major.minor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Release (0 when unknown).
    pub release: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.release)
    }
}

/// The UCP API version of the headers this crate was built against (`UCP_API_MAJOR`,
/// `UCP_API_MINOR`). A loaded UCX must be at least this.
pub const BUILD_VERSION: Version = Version {
    major: sys::UCP_API_MAJOR,
    minor: sys::UCP_API_MINOR,
    release: 0,
};

include!(concat!(env!("OUT_DIR"), "/min_version.rs"));

/// The version of the UCX library loaded in this process (`ucp_get_version`).
pub fn loaded() -> Version {
    let (mut major, mut minor, mut release) = (0, 0, 0);
    // SAFETY: three valid out pointers.
    unsafe { sys::ucp_get_version(&mut major, &mut minor, &mut release) };
    Version {
        major,
        minor,
        release,
    }
}

/// The loaded library's version string (`ucp_get_version_string`).
pub fn loaded_string() -> String {
    // SAFETY: returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(sys::ucp_get_version_string()) }
        .to_string_lossy()
        .into_owned()
}

/// The loaded UCX is older than the one built against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionError {
    /// What was loaded.
    pub loaded: Version,
    /// What the program was built against (the least it accepts).
    pub built: Version,
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "UCX {} is loaded, but this program was built against UCX {}.{} and needs at \
             least that: an older libucp.so.0 comes first on the library path (use the \
             pinned UCX: its lib directory in the rpath or LD_LIBRARY_PATH)",
            self.loaded, self.built.major, self.built.minor
        )
    }
}

impl std::error::Error for VersionError {}

/// Whether `loaded` satisfies `built` (same major, minor at least as high).
pub fn compatible(loaded: Version, built: Version) -> Result<(), VersionError> {
    if loaded.major == built.major && loaded.minor >= built.minor {
        Ok(())
    } else {
        Err(VersionError { loaded, built })
    }
}

/// Checks the loaded UCX against [`BUILD_VERSION`] (once per process; later calls return
/// the first answer). Call it before the first UCX context is created.
pub fn check_version() -> Result<(), VersionError> {
    static RESULT: OnceLock<Result<(), VersionError>> = OnceLock::new();
    *RESULT.get_or_init(|| compatible(loaded(), BUILD_VERSION))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, release: u32) -> Version {
        Version {
            major,
            minor,
            release,
        }
    }

    #[test]
    fn older_or_other_major_is_refused_naming_both_versions() {
        let built = v(1, 22, 0);
        assert_eq!(compatible(v(1, 22, 0), built), Ok(()));
        assert_eq!(compatible(v(1, 23, 1), built), Ok(()));
        let e = compatible(v(1, 13, 1), built).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("UCX 1.13.1 is loaded"), "{text}");
        assert!(text.contains("built against UCX 1.22"), "{text}");
        assert!(compatible(v(2, 0, 0), built).is_err());
    }

    #[test]
    fn the_loaded_ucx_is_the_built_one() {
        assert!(BUILD_VERSION >= MIN_VERSION);
        assert_eq!(check_version(), Ok(()), "loaded {}", loaded());
        assert!(loaded_string().starts_with(&format!("{}.{}", loaded().major, loaded().minor)));
    }
}
