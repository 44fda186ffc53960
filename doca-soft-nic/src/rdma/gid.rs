//! How a soft NIC is reached: its 16-byte GID, the connection blob of `doca_rdma_export`,
//! and the memory blob of `doca_mmap_export_rdma`. All three are self-describing byte
//! strings that programs move over their own channels; both ends run doca-soft.
//!
//! GID (16 bytes), the IPv4-mapped form of the NIC's address with the listener port and an
//! instance id in the bytes a mapped address leaves zero:
//!
//! | bytes | content |
//! |---|---|
//! | 0-1 | `0x64 0x73` ("ds") |
//! | 2 | format version, 1 |
//! | 3 | 0 |
//! | 4-5 | listener port, big-endian |
//! | 6-9 | instance id, big-endian (random per NIC instance: tells restarts apart) |
//! | 10-11 | `0xff 0xff` |
//! | 12-15 | IPv4 address, network order |
//!
//! Connection blob (`doca_rdma_export` / `doca_rdma_connect`, 32 bytes): `"DSRC"`, version
//! 1, three zero bytes, the GID, the QP number (big-endian), four zero bytes. The zero byte
//! at offset 5 ends the blob early when a program prints it as a C string.
//!
//! Memory blob (`doca_mmap_export_rdma` / `doca_mmap_create_from_export`): `"DSMK"`,
//! version 1, a zero byte, the packed-key length (BE16), the exporting NIC's GID, the key
//! (BE32), the access flags (BE32), the start address (BE64), the length (BE64), then the
//! UCX packed remote key.

use std::net::Ipv4Addr;

/// The reachability of one NIC instance, as its GID carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gid {
    /// Address of the NIC's listener.
    pub ip: Ipv4Addr,
    /// Port of the NIC's listener.
    pub port: u16,
    /// Random id of the NIC instance.
    pub instance: u32,
}

const GID_MAGIC: [u8; 2] = [0x64, 0x73];
const GID_VERSION: u8 = 1;

impl Gid {
    /// The 16 GID bytes.
    pub(crate) fn encode(&self) -> [u8; 16] {
        let mut g = [0u8; 16];
        g[0..2].copy_from_slice(&GID_MAGIC);
        g[2] = GID_VERSION;
        g[4..6].copy_from_slice(&self.port.to_be_bytes());
        g[6..10].copy_from_slice(&self.instance.to_be_bytes());
        g[10] = 0xff;
        g[11] = 0xff;
        g[12..16].copy_from_slice(&self.ip.octets());
        g
    }

    /// Parses GID bytes; `None` when they are not a doca-soft GID.
    pub(crate) fn decode(g: &[u8; 16]) -> Option<Gid> {
        if g[0..2] != GID_MAGIC
            || g[2] != GID_VERSION
            || g[3] != 0
            || g[10] != 0xff
            || g[11] != 0xff
        {
            return None;
        }
        let port = u16::from_be_bytes([g[4], g[5]]);
        if port == 0 {
            return None;
        }
        Some(Gid {
            ip: Ipv4Addr::new(g[12], g[13], g[14], g[15]),
            port,
            instance: u32::from_be_bytes([g[6], g[7], g[8], g[9]]),
        })
    }
}

/// Size of a connection blob.
pub const CONN_BLOB_LEN: usize = 32;
const CONN_MAGIC: &[u8; 4] = b"DSRC";
const BLOB_VERSION: u8 = 1;

/// What `doca_rdma_export` hands the peer: where our NIC is and which QP to talk to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnInfo {
    /// The exporting NIC.
    pub gid: [u8; 16],
    /// The exporting QP.
    pub qpn: u32,
}

impl ConnInfo {
    /// The blob bytes.
    pub fn encode(&self) -> [u8; CONN_BLOB_LEN] {
        let mut b = [0u8; CONN_BLOB_LEN];
        b[0..4].copy_from_slice(CONN_MAGIC);
        b[4] = BLOB_VERSION;
        b[8..24].copy_from_slice(&self.gid);
        b[24..28].copy_from_slice(&self.qpn.to_be_bytes());
        b
    }

    /// Parses a blob; `None` when it is not one (wrong size, magic, version or GID).
    pub fn decode(b: &[u8]) -> Option<ConnInfo> {
        if b.len() != CONN_BLOB_LEN || &b[0..4] != CONN_MAGIC || b[4] != BLOB_VERSION {
            return None;
        }
        if b[5..8] != [0, 0, 0] || b[28..32] != [0, 0, 0, 0] {
            return None;
        }
        let gid: [u8; 16] = b[8..24].try_into().ok()?;
        Gid::decode(&gid)?;
        let qpn = u32::from_be_bytes(b[24..28].try_into().ok()?);
        if qpn == 0 || qpn > 0xff_ffff {
            return None;
        }
        Some(ConnInfo { gid, qpn })
    }
}

const MEM_MAGIC: &[u8; 4] = b"DSMK";
const MEM_HEADER_LEN: usize = 48;
/// Largest packed remote key a memory blob carries.
pub(crate) const MAX_PACKED_RKEY: usize = 4096;

/// What `doca_mmap_export_rdma` hands the peer: a registered range and how to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemExport {
    /// The NIC that exported it.
    pub gid: [u8; 16],
    /// The memory key (lkey = rkey).
    pub key: u32,
    /// Access flags ([`super::mkey::Access`] bits).
    pub access: u32,
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// The UCX packed remote key.
    pub packed: Vec<u8>,
}

impl MemExport {
    /// The blob bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(MEM_HEADER_LEN + self.packed.len());
        b.extend_from_slice(MEM_MAGIC);
        b.push(BLOB_VERSION);
        b.push(0);
        b.extend_from_slice(&(self.packed.len() as u16).to_be_bytes());
        b.extend_from_slice(&self.gid);
        b.extend_from_slice(&self.key.to_be_bytes());
        b.extend_from_slice(&self.access.to_be_bytes());
        b.extend_from_slice(&self.addr.to_be_bytes());
        b.extend_from_slice(&self.len.to_be_bytes());
        b.extend_from_slice(&self.packed);
        b
    }

    /// Parses a blob; `None` when it is not one.
    pub fn decode(b: &[u8]) -> Option<MemExport> {
        if b.len() < MEM_HEADER_LEN || &b[0..4] != MEM_MAGIC || b[4] != BLOB_VERSION || b[5] != 0 {
            return None;
        }
        let plen = u16::from_be_bytes([b[6], b[7]]) as usize;
        if plen == 0 || plen > MAX_PACKED_RKEY || b.len() != MEM_HEADER_LEN + plen {
            return None;
        }
        let gid: [u8; 16] = b[8..24].try_into().ok()?;
        Gid::decode(&gid)?;
        let be32 = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
        let be64 = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
        let e = MemExport {
            gid,
            key: be32(24),
            access: be32(28),
            addr: be64(32),
            len: be64(40),
            packed: b[MEM_HEADER_LEN..].to_vec(),
        };
        (e.len > 0 && e.addr.checked_add(e.len).is_some()).then_some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gid_bytes_follow_the_documented_layout_and_round_trip() {
        let g = Gid {
            ip: Ipv4Addr::new(10, 1, 2, 3),
            port: 0x1234,
            instance: 0xdeadbeef,
        };
        let b = g.encode();
        assert_eq!(
            b,
            [0x64, 0x73, 1, 0, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 10, 1, 2, 3]
        );
        assert_eq!(Gid::decode(&b), Some(g));
        // A plain IPv4-mapped address, a zero port, or another version are refused.
        let mut mapped = [0u8; 16];
        mapped[10] = 0xff;
        mapped[11] = 0xff;
        mapped[12..].copy_from_slice(&[127, 0, 0, 1]);
        assert_eq!(Gid::decode(&mapped), None);
        let mut no_port = b;
        no_port[4] = 0;
        no_port[5] = 0;
        assert_eq!(Gid::decode(&no_port), None);
        let mut v2 = b;
        v2[2] = 2;
        assert_eq!(Gid::decode(&v2), None);
    }

    #[test]
    fn connection_blob_round_trips_and_rejects_corruption() {
        let gid = Gid {
            ip: Ipv4Addr::LOCALHOST,
            port: 4000,
            instance: 7,
        }
        .encode();
        let c = ConnInfo {
            gid,
            qpn: 0x00ab_cdef,
        };
        let b = c.encode();
        assert_eq!(&b[0..5], b"DSRC\x01");
        assert_eq!(b[5], 0, "a C string print stops inside the blob");
        assert_eq!(&b[24..28], &[0x00, 0xab, 0xcd, 0xef]);
        assert_eq!(ConnInfo::decode(&b), Some(c));
        assert_eq!(ConnInfo::decode(&b[..31]), None);
        let mut bad = b;
        bad[9] ^= 1; // breaks the GID magic
        assert_eq!(ConnInfo::decode(&bad), None);
        let mut qp0 = b;
        qp0[24..28].copy_from_slice(&[0, 0, 0, 0]);
        assert_eq!(ConnInfo::decode(&qp0), None);
    }

    #[test]
    fn memory_blob_round_trips_and_rejects_truncation() {
        let gid = Gid {
            ip: Ipv4Addr::LOCALHOST,
            port: 4001,
            instance: 9,
        }
        .encode();
        let e = MemExport {
            gid,
            key: 0x1001,
            access: 0xe,
            addr: 0x7f00_0000_1000,
            len: 4096,
            packed: vec![1, 2, 3, 4, 5],
        };
        let b = e.encode();
        assert_eq!(b.len(), 48 + 5);
        assert_eq!(&b[6..8], &[0, 5]);
        assert_eq!(&b[24..28], &[0, 0, 0x10, 0x01]);
        assert_eq!(MemExport::decode(&b), Some(e.clone()));
        assert_eq!(MemExport::decode(&b[..b.len() - 1]), None);
        let mut zero_len = e.clone();
        zero_len.len = 0;
        assert_eq!(MemExport::decode(&zero_len.encode()), None);
        let mut wrap = e;
        wrap.addr = u64::MAX - 10;
        assert_eq!(MemExport::decode(&wrap.encode()), None);
    }
}
