//! The safe verbs API without a GPU: contexts, GID and port, device attributes, PDs and
//! memory regions over host memory (keys from DOCA memory maps), and the errors of bad
//! use. QPs need GPU memory for their umems: tests/verbs_gpu.rs covers them.

use doca_gpunetio::verbs::{Context, LinkLayer, MemoryRegion, NicHandler, Pd};
use doca_gpunetio::{AccessFlags, Device, DocaError};

fn lo() -> Context {
    Context::open(&Device::open("lo").expect("lo")).expect("verbs context on lo")
}

#[test]
fn contexts_report_gid_port_and_attributes() {
    let ctx = lo();
    let gid = ctx.gid(0).unwrap();
    assert_eq!(&gid.0[0..2], b"ds", "a soft NIC's GID");
    assert_eq!(&gid.0[12..16], &[127, 0, 0, 1], "lo's address");
    assert_eq!(ctx.gid(3).unwrap(), gid, "one GID whatever the index");
    let port = ctx.port().unwrap();
    assert_eq!((port.lid, port.link_layer), (0, LinkLayer::Ethernet));
    let a = ctx.device_attr().unwrap();
    assert_eq!((a.max_qp_rd_atom, a.max_qp_init_rd_atom), (16, 16));
    assert!(a.cqe_inline && a.send_dbr_mode_no_dbr);
    // A second context on the device shares its NIC.
    assert_eq!(lo().gid(0).unwrap(), gid);
    assert_eq!(ctx.device().info().iface_name(), "lo");
}

#[test]
fn host_memory_regions_have_keys_and_reject_bad_input() {
    let ctx = lo();
    let pd = Pd::new(&ctx).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let all = AccessFlags::LOCAL_READ_WRITE
        | AccessFlags::RDMA_READ
        | AccessFlags::RDMA_WRITE
        | AccessFlags::RDMA_ATOMIC;
    // SAFETY: `buf` outlives the regions (dropped first).
    let mr = unsafe { MemoryRegion::host(&pd, buf.as_mut_ptr().cast(), buf.len(), all) }.unwrap();
    assert_eq!((mr.addr(), mr.len()), (buf.as_ptr() as u64, 1 << 16));
    assert_ne!(mr.key(), 0);
    assert!(
        !mr.is_gpu_accessible(),
        "host memory is reachable by the NIC only"
    );
    // SAFETY: as above.
    let mr2 = unsafe { MemoryRegion::host(&pd, buf.as_mut_ptr().cast(), 4096, all) }.unwrap();
    assert_ne!(mr.key(), mr2.key(), "each registration its own key");
    // Local-only memory has no NIC registration, so no key.
    // SAFETY: as above.
    let e = unsafe {
        MemoryRegion::host(
            &pd,
            buf.as_mut_ptr().cast(),
            4096,
            AccessFlags::LOCAL_READ_WRITE,
        )
    }
    .unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::NOT_PERMITTED), "{e}");
    assert_eq!(e.op(), Some("doca_rdma_bridge_get_mmap_mkey_from_pd"));
    // SAFETY: a NULL range is refused before DOCA is called.
    assert!(unsafe { MemoryRegion::host(&pd, std::ptr::null_mut(), 16, all) }.is_err());
    drop((mr, mr2));
    drop(pd);
    assert!(doca_gpunetio::take_drop_errors().is_empty());
}

#[test]
fn nic_handlers_map_the_samples_values() {
    assert_eq!(NicHandler::from_index(0), Some(NicHandler::Auto));
    assert_eq!(NicHandler::from_index(1), Some(NicHandler::CpuProxy));
    assert_eq!(NicHandler::from_index(4), Some(NicHandler::GpuSmNoDbr));
    assert_eq!(NicHandler::from_index(5), None);
    assert_eq!(NicHandler::GpuSmDb.raw().0, 2);
    assert_eq!(NicHandler::default(), NicHandler::Auto);
}
