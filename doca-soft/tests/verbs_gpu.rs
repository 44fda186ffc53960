//! GPU test of the GPU verbs device headers: kernels (tests/cuda/verbs_kernels.cu) post one
//! of each operation on a QP whose rings, doorbell records and doorbell slot are in device
//! memory, and the test compares every byte they wrote (WQEs, receive WQE, doorbells, the
//! QP's indices, the tickets) with the encodings of reference §3.12 computed here
//! (verbs_support), for the CPU-proxy, doorbell and no-DBR NIC handlers, and for a warp.
//! No NIC and no proxy: nothing completes, and no call in the kernels waits.
//!
//! Without a CUDA driver, a GPU, or nvcc (the kernels are compiled at test time for the
//! GPU's architecture) each test prints "skipped: <test>: <reason>" and returns.

mod verbs_support;

use cudarc::driver::{CudaContext, CudaModule, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;
use verbs_support::*;

// The operands of verbs_kernels.cu (same values).
const R: Addr = Addr::new(0x1122_3344_5566_7788, 0x0102_0304);
const R2: Addr = Addr::new(0x2122_2324_2526_2728, 0x0102_0304);
const L: Addr = Addr::new(0x0000_7f00_dead_b000, 0x0a0b_0c0d);
const D: Addr = Addr::new(0x0000_7f00_000d_0000, 0x0d0d_0d0d);
const SR: Addr = Addr::new(0x3132_3334_3536_3738, 0x0506_0708);
const SL: Addr = Addr::new(0x0000_7f00_0005_1000, 0x0e0f_1011);
const CR: Addr = Addr::new(0x4142_4344_4546_4748, 0x090a_0b0c);
const CL: Addr = Addr::new(0x0000_7f00_000c_1000, 0x1213_1415);
const VALUE: u64 = 0x8877_6655_4433_2211;
const VALUE32: u32 = 0x0000_abcd;

// NIC handlers (reference §3.1).
const CPU_PROXY: u32 = 1;
const GPU_SM_DB: u32 = 2;
const GPU_SM_NO_DBR: u32 = 4;

// The test's device memory: one allocation, laid out as below.
const QP: usize = 0;
const COMP: usize = 512;
const TICKETS: usize = 1024;
const SQ: usize = 4096; // 64 send WQEs
const SQ_N: u32 = 64;
const RQ: usize = 8192; // 16 receive WQEs
const RQ_N: u32 = 16;
const CSQ: usize = 8448; // companion: 16 send WQEs
const CSQ_N: u32 = 16;
const CQ_SQ: usize = 12288; // 64 CQEs
const CQ_RQ: usize = 16384; // 16 CQEs
const CQ_C: usize = 17408; // companion send CQ, 16 CQEs
const DBR: usize = 18432; // receive word, then send word
const DB: usize = 18448; // 64 bytes (room for BlueFlame)
const CDBR: usize = 18560;
const CDB: usize = 18576;
const CQ_DBR: usize = 18688; // 4 CQ doorbell records
const SIZE: usize = 20480;

const QPN: u32 = 0x12_3456;
const CQPN: u32 = 0x65_4321;
const CQN: u32 = 0x77;

struct Gpu {
    ctx: Arc<CudaContext>,
    module: Arc<CudaModule>,
    _dir: tempfile::TempDir,
}

fn setup() -> Option<Gpu> {
    let first = doca_test_support::require_gpu("the GPU verbs kernels")?;
    let nvcc = doca_test_support::require_nvcc()?;
    let ctx = CudaContext::new(0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cubin = dir.path().join("verbs_kernels.cubin");
    doca_test_support::gpu::compile_cubin(
        &nvcc,
        &first,
        &include_dir(),
        &src_dir().join("tests/cuda/verbs_kernels.cu"),
        &cubin,
    );
    let module = ctx.load_module(Ptx::from_file(&cubin)).unwrap();
    Some(Gpu {
        ctx,
        module,
        _dir: dir,
    })
}

fn put<const N: usize>(img: &mut [u8], off: usize, v: [u8; N]) {
    img[off..off + N].copy_from_slice(&v);
}

fn get_u64(img: &[u8], off: usize) -> u64 {
    u64::from_ne_bytes(img[off..off + 8].try_into().unwrap())
}

/// One CQ descriptor (struct doca_gpu_dev_verbs_cq, reference §3.1 offsets) at `off`.
fn write_cq(img: &mut [u8], base: u64, off: usize, ring: usize, n: u32, cqn: u32, dbrec: usize) {
    put(img, off, (base + ring as u64).to_ne_bytes()); // cqe_daddr
    put(img, off + 8, cqn.to_ne_bytes()); // cq_num
    put(img, off + 12, n.to_ne_bytes()); // cqe_num
    put(img, off + 16, (base + dbrec as u64).to_ne_bytes()); // dbrec
    put(img, off + 32, (n - 1).to_ne_bytes()); // cqe_mask
    img[off + 36] = 64; // cqe_size
    put(img, off + 48, 2u32.to_ne_bytes()); // mem_type GPU
    for i in 0..n as usize {
        img[ring + 64 * i + 63] = 0xf1; // opcode INVALID, owner 1
    }
}

/// Where a QP's pieces are.
struct QpPlace {
    off: usize,
    qpn: u32,
    sq: usize,
    sq_n: u32,
    rq: usize,
    rq_n: u32,
    dbr: usize,
    db: usize,
    cq_sq: usize,
    cq_sq_n: u32,
    cqn: u32,
    cq_rq: usize,
    cq_dbr: usize,
}

/// One QP descriptor (struct doca_gpu_dev_verbs_qp, reference §3.1 offsets), as
/// doca_gpu_verbs_export_qp fills it.
fn write_qp(img: &mut [u8], base: u64, p: &QpPlace, handler: u32) {
    let o = p.off;
    let a = |off: usize| (base + off as u64).to_ne_bytes();
    put(img, o + 24, p.qpn.to_ne_bytes());
    put(img, o + 28, (p.qpn << 8).to_ne_bytes());
    put(img, o + 32, (p.qpn << 8).to_be_bytes());
    for k in 1..=4u32 {
        put(
            img,
            o + 32 + 4 * k as usize,
            ((p.qpn << 8) | k).to_be_bytes(),
        );
    }
    put(img, o + 56, (p.sq_n as u16).to_ne_bytes());
    put(img, o + 58, (p.sq_n as u16 - 1).to_ne_bytes());
    put(img, o + 64, a(p.sq));
    put(img, o + 72, a(p.dbr + 4)); // send DBR word (index 1)
    put(img, o + 80, a(p.db));
    put(img, o + 88, p.qpn.to_ne_bytes());
    put(img, o + 104, p.rq_n.to_ne_bytes());
    put(img, o + 108, (p.rq_n - 1).to_ne_bytes());
    put(img, o + 112, a(p.rq));
    put(img, o + 120, a(p.dbr)); // receive DBR word (index 0)
    put(img, o + 128, 16u32.to_ne_bytes());
    write_cq(img, base, o + 160, p.cq_sq, p.cq_sq_n, p.cqn, p.cq_dbr);
    write_cq(img, base, o + 216, p.cq_rq, p.rq_n, p.cqn + 1, p.cq_dbr + 4);
    put(img, o + 272, handler.to_ne_bytes());
    put(img, o + 276, 2u32.to_ne_bytes());
}

fn places() -> (QpPlace, QpPlace) {
    (
        QpPlace {
            off: QP,
            qpn: QPN,
            sq: SQ,
            sq_n: SQ_N,
            rq: RQ,
            rq_n: RQ_N,
            dbr: DBR,
            db: DB,
            cq_sq: CQ_SQ,
            cq_sq_n: SQ_N,
            cqn: CQN,
            cq_rq: CQ_RQ,
            cq_dbr: CQ_DBR,
        },
        QpPlace {
            off: COMP,
            qpn: CQPN,
            sq: CSQ,
            sq_n: CSQ_N,
            rq: RQ,
            rq_n: RQ_N,
            dbr: CDBR,
            db: CDB,
            cq_sq: CQ_C,
            cq_sq_n: CSQ_N,
            cqn: CQN + 2,
            cq_rq: CQ_RQ,
            cq_dbr: CQ_DBR + 8,
        },
    )
}

/// Builds the memory image, runs `kernel` with (qp, companion, tickets) or (qp, tickets),
/// and returns the memory afterwards.
fn run(gpu: &Gpu, kernel: &str, threads: u32, handler: u32) -> Vec<u8> {
    let stream = gpu.ctx.default_stream();
    let mut mem = stream.alloc_zeros::<u8>(SIZE).unwrap();
    let base = {
        let (ptr, _sync) = mem.device_ptr(&stream);
        ptr
    };
    let mut img = vec![0u8; SIZE];
    let (main, comp) = places();
    write_qp(&mut img, base, &main, handler);
    write_qp(&mut img, base, &comp, handler);
    stream.memcpy_htod(&img, &mut mem).unwrap();
    let f = gpu.module.load_function(kernel).unwrap();
    let (qp, cqp, tickets) = (base + QP as u64, base + COMP as u64, base + TICKETS as u64);
    let mut b = stream.launch_builder(&f);
    b.arg(&qp);
    if kernel == "verbs_post_each" {
        b.arg(&cqp);
    }
    b.arg(&tickets);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments match the kernel's signature in verbs_kernels.cu (device
    // addresses as u64), all inside `mem`, which outlives the launch.
    unsafe { b.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
    stream.clone_dtoh(&mem).unwrap()
}

fn slot(img: &[u8], ring: usize, i: usize) -> &[u8] {
    &img[ring + 64 * i..ring + 64 * (i + 1)]
}

fn check_wqe(img: &[u8], ring: usize, i: usize, want: Wqe) {
    assert_eq!(
        &slot(img, ring, i)[..want.ds * 16],
        want.used(),
        "WQE {i}: want {want:?}"
    );
}

/// The doorbell state after submitting up to `prod` on a QP with this handler.
fn check_doorbells(img: &[u8], handler: u32, dbr_off: usize, db_off: usize, prod: u64, qpn: u32) {
    let send_dbr = &img[dbr_off + 4..dbr_off + 8];
    let slot_bytes = &img[db_off..db_off + 8];
    match handler {
        CPU_PROXY => {
            assert_eq!(
                slot_bytes,
                prod.to_ne_bytes(),
                "proxy slot: host-order producer index"
            );
            assert_eq!(send_dbr, [0; 4], "the proxy path leaves the DBR alone");
        }
        GPU_SM_DB => {
            assert_eq!(slot_bytes, db(prod, qpn), "doorbell register");
            assert_eq!(send_dbr, dbr(prod), "send DBR");
        }
        GPU_SM_NO_DBR => {
            assert_eq!(slot_bytes, db(prod, qpn), "doorbell register");
            assert_eq!(send_dbr, [0; 4], "no DBR");
        }
        _ => unreachable!(),
    }
}

#[test]
fn each_operation_writes_the_mlx5_wqes_and_doorbells() {
    let Some(gpu) = setup() else { return };
    for handler in [CPU_PROXY, GPU_SM_DB, GPU_SM_NO_DBR] {
        let img = run(&gpu, "verbs_post_each", 1, handler);
        check_wqe(&img, SQ, 0, rw(0, QPN, OP_WRITE, 0, R, &[(L, 100)]));
        check_wqe(
            &img,
            SQ,
            1,
            inline_write(1, QPN, OP_WRITE, 0, R2, &VALUE.to_ne_bytes()),
        );
        check_wqe(&img, SQ, 2, rw(2, QPN, OP_READ, 0, R, &[(L, 200)]));
        check_wqe(&img, SQ, 3, dump(3, QPN, D, 1));
        check_wqe(&img, SQ, 4, rw(4, QPN, OP_WRITE, 0, R, &[(L, 300)]));
        check_wqe(&img, SQ, 5, fetch_add(5, QPN, SR, SL, 5));
        check_wqe(&img, SQ, 6, fetch_add(6, QPN, SR, SL, 6));
        check_wqe(
            &img,
            SQ,
            7,
            inline_write(7, QPN, OP_WRITE, 0, R, &VALUE32.to_ne_bytes()),
        );
        check_wqe(&img, SQ, 8, fetch_add(8, QPN, SR, SL, 7));
        check_wqe(&img, SQ, 9, send(9, QPN, OP_SEND, 0, &[(L, 64)]));
        check_wqe(&img, SQ, 10, rw(10, QPN, OP_WRITE, 0, R, &[(L, 400)]));
        check_wqe(&img, SQ, 11, nop(11, QPN));
        assert!(slot(&img, SQ, 12).iter().all(|&b| b == 0), "WQE 12 unused");
        assert_eq!(&img[RQ..RQ + 16], recv(L, 128), "receive WQE 0");
        check_wqe(&img, CSQ, 0, wait(0, CQPN, 10, CQN));
        check_wqe(&img, CSQ, 1, fetch_add(1, CQPN, CR, CL, 1));

        let tickets: Vec<u64> = (0..9).map(|i| get_u64(&img, TICKETS + 8 * i)).collect();
        assert_eq!(tickets, [0, 1, 3, 5, 6, 8, 9, 0, 11], "handler {handler}");
        // QP indices: rsvd, ready, wqe_pi; receive queue likewise.
        for (off, want) in [(0, 12), (8, 12), (16, 12), (96, 1), (136, 1), (144, 1)] {
            assert_eq!(get_u64(&img, QP + off), want, "qp field @{off}");
        }
        for (off, want) in [(0, 2), (8, 2), (16, 2)] {
            assert_eq!(get_u64(&img, COMP + off), want, "companion field @{off}");
        }
        check_doorbells(&img, handler, DBR, DB, 12, QPN);
        check_doorbells(&img, handler, CDBR, CDB, 2, CQPN);
        assert_eq!(&img[DBR..DBR + 4], dbr(1), "receive DBR");
        // Locks released; CQ indices untouched (nothing waited).
        assert_eq!(&img[QP + 52..QP + 56], [0; 4]);
        assert_eq!(&img[QP + 152..QP + 156], [0; 4]);
        assert_eq!(get_u64(&img, QP + 160 + 24), 0);
    }
}

#[test]
fn a_warp_put_writes_one_wqe_per_lane() {
    let Some(gpu) = setup() else { return };
    for handler in [CPU_PROXY, GPU_SM_DB] {
        let img = run(&gpu, "verbs_put_warp", 32, handler);
        for lane in 0..32u64 {
            let r = Addr {
                addr: R.addr + 64 * lane,
                key: R.key,
            };
            let l = Addr {
                addr: L.addr + 64 * lane,
                key: L.key,
            };
            check_wqe(
                &img,
                SQ,
                lane as usize,
                rw(lane as u16, QPN, OP_WRITE, 0, r, &[(l, 64)]),
            );
            assert_eq!(get_u64(&img, TICKETS + 8 * lane as usize), lane);
        }
        assert!(slot(&img, SQ, 32).iter().all(|&b| b == 0));
        assert_eq!(get_u64(&img, QP + 16), 32, "sq_wqe_pi");
        check_doorbells(&img, handler, DBR, DB, 32, QPN);
    }
}
