//! DOCA Flow, emulated: packet parser, classification tables, RSS and the C API.

pub mod c_api;
pub mod classify;
pub mod parser;
pub mod rss;
pub mod state;
pub mod sys;
pub mod translate;
