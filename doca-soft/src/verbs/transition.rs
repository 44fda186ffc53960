//! The QP state machine of `doca_verbs_qp_modify`: which transitions exist, and for each the
//! attributes that must be in the mask and those that may be. This is the RC table of the
//! InfiniBand specification (what rdma-core enforces), with DOCA's split of the access
//! flags into three bits and the two read-atomic depths optional, as DOCA 3.3's own
//! samples use them (reference facts §1.3: the main QP of a group moves INIT -> RTR
//! without MAX_DEST_RD_ATOMIC and RTR -> RTS without MAX_QP_RD_ATOMIC).
//!
//! | from -> to | required | optional |
//! |---|---|---|
//! | RST -> INIT | PKEY_INDEX, PORT_NUM | the rights |
//! | INIT -> INIT | | PKEY_INDEX, PORT_NUM, the rights |
//! | INIT -> RTR | AH_ATTR, PATH_MTU, DEST_QP_NUM, RQ_PSN, MIN_RNR_TIMER | MAX_DEST_RD_ATOMIC, PKEY_INDEX, the rights |
//! | RTR -> RTS | SQ_PSN, ACK_TIMEOUT, RETRY_CNT, RNR_RETRY | MAX_QP_RD_ATOMIC, MIN_RNR_TIMER, the rights |
//! | RTS -> RTS | | MIN_RNR_TIMER, the rights |
//! | any -> RST, any -> ERR | | |
//!
//! "The rights" are ALLOW_REMOTE_WRITE, ALLOW_REMOTE_READ and ATOMIC_MODE. NEXT_STATE names
//! the target (without it the QP stays in its state); CURRENT_STATE may be given with any
//! transition and must then equal the QP's state. A bit outside these sets, or a required
//! bit missing, is `INVALID_VALUE`; CC_GROUP is `NOT_SUPPORTED` (no congestion-control
//! groups here).

use super::attr::{mask, QpState};
use crate::error::{DocaError, DocaResult};

/// (required, optional) mask bits of `from -> to`; `None` when there is no such transition.
pub(crate) fn rule(from: QpState, to: QpState) -> Option<(u32, u32)> {
    use QpState::*;
    Some(match (from, to) {
        (_, Rst) | (_, Err) => (0, 0),
        (Rst, Init) => (mask::PKEY_INDEX | mask::PORT_NUM, mask::ACCESS),
        (Init, Init) => (0, mask::PKEY_INDEX | mask::PORT_NUM | mask::ACCESS),
        (Init, Rtr) => (
            mask::AH_ATTR | mask::PATH_MTU | mask::DEST_QP_NUM | mask::RQ_PSN | mask::MIN_RNR_TIMER,
            mask::MAX_DEST_RD_ATOMIC | mask::PKEY_INDEX | mask::ACCESS,
        ),
        (Rtr, Rts) => (
            mask::SQ_PSN | mask::ACK_TIMEOUT | mask::RETRY_CNT | mask::RNR_RETRY,
            mask::MAX_QP_RD_ATOMIC | mask::MIN_RNR_TIMER | mask::ACCESS,
        ),
        (Rts, Rts) => (0, mask::MIN_RNR_TIMER | mask::ACCESS),
        _ => return None,
    })
}

/// Checks a modify of a QP in `current` with `attr_mask` whose NEXT_STATE (if in the mask)
/// is `next` and CURRENT_STATE (if in the mask) is `claimed`; returns the target state.
pub(crate) fn validate(
    current: QpState,
    attr_mask: i32,
    next: QpState,
    claimed: QpState,
) -> DocaResult<QpState> {
    let m = attr_mask as u32;
    if attr_mask < 0 || m & !mask::ALL != 0 {
        sdk_err!(
            "verbs",
            "QP modify: unknown attribute mask bits {:#x}",
            m & !mask::ALL
        );
        return Err(DocaError::INVALID_VALUE);
    }
    if m & mask::CC_GROUP != 0 {
        sdk_err!(
            "verbs",
            "QP modify: congestion-control groups are not supported by doca-soft"
        );
        return Err(DocaError::NOT_SUPPORTED);
    }
    if m & mask::CURRENT_STATE != 0 && claimed != current {
        sdk_err!(
            "verbs",
            "QP modify: current state given as {claimed:?}, the QP is in {current:?}"
        );
        return Err(DocaError::INVALID_VALUE);
    }
    let to = if m & mask::NEXT_STATE != 0 {
        next
    } else {
        current
    };
    let Some((required, optional)) = rule(current, to) else {
        sdk_err!("verbs", "QP modify: no transition {current:?} -> {to:?}");
        return Err(DocaError::INVALID_VALUE);
    };
    let given = m & !(mask::NEXT_STATE | mask::CURRENT_STATE);
    if given & required != required {
        sdk_err!(
            "verbs",
            "QP modify {current:?} -> {to:?}: attributes missing from the mask: {:#x}",
            required & !given
        );
        return Err(DocaError::INVALID_VALUE);
    }
    if given & !(required | optional) != 0 {
        sdk_err!(
            "verbs",
            "QP modify {current:?} -> {to:?}: attributes not allowed in this transition: {:#x}",
            given & !(required | optional)
        );
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use QpState::Err as Error;
    use QpState::{Init, Rst, Rtr, Rts};

    // The masks DOCA 3.3's verbs samples use (reference facts §1.3).
    const INIT: u32 = mask::NEXT_STATE
        | mask::ALLOW_REMOTE_WRITE
        | mask::ALLOW_REMOTE_READ
        | mask::ATOMIC_MODE
        | mask::PKEY_INDEX
        | mask::PORT_NUM;
    const RTR: u32 = mask::NEXT_STATE
        | mask::RQ_PSN
        | mask::DEST_QP_NUM
        | mask::PATH_MTU
        | mask::AH_ATTR
        | mask::MIN_RNR_TIMER;
    const RTS: u32 =
        mask::NEXT_STATE | mask::SQ_PSN | mask::ACK_TIMEOUT | mask::RETRY_CNT | mask::RNR_RETRY;

    #[test]
    fn the_samples_masks_walk_rst_to_rts() {
        assert_eq!(validate(Rst, INIT as i32, Init, Rst), Ok(Init));
        assert_eq!(validate(Init, RTR as i32, Rtr, Rst), Ok(Rtr));
        assert_eq!(validate(Rtr, RTS as i32, Rts, Rst), Ok(Rts));
        // The companion QP's masks add the read-atomic depths.
        let rtr = RTR | mask::MAX_DEST_RD_ATOMIC;
        let rts = RTS | mask::MAX_QP_RD_ATOMIC;
        assert_eq!(validate(Init, rtr as i32, Rtr, Rst), Ok(Rtr));
        assert_eq!(validate(Rtr, rts as i32, Rts, Rst), Ok(Rts));
    }

    #[test]
    fn skipped_states_missing_and_foreign_bits_are_invalid() {
        let e = Err(DocaError::INVALID_VALUE);
        assert_eq!(validate(Rst, RTR as i32, Rtr, Rst), e, "RST -> RTR");
        assert_eq!(validate(Rst, RTS as i32, Rts, Rst), e, "RST -> RTS");
        assert_eq!(validate(Init, RTS as i32, Rts, Rst), e, "INIT -> RTS");
        assert_eq!(validate(Rts, RTR as i32, Rtr, Rst), e, "RTS -> RTR");
        assert_eq!(validate(Error, INIT as i32, Init, Rst), e, "ERR -> INIT");
        let no_port = INIT & !mask::PORT_NUM;
        assert_eq!(validate(Rst, no_port as i32, Init, Rst), e);
        let no_ah = RTR & !mask::AH_ATTR;
        assert_eq!(validate(Init, no_ah as i32, Rtr, Rst), e);
        let extra = INIT | mask::SQ_PSN;
        assert_eq!(validate(Rst, extra as i32, Init, Rst), e);
        assert_eq!(validate(Rst, (INIT | 1 << 19) as i32, Init, Rst), e);
        assert_eq!(validate(Rst, -1, Init, Rst), e);
        let cc = (INIT | mask::CC_GROUP) as i32;
        assert_eq!(validate(Rst, cc, Init, Rst), Err(DocaError::NOT_SUPPORTED));
    }

    #[test]
    fn current_state_must_match_and_reset_error_are_always_reachable() {
        let m = (RTS | mask::CURRENT_STATE) as i32;
        assert_eq!(validate(Rtr, m, Rts, Rtr), Ok(Rts));
        assert_eq!(validate(Rtr, m, Rts, Init), Err(DocaError::INVALID_VALUE));
        for s in [Rst, Init, Rtr, Rts, Error] {
            assert_eq!(validate(s, mask::NEXT_STATE as i32, Error, Rst), Ok(Error));
            assert_eq!(validate(s, mask::NEXT_STATE as i32, Rst, Rst), Ok(Rst));
        }
        // No NEXT_STATE: attributes changed in place (RTS -> RTS).
        assert_eq!(validate(Rts, mask::MIN_RNR_TIMER as i32, Rst, Rst), Ok(Rts));
        assert_eq!(
            validate(Rst, mask::MIN_RNR_TIMER as i32, Rst, Rst),
            Err(DocaError::INVALID_VALUE)
        );
    }
}
