//! Which UCX this crate was built against, which one is loaded, and the check that they
//! match well enough.
//!
//! A program can still run with another `libucp.so.0` than the one it was built against
//! (the soname is the same for every 1.x, Debian's 1.13 included): one the process had
//! already, or one `LD_LIBRARY_PATH` names (see [`library`](crate::library)).
//! [`check_version`] turns an older one into one clear error at start, naming both versions
//! and the file, instead of obscure failures later.

use crate::sys;
use crate::sys::{Library, LoadError};
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

/// The version of the UCX library this process runs with (`ucp_get_version`); `None` when
/// no UCX could be loaded (see [`library`](crate::library)).
pub fn loaded() -> Option<Version> {
    crate::sys::library().ok()?;
    let (mut major, mut minor, mut release) = (0, 0, 0);
    // SAFETY: three valid out pointers; the library is loaded (checked above).
    unsafe { sys::ucp_get_version(&mut major, &mut minor, &mut release) };
    Some(Version {
        major,
        minor,
        release,
    })
}

/// The loaded library's version string (`ucp_get_version_string`); `None` when no UCX
/// could be loaded.
pub fn loaded_string() -> Option<String> {
    crate::sys::library().ok()?;
    // SAFETY: returns a static NUL-terminated string; the library is loaded.
    Some(
        unsafe { CStr::from_ptr(sys::ucp_get_version_string()) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The UCX this process runs with cannot serve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionError {
    /// No UCX library could be loaded at all.
    NotLoaded(LoadError),
    /// The loaded UCX is older than the one built against.
    TooOld {
        /// What was loaded.
        loaded: Version,
        /// What the program was built against (the least it accepts).
        built: Version,
        /// Which file, and how it was found (when known).
        library: Option<Library>,
    },
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionError::NotLoaded(e) => e.fmt(f),
            VersionError::TooOld {
                loaded,
                built,
                library,
            } => {
                write!(f, "UCX {loaded} is loaded")?;
                if let Some(l) = library {
                    write!(f, " from {} ({})", l.path.display(), l.found)?;
                }
                write!(
                    f,
                    ", but this program was built against UCX {}.{} and needs at least that \
                     (UCX found at build time: {}; put a UCX >= {}.{} first: its lib directory \
                     in LD_LIBRARY_PATH, or unset LD_LIBRARY_PATH to use the one built against)",
                    built.major,
                    built.minor,
                    crate::sys::build_libdir().display(),
                    built.major,
                    built.minor
                )
            }
        }
    }
}

impl std::error::Error for VersionError {}

/// Whether `loaded` satisfies `built` (same major, minor at least as high).
pub fn compatible(loaded: Version, built: Version) -> Result<(), VersionError> {
    if loaded.major == built.major && loaded.minor >= built.minor {
        Ok(())
    } else {
        Err(VersionError::TooOld {
            loaded,
            built,
            library: None,
        })
    }
}

/// Checks the UCX this process runs with against [`BUILD_VERSION`] (once per process;
/// later calls return the first answer): loads it if nothing has yet (see
/// [`library`](crate::library)). Call it before the first UCX context is created; the
/// error names both versions and the file loaded.
pub fn check_version() -> Result<(), VersionError> {
    static RESULT: OnceLock<Result<(), VersionError>> = OnceLock::new();
    RESULT
        .get_or_init(|| {
            let lib = crate::sys::library().map_err(|e| VersionError::NotLoaded(e.clone()))?;
            let v = loaded().expect("loaded: the library is");
            compatible(v, BUILD_VERSION).map_err(|e| match e {
                VersionError::TooOld { loaded, built, .. } => VersionError::TooOld {
                    loaded,
                    built,
                    library: Some(lib.clone()),
                },
                other => other,
            })
        })
        .clone()
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
        let with_file = VersionError::TooOld {
            loaded: v(1, 13, 1),
            built,
            library: Some(Library {
                path: "/usr/lib/x86_64-linux-gnu/libucp.so.0".into(),
                found: crate::sys::Found::LdLibraryPath,
            }),
        }
        .to_string();
        assert!(
            with_file.contains(
                "from /usr/lib/x86_64-linux-gnu/libucp.so.0 (found through LD_LIBRARY_PATH)"
            ),
            "{with_file}"
        );
        assert!(compatible(v(2, 0, 0), built).is_err());
    }

    #[test]
    fn the_loaded_ucx_is_the_built_one() {
        assert!(BUILD_VERSION >= MIN_VERSION);
        let v = loaded().expect("UCX loads");
        assert_eq!(check_version(), Ok(()), "loaded {v}");
        assert!(loaded_string()
            .expect("UCX loads")
            .starts_with(&format!("{}.{}", v.major, v.minor)));
    }
}
