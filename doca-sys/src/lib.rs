//! Raw bindings (work in progress).
