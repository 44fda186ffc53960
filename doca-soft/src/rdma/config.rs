//! What a `doca_rdma` is configured with while IDLE, the checks of each setter, and the
//! capabilities the soft NIC reports.

use crate::error::{DocaError, DocaResult};

/// Largest send or receive queue (WQEs): the soft NIC's ring limit.
pub(crate) const MAX_QUEUE_SIZE: u32 = crate::gpuqp::MAX_WQES;
/// Largest single message (one WQE).
pub(crate) const MAX_MESSAGE_SIZE: u32 = 0x7fff_ffff;
/// Longest buffer list of a send (the device API sends one buffer).
pub(crate) const MAX_SEND_BUF_LIST_LEN: u32 = 1;
/// Most connections one context holds.
pub(crate) const MAX_CONNECTIONS: u16 = 256;
/// GID table entries per port.
pub(crate) const GID_TABLE_SIZE: u32 = 1;

/// `doca_access_flag` bits a context accepts: LOCAL_READ_WRITE, RDMA_READ, RDMA_WRITE,
/// RDMA_ATOMIC.
pub(crate) const RDMA_PERMISSION_BITS: u32 = 0xf;

/// `DOCA_RDMA_TRANSPORT_TYPE_RC`.
pub const TRANSPORT_RC: u32 = 0;
/// `DOCA_RDMA_TRANSPORT_TYPE_DC`.
pub const TRANSPORT_DC: u32 = 1;

/// `DOCA_MTU_SIZE_RAW_ETHERNET`: the largest `enum doca_mtu_size` value.
const MTU_MAX: u32 = 5;

/// The settings of a context.
#[derive(Clone, Debug)]
pub(crate) struct RdmaCfg {
    pub permissions: u32,
    pub gid_index: u32,
    pub grh_enabled: u8,
    pub send_queue_size: u32,
    pub recv_queue_size: u32,
    pub max_connections: u16,
    pub transport: u32,
    pub mtu: u32,
    pub sl: u32,
    pub conn_request_timeout: u16,
    pub rnr_retry_count: u8,
    pub max_send_buf_list_len: u32,
}

impl Default for RdmaCfg {
    fn default() -> Self {
        RdmaCfg {
            permissions: 1,
            gid_index: 0,
            grh_enabled: 0,
            send_queue_size: 64,
            recv_queue_size: 64,
            max_connections: 1,
            transport: TRANSPORT_RC,
            mtu: 2,
            sl: 0,
            conn_request_timeout: 5000,
            rnr_retry_count: 7,
            max_send_buf_list_len: 1,
        }
    }
}

/// A queue size rounded up to a power of two; NOT_SUPPORTED outside 1..=MAX_QUEUE_SIZE.
pub(crate) fn queue_size(n: u32) -> DocaResult<u32> {
    if n == 0 || n > MAX_QUEUE_SIZE {
        sdk_err!(
            "rdma",
            "queue size {n} is not supported (1 to {MAX_QUEUE_SIZE})"
        );
        return Err(DocaError::NOT_SUPPORTED);
    }
    Ok(n.next_power_of_two())
}

/// Checks `permissions`: only the RDMA access bits.
pub(crate) fn permissions(p: u32) -> DocaResult<u32> {
    if p & !RDMA_PERMISSION_BITS != 0 {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(p)
}

/// Checks a transport type.
pub(crate) fn transport(t: u32) -> DocaResult<u32> {
    match t {
        TRANSPORT_RC | TRANSPORT_DC => Ok(t),
        _ => Err(DocaError::INVALID_VALUE),
    }
}

/// Checks an `enum doca_mtu_size`.
pub(crate) fn mtu(m: u32) -> DocaResult<u32> {
    if m > MTU_MAX {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(m)
}

/// Checks a connection count: 1 to MAX_CONNECTIONS.
pub(crate) fn max_connections(n: u16) -> DocaResult<u16> {
    if n == 0 || n > MAX_CONNECTIONS {
        sdk_err!(
            "rdma",
            "{n} connections are not supported (1 to {MAX_CONNECTIONS})"
        );
        return Err(DocaError::NOT_SUPPORTED);
    }
    Ok(n)
}

/// Checks a send buffer-list length: 1 to MAX_SEND_BUF_LIST_LEN.
pub(crate) fn send_buf_list_len(n: u32) -> DocaResult<u32> {
    if n == 0 || n > MAX_SEND_BUF_LIST_LEN {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(n)
}

/// GID index `i` exists only below the table size.
pub(crate) fn gid_index(i: u32) -> DocaResult<u32> {
    if i >= GID_TABLE_SIZE {
        // Real ports have several entries (IPv4/IPv6 x RoCE v1/v2); the soft NIC has one
        // identity per device: accept any index, as the value is only exchanged.
        sdk_dbg!("rdma", "GID index {i}: the soft NIC uses its one GID");
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_check_their_ranges() {
        assert_eq!(queue_size(8192), Ok(8192));
        assert_eq!(queue_size(100), Ok(128));
        assert_eq!(queue_size(0), Err(DocaError::NOT_SUPPORTED));
        assert_eq!(
            queue_size(MAX_QUEUE_SIZE + 1),
            Err(DocaError::NOT_SUPPORTED)
        );
        assert_eq!(permissions(5), Ok(5));
        assert_eq!(permissions(0x10), Err(DocaError::INVALID_VALUE));
        assert_eq!(transport(2), Err(DocaError::INVALID_VALUE));
        assert_eq!(mtu(6), Err(DocaError::INVALID_VALUE));
        assert_eq!(max_connections(0), Err(DocaError::NOT_SUPPORTED));
        assert_eq!(max_connections(2), Ok(2));
        assert_eq!(send_buf_list_len(2), Err(DocaError::INVALID_VALUE));
    }
}
