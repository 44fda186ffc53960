//! The RX ring protocol driven from the CPU: the producer (RX proxy / port sink) and the CPU
//! consumer that runs the device header's algorithm on the same structs.

use doca_soft::capi::doca_error::{DocaError, DocaResult};
use doca_soft::testing::{CpuRxq, DeviceMem, DropReason, PktBuf, RxAttr, RxRing, RX_NO_PKT};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

fn frame(seq: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seq as usize * 31 + i * 7) as u8)
        .collect()
}

/// Host memory playing device memory: addresses are host pointers, but the ring may only
/// write the packet buffer through `copy_to_device` (no CPU mapping is offered).
#[derive(Default)]
struct FakeDevice {
    copies: AtomicU64,
    blocks: Mutex<Vec<(u64, Vec<u64>)>>,
}

impl DeviceMem for FakeDevice {
    fn alloc_mapped(&self, size: usize) -> DocaResult<(u64, *mut u8)> {
        let mut v = vec![0u64; size.div_ceil(8)];
        let p = v.as_mut_ptr() as u64;
        self.blocks.lock().unwrap().push((p, v));
        Ok((p, p as *mut u8))
    }
    fn free_mapped(&self, dev_addr: u64) {
        self.blocks.lock().unwrap().retain(|b| b.0 != dev_addr);
    }
    fn copy_to_device(&self, dst: u64, src: &[u8]) -> DocaResult<()> {
        self.copies.fetch_add(1, Ordering::SeqCst);
        // SAFETY: tests only pass addresses inside their own packet buffers.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }
    fn copy_from_device(&self, _dst: &mut [u8], _src: u64) -> DocaResult<()> {
        Err(DocaError::NOT_SUPPORTED)
    }
    fn cpu_ptr_of(&self, _dev_addr: u64) -> Option<*mut u8> {
        None
    }
}

fn host_ring(buf: &mut [u8], max_pkt: u32) -> RxRing {
    RxRing::new(PktBuf::host(buf.as_mut_ptr(), buf.len(), 7), max_pkt, None).unwrap()
}

fn consumer(r: &RxRing) -> CpuRxq {
    // SAFETY: host-memory ring: handle addresses are CPU pointers; the ring outlives the
    // consumer in every test.
    unsafe { CpuRxq::new(r.handle_cpu()) }
}

#[test]
fn frames_pushed_are_consumed_with_exact_counts_and_bytes() {
    let mut buf = vec![0u8; 64 * 256];
    let r = host_ring(&mut buf, 256);
    assert_eq!(r.pkt_num(), 64);
    let c = consumer(&r);
    assert_eq!(c.recv(8, 1_000, None), (RX_NO_PKT, 0), "empty ring");
    let frames: Vec<Vec<u8>> = (0..40).map(|i| frame(i, 60 + i as usize)).collect();
    for (i, f) in frames.iter().enumerate() {
        r.push(f, 1000 + i as u64).unwrap();
    }
    // Not published before flush.
    assert_eq!(c.recv(0, 1_000, None).1, 0);
    r.flush();
    let mut attrs = vec![RxAttr::default(); 64];
    let (first, n) = c.recv(0, 1_000, Some(&mut attrs));
    assert_eq!((first, n), (0, 40));
    for k in 0..40usize {
        assert_eq!(attrs[k].bytes as usize, frames[k].len());
        assert_eq!(attrs[k].timestamp_ns, 1000 + k as u64);
        assert_eq!(c.pkt(first + k as u64, attrs[k].bytes), &frames[k][..]);
        assert_eq!(c.pkt_bytes(first + k as u64) as usize, frames[k].len());
    }
    let s = r.counters().snapshot();
    assert_eq!((s.received, s.delivered, s.dropped_ring_full), (40, 40, 0));
}

#[test]
fn max_rx_pkts_limits_one_call_and_the_rest_follows() {
    let mut buf = vec![0u8; 16 * 128];
    let r = host_ring(&mut buf, 128);
    let c = consumer(&r);
    for i in 0..10 {
        r.push(&frame(i, 64), 0).unwrap();
    }
    r.flush();
    assert_eq!(c.recv(4, 0, None), (0, 4));
    assert_eq!(c.recv(4, 0, None), (4, 4));
    assert_eq!(
        c.recv(4, 1_000, None),
        (8, 2),
        "timeout returns what arrived"
    );
}

#[test]
fn wrap_around_over_several_laps_keeps_order_and_payloads() {
    let mut buf = vec![0u8; 8 * 128];
    let r = host_ring(&mut buf, 128);
    let c = consumer(&r);
    let mut seq = 0u32;
    let mut attrs = vec![RxAttr::default(); 8];
    for _lap in 0..12 {
        // 5 per round over 8 slots: batches straddle the end of the ring.
        for _ in 0..5 {
            r.push(&frame(seq, 100), u64::from(seq)).unwrap();
            seq += 1;
        }
        r.flush();
        let (first, n) = c.recv(5, 0, Some(&mut attrs));
        assert_eq!(n, 5);
        assert_eq!(first, u64::from((seq - 5) % 8));
        for k in 0..5u32 {
            let want = frame(seq - 5 + k, 100);
            // Index first+k may exceed pkt_num: get_pkt_addr wraps once.
            assert_eq!(c.pkt(first + u64::from(k), 100), &want[..]);
            assert_eq!(attrs[k as usize].timestamp_ns, u64::from(seq - 5 + k));
        }
    }
    let s = r.counters().snapshot();
    assert_eq!((s.received, s.delivered), (60, 60));
}

#[test]
fn full_completion_ring_drops_and_keeps_unconsumed_entries() {
    let mut buf = vec![0u8; 8 * 128];
    let r = host_ring(&mut buf, 128);
    let c = consumer(&r);
    for i in 0..8 {
        r.push(&frame(i, 90), 0).unwrap();
    }
    for i in 8..11 {
        assert_eq!(r.push(&frame(i, 90), 0), Err(DropReason::RingFull));
    }
    r.flush();
    let s = r.counters().snapshot();
    assert_eq!((s.received, s.delivered, s.dropped_ring_full), (11, 8, 3));
    let (first, n) = c.recv(0, 1_000, None);
    assert_eq!((first, n), (0, 8));
    for k in 0..8 {
        assert_eq!(c.pkt(k, 90), &frame(k as u32, 90)[..], "entry {k} intact");
    }
    // Space again after consumption.
    r.push(&frame(99, 90), 0).unwrap();
    r.flush();
    assert_eq!(c.recv(0, 1_000, None), (0, 1));
    assert_eq!(c.pkt(0, 90), &frame(99, 90)[..]);
}

#[test]
fn too_big_and_stopped_frames_are_dropped_and_counted() {
    let mut buf = vec![0u8; 4 * 128];
    let r = host_ring(&mut buf, 128);
    assert_eq!(r.push(&[0u8; 129], 0), Err(DropReason::TooBig));
    r.push(&[1u8; 128], 0).unwrap();
    r.set_stopped(true);
    assert_eq!(r.push(&[2u8; 10], 0), Err(DropReason::Stopped));
    r.flush();
    let s = r.counters().snapshot();
    assert_eq!((s.received, s.delivered, s.dropped_too_big), (3, 1, 1));
}

#[test]
fn device_buffers_get_one_copy_per_contiguous_run() {
    let dev = Arc::new(FakeDevice::default());
    let d: Arc<dyn DeviceMem> = dev.clone();
    let mut buf = vec![0u8; 16 * 64];
    let pkt = PktBuf {
        addr: buf.as_mut_ptr() as u64,
        host: None,
        len: buf.len(),
        mkey: 1,
        device: Some(d.clone()),
    };
    let r = RxRing::new(pkt, 64, Some(&d)).unwrap();
    let c = consumer(&r);
    for i in 0..6 {
        r.push(&frame(i, 50), 0).unwrap();
    }
    r.flush();
    assert_eq!(dev.copies.load(Ordering::SeqCst), 1, "six slots, one copy");
    assert_eq!(c.recv(0, 1_000, None), (0, 6));
    for i in 6..20 {
        r.push(&frame(i, 50), 0).unwrap();
    }
    r.flush();
    assert_eq!(
        dev.copies.load(Ordering::SeqCst),
        3,
        "slots 6..16 then 0..4: two runs"
    );
    let (first, n) = c.recv(0, 1_000, None);
    assert_eq!((first, n), (6, 14));
    for k in 0..14u64 {
        assert_eq!(c.pkt(first + k, 50), &frame(6 + k as u32, 50)[..]);
    }
    drop(r);
    assert!(dev.blocks.lock().unwrap().is_empty(), "ring blocks freed");
}

#[test]
fn producer_and_consumer_threads_agree_on_every_frame() {
    let mut buf = vec![0u8; 32 * 64];
    let r = Arc::new(host_ring(&mut buf, 64));
    let total = 5000u32;
    let prod = {
        let r = r.clone();
        std::thread::spawn(move || {
            for seq in 0..total {
                // A full ring drops the frame (counted); the test re-offers it.
                while r.push(&seq.to_le_bytes(), u64::from(seq)) == Err(DropReason::RingFull) {
                    r.flush();
                    std::thread::yield_now();
                }
                if seq % 7 == 0 {
                    r.flush();
                }
            }
            r.flush();
        })
    };
    let c = consumer(&r);
    let mut next = 0u32;
    let t0 = std::time::Instant::now();
    while next < total {
        watchdog(t0, "the producer's frames");
        c.recv_with(0, 200_000, |_, attr, p| {
            assert_eq!(attr.bytes, 4);
            assert_eq!(u32::from_le_bytes(p.try_into().unwrap()), next);
            assert_eq!(attr.timestamp_ns, u64::from(next));
            next += 1;
        });
    }
    prod.join().unwrap();
    let s = r.counters().snapshot();
    assert_eq!(s.delivered, u64::from(total));
    assert_eq!(s.received - s.dropped_ring_full, u64::from(total));
}

use doca_test_support::wait::watchdog;
