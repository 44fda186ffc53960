//! DOCA Flow, emulated: the objects behind the C handles and their registry (`state`,
//! `cfg`, `port`, `pipe`, `entry`, `resources`), and the compilers from the C structs to the
//! classifier's tables: matches and templates (`fields`, `matching`), actions (`actions`),
//! forwards and the pipe graph (`fwd`), monitors (`monitor`). `layout` checks that the
//! offsets used agree with the headers.

pub(crate) mod actions;
pub(crate) mod cfg;
pub(crate) mod entry;
pub(crate) mod fields;
pub(crate) mod fwd;
mod layout;
pub(crate) mod matching;
pub(crate) mod monitor;
pub(crate) mod pipe;
pub(crate) mod port;
pub(crate) mod resources;
pub(crate) mod state;
pub(crate) mod sys;
