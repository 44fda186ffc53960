//! The `doca_rdma.h` C API in one process: state rules, settings and their checks,
//! capabilities, malformed connection blobs, what is not supported, and the RDMA-CM
//! emulation (a listening context and a connecting one on `lo`, results through the
//! callbacks inside `doca_pe_progress`, then data between them).

mod rdma_support;

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use doca_soft::capi::doca_ctx::*;
use doca_soft::capi::doca_dev::*;
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_pe::*;
use doca_soft::capi::doca_rdma::*;
use doca_soft::capi::doca_types::DocaData;
use doca_soft::testing::rdma::{rdma_set_host_datapath, FLAG_IMM, RECV_WAIT_B};
use rdma_support::*;

const BAD: u32 = DocaError::BAD_STATE.0;
const INVAL: u32 = DocaError::INVALID_VALUE.0;
const UNSUP: u32 = DocaError::NOT_SUPPORTED.0;

fn lo_info() -> (*mut *mut DevInfo, *mut DevInfo) {
    let mut list = std::ptr::null_mut();
    let mut n = 0u32;
    // SAFETY: valid out-pointers; the caller destroys the list.
    unsafe {
        assert_eq!(doca_devinfo_create_list(&mut list, &mut n), 0);
        let infos = std::slice::from_raw_parts(list, n as usize);
        for &i in infos {
            let mut name = [0 as std::ffi::c_char; 64];
            if doca_devinfo_get_ibdev_name(i, name.as_mut_ptr(), 64) == 0
                && std::ffi::CStr::from_ptr(name.as_ptr()).to_bytes() == b"soft_lo"
            {
                return (list, i);
            }
        }
    }
    panic!("no soft_lo");
}

#[test]
fn capabilities_of_a_device() {
    let (list, lo) = lo_info();
    let mut v = 0u32;
    let mut gid = [RdmaGid::default(); 2];
    // SAFETY: a live list entry; valid out-pointers; NULL is rejected.
    unsafe {
        assert_eq!(doca_rdma_cap_task_write_is_supported(lo), 0);
        assert_eq!(
            doca_rdma_cap_task_write_is_supported(std::ptr::null()),
            INVAL
        );
        assert_eq!(doca_rdma_cap_get_max_send_queue_size(lo, &mut v), 0);
        assert_eq!(v, 32768);
        assert_eq!(doca_rdma_cap_get_max_recv_queue_size(lo, &mut v), 0);
        assert_eq!(v, 32768);
        assert_eq!(doca_rdma_cap_get_max_send_buf_list_len(lo, &mut v), 0);
        assert_eq!(v, 1);
        assert_eq!(doca_rdma_cap_get_max_message_size(lo, &mut v), 0);
        assert_eq!(v, 0x7fff_ffff);
        assert_eq!(doca_rdma_cap_get_gid_table_size(lo, &mut v), 0);
        assert_eq!(v, 1);
        assert_eq!(doca_rdma_cap_get_gid(lo, 0, 1, gid.as_mut_ptr()), 0);
        assert_eq!(
            gid[0].raw,
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]
        );
        assert_eq!(doca_rdma_cap_get_gid(lo, 0, 2, gid.as_mut_ptr()), INVAL);
        assert_eq!(doca_rdma_cap_get_gid(lo, 1, 1, gid.as_mut_ptr()), INVAL);
        assert_eq!(
            doca_rdma_cap_get_gid_table_size(lo, std::ptr::null_mut()),
            INVAL
        );
        assert_eq!(
            doca_rdma_cap_transport_type_is_supported(lo, TRANSPORT_RC),
            0
        );
        assert_eq!(
            doca_rdma_cap_transport_type_is_supported(lo, TRANSPORT_DC),
            UNSUP
        );
        assert_eq!(doca_rdma_cap_transport_type_is_supported(lo, 9), INVAL);
        assert_eq!(doca_devinfo_destroy_list(list), 0);
    }
}

#[test]
fn settings_state_rules_and_malformed_blobs() {
    let dev = open_lo();
    let mut r = std::ptr::null_mut();
    let mut h: *mut c_void = std::ptr::null_mut();
    let (mut p, mut n, mut c) = (std::ptr::null(), 0usize, std::ptr::null_mut());
    let (mut v32, mut v16, mut v8) = (0u32, 0u16, 0u8);
    // SAFETY: live handles; valid out-pointers; NULL handles are rejected before use.
    unsafe {
        assert_eq!(doca_rdma_create(std::ptr::null_mut(), &mut r), INVAL);
        assert_eq!(doca_rdma_create(dev, std::ptr::null_mut()), INVAL);
        assert_eq!(doca_rdma_create(dev, &mut r), 0);
        let ctx = doca_rdma_as_ctx(r);
        assert!(!ctx.is_null());
        assert!(doca_rdma_as_ctx(std::ptr::null_mut()).is_null());
        assert_eq!(
            doca_dev_close(dev),
            DocaError::IN_USE.0,
            "the context uses it"
        );

        // Settings and their checks.
        assert_eq!(doca_rdma_set_send_queue_size(r, 0), UNSUP);
        assert_eq!(doca_rdma_set_send_queue_size(r, 40000), UNSUP);
        assert_eq!(doca_rdma_set_send_queue_size(r, 100), 0);
        assert_eq!(doca_rdma_get_send_queue_size(r, &mut v32), 0);
        assert_eq!(v32, 128, "rounded up to a power of two");
        assert_eq!(doca_rdma_set_recv_queue_size(r, 64), 0);
        assert_eq!(doca_rdma_set_permissions(r, 0x10), INVAL);
        assert_eq!(doca_rdma_set_permissions(r, 5), 0);
        assert_eq!(doca_rdma_get_permissions(r, &mut v32), 0);
        assert_eq!(v32, 5);
        assert_eq!(doca_rdma_set_max_num_connections(r, 0), UNSUP);
        assert_eq!(doca_rdma_set_max_num_connections(r, 1), 0);
        assert_eq!(doca_rdma_get_max_num_connections(r, &mut v16), 0);
        assert_eq!(v16, 1);
        assert_eq!(doca_rdma_set_transport_type(r, 7), INVAL);
        assert_eq!(doca_rdma_set_mtu(r, 9), INVAL);
        assert_eq!(doca_rdma_set_mtu(r, 2), 0);
        assert_eq!(doca_rdma_set_max_send_buf_list_len(r, 2), INVAL);
        assert_eq!(doca_rdma_set_gid_index(r, 0), 0);
        assert_eq!(doca_rdma_set_grh_enabled(r, 1), 0);
        assert_eq!(doca_rdma_get_grh_enabled(r, &mut v8), 0);
        assert_eq!(v8, 1);
        assert_eq!(doca_rdma_set_sl(r, 3), 0);
        assert_eq!(doca_rdma_set_rnr_retry_count(r, 5), 0);
        assert_eq!(doca_rdma_get_rnr_retry_count(r, &mut v8), 0);
        assert_eq!(v8, 5);
        assert_eq!(doca_rdma_get_sl(r, std::ptr::null_mut()), INVAL);

        // Nothing of a running context before start.
        assert_eq!(doca_rdma_get_gpu_handle(r, &mut h), BAD);
        assert_eq!(doca_rdma_export(r, &mut p, &mut n, &mut c), BAD);
        assert_eq!(doca_rdma_start_listen_to_port(r, 13579), BAD);

        // Only the GPU data path: start without it is refused and the context stays IDLE.
        assert_eq!(doca_ctx_start(ctx), UNSUP);
        let mut st = 9u32;
        assert_eq!(doca_ctx_get_state(ctx, &mut st), 0);
        assert_eq!(st, STATE_IDLE);
        // DC is refused at start on the GPU data path.
        rdma_set_host_datapath(r.cast()).unwrap();
        assert_eq!(doca_rdma_set_transport_type(r, TRANSPORT_DC), 0);
        assert_eq!(doca_ctx_start(ctx), UNSUP);
        assert_eq!(doca_rdma_set_transport_type(r, TRANSPORT_RC), 0);

        assert_eq!(doca_ctx_start(ctx), 0);
        assert_eq!(
            doca_rdma_set_send_queue_size(r, 64),
            BAD,
            "setters after start"
        );
        assert_eq!(doca_rdma_set_permissions(r, 1), BAD);
        assert_eq!(doca_rdma_destroy(r), BAD, "destroy a running context");
        assert_eq!(doca_rdma_get_gpu_handle(r, &mut h), 0);
        assert!(!h.is_null());

        // One connection: the second export is FULL.
        assert_eq!(doca_rdma_export(r, &mut p, &mut n, &mut c), 0);
        assert_eq!(n, 32);
        let blob = std::slice::from_raw_parts(p, n).to_vec();
        assert_eq!(&blob[..4], b"DSRC");
        let (mut p2, mut n2, mut c2) = (std::ptr::null(), 0usize, std::ptr::null_mut());
        assert_eq!(
            doca_rdma_export(r, &mut p2, &mut n2, &mut c2),
            DocaError::FULL.0
        );
        let mut id = 9u32;
        assert_eq!(doca_rdma_connection_get_id(c, &mut id), 0);
        assert_eq!(id, 0);
        assert_eq!(
            doca_rdma_connection_set_user_data(c, DocaData { u64: 42 }),
            0
        );
        let mut ud = DocaData { u64: 0 };
        assert_eq!(doca_rdma_connection_get_user_data(c, &mut ud), 0);
        assert_eq!(ud.u64, 42);
        let mut a = std::ptr::null_mut();
        assert_eq!(doca_rdma_connection_get_addr(c, &mut a), UNSUP);

        // Malformed blobs: CONNECTION_ABORTED, and the connection can still connect.
        let junk = [0x41u8; 32];
        let conn_aborted = DocaError::CONNECTION_ABORTED.0;
        assert_eq!(doca_rdma_connect(r, junk.as_ptr(), 32, c), conn_aborted);
        assert_eq!(doca_rdma_connect(r, blob.as_ptr(), 31, c), conn_aborted);
        let mut bad_qpn = blob.clone();
        bad_qpn[24..28].copy_from_slice(&[0, 0, 0, 0]);
        assert_eq!(doca_rdma_connect(r, bad_qpn.as_ptr(), 32, c), conn_aborted);
        assert_eq!(doca_rdma_connect(r, std::ptr::null(), 32, c), INVAL);
        assert_eq!(
            doca_rdma_connect(r, blob.as_ptr(), 32, std::ptr::null_mut()),
            INVAL
        );
        // A connection of another context is not ours.
        let mut other = std::ptr::null_mut();
        assert_eq!(doca_rdma_create(dev, &mut other), 0);
        rdma_set_host_datapath(other.cast()).unwrap();
        assert_eq!(doca_ctx_start(doca_rdma_as_ctx(other)), 0);
        let (mut po, mut no, mut co) = (std::ptr::null(), 0usize, std::ptr::null_mut());
        assert_eq!(doca_rdma_export(other, &mut po, &mut no, &mut co), 0);
        assert_eq!(doca_rdma_connect(r, blob.as_ptr(), 32, co), INVAL);
        // Connect to the other context's blob (same NIC), then once more: BAD_STATE.
        let oblob = std::slice::from_raw_parts(po, no).to_vec();
        assert_eq!(doca_rdma_connect(r, oblob.as_ptr(), 32, c), 0);
        assert_eq!(doca_rdma_connect(r, oblob.as_ptr(), 32, c), BAD);

        // Not supported: the librdmacm bridge.
        assert_eq!(
            doca_rdma_bridge_prepare_connection(r, std::ptr::null_mut(), &mut c2),
            UNSUP
        );
        assert_eq!(
            doca_rdma_bridge_accept(r, std::ptr::null_mut(), 0, c),
            UNSUP
        );
        assert_eq!(doca_rdma_bridge_established(r, c), UNSUP);

        // Stop, then everything of a running context is BAD_STATE again.
        assert_eq!(doca_ctx_stop(ctx), 0);
        assert_eq!(doca_rdma_get_gpu_handle(r, &mut h), BAD);
        assert_eq!(doca_rdma_export(r, &mut p, &mut n, &mut c), BAD);
        assert_eq!(doca_rdma_destroy(r), 0);
        destroy_rdma(other);
        assert_eq!(doca_dev_close(dev), 0);
    }
}

#[test]
fn addresses() {
    let mut a = std::ptr::null_mut();
    let (mut t, mut text, mut port) = (9u32, std::ptr::null(), 0u16);
    // SAFETY: valid strings and out-pointers; NULL is rejected.
    unsafe {
        assert_eq!(
            doca_rdma_addr_create(0, c"127.0.0.1".as_ptr(), 13579, &mut a),
            0
        );
        assert_eq!(
            doca_rdma_addr_get_params(a, &mut t, &mut text, &mut port),
            0
        );
        assert_eq!((t, port), (0, 13579));
        assert_eq!(
            std::ffi::CStr::from_ptr(text).to_str().unwrap(),
            "127.0.0.1"
        );
        assert_eq!(doca_rdma_addr_destroy(a), 0);
        assert_eq!(
            doca_rdma_addr_create(0, c"not-an-ip".as_ptr(), 1, &mut a),
            INVAL
        );
        assert_eq!(doca_rdma_addr_create(1, c"::1".as_ptr(), 1, &mut a), 0);
        assert_eq!(doca_rdma_addr_destroy(a), 0);
        assert_eq!(doca_rdma_addr_create(7, c"::1".as_ptr(), 1, &mut a), INVAL);
        assert_eq!(doca_rdma_addr_create(0, std::ptr::null(), 1, &mut a), INVAL);
        assert_eq!(doca_rdma_addr_destroy(std::ptr::null_mut()), INVAL);
    }
}

// What the CM callbacks saw, per context (user data 1 = server, 2 = client).
static REQUESTS: AtomicUsize = AtomicUsize::new(0);
static ESTABLISHED: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];
static FAILED: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];
static DISCONNECTED: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];
static LAST_CONN_UD: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn on_request(c: *mut RdmaConnection, ctx_ud: DocaData) {
    // SAFETY: the union was set from an integer.
    assert_eq!(unsafe { ctx_ud.u64 }, 1);
    REQUESTS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the connection handed to the callback is live.
    unsafe {
        assert_eq!(doca_rdma_connection_accept(c, std::ptr::null_mut(), 0), 0);
        assert_eq!(
            doca_rdma_connection_set_user_data(c, DocaData { u64: 77 }),
            0
        );
    }
}

unsafe extern "C" fn on_established(_c: *mut RdmaConnection, ud: DocaData, ctx_ud: DocaData) {
    // SAFETY: the unions were set from integers.
    let (ud, side) = unsafe { (ud.u64, ctx_ud.u64 as usize) };
    LAST_CONN_UD.store(ud as u32, Ordering::SeqCst);
    ESTABLISHED[side].fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn on_failure(_c: *mut RdmaConnection, _ud: DocaData, ctx_ud: DocaData) {
    // SAFETY: the union was set from an integer.
    FAILED[unsafe { ctx_ud.u64 } as usize].fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn on_disconnect(c: *mut RdmaConnection, _ud: DocaData, ctx_ud: DocaData) {
    // SAFETY: the union was set from an integer; the connection is live.
    unsafe {
        DISCONNECTED[ctx_ud.u64 as usize].fetch_add(1, Ordering::SeqCst);
        assert_eq!(doca_rdma_connection_disconnect(c), 0);
    }
}

/// A context on the host data path with the CM callbacks and a PE; user data `side`.
unsafe fn cm_context(dev: *mut Dev, side: u64, conns: u16) -> (*mut Rdma, *mut Pe) {
    let (mut r, mut pe) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: caller's live device; valid out-pointers.
    unsafe {
        assert_eq!(doca_rdma_create(dev, &mut r), 0);
        assert_eq!(doca_rdma_set_max_num_connections(r, conns), 0);
        assert_eq!(doca_rdma_set_permissions(r, PERMS), 0);
        assert_eq!(
            doca_rdma_set_connection_state_callbacks(
                r,
                Some(on_request),
                Some(on_established),
                Some(on_failure),
                Some(on_disconnect)
            ),
            0
        );
        rdma_set_host_datapath(r.cast()).unwrap();
        assert_eq!(doca_pe_create(&mut pe), 0);
        let ctx = doca_rdma_as_ctx(r);
        assert_eq!(doca_pe_connect_ctx(pe, ctx), 0);
        assert_eq!(doca_ctx_set_user_data(ctx, DocaData { u64: side }), 0);
        assert_eq!(doca_ctx_start(ctx), 0);
    }
    (r, pe)
}

fn progress_until(pes: &[*mut Pe], what: &str, done: impl Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !done() {
        for &pe in pes {
            // SAFETY: live PEs.
            unsafe { doca_pe_progress(pe) };
        }
        assert!(Instant::now() < end, "{what}");
        std::thread::sleep(Duration::from_micros(10));
    }
}

#[test]
fn rdma_cm_emulation_connects_refuses_and_disconnects() {
    let dev = open_lo();
    // SAFETY: live handles throughout; destroyed once at the end.
    unsafe {
        let (srv, spe) = cm_context(dev, 1, 2);
        let (cli, cpe) = cm_context(dev, 2, 3);
        let port = 20000 + (std::process::id() % 20000) as u16;
        assert_eq!(doca_rdma_start_listen_to_port(srv, port), 0);
        assert_eq!(
            doca_rdma_start_listen_to_port(srv, port),
            DocaError::ALREADY_EXIST.0
        );
        let mut addr = std::ptr::null_mut();
        assert_eq!(
            doca_rdma_addr_create(0, c"127.0.0.1".as_ptr(), port, &mut addr),
            0
        );

        // Two connections, like the sample's CM mode.
        for k in 1..=2usize {
            assert_eq!(doca_rdma_connect_to_addr(cli, addr, DocaData { u64: 5 }), 0);
            progress_until(&[spe, cpe], "established on both sides", || {
                ESTABLISHED[1].load(Ordering::SeqCst) == k
                    && ESTABLISHED[2].load(Ordering::SeqCst) == k
            });
        }
        assert_eq!(REQUESTS.load(Ordering::SeqCst), 2);

        // Data over CM connection 1: the client writes with immediate into the server.
        let sc = cpu_device(srv);
        let cc = cpu_device(cli);
        let target = Region::new(dev, 1, 256, 0);
        let src = Region::new(dev, 1, 256, 0x6b);
        let remote = Remote::new(dev, &target.blob, 1, 256);
        sc.recv(None, 0, 0, 0, None).unwrap();
        sc.recv_commit_strong().unwrap();
        cc.write(
            1,
            &remote.bufs()[0],
            0,
            &src.bufs()[0],
            0,
            256,
            0x1234,
            FLAG_IMM,
            None,
        )
        .unwrap();
        cc.commit_strong(1).unwrap();
        assert_eq!(cc.wait_all().unwrap(), 1);
        let mut got = Vec::new();
        sc.recv_wait_all(RECV_WAIT_B, &mut got).unwrap();
        assert_eq!(
            got,
            vec![(0x1234, 1)],
            "connection index 1 on the server too"
        );
        assert!(target.snapshot().iter().all(|&b| b == 0x6b));

        // The server has no third connection: the client's third attempt fails.
        assert_eq!(doca_rdma_connect_to_addr(cli, addr, DocaData { u64: 6 }), 0);
        progress_until(&[spe, cpe], "refused", || {
            FAILED[2].load(Ordering::SeqCst) == 1
        });
        // Nobody listens any more: a connect fails through the callback, not the call.
        assert_eq!(doca_rdma_stop_listen_to_port(srv, port), 0);
        assert_eq!(
            doca_rdma_stop_listen_to_port(srv, port),
            DocaError::NOT_FOUND.0
        );

        // The client stops: the server sees both connections go.
        assert_eq!(doca_ctx_stop(doca_rdma_as_ctx(cli)), 0);
        progress_until(&[spe], "disconnected", || {
            DISCONNECTED[1].load(Ordering::SeqCst) == 2
        });
        assert_eq!(doca_rdma_addr_destroy(addr), 0);
        drop((target, src, remote));
        assert_eq!(doca_rdma_destroy(cli), 0);
        destroy_rdma(srv);
        assert_eq!(doca_pe_destroy(spe), 0);
        assert_eq!(doca_pe_destroy(cpe), 0);
        assert_eq!(doca_dev_close(dev), 0);
    }
}
