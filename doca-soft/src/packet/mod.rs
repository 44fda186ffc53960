//! Frames as the soft NIC sees them, below the ports and DOCA Flow: the parser (total: any
//! byte string parses or is malformed), the classification tables that Flow pipes are
//! compiled into, the RSS hash, and the checksums a NIC computes on send. Nothing here
//! knows about ports, queues or the C structs.

pub(crate) mod actions;
pub(crate) mod checksum;
pub(crate) mod classify;
pub(crate) mod key;
pub(crate) mod parser;
pub mod rss;
