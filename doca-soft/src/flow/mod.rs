//! DOCA Flow, emulated: the Flow objects behind the C handles and their registry, and the
//! translation of the C match and forward structs to the classifier's tables.

pub(crate) mod state;
pub(crate) mod sys;
pub(crate) mod translate;
