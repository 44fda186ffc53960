//! Which backend this build binds, from the features and `DOCA_RS_BACKEND`.
//!
//! Features are additive, as Cargo expects of them (openssl-sys's `vendored` is the model):
//!
//! 1. `DOCA_RS_BACKEND=soft|sdk` in the environment forces that backend;
//! 2. else the feature `sdk` selects the SDK, whether `soft` is on too or not (another crate
//!    of the build turning on the default `soft` cannot undo a user's choice of `sdk`);
//! 3. else the software runtime, also when neither feature is on.
//!
//! The runtime's symbols come from the `doca-soft` crate, which only the feature `soft`
//! brings in: a soft build without that feature binds the runtime's headers and leaves the
//! symbols to the final link (see [`Selection::soft_runtime_linked`]).

/// The environment variable that forces a backend.
pub const ENV: &str = "DOCA_RS_BACKEND";

/// The two backends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Backend {
    /// doca-soft, the software runtime.
    Soft,
    /// An installed NVIDIA DOCA SDK.
    Sdk,
}

impl Backend {
    /// Lower-case name, as used in the cfg, the metadata and `DOCA_RS_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::Sdk => "sdk",
        }
    }

    fn parse(s: &str) -> Option<Backend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "soft" => Some(Backend::Soft),
            "sdk" => Some(Backend::Sdk),
            _ => None,
        }
    }
}

/// The backend and how it was chosen.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Selection {
    /// The backend bound.
    pub backend: Backend,
    /// Why: "DOCA_RS_BACKEND", "feature `sdk`", "feature `soft`" or "no backend feature".
    pub reason: &'static str,
    /// Whether the `doca-soft` crate is a dependency (feature `soft`), so that its symbols
    /// are linked through this crate when the backend is soft.
    pub soft_runtime_linked: bool,
}

/// Reads the features and the environment.
pub fn select() -> Selection {
    println!("cargo:rerun-if-env-changed={ENV}");
    let soft = std::env::var_os("CARGO_FEATURE_SOFT").is_some();
    let sdk = std::env::var_os("CARGO_FEATURE_SDK").is_some();
    let forced = match std::env::var(ENV) {
        Ok(v) if v.trim().is_empty() => None,
        Ok(v) => Some(Backend::parse(&v).unwrap_or_else(|| {
            panic!("doca-sys: {ENV}={v:?} names no backend; use `soft` or `sdk` (or unset it)")
        })),
        Err(_) => None,
    };
    let (backend, reason) = match forced {
        Some(b) => (b, ENV),
        None if sdk => (Backend::Sdk, "feature `sdk`"),
        None if soft => (Backend::Soft, "feature `soft`"),
        None => (Backend::Soft, "no backend feature"),
    };
    Selection {
        backend,
        reason,
        soft_runtime_linked: soft,
    }
}
