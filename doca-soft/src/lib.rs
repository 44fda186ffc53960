//! Software DOCA runtime (work in progress).
