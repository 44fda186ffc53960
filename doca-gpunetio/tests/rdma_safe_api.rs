//! The safe RDMA and DMA API without a GPU: contexts put on the software runtime's
//! host data path through `configure_raw` (the testing hook), connections out of band and
//! through RDMA-CM between two contexts on `lo`, the device handle, memory exports and
//! remote maps, the out-of-band channel's framing, and errors that name the failed call.

use std::time::Duration;

use doca_gpunetio::rdma::{self, oob::OobStream, AddrType, Rdma, RemoteMmap};
use doca_gpunetio::{AccessFlags, Device, DocaError, Mmap, ProgressEngine};

fn host_rdma(dev: &Device, conns: u16, pe: Option<&ProgressEngine>) -> doca_gpunetio::Result<Rdma> {
    let mut b = Rdma::builder(dev)
        .permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE)
        .send_queue_size(128)
        .recv_queue_size(128)
        .max_connections(conns);
    if let Some(pe) = pe {
        b = b.rdma_cm(pe);
    }
    // SAFETY: the hook only moves the IDLE context's data path to host memory.
    unsafe {
        b.configure_raw(|r| {
            doca_soft::testing::rdma::rdma_set_host_datapath(r.cast()).map_err(|e| {
                doca_gpunetio::Error::InvalidArgument(format!("host data path: {e:?}"))
            })
        })
    }
    .start()
}

#[test]
fn out_of_band_connection_and_handle() {
    let dev = Device::open("lo").unwrap();
    let a = host_rdma(&dev, 1, None).unwrap();
    let b = host_rdma(&dev, 1, None).unwrap();
    let (da, ca) = a.export().unwrap();
    let (db, cb) = b.export().unwrap();
    assert_eq!(ca.id(), 0);
    assert_eq!(&da.as_bytes()[..4], b"DSRC");
    a.connect(&ca, db.as_bytes()).unwrap();
    b.connect(&cb, da.as_bytes()).unwrap();
    let h = a.gpu_handle().unwrap();
    assert!(!h.as_raw().is_null());
    // A second export: every connection is taken.
    let e = a.export().unwrap_err();
    assert_eq!(e.op(), Some("doca_rdma_export"));
    assert_eq!(e.doca_code(), Some(DocaError::FULL));
    // A connection of another context is refused before DOCA sees it.
    assert!(matches!(
        a.connect(&cb, db.as_bytes()),
        Err(doca_gpunetio::Error::InvalidArgument(_))
    ));
    // Connected already.
    let e = a.connect(&ca, db.as_bytes()).unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::BAD_STATE));
}

#[test]
fn malformed_details_and_bad_settings_name_the_call() {
    let dev = Device::open("lo").unwrap();
    let a = host_rdma(&dev, 1, None).unwrap();
    let (_, c) = a.export().unwrap();
    let e = a.connect(&c, &[7u8; 32]).unwrap_err();
    assert_eq!(
        (e.op(), e.doca_code()),
        (
            Some("doca_rdma_connect"),
            Some(DocaError::CONNECTION_ABORTED)
        )
    );
    let e = Rdma::builder(&dev).send_queue_size(0).start().unwrap_err();
    assert_eq!(e.op(), Some("doca_rdma_set_send_queue_size"));
    let e = Rdma::builder(&dev).start().unwrap_err();
    assert_eq!(
        (e.op(), e.doca_code()),
        (Some("doca_ctx_start"), Some(DocaError::NOT_SUPPORTED)),
        "no GPU data path"
    );
    let e = RemoteMmap::from_export(&dev, &[1, 2, 3]).unwrap_err();
    assert_eq!(e.op(), Some("doca_mmap_create_from_export"));
}

#[test]
fn memory_exports_become_remote_maps() {
    let dev = Device::open("lo").unwrap();
    let mut mem = vec![0u8; 8192];
    // SAFETY: `mem` outlives the map (dropped at the end of the test, after it).
    let map = unsafe {
        Mmap::from_host_range(
            mem.as_mut_ptr().cast(),
            mem.len(),
            &[&dev],
            AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_READ,
        )
    }
    .unwrap();
    let ex = rdma::export_mmap(&map, &dev).unwrap();
    let remote = RemoteMmap::from_export(&dev, ex.as_bytes()).unwrap();
    assert_eq!(remote.range().unwrap(), (mem.as_ptr() as u64, 8192));
    // A map without an RDMA right cannot be exported.
    // SAFETY: as above.
    let local_only = unsafe {
        Mmap::from_host_range(
            mem.as_mut_ptr().cast(),
            64,
            &[&dev],
            AccessFlags::LOCAL_READ_WRITE,
        )
    }
    .unwrap();
    let e = rdma::export_mmap(&local_only, &dev).unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::NOT_PERMITTED));
    drop((remote, map, local_only));
    drop(mem);
}

#[test]
fn rdma_cm_establishes_through_the_progress_engine() {
    let dev = Device::open("lo").unwrap();
    let pe_s = ProgressEngine::new().unwrap();
    let pe_c = ProgressEngine::new().unwrap();
    let server = host_rdma(&dev, 2, Some(&pe_s)).unwrap();
    let client = host_rdma(&dev, 2, Some(&pe_c)).unwrap();
    let port = 21000 + (std::process::id() % 20000) as u16;
    server.listen(port).unwrap();
    client
        .connect_to_addr(AddrType::Ipv4, "127.0.0.1", port)
        .unwrap();
    // Each side waits in its own thread (both must progress).
    let s = std::thread::spawn(move || {
        server
            .wait_established(Duration::from_secs(20))
            .map(|id| (id, server))
    });
    let id = client.wait_established(Duration::from_secs(20)).unwrap();
    let (sid, server) = s.join().unwrap().unwrap();
    assert_eq!((id, sid), (0, 0));
    assert_eq!(AddrType::parse("IPv4"), Some(AddrType::Ipv4));
    assert_eq!(AddrType::parse("gid"), Some(AddrType::Gid));
    assert_eq!(AddrType::parse("ip5"), None);
    // Nobody listens on this port: the attempt fails through the callback.
    server.stop_listen(port).unwrap();
    client
        .connect_to_addr(AddrType::Ipv4, "127.0.0.1", port)
        .unwrap();
    assert!(client.wait_established(Duration::from_secs(20)).is_err());
}

#[test]
fn out_of_band_channel_frames_blobs_as_the_samples_do() {
    let port = 22000 + (std::process::id() % 20000) as u16;
    let server = std::thread::spawn(move || {
        let mut s = OobStream::accept(port).unwrap();
        s.send_blob(b"server details").unwrap();
        let got = s.recv_blob().unwrap();
        s.send_u64(0x1122_3344_5566_7788).unwrap();
        // A length beyond the limit is refused.
        s.send(&(u64::MAX as usize).to_ne_bytes()).unwrap();
        got
    });
    let mut c = loop {
        match OobStream::connect("127.0.0.1", port) {
            Ok(c) => break c,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    assert_eq!(c.recv_blob().unwrap(), b"server details");
    c.send_blob(b"client").unwrap();
    assert_eq!(c.recv_u64().unwrap(), 0x1122_3344_5566_7788);
    assert!(c.recv_blob().is_err());
    assert_eq!(server.join().unwrap(), b"client");
    // The raw bytes: size_t length (host order), then the bytes.
    assert!(OobStream::connect("not an ip", port).is_err());
}
