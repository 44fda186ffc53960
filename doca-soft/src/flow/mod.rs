//! DOCA Flow, emulated: the objects behind the C handles (`handles`, with the shared
//! resource pools in `pools`), their registry (`state`), the operations on them (`cfg`,
//! `port`, `pipe`, `entry`, `resources`), and the compilers from the C structs to the
//! classifier's tables: matches and templates (`fields`, `matching`), actions (`actions`),
//! forwards and the pipe graph (`fwd`, `rss`), monitors (`monitor`). `layout` checks that
//! the offsets used agree with the headers.
//!
//! Imports go one way: the operations use the registry, the registry holds the handles,
//! and the handles are plain data over the compilers' output; the registry never names an
//! operation's file.

pub(crate) mod actions;
pub(crate) mod cfg;
pub(crate) mod entry;
pub(crate) mod fields;
pub(crate) mod fwd;
pub(crate) mod handles;
mod layout;
pub(crate) mod matching;
pub(crate) mod monitor;
pub(crate) mod pipe;
pub(crate) mod pools;
pub(crate) mod port;
pub(crate) mod resources;
pub(crate) mod rss;
pub(crate) mod state;
pub(crate) mod sys;
