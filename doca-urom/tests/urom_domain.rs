//! Domains and what a safe program can hand them: an out-of-band collective whose size
//! answer changes gets an error (the runtime's buffer was sized with the first answer, and
//! before this was enforced, the gather wrote past it); a collective of no participants or
//! with an index outside it is refused before DOCA is called; exported buffers are owned by
//! the domain.

mod support;

use doca_urom::domain::Oob;
use doca_urom::{DocaError, Domain, DomainBuffer, Error, ProgressEngine, ThreadOob, Worker};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use support::*;
use worker_sandbox::host::Sandbox;

/// One participant by its first answer, a thousand by every later one.
#[derive(Default)]
struct Shifty {
    calls: AtomicU32,
}

impl Oob for Shifty {
    fn size(&self) -> u32 {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            1
        } else {
            1000
        }
    }
    fn index(&self) -> u32 {
        0
    }
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), DocaError> {
        // Trusts its own (new) size, as a careless collective would.
        let n = self.size() as usize;
        if recv.len() < n * send.len() {
            return Err(DocaError::INVALID_VALUE);
        }
        for i in 0..n {
            recv[i * send.len()..(i + 1) * send.len()].copy_from_slice(send);
        }
        Ok(())
    }
}

/// A fixed shape.
struct Shape(u32, u32);

impl Oob for Shape {
    fn size(&self) -> u32 {
        self.0
    }
    fn index(&self) -> u32 {
        self.1
    }
    fn allgather(&self, _: &[u8], _: &mut [u8]) -> Result<(), DocaError> {
        Ok(())
    }
}

#[test]
fn bad_shapes_are_refused_before_doca_is_called() {
    let pe = ProgressEngine::new().unwrap();
    for (size, index) in [(0, 0), (2, 2), (1, 7)] {
        let e = Domain::start(&pe, &[], Arc::new(Shape(size, index)), vec![]).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument(_)),
            "{size}/{index}: {e}"
        );
    }
}

#[test]
fn a_changing_size_is_an_error_and_buffers_belong_to_the_domain() {
    let (d, dev) = start_daemon(&["worker_sandbox"]);
    let svc = start_service(&d, &dev, 2);
    let sb = Sandbox::find(&svc).expect("worker_sandbox offered");
    let worker = |id| {
        Worker::builder(&svc)
            .id(id)
            .env(["UCX_LOG_LEVEL=error"])
            .plugins(sb.plugin.id)
            .start()
            .expect("worker start")
    };

    let w0 = worker(0);
    let shifty = Arc::new(Shifty::default());
    let e = Domain::start(w0.pe(), &[(0, w0.clone())], shifty.clone(), vec![])
        .expect_err("a collective whose size changed must not start a domain");
    assert!(e.doca_code().is_some(), "{e}");
    assert!(
        shifty.calls.load(Ordering::SeqCst) >= 2,
        "the gather ran and asked again"
    );
    drop(w0);

    // A well-behaved domain of one, exporting a buffer it then owns.
    let w1 = worker(1);
    let mut buf = DomainBuffer::new(8192).unwrap();
    buf.write(0, b"before").unwrap();
    buf.set_keys(vec![0xa5; 16], vec![0x5a; 24]);
    let oob: Arc<dyn Oob> = Arc::new(ThreadOob::group(1).pop().unwrap());
    let mut dom = Domain::start(w1.pe(), &[(1, w1.clone())], oob, vec![buf]).expect("domain");
    assert_eq!(dom.buffers().len(), 1);
    let mut got = [0u8; 6];
    dom.buffer(0).unwrap().read(0, &mut got).unwrap();
    assert_eq!(&got, b"before");
    dom.buffer_mut(0).unwrap().write(0, b"after!").unwrap();
    dom.buffer(0).unwrap().read(0, &mut got).unwrap();
    assert_eq!(&got, b"after!");
    assert!(dom.buffer(1).is_none());
    assert!(format!("{dom:?}").contains("buffers: 1"));
    drop(dom);
}
