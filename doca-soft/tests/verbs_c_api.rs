//! DOCA Verbs through the C API, no GPU: the objects (context, PD, device attributes, UAR,
//! umem, CQ/QP/AH attributes), the QP state machine with the samples' masks and bad
//! input, the bridges on doca-soft's stand-ins, and the GPU export (descriptor fields, NIC
//! handlers, CPU proxy) with the descriptor in host memory.

mod verbs_cpu_support;

use doca_soft::capi::doca_dev::*;
use doca_soft::capi::doca_gpunetio::*;
use doca_soft::capi::doca_rdma_bridge::*;
use doca_soft::capi::doca_soft_verbs::*;
use doca_soft::capi::doca_uar::*;
use doca_soft::capi::doca_umem::*;
use doca_soft::capi::doca_verbs::*;
use doca_soft::capi::doca_verbs_bridge::*;
use doca_soft::testing::verbs::{descriptor, export_qp_host, unexport_qp_host};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use verbs_cpu_support::*;

const INVALID: u32 = 6;
const NOT_SUPPORTED: u32 = 4;
const IN_USE: u32 = 3;
const BAD_STATE: u32 = 18;
const NOT_PERMITTED: u32 = 2;

#[test]
fn context_pd_device_attributes_and_bad_handles() {
    // SAFETY: every pointer is NULL, a live handle made here, or a valid out-pointer.
    unsafe {
        let mut ctx = null_mut();
        assert_eq!(doca_verbs_context_create(null_mut(), 0, &mut ctx), INVALID);
        assert_eq!(doca_verbs_context_create(lo_info(), 0, null_mut()), INVALID);
        assert_eq!(doca_verbs_context_create(lo_info(), 1, &mut ctx), INVALID);
        ok(doca_verbs_context_create(lo_info(), 0, &mut ctx), "context");
        let mut pd = null_mut();
        assert_eq!(doca_verbs_pd_create(null_mut(), &mut pd), INVALID);
        ok(doca_verbs_pd_create(ctx, &mut pd), "pd");
        assert_eq!(doca_verbs_context_destroy(ctx), IN_USE, "a PD lives");

        let mut attr = null_mut();
        assert_eq!(doca_verbs_query_device(null_mut(), &mut attr), INVALID);
        ok(doca_verbs_query_device(ctx, &mut attr), "query");
        assert_eq!(doca_verbs_device_attr_get_max_qp_rd_atom(attr), 16);
        assert_eq!(doca_verbs_device_attr_get_max_qp_init_rd_atom(attr), 16);
        assert_eq!(doca_verbs_device_attr_get_max_qp_rd_atom(null()), 0);
        assert_eq!(doca_verbs_device_attr_get_is_cqe_inline_supported(attr), 0);
        assert_eq!(
            doca_verbs_device_attr_get_is_send_dbr_mode_supported(attr, 0),
            0
        );
        assert_eq!(
            doca_verbs_device_attr_get_is_send_dbr_mode_supported(attr, 1),
            0
        );
        assert_eq!(
            doca_verbs_device_attr_get_is_send_dbr_mode_supported(attr, 2),
            NOT_SUPPORTED
        );
        assert_eq!(
            doca_verbs_device_attr_get_is_send_dbr_mode_supported(attr, 9),
            INVALID
        );
        assert_eq!(doca_verbs_device_attr_get_atomic_cap(attr), 1, "HCA");
        ok(doca_verbs_device_attr_free(attr), "attr free");
        assert_eq!(doca_verbs_device_attr_free(null_mut()), INVALID);

        // GID and port: the NIC's GID ("ds" magic, 127.0.0.1 at the end), LID 0, Ethernet.
        let mut g = VerbsGid::default();
        ok(doca_soft_verbs_query_gid(ctx, 3, &mut g), "gid");
        assert_eq!(&g.raw[0..2], b"ds");
        assert_eq!(&g.raw[12..16], &[127, 0, 0, 1]);
        let (mut lid, mut ll) = (7u16, 0u8);
        ok(doca_soft_verbs_query_port(ctx, &mut lid, &mut ll), "port");
        assert_eq!((lid, ll), (0, 2));
        assert_eq!(doca_soft_verbs_query_gid(ctx, 0, null_mut()), INVALID);

        // The doca_dev of a PD, and one opened from the ibv_pd stand-in.
        let mut d = null_mut();
        ok(doca_verbs_pd_as_doca_dev(pd, &mut d), "pd dev");
        let mut d2 = null_mut();
        ok(doca_verbs_pd_as_doca_dev(pd, &mut d2), "pd dev again");
        assert_eq!(d, d2, "one doca_dev per PD");
        let ibv_pd = doca_verbs_bridge_verbs_pd_get_ibv_pd(pd);
        assert!(!ibv_pd.is_null());
        let mut od = null_mut();
        ok(
            doca_rdma_bridge_open_dev_from_pd(ibv_pd, &mut od),
            "open dev from pd",
        );
        let mut foreign = [0u8; 64];
        assert_eq!(
            doca_rdma_bridge_open_dev_from_pd(foreign.as_mut_ptr().cast(), &mut od),
            INVALID
        );
        assert_eq!(
            doca_rdma_bridge_open_dev_from_pd(null_mut(), &mut od),
            INVALID
        );
        let mut ibvp = null_mut();
        assert_eq!(doca_rdma_bridge_get_dev_pd(od, &mut ibvp), NOT_SUPPORTED);
        ok(doca_dev_close(od), "close dev from pd");

        // Bridges on the stand-ins.
        let ibv_ctx = doca_verbs_bridge_get_ibv_ctx(ctx);
        let mut ctx2 = null_mut();
        ok(
            doca_verbs_bridge_verbs_context_import(ibv_ctx, 0, &mut ctx2),
            "import",
        );
        let mut g2 = VerbsGid::default();
        ok(doca_soft_verbs_query_gid(ctx2, 0, &mut g2), "gid 2");
        assert_eq!(g.raw, g2.raw, "same device, same NIC");
        ok(doca_verbs_context_destroy(ctx2), "ctx2");
        let mut pd2 = null_mut();
        ok(
            doca_verbs_bridge_verbs_pd_import(ibv_pd, &mut pd2),
            "pd import",
        );
        ok(doca_verbs_pd_destroy(pd2), "pd2");
        let mut a2 = null_mut();
        ok(
            doca_verbs_bridge_verbs_query_device(ibv_ctx, &mut a2),
            "bridge query",
        );
        ok(doca_verbs_device_attr_free(a2), "free");
        assert_eq!(
            doca_verbs_bridge_verbs_context_import(foreign.as_mut_ptr().cast(), 0, &mut ctx2),
            INVALID
        );
        assert_eq!(
            doca_verbs_bridge_verbs_context_create(null_mut(), 0, &mut ctx2),
            NOT_SUPPORTED
        );
        assert_eq!(
            doca_verbs_bridge_qp_attr_set(null_mut(), null(), 0),
            NOT_SUPPORTED
        );
        assert_eq!(
            doca_verbs_bridge_poll_cq(null_mut(), 1, null_mut()),
            -libc::EOPNOTSUPP
        );
        assert_eq!(
            doca_verbs_bridge_post_send(null_mut(), null_mut(), null_mut()),
            libc::EOPNOTSUPP
        );
        // IBV_QP_STATE | ACCESS_FLAGS | PKEY_INDEX | PORT -> the samples' INIT mask.
        assert_eq!(
            doca_verbs_bridge_get_qp_attr_mask(1 | 8 | 16 | 32),
            mask::INIT
        );
        // IBV_QP_STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MIN_RNR_TIMER -> RTR.
        assert_eq!(
            doca_verbs_bridge_get_qp_attr_mask(1 | 1 << 7 | 1 << 8 | 1 << 20 | 1 << 12 | 1 << 15),
            mask::RTR
        );

        ok(doca_verbs_pd_destroy(pd), "pd destroy");
        ok(doca_verbs_context_destroy(ctx), "context destroy");
        assert_eq!(doca_verbs_pd_destroy(null_mut()), INVALID);
    }
}

#[test]
fn uar_umem_and_mmap_keys() {
    let base = Base::new();
    let dev = base.dev();
    // SAFETY: live device; valid out-pointers; the buffers outlive their registrations.
    unsafe {
        let mut uar = null_mut();
        assert_eq!(doca_uar_create(dev, 3, &mut uar), INVALID);
        assert_eq!(doca_uar_create(null(), 1, &mut uar), INVALID);
        ok(doca_uar_create(dev, 2, &mut uar), "uar");
        let (mut id, mut page, mut reg): (u32, *mut c_void, *mut c_void) =
            (0, null_mut(), null_mut());
        ok(doca_uar_id_get(uar, &mut id), "id");
        ok(doca_uar_page_get(uar, &mut page), "page");
        ok(doca_uar_reg_addr_get(uar, &mut reg), "reg");
        assert!(id != 0 && !page.is_null());
        assert!(reg as usize > page as usize && (reg as usize) < page as usize + 4096);
        ok(doca_uar_destroy(uar), "uar destroy");

        let mut buf = vec![0u8; 8192];
        let mut u = null_mut();
        assert_eq!(doca_umem_create(dev, null_mut(), 10, 1, &mut u), INVALID);
        assert_eq!(
            doca_umem_create(dev, buf.as_mut_ptr().cast(), 0, 1, &mut u),
            INVALID
        );
        assert_eq!(
            doca_umem_create(dev, buf.as_mut_ptr().cast(), 10, 0x100, &mut u),
            INVALID
        );
        ok(
            doca_umem_create(dev, buf.as_mut_ptr().cast(), 8192, 15, &mut u),
            "umem",
        );
        let (mut uid, mut size, mut addr): (u32, u32, *mut c_void) = (0, 0, null_mut());
        ok(doca_umem_get_id(u, &mut uid), "umem id");
        ok(doca_umem_get_size(u, &mut size), "umem size");
        ok(doca_umem_get_address(u, &mut addr), "umem addr");
        assert_eq!((size, addr), (8192, buf.as_mut_ptr().cast()));
        assert_ne!(uid, 0);
        // GPU umems need memory from doca_gpu_mem_alloc (and a GPU handle).
        assert_eq!(
            doca_umem_gpu_create(null_mut(), dev, buf.as_mut_ptr().cast(), 8192, 15, &mut u),
            INVALID
        );

        // A CQ over a host umem too small for its ring; then one that fits.
        let mut a = null_mut();
        ok(doca_verbs_cq_attr_create(&mut a), "attr");
        ok(doca_verbs_cq_attr_set_cq_size(a, 256), "size");
        ok(doca_verbs_cq_attr_set_external_umem(a, u, 0), "umem");
        let mut c = null_mut();
        assert_eq!(
            doca_verbs_cq_create(base.ctx, a, &mut c),
            INVALID,
            "256 CQEs need 16 KiB"
        );
        ok(doca_verbs_cq_attr_set_cq_size(a, 100), "size");
        ok(doca_verbs_cq_create(base.ctx, a, &mut c), "cq over umem");
        ok(doca_verbs_cq_destroy(c), "cq destroy");
        ok(doca_verbs_cq_attr_destroy(a), "attr destroy");
        ok(doca_umem_destroy(u), "umem destroy");

        // Keys of mmaps: an RDMA mmap has one; a local-only mmap has no NIC registration.
        let m = Mem::new(&base, 4096);
        assert!(
            m.key >= 0x8000_0000,
            "mmap keys are the NIC's caller-chosen keys"
        );
        let ibv_pd = doca_verbs_bridge_verbs_pd_get_ibv_pd(base.pd);
        let mut k = 0u32;
        use doca_soft::capi::doca_mmap::*;
        let mut lm = null_mut();
        ok(doca_mmap_create(&mut lm), "mmap");
        assert_eq!(
            doca_rdma_bridge_get_mmap_mkey_from_pd(lm, ibv_pd, &mut k),
            BAD_STATE
        );
        ok(
            doca_mmap_set_memrange(lm, buf.as_mut_ptr().cast(), 4096),
            "range",
        );
        ok(doca_mmap_start(lm), "start");
        assert_eq!(
            doca_rdma_bridge_get_mmap_mkey_from_pd(lm, ibv_pd, &mut k),
            NOT_PERMITTED
        );
        assert_eq!(
            doca_rdma_bridge_get_mmap_mkey_from_pd(m.mmap, null_mut(), &mut k),
            INVALID
        );
        ok(doca_mmap_stop(lm), "stop");
        ok(doca_mmap_destroy(lm), "destroy");
    }
}

#[test]
fn cq_and_qp_attributes_are_checked() {
    let base = Base::new();
    // SAFETY: live objects made here; valid out-pointers.
    unsafe {
        let mut a = null_mut();
        ok(doca_verbs_cq_attr_create(&mut a), "attr");
        let mut c = null_mut();
        assert_eq!(
            doca_verbs_cq_create(base.ctx, a, &mut c),
            INVALID,
            "no size"
        );
        assert_eq!(doca_verbs_cq_attr_set_cq_size(a, 0), INVALID);
        assert_eq!(doca_verbs_cq_attr_set_cq_size(a, (1 << 22) + 1), INVALID);
        assert_eq!(doca_verbs_cq_attr_set_entry_size(a, 1), NOT_SUPPORTED);
        assert_eq!(doca_verbs_cq_attr_set_entry_size(a, 7), INVALID);
        ok(doca_verbs_cq_attr_set_entry_size(a, 0), "64 B");
        assert_eq!(
            doca_verbs_cq_attr_set_comp_channel(a, null_mut()),
            NOT_SUPPORTED
        );
        assert_eq!(doca_verbs_cq_attr_set_dpa_thread_id(a, 1), NOT_SUPPORTED);
        assert_eq!(
            doca_verbs_cq_attr_set_external_umem(a, null_mut(), 0),
            INVALID
        );
        assert_eq!(doca_verbs_cq_attr_set_cq_size(null_mut(), 8), INVALID);
        ok(doca_verbs_cq_attr_set_cq_size(a, 100), "size");
        ok(doca_verbs_cq_attr_set_external_datapath_en(a, 1), "ext");
        ok(doca_verbs_cq_create(base.ctx, a, &mut c), "cq");
        let mut small = null_mut();
        ok(doca_verbs_cq_attr_set_cq_size(a, 8), "size");
        ok(doca_verbs_cq_create(base.ctx, a, &mut small), "small cq");
        let mut host = null_mut();
        ok(
            doca_verbs_cq_attr_set_external_datapath_en(a, 0),
            "cpu datapath",
        );
        ok(doca_verbs_cq_create(base.ctx, a, &mut host), "cpu cq");
        ok(doca_verbs_cq_attr_destroy(a), "attr destroy");
        assert_ne!(doca_verbs_cq_get_cqn(c), 0);
        assert_eq!(doca_verbs_cq_get_cqn(null()), 0);
        let (mut ring, mut n, mut sz): (*mut c_void, u32, u8) = (null_mut(), 0, 0);
        doca_verbs_cq_get_wq(c, &mut ring, &mut n, &mut sz);
        assert_eq!((n, sz), (128, 64), "rounded up to a power of two");
        let cqes = std::slice::from_raw_parts(ring as *const u8, 128 * 64);
        assert!(
            cqes.chunks(64).all(|e| e[63] == 0xf1),
            "CQEs start INVALID, owner 1"
        );
        let (mut reg, mut ci, mut arm): (*mut u64, *mut u32, *mut u32) =
            (null_mut(), null_mut(), null_mut());
        doca_verbs_cq_get_dbr_addr(c, &mut reg, &mut ci, &mut arm);
        assert!(reg.is_null(), "no external UAR");
        assert_eq!(arm as usize, ci as usize + 4);

        let mut ia = null_mut();
        ok(doca_verbs_qp_init_attr_create(&mut ia), "init attr");
        let mut qp = null_mut();
        assert_eq!(
            doca_verbs_qp_create(base.ctx, ia, &mut qp),
            INVALID,
            "no PD or CQ"
        );
        ok(doca_verbs_qp_init_attr_set_pd(ia, base.pd), "pd");
        ok(doca_verbs_qp_init_attr_set_send_cq(ia, c), "scq");
        ok(doca_verbs_qp_init_attr_set_receive_cq(ia, c), "rcq");
        ok(
            doca_verbs_qp_init_attr_set_external_datapath_en(ia, 1),
            "ext",
        );
        assert_eq!(
            doca_verbs_qp_init_attr_set_sq_wr(ia, (1 << 15) + 1),
            INVALID
        );
        assert_eq!(doca_verbs_qp_init_attr_set_send_max_sges(ia, 5), INVALID);
        assert_eq!(doca_verbs_qp_init_attr_set_qp_type(ia, 7), INVALID);
        assert_eq!(
            doca_verbs_qp_init_attr_set_srq(ia, null_mut()),
            NOT_SUPPORTED
        );
        assert_eq!(
            doca_verbs_qp_init_attr_set_dpa(ia, null_mut()),
            NOT_SUPPORTED
        );
        assert_eq!(doca_verbs_qp_init_attr_set_sq_sig_all(ia, 1), NOT_SUPPORTED);
        assert_eq!(doca_verbs_qp_init_attr_set_cqe_inline(ia, 2), INVALID);
        assert_eq!(doca_verbs_qp_init_attr_set_send_dbr_mode(ia, 3), INVALID);
        assert_eq!(
            doca_verbs_qp_create(base.ctx, ia, &mut qp),
            INVALID,
            "no SQ size"
        );
        ok(doca_verbs_qp_init_attr_set_sq_wr(ia, 100), "sq");
        ok(doca_verbs_qp_init_attr_set_rq_wr(ia, 100), "rq");
        // Getters give back what was set.
        assert_eq!(doca_verbs_qp_init_attr_get_pd(ia), base.pd);
        assert_eq!(doca_verbs_qp_init_attr_get_send_cq(ia), c);
        assert_eq!(doca_verbs_qp_init_attr_get_sq_wr(ia), 100);
        assert_eq!(doca_verbs_qp_init_attr_get_external_datapath_en(ia), 1);
        assert_eq!(doca_verbs_qp_init_attr_get_sq_wr(null()), 0);
        let (mut um, mut off): (*mut Umem, u64) = (null_mut(), 9);
        ok(
            doca_verbs_qp_init_attr_get_external_umem(ia, &mut um, &mut off),
            "get umem",
        );
        assert!(um.is_null() && off == 0);
        // 3.3's shapes: the UAR through an out-parameter, cqe_inline as a byte.
        let mut uar: *mut Uar = std::ptr::NonNull::dangling().as_ptr();
        ok(
            doca_verbs_qp_init_attr_get_external_uar(ia, &mut uar),
            "get uar",
        );
        assert!(uar.is_null(), "no UAR was set");
        assert_eq!(
            doca_verbs_qp_init_attr_get_external_uar(ia, null_mut()),
            INVALID
        );
        ok(
            doca_verbs_qp_init_attr_set_cqe_inline(ia, 1),
            "cqe inline 32B",
        );
        assert_eq!(doca_verbs_qp_init_attr_get_cqe_inline(ia), 1u8);
        ok(
            doca_verbs_qp_init_attr_set_cqe_inline(ia, 0),
            "cqe inline none",
        );

        // UC QPs, DPA-style ids, NO_DBR_INT: NOT_SUPPORTED at create.
        ok(doca_verbs_qp_init_attr_set_qp_type(ia, 1), "uc");
        assert_eq!(doca_verbs_qp_create(base.ctx, ia, &mut qp), NOT_SUPPORTED);
        ok(doca_verbs_qp_init_attr_set_qp_type(ia, 0), "rc");
        ok(doca_verbs_qp_init_attr_set_wq_umem(ia, 5, 0), "wq umem id");
        let (mut wid, mut woff) = (0u32, 0u64);
        ok(
            doca_verbs_qp_init_attr_get_wq_umem(ia, &mut wid, &mut woff),
            "get wq umem",
        );
        assert_eq!(wid, 5);
        assert_eq!(doca_verbs_qp_create(base.ctx, ia, &mut qp), NOT_SUPPORTED);
        let mut ia2 = null_mut();
        ok(doca_verbs_qp_init_attr_create(&mut ia2), "fresh init attr");
        ok(doca_verbs_qp_init_attr_destroy(ia), "destroy");
        let ia = ia2;
        ok(doca_verbs_qp_init_attr_set_pd(ia, base.pd), "pd");
        ok(doca_verbs_qp_init_attr_set_send_cq(ia, c), "scq");
        ok(doca_verbs_qp_init_attr_set_receive_cq(ia, c), "rcq");
        ok(doca_verbs_qp_init_attr_set_sq_wr(ia, 100), "sq");
        ok(doca_verbs_qp_init_attr_set_rq_wr(ia, 100), "rq");
        // The QP's external data path must match its CQs'.
        assert_eq!(doca_verbs_qp_create(base.ctx, ia, &mut qp), INVALID);
        ok(
            doca_verbs_qp_init_attr_set_external_datapath_en(ia, 1),
            "ext",
        );
        ok(
            doca_verbs_qp_init_attr_set_send_dbr_mode(ia, 2),
            "no dbr int",
        );
        assert_eq!(doca_verbs_qp_create(base.ctx, ia, &mut qp), NOT_SUPPORTED);
        ok(
            doca_verbs_qp_init_attr_set_send_dbr_mode(ia, 0),
            "dbr valid",
        );
        // CQs smaller than their queues (GPU pollers need a CQE slot per WQE slot).
        ok(doca_verbs_qp_init_attr_set_send_cq(ia, small), "small scq");
        assert_eq!(doca_verbs_qp_create(base.ctx, ia, &mut qp), INVALID);
        ok(doca_verbs_qp_init_attr_set_send_cq(ia, c), "scq");
        ok(
            doca_verbs_qp_init_attr_set_receive_cq(ia, small),
            "small rcq",
        );
        assert_eq!(doca_verbs_qp_create(base.ctx, ia, &mut qp), INVALID);
        ok(doca_verbs_qp_init_attr_set_receive_cq(ia, c), "rcq");
        ok(doca_verbs_qp_create(base.ctx, ia, &mut qp), "qp");
        assert_ne!(doca_verbs_qp_get_qpn(qp), 0);
        let (mut sq, mut sqn, mut rq, mut rqn, mut rsz): (*mut c_void, u32, *mut c_void, u32, u32) =
            (null_mut(), 0, null_mut(), 0, 0);
        doca_verbs_qp_get_wq(qp, &mut sq, &mut sqn, &mut rq, &mut rqn, &mut rsz);
        assert_eq!((sqn, rqn, rsz), (128, 128, 16));
        assert!(!sq.is_null() && !rq.is_null());
        assert!(!doca_verbs_qp_get_uar_addr(qp).is_null());
        assert!(!doca_verbs_qp_get_dbr_addr(qp).is_null());
        assert_eq!(doca_verbs_qp_query_ece(qp), 0);
        ok(doca_verbs_qp_set_ece(qp, 0), "ece 0");
        assert_eq!(doca_verbs_qp_set_ece(qp, 5), NOT_SUPPORTED);
        assert_eq!(doca_verbs_cq_destroy(c), IN_USE, "the QP uses it");
        assert_eq!(doca_verbs_pd_destroy(base.pd), IN_USE, "the QP uses it");
        ok(doca_verbs_qp_destroy(qp), "qp destroy");
        ok(doca_verbs_qp_init_attr_destroy(ia), "init attr destroy");
        ok(doca_verbs_cq_destroy(c), "cq");
        ok(doca_verbs_cq_destroy(small), "small");
        ok(doca_verbs_cq_destroy(host), "cpu cq");
    }
}

#[test]
fn the_state_machine_follows_the_samples_masks_and_refuses_the_rest() {
    let base = Base::new();
    let a = Qp::new(&base, QpOpts::default());
    let b = Qp::new(&base, QpOpts::default());
    assert_eq!(a.state(), RST);
    // SAFETY: live objects made here; valid out-pointers.
    unsafe {
        let mut at = null_mut();
        ok(doca_verbs_qp_attr_create(&mut at), "attr");
        assert_eq!(doca_verbs_qp_attr_set_next_state(at, 5), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_path_mtu(at, 5), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_rq_psn(at, 1 << 24), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_dest_qp_num(at, 1 << 24), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_ack_timeout(at, 32), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_retry_cnt(at, 8), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_rnr_retry(at, 8), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_min_rnr_timer(at, 32), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_atomic_mode(at, 9), INVALID);
        assert_eq!(doca_verbs_qp_attr_set_ah_attr(at, null_mut()), INVALID);
        ok(doca_verbs_qp_attr_set_next_state(at, RTR), "next RTR");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::RTR),
            INVALID,
            "RST -> RTR"
        );
        ok(doca_verbs_qp_attr_set_next_state(at, INIT), "next INIT");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT & !mask::PORT_NUM),
            INVALID,
            "no port"
        );
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT | mask::SQ_PSN),
            INVALID,
            "SQ PSN"
        );
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT | 1 << 18),
            NOT_SUPPORTED,
            "CC group"
        );
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT | 1 << 20),
            INVALID,
            "unknown bit"
        );
        ok(doca_verbs_qp_attr_set_port_num(at, 2), "port 2");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT),
            INVALID,
            "port 2 does not exist"
        );
        ok(doca_verbs_qp_attr_set_port_num(at, 1), "port 1");
        ok(doca_verbs_qp_attr_set_pkey_index(at, 1), "pkey 1");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT),
            INVALID,
            "P_Key index 1"
        );
        ok(doca_verbs_qp_attr_set_pkey_index(at, 0), "pkey 0");
        ok(
            doca_verbs_qp_attr_set_current_state(at, RTS),
            "wrong current",
        );
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::INIT | mask::CURRENT_STATE),
            INVALID
        );
        assert_eq!(a.state(), RST, "failed modifies change nothing");
        ok(doca_verbs_qp_modify(a.qp, at, mask::INIT), "RST -> INIT");
        assert_eq!(a.state(), INIT);
        // INIT -> RTR needs an AH with a GID of a soft NIC.
        ok(doca_verbs_qp_attr_set_next_state(at, RTR), "next RTR");
        ok(doca_verbs_qp_attr_set_dest_qp_num(at, b.qpn()), "dest");
        assert_eq!(doca_verbs_qp_modify(a.qp, at, mask::RTR), INVALID, "no AH");
        let mut ah = null_mut();
        ok(doca_verbs_ah_attr_create(base.ctx, &mut ah), "ah");
        assert_eq!(doca_verbs_ah_attr_set_addr_type(ah, 4), INVALID);
        assert_eq!(doca_verbs_ah_attr_set_sl(ah, 16), INVALID);
        assert_eq!(doca_verbs_ah_attr_set_dlid(ah, 1 << 16), INVALID);
        ok(doca_verbs_qp_attr_set_ah_attr(at, ah), "ah without gid");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::RTR),
            INVALID,
            "AH without GID"
        );
        let mut bogus = VerbsGid::default();
        bogus.raw[15] = 1;
        ok(doca_verbs_ah_attr_set_gid(ah, bogus), "bogus gid");
        ok(doca_verbs_qp_attr_set_ah_attr(at, ah), "ah");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::RTR),
            INVALID,
            "not a soft NIC GID"
        );
        ok(
            doca_verbs_ah_attr_set_gid(ah, VerbsGid { raw: base.gid }),
            "gid",
        );
        ok(doca_verbs_qp_attr_set_ah_attr(at, ah), "ah");
        ok(doca_verbs_qp_attr_set_dest_qp_num(at, 0), "dest 0");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::RTR),
            INVALID,
            "QP number 0"
        );
        ok(doca_verbs_qp_attr_set_dest_qp_num(at, b.qpn()), "dest");
        ok(doca_verbs_qp_modify(a.qp, at, mask::RTR), "INIT -> RTR");
        assert_eq!(a.state(), RTR);
        ok(doca_verbs_qp_attr_set_next_state(at, RTS), "next RTS");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::RTS & !mask::RETRY_CNT),
            INVALID
        );
        ok(doca_verbs_qp_modify(a.qp, at, mask::RTS), "RTR -> RTS");
        assert_eq!(a.state(), RTS);
        // RTS -> RTS changes attributes in place; RTS -> RTR does not exist.
        ok(
            doca_verbs_qp_modify(a.qp, at, mask::MIN_RNR_TIMER),
            "RTS -> RTS",
        );
        ok(doca_verbs_qp_attr_set_next_state(at, RTR), "next RTR");
        assert_eq!(doca_verbs_qp_modify(a.qp, at, mask::RTR), INVALID);
        // A connected soft-NIC QP cannot be reset; it can go to ERR.
        ok(doca_verbs_qp_attr_set_next_state(at, RST), "next RST");
        assert_eq!(
            doca_verbs_qp_modify(a.qp, at, mask::NEXT_STATE),
            NOT_SUPPORTED
        );
        ok(doca_verbs_qp_attr_set_next_state(at, ERR), "next ERR");
        ok(
            doca_verbs_qp_modify(a.qp, at, mask::NEXT_STATE),
            "RTS -> ERR",
        );
        assert_eq!(a.state(), ERR);
        // A QP that never connected can be reset.
        ok(doca_verbs_qp_attr_set_next_state(at, INIT), "next INIT");
        ok(doca_verbs_qp_modify(b.qp, at, mask::INIT), "b RST -> INIT");
        ok(doca_verbs_qp_attr_set_next_state(at, RST), "next RST");
        ok(
            doca_verbs_qp_modify(b.qp, at, mask::NEXT_STATE),
            "b INIT -> RST",
        );
        assert_eq!(b.state(), RST);
        ok(doca_verbs_ah_attr_destroy(ah), "ah destroy");
        ok(doca_verbs_qp_attr_destroy(at), "attr destroy");
    }
    // Everything posted to a QP in ERR completes with a flush error.
    let t = a
        .dev
        .p(doca_soft::testing::verbs::Addr { addr: 8, key: 1 }, 5, T)
        .unwrap();
    match a.dev.wait(t, T) {
        Err(doca_soft::testing::verbs::PollError::Error(c)) => {
            let (op, ctr, _, synd) = doca_soft::testing::verbs::cqe_fields(&c);
            assert_eq!((op, ctr, synd), (0xd, 0, 0x05), "REQ_ERR, WR_FLUSH");
        }
        r => panic!("expected a flush error, got {r:?}"),
    }
}

#[test]
fn exports_describe_the_rings_and_check_handlers() {
    let base = Base::new();
    let db = Qp::new(&base, QpOpts::default());
    // SAFETY: the export of a live Qp.
    let d = unsafe { descriptor(db.export) }.unwrap();
    let qpn = db.qpn();
    assert_eq!(d.qpn, qpn);
    assert_eq!(d.qpn_shift8_be, (qpn << 8).to_be());
    for (k, v) in d.qpn_ds_be.iter().enumerate() {
        assert_eq!(*v, ((qpn << 8) | (k as u32 + 1)).to_be());
    }
    assert_eq!(d.sq, (256, 255));
    assert_eq!(d.rq, (256, 255, 16));
    assert_eq!(d.handler, (handler::GPU_SM_DB, 1, false));
    assert_eq!(d.counters, [0; 5]);
    // SAFETY: live objects; valid out-pointers.
    unsafe {
        let (mut sq, mut sqn, mut rq, mut rqn, mut rsz): (*mut c_void, u32, *mut c_void, u32, u32) =
            (null_mut(), 0, null_mut(), 0, 0);
        doca_verbs_qp_get_wq(db.qp, &mut sq, &mut sqn, &mut rq, &mut rqn, &mut rsz);
        assert_eq!(
            d.addrs[0], sq as u64,
            "the descriptor's SQ is the QP's ring"
        );
        assert_eq!(d.addrs[3], rq as u64);
        assert_eq!(
            d.addrs[2],
            doca_verbs_qp_get_uar_addr(db.qp) as u64,
            "GPU_SM_DB: the register"
        );
        let (mut cring, mut cn, mut cs): (*mut c_void, u32, u8) = (null_mut(), 0, 0);
        doca_verbs_cq_get_wq(db.scq, &mut cring, &mut cn, &mut cs);
        assert_eq!(
            d.cq_sq,
            (cring as u64, doca_verbs_cq_get_cqn(db.scq), 256, 255, 64)
        );
        assert_eq!(d.cq_rq.1, doca_verbs_cq_get_cqn(db.rcq));
        let mut on = 9u8;
        ok(
            doca_gpu_verbs_cpu_proxy_enabled(db.export, &mut on),
            "enabled",
        );
        assert_eq!(on, 0);
        assert_eq!(doca_gpu_verbs_cpu_proxy_progress(db.export), NOT_SUPPORTED);
        // Exported: the QP cannot go.
        assert_eq!(doca_verbs_qp_destroy(db.qp), IN_USE);
        // Handlers: NO_DBR needs a NO_DBR_EXT QP, BlueFlame is not supported, 5+ unknown.
        let r = |h| export_qp_host(db.qp, h, 1, db.scq, db.rcq).map(|e| unexport_qp_host(e));
        assert_eq!(
            r(handler::GPU_SM_NO_DBR),
            Err(doca_soft::capi::doca_error::DocaError(INVALID))
        );
        assert_eq!(
            r(handler::GPU_SM_BF),
            Err(doca_soft::capi::doca_error::DocaError(NOT_SUPPORTED))
        );
        assert_eq!(r(5), Err(doca_soft::capi::doca_error::DocaError(INVALID)));
        assert_eq!(r(handler::AUTO), Ok(()));
        let auto = export_qp_host(db.qp, handler::AUTO, 1, db.scq, db.rcq).unwrap();
        assert_eq!(
            descriptor(auto).unwrap().handler.0,
            handler::GPU_SM_DB,
            "AUTO resolves to GPU_SM_DB"
        );
        unexport_qp_host(auto);
        // Wrong CQs.
        let e = export_qp_host(db.qp, handler::GPU_SM_DB, 1, db.rcq, db.rcq);
        assert_eq!(
            e.err(),
            Some(doca_soft::capi::doca_error::DocaError(INVALID))
        );
        // The GPU export needs a GPU handle.
        let mut out = null_mut();
        assert_eq!(
            doca_gpu_verbs_export_qp(
                null_mut(),
                base.dev(),
                db.qp,
                0,
                std::ptr::dangling_mut::<c_void>(),
                db.scq,
                db.rcq,
                &mut out
            ),
            INVALID
        );
        assert_eq!(doca_gpu_verbs_get_qp_dev(null_mut(), null_mut()), INVALID);
        assert_eq!(doca_gpu_verbs_unexport_qp(null_mut(), db.export), INVALID);
        let mut x = null_mut();
        assert_eq!(
            doca_gpu_verbs_bridge_export_qp(
                null_mut(),
                1,
                null_mut(),
                1,
                null_mut(),
                null_mut(),
                8,
                1,
                null_mut(),
                1,
                null_mut(),
                1,
                null_mut(),
                1,
                null_mut(),
                16,
                1,
                null_mut(),
                1,
                null_mut(),
                0,
                0,
                &mut x
            ),
            NOT_SUPPORTED
        );
    }
    // CPU proxy: its own slot, forwarded by doca_gpu_verbs_cpu_proxy_progress.
    let px = Qp::new(
        &base,
        QpOpts {
            handler: handler::CPU_PROXY,
            ..Default::default()
        },
    );
    // SAFETY: the export of a live Qp.
    let d = unsafe { descriptor(px.export) }.unwrap();
    assert_eq!(d.handler.0, handler::CPU_PROXY);
    // SAFETY: live QP.
    let reg = unsafe { doca_verbs_qp_get_uar_addr(px.qp) } as u64;
    assert_ne!(
        d.addrs[2], reg,
        "the proxy slot is not the doorbell register"
    );
    let nodbr = Qp::new(
        &base,
        QpOpts {
            handler: handler::GPU_SM_NO_DBR,
            no_dbr: true,
            ..Default::default()
        },
    );
    // SAFETY: the export of a live Qp.
    assert_eq!(
        unsafe { descriptor(nodbr.export) }.unwrap().handler.0,
        handler::GPU_SM_NO_DBR
    );
    // A QP without the external data path cannot be exported.
    // SAFETY: live objects; valid out-pointers.
    unsafe {
        let mut a = null_mut();
        let mut c = null_mut();
        ok(doca_verbs_cq_attr_create(&mut a), "attr");
        ok(doca_verbs_cq_attr_set_cq_size(a, 16), "size");
        ok(doca_verbs_cq_create(base.ctx, a, &mut c), "cq");
        let mut ia = null_mut();
        let mut qp = null_mut();
        ok(doca_verbs_qp_init_attr_create(&mut ia), "init");
        ok(doca_verbs_qp_init_attr_set_pd(ia, base.pd), "pd");
        ok(doca_verbs_qp_init_attr_set_send_cq(ia, c), "scq");
        ok(doca_verbs_qp_init_attr_set_sq_wr(ia, 16), "sq");
        ok(doca_verbs_qp_create(base.ctx, ia, &mut qp), "cpu qp");
        assert_eq!(
            export_qp_host(qp, handler::GPU_SM_DB, 1, c, null_mut()).err(),
            Some(doca_soft::capi::doca_error::DocaError(INVALID))
        );
        ok(doca_verbs_qp_destroy(qp), "qp");
        ok(doca_verbs_qp_init_attr_destroy(ia), "init");
        ok(doca_verbs_cq_destroy(c), "cq");
        ok(doca_verbs_cq_attr_destroy(a), "attr");
    }
}
