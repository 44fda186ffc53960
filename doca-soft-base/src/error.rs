//! `doca_error_t`: the numeric codes, their names and descriptions, and the Rust error type
//! used inside the runtime.

/// A DOCA error code (`doca_error_t`); `0` is success and never stored in this type.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DocaError(pub u32);

/// Result of a runtime operation.
pub type DocaResult<T> = Result<T, DocaError>;

/// `DOCA_SUCCESS` as the raw C value.
pub const SUCCESS: u32 = 0;

macro_rules! codes {
    ($($name:ident = $val:literal, $descr:literal;)*) => {
        impl DocaError {
            $(#[doc = $descr] pub const $name: DocaError = DocaError($val);)*
        }
        /// Name (`DOCA_ERROR_...`, or `DOCA_SUCCESS`) of a raw code; `None` when unknown.
        pub fn name_of(code: u32) -> Option<&'static str> {
            match code {
                0 => Some("DOCA_SUCCESS"),
                $($val => Some(concat!("DOCA_ERROR_", stringify!($name))),)*
                _ => None,
            }
        }
        /// Description of a raw code; `None` when unknown.
        pub fn descr_of(code: u32) -> Option<&'static str> {
            match code {
                0 => Some("Success"),
                $($val => Some($descr),)*
                _ => None,
            }
        }
        /// NUL-terminated name and description, for the C API (static storage).
        pub fn c_strings(code: u32) -> (&'static [u8], &'static [u8]) {
            match code {
                0 => (b"DOCA_SUCCESS\0", b"Success\0"),
                $($val => (concat!("DOCA_ERROR_", stringify!($name), "\0").as_bytes(),
                           concat!($descr, "\0").as_bytes()),)*
                _ => (b"DOCA_ERROR_UNRECOGNIZED\0", b"Unrecognized error code\0"),
            }
        }
    };
}

codes! {
    UNKNOWN = 1, "Unknown error";
    NOT_PERMITTED = 2, "Operation not permitted";
    IN_USE = 3, "Resource is in use";
    NOT_SUPPORTED = 4, "Operation not supported";
    AGAIN = 5, "Resource temporarily unavailable, try again";
    INVALID_VALUE = 6, "Invalid input value";
    NO_MEMORY = 7, "Out of memory";
    INITIALIZATION = 8, "Initialization failed";
    TIME_OUT = 9, "Operation timed out";
    SHUTDOWN = 10, "Shut down in progress";
    CONNECTION_RESET = 11, "Connection reset by peer";
    CONNECTION_ABORTED = 12, "Connection aborted";
    CONNECTION_INPROGRESS = 13, "Connection in progress";
    NOT_CONNECTED = 14, "Not connected";
    NO_LOCK = 15, "Could not acquire a lock";
    NOT_FOUND = 16, "Resource not found";
    IO_FAILED = 17, "Input/output operation failed";
    BAD_STATE = 18, "Object is in a state that does not allow this operation";
    UNSUPPORTED_VERSION = 19, "Version not supported";
    OPERATING_SYSTEM = 20, "Operating system call failed";
    DRIVER = 21, "Driver call failed";
    UNEXPECTED = 22, "Unexpected result";
    ALREADY_EXIST = 23, "Resource already exists";
    FULL = 24, "No room left";
    EMPTY = 25, "Nothing available";
    IN_PROGRESS = 26, "Operation is in progress";
    TOO_BIG = 27, "Value is too big";
    AUTHENTICATION = 28, "Authentication failed";
    BAD_CONFIG = 29, "Configuration is not valid";
    SKIPPED = 30, "Operation was skipped";
    DEVICE_FATAL_ERROR = 31, "Device reported a fatal error";
}

impl DocaError {
    /// Raw code for the C API.
    pub fn raw(self) -> u32 {
        self.0
    }
}

impl std::fmt::Debug for DocaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match name_of(self.0) {
            Some(n) => f.write_str(n),
            None => write!(f, "DOCA_ERROR({})", self.0),
        }
    }
}

impl std::fmt::Display for DocaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}: {}",
            self,
            descr_of(self.0).unwrap_or("unrecognized error code")
        )
    }
}

impl std::error::Error for DocaError {}

/// Converts a runtime result into the C return value.
pub fn to_c(r: DocaResult<()>) -> u32 {
    match r {
        Ok(()) => SUCCESS,
        Err(e) => e.0,
    }
}
