//! What a connection is made from: the details peers exchange out of band, and the address
//! types RDMA-CM reads.

use doca_sys as sys;

/// Connection details a peer passes to its [`Rdma::connect`](super::Rdma::connect) (opaque bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionDetails(pub(super) Vec<u8>);

impl ConnectionDetails {
    /// The bytes to send.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// How [`Rdma::connect_to_addr`](super::Rdma::connect_to_addr) reads its address (`enum doca_rdma_addr_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrType {
    /// Dotted IPv4.
    Ipv4,
    /// IPv6 text.
    Ipv6,
    /// A GID, written as an IPv6 address.
    Gid,
}

impl AddrType {
    pub(super) fn raw(self) -> sys::doca_rdma_addr_type {
        match self {
            AddrType::Ipv4 => sys::doca_rdma_addr_type::DOCA_RDMA_ADDR_TYPE_IPv4,
            AddrType::Ipv6 => sys::doca_rdma_addr_type::DOCA_RDMA_ADDR_TYPE_IPv6,
            AddrType::Gid => sys::doca_rdma_addr_type::DOCA_RDMA_ADDR_TYPE_GID,
        }
    }

    /// Parses the samples' `-sat` values: `ip4`, `ipv4`, `ip6`, `ipv6`, `gid` (any case).
    pub fn parse(s: &str) -> Option<AddrType> {
        match s.to_ascii_lowercase().as_str() {
            "ip4" | "ipv4" => Some(AddrType::Ipv4),
            "ip6" | "ipv6" => Some(AddrType::Ipv6),
            "gid" => Some(AddrType::Gid),
            _ => None,
        }
    }
}
