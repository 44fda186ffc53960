//! The safe layer: owned handles over the UCP calls the workspace needs, each failure an
//! [`Error`](crate::result::Error) naming the call. [`Context`], [`Worker`], [`Listener`],
//! [`Endpoint`] with byte streams, [`Request`], [`MemMap`], and the version check
//! ([`check_version`]). The crate root re-exports all of it.

mod context;
mod endpoint;
mod listener;
mod mem;
mod request;
mod sockaddr;
mod version;
mod worker;

pub use context::{Context, ContextBuilder, Features};
pub use endpoint::{CloseMode, Endpoint, PeerFailure, PendingSend, Sent, StreamData, Transport};
pub use listener::{ConnRequest, Listener};
pub use mem::MemMap;
pub use request::Request;
pub use version::{
    check_version, compatible, loaded as loaded_version, loaded_string as loaded_version_string,
    Version, VersionError, BUILD_VERSION, MIN_VERSION,
};
pub use worker::{ThreadMode, Worker};
