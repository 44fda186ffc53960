//! The parser and the CQE writer against byte images written out here by hand from
//! reference facts §3.12 (not produced by the crate's own builders), and against the
//! encoders of doca-soft's device headers compiled for the host with nvcc.

use crate::rdma::host;
use doca_soft_packet::mlx5::rdma::{self as wqe, Malformed, Op, RecvWqe, Sge};
use doca_soft_packet::mlx5::{cqe, cqe_opcode as op, syndrome};

const QPN: u32 = 0x0a_bcde;

/// A slot full of a junk byte, so that fields the helpers leave unset hold garbage.
fn junk() -> [u8; 64] {
    [0xa5; 64]
}

/// Control segment of §3.12: BE32(idx << 8 | opcode), BE32(QPN << 8 | DS), byte 11
/// fm_ce_se, word 3 immediate. Bytes 8-10 stay junk.
fn ctrl(w: &mut [u8; 64], idx: u16, opcode: u8, ds: u8, fm_ce_se: u8, imm: [u8; 4]) {
    w[0] = 0;
    w[1] = (idx >> 8) as u8;
    w[2] = idx as u8;
    w[3] = opcode;
    w[4] = (QPN >> 16) as u8;
    w[5] = (QPN >> 8) as u8;
    w[6] = QPN as u8;
    w[7] = ds;
    w[11] = fm_ce_se;
    w[12..16].copy_from_slice(&imm);
}

#[test]
fn rdma_write_with_junk_in_unset_fields() {
    let mut w = junk();
    ctrl(&mut w, 0x1234, 0x08, 3, 0x08, [0xde, 0xad, 0xbe, 0xef]);
    w[16..24].copy_from_slice(&[0x00, 0x00, 0x7f, 0x00, 0x11, 0x22, 0x33, 0x44]);
    w[24..28].copy_from_slice(&[0x00, 0x00, 0x10, 0x01]); // key 0x1001, stored big-endian
    w[32..36].copy_from_slice(&[0x00, 0x00, 0x01, 0x00]); // 256 bytes
    w[36..40].copy_from_slice(&[0x00, 0x00, 0x20, 0x02]);
    w[40..48].copy_from_slice(&[0x00, 0x00, 0x7f, 0x00, 0x55, 0x66, 0x77, 0x88]);
    let p = wqe::parse(&w, 0x1234, QPN).expect("parses");
    assert!(p.signaled);
    assert_eq!(
        p.imm, None,
        "the immediate of a plain write is junk, not data"
    );
    let Op::Write { raddr, rkey, src } = p.op else {
        panic!("{:?}", p.op)
    };
    assert_eq!((raddr, rkey), (0x7f00_1122_3344, 0x1001));
    assert_eq!(
        src.as_slice(),
        &[Sge {
            addr: 0x7f00_5566_7788,
            key: 0x2002,
            len: 256
        }]
    );
}

#[test]
fn write_with_immediate_two_segments_and_the_raw_immediate() {
    let mut w = junk();
    ctrl(&mut w, 7, 0x09, 4, 0x08, [1, 2, 3, 4]);
    w[16..24].copy_from_slice(&0x1000u64.to_be_bytes());
    w[24..28].copy_from_slice(&[0, 0, 0, 9]);
    w[32..48].copy_from_slice(&[0, 0, 0, 16, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0x20, 0]);
    w[48..64].copy_from_slice(&[0, 0, 0, 32, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0x30, 0]);
    let p = wqe::parse(&w, 7, QPN).unwrap();
    assert_eq!(p.imm, Some([1, 2, 3, 4]));
    let Op::Write { src, .. } = p.op else {
        panic!()
    };
    assert_eq!(src.total(), 48);
    assert_eq!(
        src.as_slice()[1],
        Sge {
            addr: 0x3000,
            key: 6,
            len: 32
        }
    );
    // Zero-length write with immediate (DOCA RDMA): DS 2, no data segment.
    let mut z = junk();
    ctrl(&mut z, 8, 0x09, 2, 0x08, [9, 9, 9, 9]);
    z[16..24].copy_from_slice(&0x1000u64.to_be_bytes());
    z[24..28].copy_from_slice(&[0, 0, 0, 9]);
    let Op::Write { src, .. } = wqe::parse(&z, 8, QPN).unwrap().op else {
        panic!()
    };
    assert_eq!(src.total(), 0);
}

#[test]
fn inline_writes_of_12_and_28_bytes_and_an_overlong_one() {
    for (len, ds) in [(12usize, 3u8), (28, 4)] {
        let mut w = junk();
        ctrl(&mut w, 1, 0x08, ds, 0x08, [0; 4]);
        w[16..24].copy_from_slice(&0x4000u64.to_be_bytes());
        w[24..28].copy_from_slice(&[0, 0, 0x10, 0]);
        w[32..36].copy_from_slice(&(0x8000_0000u32 | len as u32).to_be_bytes());
        for i in 0..len {
            w[36 + i] = i as u8 + 1;
        }
        let p = wqe::parse(&w, 1, QPN).unwrap();
        assert_eq!(
            p.op,
            Op::WriteInline {
                raddr: 0x4000,
                rkey: 0x1000,
                len: len as u8
            }
        );
        assert_eq!(&p.inline[..len], &(1..=len as u8).collect::<Vec<_>>()[..]);
    }
    let mut w = junk();
    ctrl(&mut w, 1, 0x08, 3, 0x08, [0; 4]);
    w[32..36].copy_from_slice(&(0x8000_0000u32 | 13).to_be_bytes()); // 13 bytes need DS 4
    assert_eq!(wqe::parse(&w, 1, QPN), Err(Malformed::Segment(0x08)));
}

#[test]
fn read_atomics_wait_dump_nop() {
    let mut r = junk();
    ctrl(&mut r, 2, 0x10, 3, 0x08, [0; 4]);
    r[16..24].copy_from_slice(&0x9000u64.to_be_bytes());
    r[24..28].copy_from_slice(&[0, 0, 0, 3]);
    r[32..48].copy_from_slice(&[0, 0, 0, 64, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0x50, 0]);
    let Op::Read { raddr, rkey, dst } = wqe::parse(&r, 2, QPN).unwrap().op else {
        panic!()
    };
    assert_eq!((raddr, rkey, dst.total()), (0x9000, 3, 64));

    // Fetch-add: {BE64 add, BE64 compare = the same value}, result segment of 8 bytes.
    let mut fa = junk();
    ctrl(&mut fa, 3, 0x12, 4, 0x08, [0; 4]);
    fa[16..24].copy_from_slice(&0x9008u64.to_be_bytes());
    fa[24..28].copy_from_slice(&[0, 0, 0, 3]);
    fa[32..40].copy_from_slice(&5u64.to_be_bytes());
    fa[40..48].copy_from_slice(&5u64.to_be_bytes());
    fa[48..64].copy_from_slice(&[0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0x60, 0]);
    let p = wqe::parse(&fa, 3, QPN).unwrap();
    assert_eq!(
        p.op,
        Op::FetchAdd {
            raddr: 0x9008,
            rkey: 3,
            add: 5,
            result: Sge {
                addr: 0x6000,
                key: 4,
                len: 8
            }
        }
    );
    let mut cs = fa;
    cs[3] = 0x11;
    cs[32..40].copy_from_slice(&77u64.to_be_bytes()); // swap
    cs[40..48].copy_from_slice(&5u64.to_be_bytes()); // compare
    let Op::CompareSwap { compare, swap, .. } = wqe::parse(&cs, 3, QPN).unwrap().op else {
        panic!()
    };
    assert_eq!((compare, swap), (5, 77));
    let mut bad = fa;
    bad[51] = 4; // a 4-byte result
    assert_eq!(wqe::parse(&bad, 3, QPN), Err(Malformed::Segment(0x12)));

    // WAIT: {8 reserved bytes, BE32 max_index, BE32 cq number}.
    let mut wt = junk();
    ctrl(&mut wt, 4, 0x0f, 2, 0x08, [0; 4]);
    wt[24..28].copy_from_slice(&0x0001_0002u32.to_be_bytes());
    wt[28..32].copy_from_slice(&0x41u32.to_be_bytes());
    assert_eq!(
        wqe::parse(&wt, 4, QPN).unwrap().op,
        Op::Wait {
            max_index: 0x0001_0002,
            cqn: 0x41
        }
    );
    let mut d = junk();
    ctrl(&mut d, 5, 0x23, 2, 0x08, [0; 4]);
    assert_eq!(wqe::parse(&d, 5, QPN).unwrap().op, Op::Dump);
    let mut n = junk();
    ctrl(&mut n, 6, 0x00, 1, 0x00, [0; 4]);
    let p = wqe::parse(&n, 6, QPN).unwrap();
    assert_eq!(p.op, Op::Nop);
    assert!(!p.signaled, "CE 0 (CQ_ERROR_UPDATE) asks for no completion");
}

#[test]
fn sends_plain_with_immediate_three_segments_and_inline() {
    let mut s = junk();
    ctrl(&mut s, 9, 0x0a, 1, 0x08, [0; 4]);
    let Op::Send { src } = wqe::parse(&s, 9, QPN).unwrap().op else {
        panic!()
    };
    assert_eq!(src.total(), 0);
    let mut s3 = junk();
    ctrl(&mut s3, 10, 0x0b, 4, 0x08, [0xa, 0xb, 0xc, 0xd]);
    for k in 0..3usize {
        let o = 16 + 16 * k;
        s3[o..o + 16].copy_from_slice(&[
            0,
            0,
            0,
            10 + k as u8,
            0,
            0,
            0,
            7,
            0,
            0,
            0,
            0,
            0,
            1,
            k as u8,
            0,
        ]);
    }
    let p = wqe::parse(&s3, 10, QPN).unwrap();
    assert_eq!(p.imm, Some([0xa, 0xb, 0xc, 0xd]));
    let Op::Send { src } = p.op else { panic!() };
    assert_eq!(src.total(), 10 + 11 + 12);
    assert_eq!(src.as_slice()[2].addr, 0x1_0200);
    // doca-soft's inline send (DOCA RDMA): BE32(len | 0x80000000) at byte 16, payload after,
    // DS = ceil((20 + len) / 16).
    let mut si = junk();
    ctrl(&mut si, 11, 0x0a, 4, 0x08, [0; 4]);
    si[16..20].copy_from_slice(&(0x8000_0000u32 | 44).to_be_bytes());
    for i in 0..44 {
        si[20 + i] = 100 + i as u8;
    }
    let p = wqe::parse(&si, 11, QPN).unwrap();
    assert_eq!(p.op, Op::SendInline { len: 44 });
    assert_eq!(p.inline[43], 143);
}

#[test]
fn malformed_wqes_are_values_not_panics() {
    let mut w = junk();
    ctrl(&mut w, 5, 0x08, 3, 0x08, [0; 4]);
    assert_eq!(
        wqe::parse(&w, 6, QPN),
        Err(Malformed::Index {
            expected: 6,
            found: 5
        })
    );
    assert_eq!(
        wqe::parse(&w, 5, QPN + 1),
        Err(Malformed::Qpn {
            expected: QPN + 1,
            found: QPN
        })
    );
    ctrl(&mut w, 5, 0x08, 0, 0x08, [0; 4]);
    assert_eq!(
        wqe::parse(&w, 5, QPN),
        Err(Malformed::Size {
            opcode: 0x08,
            ds: 0
        })
    );
    ctrl(&mut w, 5, 0x08, 5, 0x08, [0; 4]);
    assert_eq!(
        wqe::parse(&w, 5, QPN),
        Err(Malformed::Size {
            opcode: 0x08,
            ds: 5
        })
    );
    ctrl(&mut w, 5, 0x14, 4, 0x08, [0; 4]); // masked compare-swap: not executed
    assert_eq!(wqe::parse(&w, 5, QPN), Err(Malformed::Opcode(0x14)));
    ctrl(&mut w, 5, 0x10, 2, 0x08, [0; 4]); // a read without a destination
    assert!(matches!(
        wqe::parse(&w, 5, QPN),
        Err(Malformed::Size { .. })
    ));
    // Every byte pattern parses to a value.
    for b in 0..=255u8 {
        let _ = wqe::parse(&[b; 64], u16::from_be_bytes([b, b]), QPN);
    }
}

#[test]
fn receive_wqes_and_the_two_gib_zero_count() {
    let mut r = [0u8; 16];
    r[0..4].copy_from_slice(&[0, 0, 0x10, 0]);
    r[4..8].copy_from_slice(&[0, 0, 0x20, 0x01]);
    r[8..16].copy_from_slice(&0x7000u64.to_be_bytes());
    assert_eq!(
        wqe::parse_recv(&r),
        RecvWqe {
            addr: 0x7000,
            key: 0x2001,
            capacity: 0x1000
        }
    );
    // DOCA RDMA's "no buffer" receive: {0, BE32(MLX5_INVALID_LKEY), 0}.
    let nobuf = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(wqe::parse_recv(&nobuf).capacity, 0);
    r[0..4].copy_from_slice(&[0; 4]);
    assert_eq!(
        wqe::parse_recv(&r).capacity,
        1 << 31,
        "a zero count is 2 GiB in mlx5"
    );
}

#[test]
fn cqe_images_match_the_mlx5_layout() {
    // Requester success: sop_drop_qpn @56 = QPN, wqe_counter @60 BE, op_own @63 = 0x00.
    let c = cqe::req(0x0102, QPN, 8);
    let mut want = [0u8; 64];
    want[44..48].copy_from_slice(&[0, 0, 0, 8]);
    want[56..60].copy_from_slice(&[0x00, 0x0a, 0xbc, 0xde]);
    want[60..62].copy_from_slice(&[0x01, 0x02]);
    assert_eq!(c, want);
    // Responder with immediate and inline data: data in bytes 0-31, imm raw @36, byte_cnt
    // BE @44, op_own = RESP_SEND_IMM << 4 | 0x4.
    let c = cqe::resp(
        op::RESP_SEND_IMM,
        3,
        QPN,
        5,
        Some([9, 8, 7, 6]),
        Some(&[1, 2, 3, 4, 5]),
    );
    assert_eq!(&c[..6], &[1, 2, 3, 4, 5, 0]);
    assert_eq!(&c[36..40], &[9, 8, 7, 6]);
    assert_eq!(&c[44..48], &[0, 0, 0, 5]);
    assert_eq!(c[63], 0x34);
    // Error: syndrome @55, failed opcode in the top byte of @56, op_own 0xd0.
    let c = cqe::error(op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR, 0x08, 0xffff, QPN);
    assert_eq!(c[55], 0x13);
    assert_eq!(&c[56..60], &[0x08, 0x0a, 0xbc, 0xde]);
    assert_eq!(&c[60..62], &[0xff, 0xff]);
    assert_eq!(c[63], 0xd0);
}

#[test]
fn the_test_builders_agree_with_the_hand_images() {
    // host.rs builds what the tests post; it must produce the §3.12 bytes too.
    let w = host::wqe_write(
        0x1234,
        QPN,
        (0x7f00_1122_3344, 0x1001),
        &[host::Seg {
            addr: 0x7f00_5566_7788,
            key: 0x2002,
            len: 256,
        }],
        None,
        true,
    );
    assert_eq!(&w[0..8], &[0x00, 0x12, 0x34, 0x08, 0x0a, 0xbc, 0xde, 0x03]);
    assert_eq!(w[11], 0x08);
    assert_eq!(&w[24..28], &[0, 0, 0x10, 0x01]);
    assert_eq!(&w[32..40], &[0, 0, 1, 0, 0, 0, 0x20, 0x02]);
    let wt = host::wqe_wait(4, QPN, 0x10002, 0x41, false);
    assert_eq!(&wt[0..8], &[0, 0, 4, 0x0f, 0x0a, 0xbc, 0xde, 2]);
    assert_eq!(&wt[24..32], &[0, 1, 0, 2, 0, 0, 0, 0x41]);
}

#[test]
fn device_header_encoders_parse_as_intended() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("enc.cu");
    std::fs::write(&src, ENCODER_PROGRAM).unwrap();
    let exe = dir.path().join("enc");
    // The device headers are doca-soft's (this crate is one of its engines).
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/../doca-soft/include");
    let out = nvcc
        .command()
        .args([
            "-std=c++17",
            "-arch=sm_80",
            "-cudart",
            "none",
            "-I",
            include,
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run nvcc");
    assert!(
        out.status.success(),
        "nvcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe)
        .output()
        .expect("run encoder");
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).unwrap();
    let mut seen = 0;
    for line in text.lines() {
        let (name, hex) = line.split_once(' ').unwrap();
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        if name == "recv" {
            let r: [u8; 16] = bytes[..16].try_into().unwrap();
            assert_eq!(
                wqe::parse_recv(&r),
                RecvWqe {
                    addr: 0x5000,
                    key: 0x2002,
                    capacity: 300
                }
            );
            seen += 1;
            continue;
        }
        let w: [u8; 64] = bytes.try_into().unwrap();
        let p = wqe::parse(&w, 0x0102, 0x345).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(p.signaled, "{name}");
        match name {
            "write" => assert_eq!(
                p.op,
                Op::Write {
                    raddr: 0x1000,
                    rkey: 0x1001,
                    src: p_src(&p.op)
                }
            ),
            "write_imm" => assert_eq!(p.imm, Some(0xabcd_ef01u32.to_ne_bytes())),
            "read" => assert!(
                matches!(p.op, Op::Read { raddr: 0x2000, rkey: 0x1001, dst } if dst.total() == 64)
            ),
            "inline" => {
                assert_eq!(
                    p.op,
                    Op::WriteInline {
                        raddr: 0x3000,
                        rkey: 0x1001,
                        len: 8
                    }
                );
                assert_eq!(&p.inline[..8], &0x1122_3344_5566_7788u64.to_ne_bytes());
            }
            "fetch_add" => assert_eq!(
                p.op,
                Op::FetchAdd {
                    raddr: 0x4000,
                    rkey: 0x1001,
                    add: 3,
                    result: Sge {
                        addr: 0x4100,
                        key: 0x2002,
                        len: 8
                    }
                }
            ),
            "send3" => assert!(matches!(p.op, Op::Send { src } if src.total() == 1 + 2 + 3)),
            "wait" => assert_eq!(
                p.op,
                Op::Wait {
                    max_index: 77,
                    cqn: 0x41
                }
            ),
            "dump" => assert_eq!(p.op, Op::Dump),
            other => panic!("unexpected {other}"),
        }
        if name == "write" {
            assert!(
                matches!(p.op, Op::Write { src, .. } if src.as_slice() == [Sge { addr: 0x1100, key: 0x2002, len: 128 }])
            );
        }
        seen += 1;
    }
    assert_eq!(seen, 9, "every encoder printed one WQE:\n{text}");
}

fn p_src(op: &Op) -> wqe::Sges {
    match op {
        Op::Write { src, .. } => *src,
        _ => Default::default(),
    }
}

/// Host code calling the header's `__host__ __device__` WQE builders (keys passed
/// big-endian, as DOCA's callers do), printing each slot in hex. Built without the CUDA
/// runtime (the nvcc wheel ships none to link): the registration hooks nvcc emits are
/// stubs, since the program never touches a GPU.
const ENCODER_PROGRAM: &str = r#"
#include <cstdio>
#include <cstring>
#include "doca_gpunetio_dev_verbs_qp.cuh"

extern "C" void **__cudaRegisterFatBinary(void *) { static void *h; return &h; }
extern "C" void __cudaRegisterFatBinaryEnd(void **) {}
extern "C" void __cudaUnregisterFatBinary(void **) {}
extern "C" char __cudaInitModule(void **) { return 0; }

static void dump(const char *name, const void *p, int n) {
    printf("%s ", name);
    for (int i = 0; i < n; i++) printf("%02x", ((const unsigned char *)p)[i]);
    printf("\n");
}

int main() {
    struct doca_gpu_dev_verbs_qp qp;
    memset(&qp, 0, sizeof(qp));
    unsigned qpn = 0x345;
    qp.sq_num = qpn;
    qp.sq_num_shift8 = qpn << 8;
    qp.sq_num_shift8_be = doca_gpu_dev_verbs_bswap32(qpn << 8);
    qp.sq_num_shift8_be_1ds = doca_gpu_dev_verbs_bswap32(qpn << 8 | 1);
    qp.sq_num_shift8_be_2ds = doca_gpu_dev_verbs_bswap32(qpn << 8 | 2);
    qp.sq_num_shift8_be_3ds = doca_gpu_dev_verbs_bswap32(qpn << 8 | 3);
    qp.sq_num_shift8_be_4ds = doca_gpu_dev_verbs_bswap32(qpn << 8 | 4);
    uint32_t rkey = doca_gpu_dev_verbs_bswap32(0x1001), lkey = doca_gpu_dev_verbs_bswap32(0x2002);
    const uint16_t idx = 0x0102;
    const enum doca_gpu_dev_verbs_wqe_ctrl_flags f = DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE;
    struct doca_gpu_dev_verbs_wqe w;

    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_write(&qp, &w, idx, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, f, 0, 0x1000, rkey, 0x1100, lkey, 128);
    dump("write", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_write(&qp, &w, idx, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM, f, 0xabcdef01, 0x1000, rkey, 0x1100, lkey, 128);
    dump("write_imm", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_read(&qp, &w, idx, f, 0x2000, rkey, 0x2100, lkey, 64);
    dump("read", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    uint64_t v = 0x1122334455667788ULL;
    doca_gpu_dev_verbs_wqe_prepare_write_inl(&qp, &w, idx, f, 0x3000, rkey, (uint64_t)&v, 8);
    dump("inline", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_atomic(&qp, &w, idx, DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA, f, 0x4000, rkey, 0x4100, lkey, 8, 3, 3);
    dump("fetch_add", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_send(&qp, &w, idx, DOCA_GPUNETIO_MLX5_OPCODE_SEND, f, 0, 0x10, lkey, 1, 0x20, lkey, 2, 0x30, lkey, 3);
    dump("send3", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_wait(&qp, &w, idx, f, 77, 0x41);
    dump("wait", &w, 64);
    memset(&w, 0xa5, sizeof(w));
    doca_gpu_dev_verbs_wqe_prepare_dump(&qp, &w, idx, f, 0x6000, lkey, 1);
    dump("dump", &w, 64);
    struct mlx5_wqe_data_seg r;
    memset(&r, 0xa5, sizeof(r));
    doca_gpu_dev_verbs_wqe_prepare_recv(&qp, &r, 0x5000, lkey, 300);
    dump("recv", &r, 16);
    return 0;
}
"#;
