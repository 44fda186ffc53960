//! Two NICs of this process on `lo`, queues in host memory, WQEs posted from the CPU
//! through nothing but the addresses and forms the descriptors carry (as device code
//! would), for each NIC handler.

use super::layout::nic_handler;
use super::*;
use crate::error::DocaError;
use doca_soft_nic::rdma::host::{cqe_counter, cqe_opcode, wqe_write, Seg};
use doca_soft_nic::rdma::{Access, Nic};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Polls CQE `k` of a CQ through its descriptor (owner parity, opcode not INVALID).
fn poll(cq: &DevVerbsCq, k: u64) -> [u8; 64] {
    let slot = (k & cq.cqe_mask as u64) as usize * 64;
    let owner = ((k / cq.cqe_num as u64) & 1) as u8;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // SAFETY: host placement: the descriptor's address is the CPU's; inside the ring.
        let op = unsafe {
            (*((cq.cqe_daddr as usize + slot + 63) as *const AtomicU8)).load(Ordering::Acquire)
        };
        if op & 1 == owner && op >> 4 != 0xf {
            let mut c = [0u8; 64];
            // SAFETY: as above, 64 bytes of the slot.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (cq.cqe_daddr as usize + slot) as *const u8,
                    c.as_mut_ptr(),
                    64,
                )
            };
            return c;
        }
        assert!(Instant::now() < deadline, "CQE {k} never came");
        std::thread::yield_now();
    }
}

/// Writes WQE `i` through the descriptor and publishes it the way `nic_handler` says.
fn post(d: &DevVerbsQp, i: u64, w: [u8; 64]) {
    let slot = (i & d.sq_wqe_mask as u64) as usize * 64;
    // SAFETY: host placement; inside the ring.
    unsafe {
        std::ptr::copy_nonoverlapping(w.as_ptr(), (d.sq_wqe_daddr as usize + slot) as *mut u8, 64)
    };
    let prod = i + 1;
    // SAFETY: the doorbell addresses of the descriptor are aligned host memory.
    unsafe {
        match d.nic_handler {
            nic_handler::CPU_PROXY => {
                (*(d.sq_db as *const AtomicU64)).store(prod, Ordering::Release)
            }
            nic_handler::GPU_SM_DB => (*(d.sq_dbrec as *const AtomicU32))
                .store(((prod & 0xffff) as u32).to_be(), Ordering::Release),
            _ => {
                let mut img = [0u8; 8];
                img[..4].copy_from_slice(&((prod as u32) << 8).to_be_bytes());
                img[4..].copy_from_slice(&d.sq_num_shift8_be.to_ne_bytes());
                (*(d.sq_db as *const AtomicU64)).store(u64::from_ne_bytes(img), Ordering::Release)
            }
        }
    }
}

#[test]
fn descriptors_carry_what_device_code_needs_and_queues_move_data() {
    let place = Placement::Host;
    let a = Nic::start(Ipv4Addr::LOCALHOST).unwrap();
    let b = Nic::start(Ipv4Addr::LOCALHOST).unwrap();
    let src = SharedMem::new(&place, 4096, 64).unwrap();
    let dst = SharedMem::new(&place, 4096, 64).unwrap();
    let src_reg = register(src.dev_at(0), 4096, Access::LOCAL_WRITE).unwrap();
    let dst_reg = register(
        dst.dev_at(0),
        4096,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE,
    )
    .unwrap();
    let peer_cq = GpuCq::new(&b, &place, 64).unwrap();
    let peer = GpuQp::new(&b, &place, 64, nic_handler::AUTO, &peer_cq, None).unwrap();
    for (n, handler) in [
        nic_handler::CPU_PROXY,
        nic_handler::GPU_SM_DB,
        nic_handler::GPU_SM_NO_DBR,
    ]
    .into_iter()
    .enumerate()
    {
        let scq = GpuCq::new(&a, &place, 64).unwrap();
        let rcq = GpuCq::new(&a, &place, 64).unwrap();
        let rq = GpuRq::new(&a, &place, 32, &rcq, false).unwrap();
        let qp = GpuQp::new(&a, &place, 32, handler, &scq, Some(&rq)).unwrap();
        let d = qp.descriptor();
        let qpn = qp.qpn();
        assert_eq!(d.sq_num, qpn);
        assert_eq!(d.sq_num_shift8, qpn << 8);
        assert_eq!(d.sq_num_shift8_be, (qpn << 8).to_be());
        assert_eq!(d.sq_num_shift8_be_3ds, ((qpn << 8) | 3).to_be());
        assert_eq!((d.sq_wqe_num, d.sq_wqe_mask), (32, 31));
        assert_eq!(d.sq_wqe_daddr, qp.sq_cpu() as u64);
        assert_eq!(d.nic_handler, handler);
        assert_eq!(
            (d.rq_num, d.rq_wqe_num, d.rq_wqe_mask, d.rcv_wqe_size),
            (qpn, 32, 31, 16)
        );
        assert_eq!(d.rq_dbrec, rq.dbrec_cpu() as u64);
        assert_eq!(d.cq_sq.cq_num, scq.cqn());
        assert_eq!(d.cq_rq.cq_num, rcq.cqn());
        assert_eq!(
            (d.cq_sq.cqe_num, d.cq_sq.cqe_mask, d.cq_sq.cqe_size),
            (64, 63, 64)
        );
        assert_eq!((d.sq_wqe_pi, d.sq_rsvd_index, d.cq_sq.cqe_ci), (0, 0, 0));
        // SAFETY: host memory of the CQ ring; every CQE starts INVALID with owner 1.
        assert_eq!(unsafe { *scq.ring_cpu().add(63) }, 0xF1);

        qp.qp().connect(&b.gid(), peer.qpn()).unwrap();
        let pattern: Vec<u8> = (0..256).map(|i| (i as u8) ^ (n as u8 * 0x55)).collect();
        src.write(0, &pattern);
        let seg = Seg {
            addr: src.dev_at(0),
            key: src_reg.key(),
            len: 256,
        };
        let raddr = dst.dev_at(1024 * n);
        post(
            &d,
            0,
            wqe_write(0, qpn, (raddr, dst_reg.key()), &[seg], None, true),
        );
        let c = poll(&d.cq_sq, 0);
        assert_eq!(
            (cqe_opcode(&c), cqe_counter(&c)),
            (0, 0),
            "handler {handler}"
        );
        let mut got = vec![0u8; 256];
        // SAFETY: host memory the peer NIC wrote before the CQE.
        unsafe { std::ptr::copy_nonoverlapping(dst.cpu_at(1024 * n), got.as_mut_ptr(), 256) };
        assert_eq!(got, pattern, "handler {handler}");
    }
}

#[test]
fn bad_shapes_and_blueflame_are_refused() {
    let place = Placement::Host;
    let a = Nic::start(Ipv4Addr::LOCALHOST).unwrap();
    assert_eq!(
        GpuCq::new(&a, &place, 100).err(),
        Some(DocaError::INVALID_VALUE)
    );
    let cq = GpuCq::new(&a, &place, 16).unwrap();
    assert_eq!(
        GpuQp::new(&a, &place, 32, nic_handler::CPU_PROXY, &cq, None).err(),
        Some(DocaError::INVALID_VALUE),
        "a CQ smaller than its SQ"
    );
    assert_eq!(
        GpuQp::new(&a, &place, 16, nic_handler::GPU_SM_BF, &cq, None).err(),
        Some(DocaError::NOT_SUPPORTED)
    );
    assert_eq!(
        GpuQp::new(&a, &place, 16, 9, &cq, None).err(),
        Some(DocaError::INVALID_VALUE)
    );
    assert_eq!(
        GpuRq::new(&a, &place, 32, &cq, false).err(),
        Some(DocaError::INVALID_VALUE)
    );
    let rq = GpuRq::new(&a, &place, 16, &cq, false).unwrap();
    let d = rq.descriptor(nic_handler::CPU_PROXY);
    assert_eq!((d.sq_num, d.rq_wqe_num, d.rq_wqe_mask), (0, 16, 15));
    assert_eq!(d.cq_rq.cq_num, cq.cqn());
}

#[test]
fn ring_memory_the_allocator_refuses_is_no_memory_not_an_abort() {
    // 4 EiB fits a layout but no address space; usize::MAX fits no layout.
    assert_eq!(
        SharedMem::new(&Placement::Host, 1 << 62, 64).err(),
        Some(DocaError::NO_MEMORY)
    );
    assert_eq!(
        SharedMem::new(&Placement::Host, usize::MAX, 64).err(),
        Some(DocaError::INVALID_VALUE)
    );
}

#[test]
fn one_nic_per_device_while_it_is_used() {
    let info = crate::dev::list_devices()
        .into_iter()
        .find(|d| d.iface == "lo")
        .expect("lo");
    let n1 = nic_for(&info).unwrap();
    let n2 = nic_for(&info).unwrap();
    assert_eq!(n1.gid(), n2.gid());
    assert_eq!(*n1.listen_addr().ip(), Ipv4Addr::LOCALHOST);
    let gid = n1.gid();
    drop((n1, n2));
    let n3 = nic_for(&info).unwrap();
    assert_ne!(n3.gid(), gid, "a new NIC after the last user let go");
}
