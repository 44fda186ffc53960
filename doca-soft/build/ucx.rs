//! UCX discovery and bindings (owned by the UROM implementation).

pub fn build_ucx() {}
