//! Which backend the features select.

/// The two backends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Backend {
    /// doca-soft, the software runtime.
    Soft,
    /// An installed NVIDIA DOCA SDK.
    Sdk,
}

impl Backend {
    /// Lower-case name, as used in cfgs and metadata.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::Sdk => "sdk",
        }
    }
}

/// The backend the features select; `Err` when none or both are enabled.
pub fn selected() -> Result<Backend, ()> {
    let soft = std::env::var_os("CARGO_FEATURE_SOFT").is_some();
    let sdk = std::env::var_os("CARGO_FEATURE_SDK").is_some();
    match (soft, sdk) {
        (true, false) => Ok(Backend::Soft),
        (false, true) => Ok(Backend::Sdk),
        _ => Err(()),
    }
}
