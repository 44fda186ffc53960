//! DOCA Flow, emulated: packet parser, classification tables, RSS and the C API.

pub mod classify;
pub mod parser;
pub mod rss;
