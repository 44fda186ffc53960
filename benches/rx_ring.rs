//! Per-iteration cost of the Ethernet ring protocols on one thread (criterion). RX: the
//! proxy pushes a burst of frames into a host RX ring and publishes it, and the consumer
//! (the device API's receive algorithm on the CPU) takes the burst and touches every
//! frame's headers. TX: a CPU producer (the device API's send algorithm) writes a burst of
//! sends into a host TX ring, the TX proxy parses and sends them to a port that only
//! counts, and the producer polls the burst's one NOTIFY completion.

#[path = "support/udp.rs"]
#[allow(dead_code)]
mod udp;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use doca_soft::testing::capi::doca_error::DocaResult;
use doca_soft::testing::{
    CpuRxq, CpuTxq, FrameOut, MemRanges, PktBuf, RxRing, TxProxy, TxRing, TxRingCfg,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const BURST: usize = 32;

fn ring_burst(c: &mut Criterion) {
    let mut g = c.benchmark_group("rx_ring/push_flush_recv");
    for size in [64usize, 1024] {
        let slot = size.next_multiple_of(64);
        let slots = 4096;
        let mut buf = vec![0u8; slots * slot];
        let pkt = PktBuf::host(buf.as_mut_ptr(), buf.len(), 1);
        let ring = RxRing::new(pkt, slot as u32, None).expect("ring");
        // SAFETY: host ring whose pointers live as long as `ring` and `buf`; one consumer.
        let rxq = unsafe { CpuRxq::new(ring.handle_cpu()) };
        let mut frame = vec![0u8; size];
        udp::build_frame(&mut frame, 40000, udp::BASE_PORT, 0, 0);
        g.throughput(Throughput::Elements(BURST as u64));
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{size}B")),
            &size,
            |b, _| {
                b.iter(|| {
                    for _ in 0..BURST {
                        ring.push(&frame, 0).expect("room in the ring");
                    }
                    ring.flush();
                    let mut seen = 0u64;
                    let n = rxq.recv_with(BURST as u32, 0, |_, _, f| {
                        seen += udp::parse_frame(f).map_or(0, |(_, s)| s + 1);
                    });
                    assert_eq!(n as usize, BURST);
                    seen
                })
            },
        );
        drop(ring);
        drop(buf);
    }
    g.finish();
}

/// A port that only counts what it is given.
#[derive(Default)]
struct CountingPort(AtomicU64);

impl FrameOut for CountingPort {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        self.0.fetch_add(frame.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

fn tx_ring_burst(c: &mut Criterion) {
    let mut g = c.benchmark_group("tx_ring/send_progress_poll");
    for size in [64usize, 1024] {
        let cfg = TxRingCfg {
            max_burst: 1024,
            completion_on_gpu: true,
            ..Default::default()
        };
        let ring = TxRing::new(cfg, None).expect("ring");
        let mut frame = vec![0u8; size];
        udp::build_frame(&mut frame, 40000, udp::BASE_PORT, 0, 0);
        let mut mem = MemRanges::new(None);
        mem.add_host(frame.as_ptr(), frame.len());
        // SAFETY: host ring whose pointers live as long as the proxy that owns the ring.
        let txq = unsafe { CpuTxq::new(ring.handle_cpu()) };
        let port = Arc::new(CountingPort::default());
        let proxy = TxProxy::new(ring, Arc::new(mem), port.clone());
        g.throughput(Throughput::Elements(BURST as u64));
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{size}B")),
            &size,
            |b, _| {
                b.iter(|| {
                    for k in 0..BURST {
                        txq.send(frame.as_ptr() as u64, 0, size as u32, k == BURST - 1);
                    }
                    while proxy.progress() > 0 {}
                    txq.poll_completion(1, true).expect("completion")
                })
            },
        );
        assert!(port.0.load(Ordering::Relaxed) > 0);
        drop(proxy);
    }
    g.finish();
}

criterion_group!(benches, ring_burst, tx_ring_burst);
criterion_main!(benches);
