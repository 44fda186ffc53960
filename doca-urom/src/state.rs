//! The state of a UROM context (service, worker, domain) as their start and stop loops read
//! it.

use doca_common::context::{Ctx, CtxState};

/// The state of `ctx`, IDLE when DOCA cannot report it: the loops then stop waiting, as for
/// a context that is stopped.
pub(crate) fn of(ctx: Ctx) -> CtxState {
    ctx.state().unwrap_or(CtxState::Idle)
}
