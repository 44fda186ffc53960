//! rtnetlink messages, built and read by plain functions over byte buffers (unit-tested
//! below), and one request/answer exchange with the kernel over a `NETLINK_ROUTE` socket.
//!
//! Numbers from linux/netlink.h, linux/rtnetlink.h, linux/if_link.h and linux/veth.h.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

pub(super) const IFLA_IFNAME: u16 = 3;
pub(super) const IFLA_LINKINFO: u16 = 18;
pub(super) const IFLA_NET_NS_FD: u16 = 28;
pub(super) const IFLA_NUM_TX_QUEUES: u16 = 31;
pub(super) const IFLA_NUM_RX_QUEUES: u16 = 32;
pub(super) const IFLA_XDP: u16 = 43;
pub(super) const IFLA_XDP_ATTACHED: u16 = 2;
pub(super) const IFLA_XDP_PROG_ID: u16 = 4;
pub(super) const IFLA_INFO_KIND: u16 = 1;
pub(super) const IFLA_INFO_DATA: u16 = 2;
pub(super) const VETH_INFO_PEER: u16 = 1;
pub(super) const NLA_F_NESTED: u16 = 1 << 15;
/// The flag bits of an attribute type (nested, network byte order).
const NLA_TYPE_MASK: u16 = !(3 << 14);
/// sizeof(struct ifinfomsg).
pub(super) const IFINFOMSG_LEN: usize = 16;
/// sizeof(struct nlmsghdr).
pub(super) const NLMSG_HDR_LEN: usize = 16;

/// A netlink attribute: header, payload, padding to 4 bytes.
pub(super) fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
    let len = 4 + payload.len();
    let mut v = Vec::with_capacity(len.next_multiple_of(4));
    v.extend_from_slice(&(len as u16).to_ne_bytes());
    v.extend_from_slice(&ty.to_ne_bytes());
    v.extend_from_slice(payload);
    v.resize(len.next_multiple_of(4), 0);
    v
}

fn name_attr(name: &str) -> Vec<u8> {
    let mut z = name.as_bytes().to_vec();
    z.push(0);
    attr(IFLA_IFNAME, &z)
}

/// A whole message: header (type `ty`, `flags`, sequence `seq`) and `body`.
fn message(ty: u16, flags: libc::c_int, seq: u32, body: &[u8]) -> Vec<u8> {
    let mut msg = Vec::with_capacity(NLMSG_HDR_LEN + body.len());
    msg.extend_from_slice(&((NLMSG_HDR_LEN + body.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&ty.to_ne_bytes());
    msg.extend_from_slice(&(flags as u16).to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel fills it in
    msg.extend_from_slice(body);
    msg
}

/// An all-zero `ifinfomsg` (AF_UNSPEC, no index, no flags) followed by `name`'s attribute.
fn link_by_name(name: &str) -> Vec<u8> {
    let mut body = vec![0u8; IFINFOMSG_LEN];
    body.extend(name_attr(name));
    body
}

/// The queue-count attributes of a link (none for 0: the kernel's default).
fn queue_attrs(queues: u32) -> Vec<u8> {
    if queues == 0 {
        return Vec::new();
    }
    let mut v = attr(IFLA_NUM_TX_QUEUES, &queues.to_ne_bytes());
    v.extend(attr(IFLA_NUM_RX_QUEUES, &queues.to_ne_bytes()));
    v
}

/// The `RTM_NEWLINK` request creating veth `name` (in the namespace of the socket it is
/// sent on) with peer `peer` in the namespace of descriptor `peer_ns` (None: the same
/// namespace), each with `queues` receive and transmit queues (0: the kernel's default).
pub(super) fn new_veth_request(
    name: &str,
    peer: &str,
    peer_ns: Option<RawFd>,
    queues: u32,
    seq: u32,
) -> Vec<u8> {
    let mut peer_info = link_by_name(peer);
    if let Some(fd) = peer_ns {
        peer_info.extend(attr(IFLA_NET_NS_FD, &(fd as u32).to_ne_bytes()));
    }
    peer_info.extend(queue_attrs(queues));
    let data = attr(VETH_INFO_PEER | NLA_F_NESTED, &peer_info);
    let mut info = attr(IFLA_INFO_KIND, b"veth\0");
    info.extend(attr(IFLA_INFO_DATA | NLA_F_NESTED, &data));
    let mut body = link_by_name(name);
    body.extend(queue_attrs(queues));
    body.extend(attr(IFLA_LINKINFO | NLA_F_NESTED, &info));
    let flags = libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_EXCL;
    message(libc::RTM_NEWLINK, flags, seq, &body)
}

/// The `RTM_DELLINK` request removing link `name` (a veth takes its peer with it).
pub(super) fn del_link_request(name: &str, seq: u32) -> Vec<u8> {
    let flags = libc::NLM_F_REQUEST | libc::NLM_F_ACK;
    message(libc::RTM_DELLINK, flags, seq, &link_by_name(name))
}

/// The `RTM_GETLINK` request for link `name` (answered by one `RTM_NEWLINK` message).
pub(super) fn get_link_request(name: &str, seq: u32) -> Vec<u8> {
    message(
        libc::RTM_GETLINK,
        libc::NLM_F_REQUEST,
        seq,
        &link_by_name(name),
    )
}

/// One message of a netlink answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Message<'a> {
    pub ty: u16,
    pub seq: u32,
    pub payload: &'a [u8],
}

/// The messages of `buf`; stops at the first one whose length is impossible.
pub(super) fn messages(buf: &[u8]) -> impl Iterator<Item = Message<'_>> {
    let mut off = 0;
    std::iter::from_fn(move || {
        let hdr = buf.get(off..off + NLMSG_HDR_LEN)?;
        let len = u32::from_ne_bytes(hdr[0..4].try_into().unwrap()) as usize;
        if len < NLMSG_HDR_LEN {
            return None;
        }
        let payload = buf.get(off + NLMSG_HDR_LEN..off + len)?;
        let m = Message {
            ty: u16::from_ne_bytes(hdr[4..6].try_into().unwrap()),
            seq: u32::from_ne_bytes(hdr[8..12].try_into().unwrap()),
            payload,
        };
        off += len.next_multiple_of(4);
        Some(m)
    })
}

/// The attributes of `buf`: (type without its flag bits, payload); stops at the first
/// one whose length is impossible.
pub(super) fn attrs(buf: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut off = 0;
    std::iter::from_fn(move || {
        let hdr = buf.get(off..off + 4)?;
        let len = usize::from(u16::from_ne_bytes([hdr[0], hdr[1]]));
        if len < 4 {
            return None;
        }
        let payload = buf.get(off + 4..off + len)?;
        let ty = u16::from_ne_bytes([hdr[2], hdr[3]]) & NLA_TYPE_MASK;
        off += len.next_multiple_of(4);
        Some((ty, payload))
    })
}

/// The errno of an `NLMSG_ERROR` payload (0: an acknowledgement of success).
fn error_payload_errno(payload: &[u8]) -> Option<i32> {
    let e = i32::from_ne_bytes(payload.get(0..4)?.try_into().unwrap());
    Some(-e)
}

/// The errno of the acknowledgement in `reply` for request `seq` (0: success), or None
/// when `reply` holds no such acknowledgement.
pub(super) fn ack_errno(reply: &[u8], seq: u32) -> Option<i32> {
    messages(reply)
        .find(|m| i32::from(m.ty) == libc::NLMSG_ERROR && m.seq == seq)
        .and_then(|m| error_payload_errno(m.payload))
}

/// What an `RTM_NEWLINK` message says about a link (what [`link()`](fn@super::link)
/// returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// Interface index.
    pub index: u32,
    /// `IFF_*` flags (all 32 bits: `IFF_LOWER_UP` is carrier).
    pub flags: u32,
    /// Whether an XDP program is attached (in any mode).
    pub xdp_attached: bool,
    /// The attached XDP program's id (0: none, or not reported).
    pub xdp_prog_id: u32,
}

impl Link {
    /// Administratively up (`IFF_UP`).
    pub fn is_up(&self) -> bool {
        self.flags & libc::IFF_UP as u32 != 0
    }

    /// Operationally up (`IFF_RUNNING`: up with carrier; what UCX looks for).
    pub fn is_running(&self) -> bool {
        self.flags & libc::IFF_RUNNING as u32 != 0
    }

    /// Has carrier (`IFF_LOWER_UP`; what `ip link` prints as `LOWER_UP`).
    pub fn has_carrier(&self) -> bool {
        self.flags & libc::IFF_LOWER_UP as u32 != 0
    }
}

/// The link described by the answer to `RTM_GETLINK` request `seq`: Ok(link), or Err(errno)
/// when the kernel refused it (Err(0) when `reply` holds neither).
pub(super) fn parse_link(reply: &[u8], seq: u32) -> Result<Link, i32> {
    for m in messages(reply).filter(|m| m.seq == seq) {
        if i32::from(m.ty) == libc::NLMSG_ERROR {
            return Err(error_payload_errno(m.payload).unwrap_or(0));
        }
        if m.ty != libc::RTM_NEWLINK || m.payload.len() < IFINFOMSG_LEN {
            continue;
        }
        let u32_at = |o: usize| u32::from_ne_bytes(m.payload[o..o + 4].try_into().unwrap());
        let mut link = Link {
            index: u32_at(4),
            flags: u32_at(8),
            xdp_attached: false,
            xdp_prog_id: 0,
        };
        for (_, xdp) in attrs(&m.payload[IFINFOMSG_LEN..]).filter(|a| a.0 == IFLA_XDP) {
            for (ty2, v) in attrs(xdp) {
                match (ty2, v) {
                    (IFLA_XDP_ATTACHED, [mode, ..]) => link.xdp_attached = *mode != 0,
                    (IFLA_XDP_PROG_ID, [a, b, c, d, ..]) => {
                        link.xdp_prog_id = u32::from_ne_bytes([*a, *b, *c, *d])
                    }
                    _ => {}
                }
            }
        }
        return Ok(link);
    }
    Err(0)
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Sends request `req` to the kernel on a new `NETLINK_ROUTE` socket of the calling
/// thread's namespace and returns the first answer.
pub(super) fn exchange(req: &[u8]) -> io::Result<Vec<u8>> {
    let fd = super::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE)?;
    // SAFETY: an all-zero sockaddr_nl addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: req is a valid buffer of its length; kernel is a sockaddr_nl of its size.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if n < 0 {
        return Err(os_err("netlink sendto"));
    }
    // Room for any link description (attributes, statistics) in one answer.
    let mut buf = vec![0u8; 64 * 1024];
    // SAFETY: buf is writable for its length.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(os_err("netlink recv"));
    }
    buf.truncate(n as usize);
    Ok(buf)
}

/// Sends `req` (sequence `seq`, asking for an acknowledgement) and turns the answer into
/// a result whose error starts with `what`.
pub(super) fn request(req: &[u8], seq: u32, what: &str) -> io::Result<()> {
    let reply = exchange(req).map_err(|e| io::Error::new(e.kind(), format!("{what}: {e}")))?;
    match ack_errno(&reply, seq) {
        Some(0) => Ok(()),
        Some(e) => {
            let e = io::Error::from_raw_os_error(e);
            Err(io::Error::new(e.kind(), format!("{what}: {e}")))
        }
        None => Err(io::Error::other(format!(
            "{what}: no acknowledgement from the kernel"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16_at(b: &[u8], o: usize) -> u16 {
        u16::from_ne_bytes(b[o..o + 2].try_into().unwrap())
    }

    /// The attributes of `b`, all of it (the test fails on a bad length or padding).
    fn all_attrs(b: &[u8]) -> Vec<(u16, &[u8])> {
        let v: Vec<(u16, &[u8])> = attrs(b).collect();
        let used: usize = v.iter().map(|a| (4 + a.1.len()).next_multiple_of(4)).sum();
        assert_eq!(used, b.len(), "attributes cover the buffer, 4-byte aligned");
        v
    }

    /// The one message of `m`: (type, flags, seq, body), checking its length.
    fn one_message(m: &[u8]) -> (u16, u16, u32, &[u8]) {
        let len = u32::from_ne_bytes(m[0..4].try_into().unwrap()) as usize;
        assert_eq!(len, m.len());
        let seq = u32::from_ne_bytes(m[8..12].try_into().unwrap());
        (u16_at(m, 4), u16_at(m, 6), seq, &m[NLMSG_HDR_LEN..])
    }

    #[test]
    fn veth_request_nests_the_peer_with_its_name_and_namespace() {
        let m = new_veth_request("va", "peer0", Some(7), 0, 42);
        let (ty, flags, seq, body) = one_message(&m);
        assert_eq!(ty, libc::RTM_NEWLINK);
        let want = libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_EXCL;
        assert_eq!(flags, want as u16);
        assert_eq!(seq, 42);
        assert_eq!(&body[..IFINFOMSG_LEN], &[0u8; IFINFOMSG_LEN]);
        let top = all_attrs(&body[IFINFOMSG_LEN..]);
        assert_eq!(top.len(), 2, "name and link info, no queue counts");
        assert_eq!(top[0], (IFLA_IFNAME, &b"va\0"[..]));
        assert_eq!(top[1].0, IFLA_LINKINFO);
        assert_ne!(u16_at(body, IFINFOMSG_LEN + 8 + 2) & NLA_F_NESTED, 0);
        let info = all_attrs(top[1].1);
        assert_eq!(info[0], (IFLA_INFO_KIND, &b"veth\0"[..]));
        assert_eq!(info[1].0, IFLA_INFO_DATA);
        let data = all_attrs(info[1].1);
        assert_eq!(data[0].0, VETH_INFO_PEER);
        let peer = all_attrs(&data[0].1[IFINFOMSG_LEN..]);
        assert_eq!(peer[0], (IFLA_IFNAME, &b"peer0\0"[..]));
        assert_eq!(peer[1], (IFLA_NET_NS_FD, &7u32.to_ne_bytes()[..]));
        assert_eq!(peer.len(), 2);
    }

    #[test]
    fn veth_request_in_one_namespace_with_queues_sets_both_ends() {
        let m = new_veth_request("xa", "xb", None, 4, 3);
        let (_, _, _, body) = one_message(&m);
        let four = &4u32.to_ne_bytes()[..];
        let top = all_attrs(&body[IFINFOMSG_LEN..]);
        assert_eq!(top[0], (IFLA_IFNAME, &b"xa\0"[..]));
        assert_eq!(top[1], (IFLA_NUM_TX_QUEUES, four));
        assert_eq!(top[2], (IFLA_NUM_RX_QUEUES, four));
        assert_eq!(top[3].0, IFLA_LINKINFO);
        let info = all_attrs(top[3].1);
        let data = all_attrs(info[1].1);
        let peer = all_attrs(&data[0].1[IFINFOMSG_LEN..]);
        assert_eq!(
            peer,
            vec![
                (IFLA_IFNAME, &b"xb\0"[..]),
                (IFLA_NUM_TX_QUEUES, four),
                (IFLA_NUM_RX_QUEUES, four)
            ],
            "no namespace attribute: the peer stays with its end"
        );
    }

    #[test]
    fn delete_and_query_requests_name_the_link() {
        let del = del_link_request("uh1", 9);
        let (ty, flags, seq, body) = one_message(&del);
        assert_eq!((ty, seq), (libc::RTM_DELLINK, 9));
        assert_eq!(flags, (libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16);
        assert_eq!(
            all_attrs(&body[IFINFOMSG_LEN..]),
            vec![(IFLA_IFNAME, &b"uh1\0"[..])]
        );
        let get = get_link_request("lo", 10);
        let (ty, flags, seq, body) = one_message(&get);
        assert_eq!((ty, seq), (libc::RTM_GETLINK, 10));
        assert_eq!(flags, libc::NLM_F_REQUEST as u16, "one answer, no dump");
        assert_eq!(
            all_attrs(&body[IFINFOMSG_LEN..]),
            vec![(IFLA_IFNAME, &b"lo\0"[..])]
        );
    }

    fn error_msg(seq: u32, errno: i32) -> Vec<u8> {
        let mut body = (-errno).to_ne_bytes().to_vec();
        body.extend_from_slice(&[0u8; 16]); // the request's header, echoed
        message(libc::NLMSG_ERROR as u16, 0, seq, &body)
    }

    #[test]
    fn acknowledgements_give_the_errno_of_their_request() {
        assert_eq!(ack_errno(&error_msg(5, 0), 5), Some(0));
        assert_eq!(
            ack_errno(&error_msg(5, libc::EEXIST), 5),
            Some(libc::EEXIST)
        );
        // Another request's answer, then ours.
        let mut two = error_msg(4, libc::EPERM);
        two.extend(error_msg(5, libc::EOPNOTSUPP));
        assert_eq!(ack_errno(&two, 5), Some(libc::EOPNOTSUPP));
        assert_eq!(ack_errno(&two, 6), None);
        // Truncated or nonsense lengths are no answer, never a panic.
        assert_eq!(ack_errno(&error_msg(5, 0)[..19], 5), None);
        let mut bad = error_msg(5, 0);
        bad[0..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(ack_errno(&bad, 5), None);
        bad[0..4].copy_from_slice(&3u32.to_ne_bytes());
        assert_eq!(ack_errno(&bad, 5), None);
    }

    /// An `RTM_NEWLINK` answer for link `index` with `flags` and, when given, an `IFLA_XDP`
    /// nest (attached mode, program id), after other attributes.
    fn link_msg(seq: u32, index: u32, flags: u32, xdp: Option<(u8, u32)>) -> Vec<u8> {
        let mut body = vec![0u8; 4];
        body.extend_from_slice(&index.to_ne_bytes());
        body.extend_from_slice(&flags.to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        body.extend(name_attr("xa"));
        body.extend(attr(IFLA_NUM_TX_QUEUES, &4u32.to_ne_bytes()));
        if let Some((mode, id)) = xdp {
            let mut nest = attr(IFLA_XDP_ATTACHED, &[mode]);
            nest.extend(attr(IFLA_XDP_PROG_ID, &id.to_ne_bytes()));
            body.extend(attr(IFLA_XDP | NLA_F_NESTED, &nest));
        }
        message(libc::RTM_NEWLINK, 0, seq, &body)
    }

    #[test]
    fn link_answers_give_index_flags_and_xdp_state() {
        let up = (libc::IFF_UP | libc::IFF_LOWER_UP) as u32;
        let l = parse_link(&link_msg(8, 12, up, Some((2, 77))), 8).unwrap();
        assert_eq!(
            l,
            Link {
                index: 12,
                flags: up,
                xdp_attached: true,
                xdp_prog_id: 77
            }
        );
        assert!(l.is_up() && l.has_carrier());
        let l = parse_link(&link_msg(8, 3, libc::IFF_UP as u32, Some((0, 0))), 8).unwrap();
        assert!(l.is_up() && !l.has_carrier() && !l.xdp_attached);
        let l = parse_link(&link_msg(8, 3, 0, None), 8).unwrap();
        assert!(!l.is_up() && !l.xdp_attached);
        // A refusal gives its errno; another request's answer or garbage gives Err(0).
        assert_eq!(
            parse_link(&error_msg(8, libc::ENODEV), 8),
            Err(libc::ENODEV)
        );
        assert_eq!(parse_link(&link_msg(7, 3, 0, None), 8), Err(0));
        assert_eq!(parse_link(&link_msg(8, 3, 0, None)[..30], 8), Err(0));
        // A nest with a truncated attribute inside is read up to it, never past it.
        let mut m = link_msg(8, 3, 0, Some((1, 5)));
        let n = m.len();
        m[n - 8..n - 6].copy_from_slice(&200u16.to_ne_bytes());
        let l = parse_link(&m, 8).unwrap();
        assert!(l.xdp_attached);
        assert_eq!(l.xdp_prog_id, 0);
    }

    #[test]
    fn attribute_and_message_walks_stop_at_impossible_lengths() {
        assert_eq!(attrs(&[3, 0, 1, 0]).count(), 0, "length below the header");
        assert_eq!(attrs(&[9, 0, 1, 0, 1, 2]).count(), 0, "past the end");
        assert_eq!(messages(&[0u8; 15]).count(), 0);
        let mut two = error_msg(1, 0);
        two.extend(error_msg(2, 0));
        let seqs: Vec<u32> = messages(&two).map(|m| m.seq).collect();
        assert_eq!(seqs, [1, 2]);
    }
}
