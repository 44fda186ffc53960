//! The messages soft NICs exchange (UCX active messages). Headers are fixed-size and
//! little-endian; payloads ride as the active message's data.
//!
//! Every message after the handshake starts with the *receiver's* token for the sender:
//! the index of the sender in the receiver's peer table, which the receiver announced in
//! its own HELLO. A token that names no live peer gets the message dropped.
//!
//! | id | message | header | payload |
//! |---|---|---|---|
//! | 0xd500 | HELLO | magic, version, flags (bit 0: answer me), sender GID, the token the receiver must use for the sender | the sender's UCP worker address |
//! | 0xd501 | KEY_REQ | token, key | - |
//! | 0xd502 | KEY_REP | token, key, status (0 found, 1 unknown), access, address, length | packed remote key |
//! | 0xd503 | MSG | token, destination QPN, source QPN, kind (0 send, 1 send with immediate, 2 write with immediate), immediate (raw), sender WQE index, length | the send data (none for write with immediate) |
//! | 0xd504 | ACK | token, QPN of the sender of the MSG, its WQE index, syndrome (0: delivered) | - |
//! | 0xd505 | ATOMIC | token, sender QPN, sender WQE index, op (0 fetch-add, 1 compare-swap), key, address, operand (addend or swap value), compare value | - |
//! | 0xd506 | ATOMIC_REP | token, QPN and WQE index of the ATOMIC, syndrome (0: done), the old value | - |
//! | 0xd507 | KEY_REVOKE | token, flags (bit 0: every key) | the revoked keys (u32 each) |

/// HELLO: handshake, both directions.
pub(crate) const AM_HELLO: u16 = 0xd500;
/// KEY_REQ: "what is your key K?".
pub(crate) const AM_KEY_REQ: u16 = 0xd501;
/// KEY_REP: the answer.
pub(crate) const AM_KEY_REP: u16 = 0xd502;
/// MSG: a send or the notification of a write with immediate.
pub(crate) const AM_MSG: u16 = 0xd503;
/// ACK: a MSG was delivered (or refused).
pub(crate) const AM_ACK: u16 = 0xd504;

/// ATOMIC: a 64-bit atomic the target executes.
pub(crate) const AM_ATOMIC: u16 = 0xd505;
/// ATOMIC_REP: its result.
pub(crate) const AM_ATOMIC_REP: u16 = 0xd506;

/// KEY_REVOKE: keys that are gone.
pub(crate) const AM_KEY_REVOKE: u16 = 0xd507;

/// Every active-message id the engine handles.
pub(crate) const ALL_IDS: [u16; 8] = [
    AM_HELLO,
    AM_KEY_REQ,
    AM_KEY_REP,
    AM_MSG,
    AM_ACK,
    AM_ATOMIC,
    AM_ATOMIC_REP,
    AM_KEY_REVOKE,
];

const HELLO_MAGIC: u32 = 0x4e53_4453; // "SDSN"
const WIRE_VERSION: u16 = 1;

struct Reader<'a> {
    b: &'a [u8],
    o: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, o: 0 }
    }
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.b.get(self.o..self.o + N)?;
        self.o += N;
        s.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|a| a[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn done(&self) -> bool {
        self.o == self.b.len()
    }
}

struct Writer<const N: usize> {
    b: [u8; N],
    o: usize,
}

impl<const N: usize> Writer<N> {
    fn new() -> Self {
        Writer { b: [0; N], o: 0 }
    }
    fn put(mut self, s: &[u8]) -> Self {
        self.b[self.o..self.o + s.len()].copy_from_slice(s);
        self.o += s.len();
        self
    }
    fn finish(self) -> [u8; N] {
        debug_assert_eq!(self.o, N);
        self.b
    }
}

/// HELLO header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hello {
    /// The receiver should answer with its own HELLO.
    pub want_reply: bool,
    /// The sender's GID.
    pub gid: [u8; 16],
    /// The token the receiver puts in messages to the sender.
    pub token: u32,
}

/// Size of a HELLO header.
pub(crate) const HELLO_LEN: usize = 28;

impl Hello {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; HELLO_LEN] {
        Writer::<HELLO_LEN>::new()
            .put(&HELLO_MAGIC.to_le_bytes())
            .put(&WIRE_VERSION.to_le_bytes())
            .put(&[self.want_reply as u8, 0])
            .put(&self.gid)
            .put(&self.token.to_le_bytes())
            .finish()
    }

    /// Parses a header; `None` when it is not a HELLO of this version.
    pub(crate) fn decode(b: &[u8]) -> Option<Hello> {
        let mut r = Reader::new(b);
        if r.u32()? != HELLO_MAGIC || r.u16()? != WIRE_VERSION {
            return None;
        }
        let flags = r.u8()?;
        r.u8()?;
        let gid = r.take::<16>()?;
        let token = r.u32()?;
        r.done().then_some(Hello {
            want_reply: flags & 1 != 0,
            gid,
            token,
        })
    }
}

/// KEY_REQ header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyReq {
    /// The receiver's token for the sender.
    pub token: u32,
    /// The key asked about.
    pub key: u32,
}

impl KeyReq {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; 8] {
        Writer::<8>::new()
            .put(&self.token.to_le_bytes())
            .put(&self.key.to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<KeyReq> {
        let mut r = Reader::new(b);
        let v = KeyReq {
            token: r.u32()?,
            key: r.u32()?,
        };
        r.done().then_some(v)
    }
}

/// KEY_REP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyRep {
    /// The receiver's token for the sender.
    pub token: u32,
    /// The key answered about.
    pub key: u32,
    /// Whether the key exists.
    pub found: bool,
    /// Its access flags.
    pub access: u32,
    /// Its first byte.
    pub addr: u64,
    /// Its length.
    pub len: u64,
}

impl KeyRep {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; 32] {
        Writer::<32>::new()
            .put(&self.token.to_le_bytes())
            .put(&self.key.to_le_bytes())
            .put(&(!self.found as u32).to_le_bytes())
            .put(&self.access.to_le_bytes())
            .put(&self.addr.to_le_bytes())
            .put(&self.len.to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<KeyRep> {
        let mut r = Reader::new(b);
        let token = r.u32()?;
        let key = r.u32()?;
        let status = r.u32()?;
        let v = KeyRep {
            token,
            key,
            found: status == 0,
            access: r.u32()?,
            addr: r.u64()?,
            len: r.u64()?,
        };
        (r.done() && status <= 1).then_some(v)
    }
}

/// What a MSG carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MsgKind {
    /// A send: the payload lands in the next posted receive.
    Send,
    /// A send with immediate.
    SendImm,
    /// The end of an RDMA write with immediate: consumes a receive, no payload.
    WriteImm,
}

/// MSG header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Msg {
    /// The receiver's token for the sender.
    pub token: u32,
    /// The receiving QP.
    pub dst_qpn: u32,
    /// The sending QP.
    pub src_qpn: u32,
    /// Send, send with immediate, or write with immediate.
    pub kind: MsgKind,
    /// The immediate (raw bytes).
    pub imm: [u8; 4],
    /// The sender's WQE index (low 32 bits), echoed in the ACK.
    pub wqe: u32,
    /// Bytes sent (or written, for a write with immediate).
    pub len: u64,
}

/// Size of a MSG header.
pub(crate) const MSG_LEN: usize = 32;

impl Msg {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; MSG_LEN] {
        let kind = match self.kind {
            MsgKind::Send => 0u8,
            MsgKind::SendImm => 1,
            MsgKind::WriteImm => 2,
        };
        Writer::<MSG_LEN>::new()
            .put(&self.token.to_le_bytes())
            .put(&self.dst_qpn.to_le_bytes())
            .put(&self.src_qpn.to_le_bytes())
            .put(&[kind, 0, 0, 0])
            .put(&self.imm)
            .put(&self.wqe.to_le_bytes())
            .put(&self.len.to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<Msg> {
        let mut r = Reader::new(b);
        let token = r.u32()?;
        let dst_qpn = r.u32()?;
        let src_qpn = r.u32()?;
        let kind = match r.u8()? {
            0 => MsgKind::Send,
            1 => MsgKind::SendImm,
            2 => MsgKind::WriteImm,
            _ => return None,
        };
        r.take::<3>()?;
        let v = Msg {
            token,
            dst_qpn,
            src_qpn,
            kind,
            imm: r.take()?,
            wqe: r.u32()?,
            len: r.u64()?,
        };
        r.done().then_some(v)
    }
}

/// ACK header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ack {
    /// The receiver's token for the sender.
    pub token: u32,
    /// The QP that sent the MSG.
    pub qpn: u32,
    /// Its WQE index (low 32 bits).
    pub wqe: u32,
    /// 0: delivered; otherwise the error syndrome for the sender's CQE.
    pub syndrome: u8,
}

impl Ack {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; 16] {
        Writer::<16>::new()
            .put(&self.token.to_le_bytes())
            .put(&self.qpn.to_le_bytes())
            .put(&self.wqe.to_le_bytes())
            .put(&(self.syndrome as u32).to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<Ack> {
        let mut r = Reader::new(b);
        let token = r.u32()?;
        let qpn = r.u32()?;
        let wqe = r.u32()?;
        let s = r.u32()?;
        (r.done() && s <= 0xff).then_some(Ack {
            token,
            qpn,
            wqe,
            syndrome: s as u8,
        })
    }
}

/// ATOMIC header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Atomic {
    /// The receiver's token for the sender.
    pub token: u32,
    /// The sending QP.
    pub qpn: u32,
    /// Its WQE index (low 32 bits).
    pub wqe: u32,
    /// Compare-and-swap (else fetch-and-add).
    pub cswap: bool,
    /// The target key.
    pub key: u32,
    /// The target word.
    pub addr: u64,
    /// Addend, or the value to swap in.
    pub operand: u64,
    /// Compare value (compare-and-swap).
    pub compare: u64,
}

impl Atomic {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; 44] {
        Writer::<44>::new()
            .put(&self.token.to_le_bytes())
            .put(&self.qpn.to_le_bytes())
            .put(&self.wqe.to_le_bytes())
            .put(&(self.cswap as u32).to_le_bytes())
            .put(&self.key.to_le_bytes())
            .put(&self.addr.to_le_bytes())
            .put(&self.operand.to_le_bytes())
            .put(&self.compare.to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<Atomic> {
        let mut r = Reader::new(b);
        let token = r.u32()?;
        let qpn = r.u32()?;
        let wqe = r.u32()?;
        let op = r.u32()?;
        let v = Atomic {
            token,
            qpn,
            wqe,
            cswap: op == 1,
            key: r.u32()?,
            addr: r.u64()?,
            operand: r.u64()?,
            compare: r.u64()?,
        };
        (r.done() && op <= 1).then_some(v)
    }
}

/// ATOMIC_REP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicRep {
    /// The receiver's token for the sender.
    pub token: u32,
    /// The QP that sent the ATOMIC.
    pub qpn: u32,
    /// Its WQE index (low 32 bits).
    pub wqe: u32,
    /// 0: done; otherwise the error syndrome for the requester's CQE.
    pub syndrome: u8,
    /// The value the word held before.
    pub old: u64,
}

impl AtomicRep {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; 24] {
        Writer::<24>::new()
            .put(&self.token.to_le_bytes())
            .put(&self.qpn.to_le_bytes())
            .put(&self.wqe.to_le_bytes())
            .put(&(self.syndrome as u32).to_le_bytes())
            .put(&self.old.to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<AtomicRep> {
        let mut r = Reader::new(b);
        let token = r.u32()?;
        let qpn = r.u32()?;
        let wqe = r.u32()?;
        let s = r.u32()?;
        let old = r.u64()?;
        (r.done() && s <= 0xff).then_some(AtomicRep {
            token,
            qpn,
            wqe,
            syndrome: s as u8,
            old,
        })
    }
}

/// KEY_REVOKE header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyRevoke {
    /// The receiver's token for the sender.
    pub token: u32,
    /// Every key of the sender is gone.
    pub all: bool,
}

impl KeyRevoke {
    /// Header bytes.
    pub(crate) fn encode(&self) -> [u8; 8] {
        Writer::<8>::new()
            .put(&self.token.to_le_bytes())
            .put(&(self.all as u32).to_le_bytes())
            .finish()
    }

    /// Parses a header.
    pub(crate) fn decode(b: &[u8]) -> Option<KeyRevoke> {
        let mut r = Reader::new(b);
        let token = r.u32()?;
        let f = r.u32()?;
        (r.done() && f <= 1).then_some(KeyRevoke { token, all: f == 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_refuse_wrong_sizes() {
        let h = Hello {
            want_reply: true,
            gid: [7; 16],
            token: 3,
        };
        assert_eq!(Hello::decode(&h.encode()), Some(h));
        assert_eq!(Hello::decode(&h.encode()[..27]), None);
        let mut bad = h.encode();
        bad[0] ^= 1;
        assert_eq!(Hello::decode(&bad), None);
        let k = KeyReq {
            token: 1,
            key: 0x1234,
        };
        assert_eq!(KeyReq::decode(&k.encode()), Some(k));
        let r = KeyRep {
            token: 2,
            key: 0x1234,
            found: true,
            access: 0xe,
            addr: 0x1000,
            len: 4096,
        };
        assert_eq!(KeyRep::decode(&r.encode()), Some(r));
        let m = Msg {
            token: 4,
            dst_qpn: 0x10,
            src_qpn: 0x20,
            kind: MsgKind::WriteImm,
            imm: [1, 2, 3, 4],
            wqe: 77,
            len: 1 << 33,
        };
        assert_eq!(Msg::decode(&m.encode()), Some(m));
        let mut bad_kind = m.encode();
        bad_kind[12] = 9;
        assert_eq!(Msg::decode(&bad_kind), None);
        let a = Ack {
            token: 5,
            qpn: 0x20,
            wqe: 77,
            syndrome: 0x16,
        };
        assert_eq!(Ack::decode(&a.encode()), Some(a));
        assert_eq!(Ack::decode(&[0; 15]), None);
        let at = Atomic {
            token: 1,
            qpn: 2,
            wqe: 3,
            cswap: true,
            key: 4,
            addr: 0x1000,
            operand: 9,
            compare: 7,
        };
        assert_eq!(Atomic::decode(&at.encode()), Some(at));
        let mut bad_op = at.encode();
        bad_op[12] = 2;
        assert_eq!(Atomic::decode(&bad_op), None);
        let rep = AtomicRep {
            token: 1,
            qpn: 2,
            wqe: 3,
            syndrome: 0,
            old: u64::MAX,
        };
        assert_eq!(AtomicRep::decode(&rep.encode()), Some(rep));
        let kr = KeyRevoke {
            token: 3,
            all: true,
        };
        assert_eq!(KeyRevoke::decode(&kr.encode()), Some(kr));
    }
}
