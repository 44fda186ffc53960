//! `struct doca_rdma_addr`: an address and port for the RDMA-CM calls (IPv4 or IPv6 text,
//! or a GID written as an IPv6 address; an IPv4-mapped GID means its IPv4 address).

use crate::error::{DocaError, DocaResult};
use std::ffi::CString;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `DOCA_RDMA_ADDR_TYPE_IPv4`.
pub(crate) const ADDR_IPV4: u32 = 0;
/// `DOCA_RDMA_ADDR_TYPE_IPv6`.
pub(crate) const ADDR_IPV6: u32 = 1;
/// `DOCA_RDMA_ADDR_TYPE_GID`.
pub(crate) const ADDR_GID: u32 = 2;

/// The C `struct doca_rdma_addr`.
pub struct RdmaAddr {
    kind: u32,
    text: CString,
    port: u16,
    sock: SocketAddr,
}

impl RdmaAddr {
    /// Parses `text` as an address of `kind`; INVALID_VALUE when it is not one.
    pub(crate) fn parse(kind: u32, text: &str, port: u16) -> DocaResult<RdmaAddr> {
        let ip: IpAddr = match kind {
            ADDR_IPV4 => IpAddr::V4(text.parse::<Ipv4Addr>().map_err(|_| bad(text, "IPv4"))?),
            ADDR_IPV6 => IpAddr::V6(text.parse::<Ipv6Addr>().map_err(|_| bad(text, "IPv6"))?),
            ADDR_GID => {
                let g = text.parse::<Ipv6Addr>().map_err(|_| bad(text, "GID"))?;
                match g.to_ipv4_mapped() {
                    Some(v4) => IpAddr::V4(v4),
                    None => IpAddr::V6(g),
                }
            }
            _ => return Err(DocaError::INVALID_VALUE),
        };
        Ok(RdmaAddr {
            kind,
            text: CString::new(text).map_err(|_| DocaError::INVALID_VALUE)?,
            port,
            sock: SocketAddr::new(ip, port),
        })
    }

    /// (type, text, port) as created.
    pub(crate) fn params(&self) -> (u32, &CString, u16) {
        (self.kind, &self.text, self.port)
    }

    /// Where to connect.
    pub(crate) fn socket_addr(&self) -> SocketAddr {
        self.sock
    }
}

fn bad(text: &str, what: &str) -> DocaError {
    sdk_err!("rdma", "'{text}' is not an {what} address");
    DocaError::INVALID_VALUE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_by_type() {
        let a = RdmaAddr::parse(ADDR_IPV4, "10.1.2.3", 13579).unwrap();
        assert_eq!(a.socket_addr(), "10.1.2.3:13579".parse().unwrap());
        assert_eq!(a.params().2, 13579);
        let g = RdmaAddr::parse(ADDR_GID, "::ffff:127.0.0.1", 7).unwrap();
        assert_eq!(g.socket_addr(), "127.0.0.1:7".parse().unwrap());
        assert!(RdmaAddr::parse(ADDR_IPV6, "fe80::1", 7).is_ok());
        assert!(RdmaAddr::parse(ADDR_IPV4, "fe80::1", 7).is_err());
        assert!(RdmaAddr::parse(ADDR_IPV4, "300.1.1.1", 7).is_err());
        assert!(RdmaAddr::parse(9, "1.1.1.1", 7).is_err());
    }
}
