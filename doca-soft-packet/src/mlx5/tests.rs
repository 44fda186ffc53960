use super::cqe::{self, present, Cqe};
use super::wqe::{self, parse, Ctrl, DataSeg, EthSeg, Parsed, WqeError};
use super::*;

#[test]
fn ctrl_segment_bytes() {
    let c = Ctrl {
        opcode: opcode::SEND,
        opmod: 0,
        wqe_index: 0x1234,
        qpn: 0xabcdef,
        ds: 3,
        fm_ce_se: CTRL_CQ_UPDATE,
        imm: 0,
    };
    let b = c.encode();
    assert_eq!(&b[0..4], &[0x00, 0x12, 0x34, 0x0a]);
    assert_eq!(&b[4..8], &[0xab, 0xcd, 0xef, 0x03]);
    assert_eq!(b[11], 0x08);
    assert_eq!(Ctrl::decode(&b), c);
    assert!(c.notify());
}

#[test]
fn send_wqe_bytes_and_parse() {
    let seg = DataSeg {
        byte_count: 60,
        lkey_raw: 0x1122_3344u32.to_be(),
        addr: 0x7f00_0000_1000,
    };
    let w = wqe::send_wqe(7, 5, CS_L3 | CS_L4, true, &[seg]);
    assert_eq!(&w[0..4], &[0, 0, 7, 0x0a]);
    assert_eq!(&w[4..8], &[0, 0, 5, 3]);
    assert_eq!(w[20], 0xc0, "cs_flags at byte 4 of the Ethernet segment");
    assert_eq!(&w[32..36], &[0, 0, 0, 60]);
    assert_eq!(
        &w[36..40],
        &[0x11, 0x22, 0x33, 0x44],
        "key stored as given (big-endian)"
    );
    assert_eq!(&w[40..48], &[0, 0, 0x7f, 0, 0, 0, 0x10, 0]);
    let c = Ctrl::decode(&w);
    assert_eq!(
        parse(&c, &w).unwrap(),
        Parsed::Send {
            cs_flags: 0xc0,
            inline: vec![],
            segs: vec![seg]
        }
    );
}

#[test]
fn inline_header_is_taken_before_the_data_segments() {
    // 18 inline bytes: 2 in the Ethernet segment, 16 in one more segment, then a data seg.
    let hdr: Vec<u8> = (0u8..18).collect();
    let seg = DataSeg {
        byte_count: 4,
        lkey_raw: 0,
        addr: 0x1000,
    };
    let mut w = vec![0u8; 64];
    let c = Ctrl {
        opcode: opcode::SEND,
        ds: 4,
        ..Ctrl::default()
    };
    w[0..16].copy_from_slice(&c.encode());
    let eth = EthSeg {
        inline_hdr_sz: 18,
        inline_hdr_start: [0, 1],
        ..EthSeg::default()
    };
    w[16..32].copy_from_slice(&eth.encode());
    w[32..48].copy_from_slice(&hdr[2..18]);
    w[48..64].copy_from_slice(&seg.encode());
    assert_eq!(
        parse(&c, &w).unwrap(),
        Parsed::Send {
            cs_flags: 0,
            inline: hdr,
            segs: vec![seg]
        }
    );
}

#[test]
fn wait_on_time_and_empw_and_errors() {
    let t = time_to_sec_ns(1_700_000_000_123_456_789);
    let w = wqe::wait_wqe(9, 5, t, false);
    assert_eq!(&w[0..4], &[0x01, 0, 9, 0x0f], "opmod 1 = wait on time");
    assert_eq!(w[7], 2, "DS 2");
    assert_eq!(parse(&Ctrl::decode(&w), &w).unwrap(), Parsed::WaitOnTime(t));
    assert_eq!(sec_ns_to_time(t), 1_700_000_000_123_456_789);

    let pkts: Vec<DataSeg> = (0..5)
        .map(|k| DataSeg {
            byte_count: 64 + k,
            lkey_raw: 1,
            addr: 0x1000 * u64::from(k),
        })
        .collect();
    let e = wqe::empw_wqe(3, 5, 0, true, &pkts);
    assert_eq!(e.len(), 128, "DS 7 takes two blocks");
    assert_eq!(wqe::wqe_bbs(7), 2);
    assert_eq!(wqe::wqe_bbs(4), 1);
    assert_eq!(
        parse(&Ctrl::decode(&e), &e).unwrap(),
        Parsed::MultiPacket { cs_flags: 0, pkts }
    );

    let bad = Ctrl {
        opcode: 0x08,
        ds: 3,
        ..Ctrl::default()
    };
    assert_eq!(parse(&bad, &[0u8; 64]), Err(WqeError::Unsupported(0x08)));
    let short = Ctrl {
        opcode: opcode::SEND,
        ds: 1,
        ..Ctrl::default()
    };
    assert_eq!(parse(&short, &[0u8; 64]), Err(WqeError::Malformed));
    let empty = Ctrl {
        opcode: opcode::SEND,
        ds: 2,
        ..Ctrl::default()
    };
    assert_eq!(parse(&empty, &[0u8; 64]), Err(WqeError::Malformed));
    let wait_other = Ctrl {
        opcode: opcode::WAIT,
        opmod: 0,
        ds: 2,
        ..Ctrl::default()
    };
    assert_eq!(
        parse(&wait_other, &[0u8; 64]),
        Err(WqeError::Unsupported(0x0f))
    );
}

#[test]
fn cqe_bytes_owner_and_presence() {
    let c = Cqe {
        opcode: cqe_opcode::RESP_SEND,
        owner: 1,
        byte_cnt: 1514,
        timestamp: time_to_sec_ns(5_000_000_007),
        qpn: 0x12_3456,
        wqe_counter: 0xbeef,
        syndrome: 0,
    };
    let b = c.encode();
    assert_eq!(&b[44..48], &1514u32.to_be_bytes());
    assert_eq!(&b[48..56], &((5u64 << 32) | 7).to_be_bytes());
    assert_eq!(&b[56..60], &[0, 0x12, 0x34, 0x56]);
    assert_eq!(&b[60..62], &[0xbe, 0xef]);
    assert_eq!(b[63], 0x21);
    assert_eq!(Cqe::decode(&b), c);

    let err = Cqe {
        opcode: cqe_opcode::REQ_ERR,
        syndrome: syndrome::LOCAL_LENGTH_ERR,
        ..Cqe::default()
    };
    let eb = err.encode();
    assert_eq!(eb[55], 0x01);
    assert_eq!(eb[63], 0xd0);
    assert!(cqe::is_error(Cqe::decode(&eb).opcode));

    // Ring of 8: pass 0 expects owner 0, pass 1 owner 1; a fresh slot is never present.
    assert!(!present(cqe::OP_OWN_INIT, 0, 8));
    assert!(!present(cqe::OP_OWN_INIT, 8, 8));
    assert!(present(0x20, 3, 8));
    assert!(!present(0x20, 11, 8), "stale pass-0 entry seen in pass 1");
    assert!(present(0x21, 11, 8));
    assert_eq!(cqe::owner_of(15, 8), 1);
    assert_eq!(cqe::owner_of(16, 8), 0);
}

#[test]
fn cqe_write_publishes_op_own_last_and_read_round_trips() {
    let mut ring = vec![0u8; 4 * 64];
    // SAFETY: the vector holds 4 slots.
    unsafe { cqe::init_ring(ring.as_mut_ptr(), 4) };
    assert!(ring.chunks(64).all(|s| s[63] == 0xf1));
    let c = Cqe {
        opcode: 0,
        owner: 1,
        byte_cnt: 9,
        wqe_counter: 6,
        ..Cqe::default()
    };
    // SAFETY: slot 2 of the ring.
    unsafe { cqe::write(ring.as_mut_ptr().add(128), &c) };
    // SAFETY: as above.
    let back = unsafe { cqe::read(ring.as_ptr().add(128)) };
    assert_eq!(Cqe::decode(&back), c);
    assert!(present(back[63], 6, 4));
}

#[test]
fn cqe_body_is_absent_until_published_then_reads_as_written() {
    let mut ring = vec![0u8; 4 * 64];
    // SAFETY: the vector holds 4 slots.
    unsafe { cqe::init_ring(ring.as_mut_ptr(), 4) };
    let c = Cqe {
        opcode: super::cqe_opcode::RESP_SEND,
        owner: 1,
        byte_cnt: 1514,
        timestamp: (7u64 << 32) | 123,
        qpn: 0x12_3456,
        wqe_counter: 5,
        syndrome: 0,
    };
    let slot = 64; // slot 1; completion number 5 of a ring of 4 (pass 1: owner 1)
                   // SAFETY: slot 1 of the ring, written by this test only.
    unsafe { cqe::write_body(ring.as_mut_ptr().add(slot), &c) };
    assert_eq!(
        ring[slot + 63],
        cqe::OP_OWN_INIT,
        "write_body touched op_own"
    );
    assert!(!present(ring[slot + 63], 5, 4), "present before publish");
    assert!(ring[slot..slot + cqe::BYTE_CNT].iter().all(|&b| b == 0));
    // SAFETY: as above.
    let (len, ts) = unsafe { cqe::read_len_ts(ring.as_ptr().add(slot)) };
    assert_eq!((len, ts), (1514, (7u64 << 32) | 123));
    // SAFETY: as above.
    unsafe { cqe::publish(ring.as_mut_ptr().add(slot), c.op_own()) };
    assert!(present(ring[slot + 63], 5, 4));
    // SAFETY: as above.
    let back = unsafe { cqe::read(ring.as_ptr().add(slot)) };
    assert_eq!(Cqe::decode(&back), c);
    // Byte for byte what `write` produces.
    let mut other = vec![0u8; 64];
    // SAFETY: one slot.
    unsafe {
        cqe::init_ring(other.as_mut_ptr(), 1);
        cqe::write(other.as_mut_ptr(), &c);
    }
    assert_eq!(&ring[slot..slot + 64], &other[..]);
    // The neighbours stay untouched.
    assert_eq!(ring[63], cqe::OP_OWN_INIT);
    assert_eq!(ring[128 + 63], cqe::OP_OWN_INIT);
}
