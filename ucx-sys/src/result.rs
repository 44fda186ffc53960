//! The result layer: UCX status codes ([`Status`]) and the error every safe call returns
//! ([`Error`]: the call's name and its status), the one place a `ucs_status_t` becomes a
//! Rust result.

use crate::sys;
use std::ffi::{c_void, CStr};
use std::fmt;

/// A `ucs_status_t`, as a transparent newtype with the codes as constants.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Status(pub sys::ucs_status_t);

macro_rules! statuses {
    ($($name:ident = $c:ident,)*) => {
        impl Status {
            $(
                #[doc = concat!("`sys::", stringify!($c), "`.")]
                pub const $name: Status = Status(sys::$c);
            )*

            /// The C name of a known code (`"UCS_ERR_BUSY"`), `None` for others.
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $(Status::$name => Some(&stringify!($c)["ucs_status_t_".len()..]),)*
                    _ => None,
                }
            }
        }
    };
}

statuses! {
    OK = ucs_status_t_UCS_OK,
    INPROGRESS = ucs_status_t_UCS_INPROGRESS,
    ERR_NO_MESSAGE = ucs_status_t_UCS_ERR_NO_MESSAGE,
    ERR_NO_RESOURCE = ucs_status_t_UCS_ERR_NO_RESOURCE,
    ERR_IO_ERROR = ucs_status_t_UCS_ERR_IO_ERROR,
    ERR_NO_MEMORY = ucs_status_t_UCS_ERR_NO_MEMORY,
    ERR_INVALID_PARAM = ucs_status_t_UCS_ERR_INVALID_PARAM,
    ERR_UNREACHABLE = ucs_status_t_UCS_ERR_UNREACHABLE,
    ERR_INVALID_ADDR = ucs_status_t_UCS_ERR_INVALID_ADDR,
    ERR_NOT_IMPLEMENTED = ucs_status_t_UCS_ERR_NOT_IMPLEMENTED,
    ERR_MESSAGE_TRUNCATED = ucs_status_t_UCS_ERR_MESSAGE_TRUNCATED,
    ERR_NO_PROGRESS = ucs_status_t_UCS_ERR_NO_PROGRESS,
    ERR_BUFFER_TOO_SMALL = ucs_status_t_UCS_ERR_BUFFER_TOO_SMALL,
    ERR_NO_ELEM = ucs_status_t_UCS_ERR_NO_ELEM,
    ERR_NO_DEVICE = ucs_status_t_UCS_ERR_NO_DEVICE,
    ERR_BUSY = ucs_status_t_UCS_ERR_BUSY,
    ERR_CANCELED = ucs_status_t_UCS_ERR_CANCELED,
    ERR_ALREADY_EXISTS = ucs_status_t_UCS_ERR_ALREADY_EXISTS,
    ERR_OUT_OF_RANGE = ucs_status_t_UCS_ERR_OUT_OF_RANGE,
    ERR_TIMED_OUT = ucs_status_t_UCS_ERR_TIMED_OUT,
    ERR_UNSUPPORTED = ucs_status_t_UCS_ERR_UNSUPPORTED,
    ERR_REJECTED = ucs_status_t_UCS_ERR_REJECTED,
    ERR_NOT_CONNECTED = ucs_status_t_UCS_ERR_NOT_CONNECTED,
    ERR_CONNECTION_RESET = ucs_status_t_UCS_ERR_CONNECTION_RESET,
    ERR_ENDPOINT_TIMEOUT = ucs_status_t_UCS_ERR_ENDPOINT_TIMEOUT,
}

impl Status {
    /// UCX's description of the code (`ucs_status_string`).
    pub fn description(self) -> &'static str {
        if crate::sys::library().is_err() {
            return self.name().unwrap_or("unknown UCX status (no UCX loaded)");
        }
        // SAFETY: ucs_status_string returns a static NUL-terminated string for any value;
        // the library is loaded (checked above).
        unsafe { CStr::from_ptr(sys::ucs_status_string(self.0)) }
            .to_str()
            .unwrap_or("(not UTF-8)")
    }

    /// Whether this is an error (neither OK nor INPROGRESS).
    pub fn is_err(self) -> bool {
        self.0 < 0
    }

    /// `Ok(())` for OK, else the error naming `op`.
    pub fn check(self, op: &'static str) -> Result<()> {
        if self == Status::OK {
            Ok(())
        } else {
            Err(Error { op, status: self })
        }
    }

    /// The status carried by a `ucs_status_ptr_t` (the `UCS_PTR_STATUS` rule: an address
    /// at or above `UCS_ERR_LAST` seen as unsigned is an error code; NULL is OK; anything
    /// else is a request in progress).
    pub fn of_ptr(p: *mut c_void) -> Status {
        if p.is_null() {
            Status::OK
        } else if ptr_is_err(p) {
            Status(p as isize as sys::ucs_status_t)
        } else {
            Status::INPROGRESS
        }
    }
}

/// `UCS_PTR_IS_ERR`: whether a `ucs_status_ptr_t` holds an error code.
pub fn ptr_is_err(p: *mut c_void) -> bool {
    (p as usize) >= (sys::ucs_status_t_UCS_ERR_LAST as isize as usize)
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Status({})", self.0),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{} ({n})", self.description()),
            None => write!(f, "{} (status {})", self.description(), self.0),
        }
    }
}

/// A failed UCX call: which one, and UCX's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    /// The operation that failed (`"ucp_worker_create"`, ...).
    pub op: &'static str,
    /// What UCX returned.
    pub status: Status,
}

impl Error {
    /// An error of `op` with `status`.
    pub fn new(op: &'static str, status: Status) -> Error {
        Error { op, status }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.op, self.status)
    }
}

impl std::error::Error for Error {}

/// Result of the safe layer.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_have_names_and_descriptions() {
        assert_eq!(Status::ERR_BUSY.name(), Some("UCS_ERR_BUSY"));
        assert_eq!(Status(-99).name(), None);
        assert!(!Status::ERR_NO_MEMORY.description().is_empty());
        assert!(Status::ERR_CANCELED.is_err());
        assert!(!Status::INPROGRESS.is_err());
        let e = Status::ERR_UNREACHABLE.check("ucp_ep_create").unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("ucp_ep_create failed: "), "{text}");
        assert!(text.contains("UCS_ERR_UNREACHABLE"), "{text}");
        assert_eq!(Status::OK.check("x"), Ok(()));
    }

    #[test]
    fn status_pointers_decode() {
        assert_eq!(Status::of_ptr(std::ptr::null_mut()), Status::OK);
        let err = Status::ERR_CANCELED.0 as isize as *mut c_void;
        assert!(ptr_is_err(err));
        assert_eq!(Status::of_ptr(err), Status::ERR_CANCELED);
        let mut x = 0u8;
        let req = &mut x as *mut u8 as *mut c_void;
        assert!(!ptr_is_err(req));
        assert_eq!(Status::of_ptr(req), Status::INPROGRESS);
    }
}
