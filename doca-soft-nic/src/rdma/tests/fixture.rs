//! Two connected NIC sides with registered host memory, for the in-process tests.

use crate::rdma::api::Nic;
use crate::rdma::host::{HostMem, HostQp, Sizes};
use crate::rdma::mkey::{self, Access, MemKind, Registration};
use std::net::Ipv4Addr;
use std::time::Duration;

/// How long a test waits for a completion that must come.
pub(crate) const T: Duration = Duration::from_secs(20);

/// One NIC, one QP, one registered buffer.
pub(crate) struct Side {
    // Drop order: the QP, then the NIC (its proxy stops), then the memory it served.
    pub q: HostQp,
    pub nic: Nic,
    pub reg: Registration,
    pub mem: HostMem,
}

impl Side {
    /// A NIC on 127.0.0.1 with a QP and `len` bytes registered with every right.
    pub(crate) fn new(len: usize, cqe_inline: bool) -> Side {
        let nic = Nic::start(Ipv4Addr::LOCALHOST).expect("start NIC");
        let q = HostQp::new(&nic, Sizes::default(), cqe_inline).expect("QP");
        let mem = HostMem::new(len).expect("memory");
        let reg = mkey::register(
            mem.addr(),
            len as u64,
            Access::LOCAL_WRITE
                | Access::REMOTE_WRITE
                | Access::REMOTE_READ
                | Access::REMOTE_ATOMIC,
            MemKind::Host,
        )
        .expect("register");
        Side { q, reg, mem, nic }
    }

    /// Address of byte `off` of the buffer.
    pub(crate) fn at(&self, off: usize) -> u64 {
        self.mem.addr() + off as u64
    }

    /// The key of the buffer.
    pub(crate) fn key(&self) -> u32 {
        self.reg.key()
    }
}

/// Two sides whose QPs are connected to each other.
pub(crate) fn pair(len: usize, cqe_inline: bool) -> (Side, Side) {
    let a = Side::new(len, cqe_inline);
    let b = Side::new(len, cqe_inline);
    a.q.qp()
        .connect(&b.nic.gid(), b.q.qpn())
        .expect("connect a");
    b.q.qp()
        .connect(&a.nic.gid(), a.q.qpn())
        .expect("connect b");
    (a, b)
}
