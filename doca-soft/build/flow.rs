//! Flow bindings (owned by the Flow implementation).

pub fn generate() {}
