//! Per-iteration cost of the RX ring protocol on one thread (criterion): the proxy pushes a
//! burst of frames into a host RX ring and publishes it, and the consumer (the device API's
//! receive algorithm on the CPU) takes the burst and touches every frame's headers.

#[path = "support/udp.rs"]
#[allow(dead_code)]
mod udp;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use doca_soft::testing::{CpuRxq, PktBuf, RxRing};

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

criterion_group!(benches, ring_burst);
criterion_main!(benches);
