//! The attribute objects of DOCA Verbs (`doca_verbs_cq_attr`, `doca_verbs_qp_init_attr`,
//! `doca_verbs_qp_attr`, `doca_verbs_ah_attr`): plain values the program fills with setters
//! before a create or modify call. Each setter checks its own value (range of an enum, a
//! 24-bit PSN, a 3-bit retry count); what depends on the object (port number, PD, sizes
//! against the CQs) is checked by the create or modify call that reads the attributes.

use crate::error::{DocaError, DocaResult};

/// `enum doca_verbs_qp_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum QpState {
    /// Reset: created, nothing configured.
    Rst = 0,
    /// Initialised: port and rights set.
    Init = 1,
    /// Ready to receive: the peer is known.
    Rtr = 2,
    /// Ready to send.
    Rts = 3,
    /// Error: work completes with flush errors.
    Err = 4,
}

impl QpState {
    /// The C value as a state; `INVALID_VALUE` outside the enum.
    pub(crate) fn from_c(v: u32) -> DocaResult<QpState> {
        Ok(match v {
            0 => QpState::Rst,
            1 => QpState::Init,
            2 => QpState::Rtr,
            3 => QpState::Rts,
            4 => QpState::Err,
            _ => return Err(DocaError::INVALID_VALUE),
        })
    }
}

/// Bits of the `attr_mask` of `doca_verbs_qp_modify` (`DOCA_VERBS_QP_ATTR_*`).
pub(crate) mod mask {
    pub(crate) const ALLOW_REMOTE_WRITE: u32 = 1 << 0;
    pub(crate) const ALLOW_REMOTE_READ: u32 = 1 << 1;
    pub(crate) const PKEY_INDEX: u32 = 1 << 2;
    pub(crate) const MIN_RNR_TIMER: u32 = 1 << 3;
    pub(crate) const PORT_NUM: u32 = 1 << 4;
    pub(crate) const NEXT_STATE: u32 = 1 << 5;
    pub(crate) const CURRENT_STATE: u32 = 1 << 6;
    pub(crate) const PATH_MTU: u32 = 1 << 7;
    pub(crate) const RQ_PSN: u32 = 1 << 8;
    pub(crate) const SQ_PSN: u32 = 1 << 9;
    pub(crate) const DEST_QP_NUM: u32 = 1 << 10;
    pub(crate) const ACK_TIMEOUT: u32 = 1 << 11;
    pub(crate) const RETRY_CNT: u32 = 1 << 12;
    pub(crate) const RNR_RETRY: u32 = 1 << 13;
    pub(crate) const AH_ATTR: u32 = 1 << 14;
    pub(crate) const ATOMIC_MODE: u32 = 1 << 15;
    pub(crate) const MAX_QP_RD_ATOMIC: u32 = 1 << 16;
    pub(crate) const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    pub(crate) const CC_GROUP: u32 = 1 << 18;
    /// Every bit the header defines.
    pub(crate) const ALL: u32 = (1 << 19) - 1;
    /// The three responder rights.
    pub(crate) const ACCESS: u32 = ALLOW_REMOTE_WRITE | ALLOW_REMOTE_READ | ATOMIC_MODE;
}

/// Largest packet sequence number, QP number and CQ number (24 bits).
pub(crate) const MAX_24BIT: u32 = 0xff_ffff;
/// Largest `enum doca_mtu_size` a QP path takes (4 KiB; RAW_ETHERNET is for Ethernet queues).
const MAX_PATH_MTU: u32 = 4;
/// Largest `enum doca_verbs_qp_atomic_mode` (UP_TO_256BYTES).
const MAX_ATOMIC_MODE: u32 = 8;
/// Largest `enum doca_verbs_addr_type` (IB_NO_GRH).
const MAX_ADDR_TYPE: u32 = 3;

fn check(ok: bool) -> DocaResult<()> {
    if ok {
        Ok(())
    } else {
        Err(DocaError::INVALID_VALUE)
    }
}

/// `struct doca_verbs_ah_attr`: how to reach the peer. The GID is what matters here (it
/// names the peer's soft NIC); the rest is kept for `doca_verbs_qp_query`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AhAttr {
    pub(crate) gid: [u8; 16],
    pub(crate) gid_set: bool,
    pub(crate) addr_type: u32,
    pub(crate) dlid: u32,
    pub(crate) sl: u8,
    pub(crate) sgid_index: u8,
    pub(crate) static_rate: u8,
    pub(crate) hop_limit: u8,
    pub(crate) traffic_class: u8,
}

impl AhAttr {
    /// `doca_verbs_ah_attr_set_gid`.
    pub(crate) fn set_gid(&mut self, gid: [u8; 16]) {
        self.gid = gid;
        self.gid_set = true;
    }

    /// `doca_verbs_ah_attr_set_addr_type` (IPv4, IPv6, IB_GRH, IB_NO_GRH).
    pub(crate) fn set_addr_type(&mut self, t: u32) -> DocaResult<()> {
        check(t <= MAX_ADDR_TYPE)?;
        self.addr_type = t;
        Ok(())
    }

    /// `doca_verbs_ah_attr_set_dlid` (16-bit LID).
    pub(crate) fn set_dlid(&mut self, dlid: u32) -> DocaResult<()> {
        check(dlid <= 0xffff)?;
        self.dlid = dlid;
        Ok(())
    }

    /// `doca_verbs_ah_attr_set_sl` (4-bit service level).
    pub(crate) fn set_sl(&mut self, sl: u8) -> DocaResult<()> {
        check(sl <= 15)?;
        self.sl = sl;
        Ok(())
    }
}

/// `struct doca_verbs_cq_attr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CqAttr {
    pub(crate) cq_size: u32,
    pub(crate) overrun: bool,
    /// (umem handle address, offset).
    pub(crate) umem: Option<(usize, u64)>,
    /// UAR handle address.
    pub(crate) uar: Option<usize>,
    pub(crate) external_datapath: bool,
    pub(crate) cq_context: usize,
}

/// Most entries of a CQ (the soft NIC's limit, 2^22 CQEs = 256 MiB of ring).
pub(crate) const MAX_CQ_SIZE: u32 = 1 << 22;
/// Most WQEs of a send or receive queue (the soft NIC's limit).
pub(crate) const MAX_WQ_SIZE: u32 = 1 << 15;
/// Most scatter/gather entries of one work request (the device helpers build up to 3).
pub(crate) const MAX_SGES: u32 = 4;

impl CqAttr {
    /// `doca_verbs_cq_attr_set_cq_size`: 1 to [`MAX_CQ_SIZE`] (rounded up to a power of two
    /// at create).
    pub(crate) fn set_cq_size(&mut self, n: u32) -> DocaResult<()> {
        check((1..=MAX_CQ_SIZE).contains(&n))?;
        self.cq_size = n;
        Ok(())
    }
}

/// `struct doca_verbs_qp_init_attr`: what `doca_verbs_qp_create` reads. Object references
/// are kept as the C handle addresses the program gave (the getters return them); the
/// create call resolves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct QpInitAttr {
    pub(crate) pd: usize,
    pub(crate) send_cq: usize,
    pub(crate) receive_cq: usize,
    pub(crate) sq_wr: u32,
    pub(crate) rq_wr: u32,
    pub(crate) send_max_sges: u32,
    pub(crate) receive_max_sges: u32,
    pub(crate) qp_type: u32,
    pub(crate) umem: Option<(usize, u64)>,
    pub(crate) dbr_umem: Option<(usize, u64)>,
    pub(crate) uar: usize,
    pub(crate) external_datapath: bool,
    pub(crate) core_direct_master: bool,
    pub(crate) cqe_inline: u32,
    pub(crate) send_dbr_mode: u32,
    pub(crate) sq_sig_all: i32,
    pub(crate) max_inline_data: u32,
    pub(crate) user_index: u32,
    pub(crate) qp_context: usize,
    /// Set by the id-based setters (DPA style): (umem id, offset).
    pub(crate) dbr_umem_id: Option<(u32, u64)>,
    pub(crate) wq_umem_id: Option<(u32, u64)>,
    pub(crate) uar_id: Option<u32>,
    pub(crate) pdn: Option<u32>,
}

/// `DOCA_VERBS_QP_TYPE_RC`.
pub(crate) const QP_TYPE_RC: u32 = 0;
/// `DOCA_VERBS_QP_TYPE_UC`.
pub(crate) const QP_TYPE_UC: u32 = 1;
/// `DOCA_VERBS_QP_SCATTER_TO_CQE_32B`.
pub(crate) const SCATTER_TO_CQE_32B: u32 = 1;
/// `DOCA_VERBS_QP_SEND_DBR_MODE_NO_DBR_EXT`.
pub(crate) const SEND_DBR_MODE_NO_DBR_EXT: u32 = 1;
/// `DOCA_VERBS_QP_SEND_DBR_MODE_NO_DBR_INT`.
pub(crate) const SEND_DBR_MODE_NO_DBR_INT: u32 = 2;

impl QpInitAttr {
    /// `doca_verbs_qp_init_attr_set_sq_wr` / `_rq_wr`: at most [`MAX_WQ_SIZE`] (rounded up
    /// to a power of two at create; 0 receive WRs: no receive queue).
    pub(crate) fn check_wr(n: u32) -> DocaResult<()> {
        check(n <= MAX_WQ_SIZE)
    }

    /// `..._set_send_max_sges` / `_receive_max_sges`.
    pub(crate) fn check_sges(n: u32) -> DocaResult<()> {
        check(n <= MAX_SGES)
    }

    /// `..._set_qp_type`: RC or UC.
    pub(crate) fn set_qp_type(&mut self, t: u32) -> DocaResult<()> {
        check(t == QP_TYPE_RC || t == QP_TYPE_UC)?;
        self.qp_type = t;
        Ok(())
    }

    /// `..._set_cqe_inline`: NONE or 32B.
    pub(crate) fn set_cqe_inline(&mut self, v: u32) -> DocaResult<()> {
        check(v <= SCATTER_TO_CQE_32B)?;
        self.cqe_inline = v;
        Ok(())
    }

    /// `..._set_send_dbr_mode`: DBR_VALID, NO_DBR_EXT or NO_DBR_INT.
    pub(crate) fn set_send_dbr_mode(&mut self, v: u32) -> DocaResult<()> {
        check(v <= SEND_DBR_MODE_NO_DBR_INT)?;
        self.send_dbr_mode = v;
        Ok(())
    }
}

/// `struct doca_verbs_qp_attr`: the fields a modify may apply (which ones: the mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpAttr {
    pub(crate) next_state: QpState,
    pub(crate) current_state: QpState,
    pub(crate) path_mtu: u32,
    pub(crate) rq_psn: u32,
    pub(crate) sq_psn: u32,
    pub(crate) dest_qp_num: u32,
    pub(crate) allow_remote_write: bool,
    pub(crate) allow_remote_read: bool,
    pub(crate) atomic_mode: u32,
    pub(crate) max_rd_atomic: u8,
    pub(crate) max_dest_rd_atomic: u8,
    pub(crate) ah: Option<AhAttr>,
    pub(crate) pkey_index: u16,
    pub(crate) port_num: u16,
    pub(crate) ack_timeout: u16,
    pub(crate) retry_cnt: u16,
    pub(crate) rnr_retry: u16,
    pub(crate) min_rnr_timer: u16,
}

impl Default for QpAttr {
    fn default() -> Self {
        QpAttr {
            next_state: QpState::Rst,
            current_state: QpState::Rst,
            path_mtu: 2,
            rq_psn: 0,
            sq_psn: 0,
            dest_qp_num: 0,
            allow_remote_write: false,
            allow_remote_read: false,
            atomic_mode: 0,
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            ah: None,
            pkey_index: 0,
            port_num: 1,
            ack_timeout: 0,
            retry_cnt: 0,
            rnr_retry: 0,
            min_rnr_timer: 0,
        }
    }
}

impl QpAttr {
    /// `..._set_path_mtu`: 256 B to 4 KiB.
    pub(crate) fn set_path_mtu(&mut self, v: u32) -> DocaResult<()> {
        check(v <= MAX_PATH_MTU)?;
        self.path_mtu = v;
        Ok(())
    }

    /// `..._set_rq_psn` / `_sq_psn` / `_dest_qp_num`: 24-bit values.
    pub(crate) fn check_24bit(v: u32) -> DocaResult<()> {
        check(v <= MAX_24BIT)
    }

    /// `..._set_atomic_mode`.
    pub(crate) fn set_atomic_mode(&mut self, v: u32) -> DocaResult<()> {
        check(v <= MAX_ATOMIC_MODE)?;
        self.atomic_mode = v;
        Ok(())
    }

    /// `..._set_ack_timeout` / `_min_rnr_timer`: 5-bit values.
    pub(crate) fn check_5bit(v: u16) -> DocaResult<()> {
        check(v <= 31)
    }

    /// `..._set_retry_cnt` / `_rnr_retry`: 3-bit values.
    pub(crate) fn check_3bit(v: u16) -> DocaResult<()> {
        check(v <= 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_reject_values_outside_their_fields() {
        assert_eq!(QpState::from_c(3), Ok(QpState::Rts));
        assert_eq!(QpState::from_c(5), Err(DocaError::INVALID_VALUE));
        let mut a = QpAttr::default();
        assert!(a.set_path_mtu(4).is_ok());
        assert_eq!(a.set_path_mtu(5), Err(DocaError::INVALID_VALUE));
        assert_eq!(a.path_mtu, 4);
        assert!(QpAttr::check_24bit(MAX_24BIT).is_ok());
        assert!(QpAttr::check_24bit(MAX_24BIT + 1).is_err());
        assert!(a.set_atomic_mode(8).is_ok());
        assert!(a.set_atomic_mode(9).is_err());
        assert!(QpAttr::check_5bit(31).is_ok() && QpAttr::check_5bit(32).is_err());
        assert!(QpAttr::check_3bit(7).is_ok() && QpAttr::check_3bit(8).is_err());
        let mut ah = AhAttr::default();
        assert!(ah.set_addr_type(3).is_ok() && ah.set_addr_type(4).is_err());
        assert!(ah.set_dlid(0xffff).is_ok() && ah.set_dlid(0x10000).is_err());
        assert!(ah.set_sl(15).is_ok() && ah.set_sl(16).is_err());
        let mut c = CqAttr::default();
        assert!(c.set_cq_size(0).is_err() && c.set_cq_size(MAX_CQ_SIZE + 1).is_err());
        assert!(c.set_cq_size(3).is_ok());
        let mut q = QpInitAttr::default();
        assert!(q.set_qp_type(2).is_err() && q.set_qp_type(QP_TYPE_UC).is_ok());
        assert!(q.set_cqe_inline(2).is_err() && q.set_cqe_inline(1).is_ok());
        assert!(q.set_send_dbr_mode(3).is_err() && q.set_send_dbr_mode(1).is_ok());
        assert!(QpInitAttr::check_wr(MAX_WQ_SIZE + 1).is_err());
        assert!(QpInitAttr::check_sges(MAX_SGES + 1).is_err());
    }
}
