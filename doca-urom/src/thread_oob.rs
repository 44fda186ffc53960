//! [`ThreadOob`]: the out-of-band allgather for a domain whose participants are threads of
//! one process.

use crate::domain::Oob;
use doca_common::DocaError;
use std::sync::{Arc, Barrier, Mutex};

/// An allgather between threads of this process (tests, benches, single-process programs
/// that run several workers of one domain): each participant writes its part, a barrier,
/// everyone copies the whole, a barrier (so the next round cannot overwrite a part before
/// everyone has read it).
pub struct ThreadOob {
    size: u32,
    index: u32,
    shared: Arc<(Mutex<Vec<u8>>, Barrier)>,
}

impl ThreadOob {
    /// One OOB per participant (index `0..size`), sharing state; hand each to its thread.
    pub fn group(size: u32) -> Vec<ThreadOob> {
        let shared = Arc::new((Mutex::new(Vec::new()), Barrier::new(size as usize)));
        (0..size)
            .map(|index| ThreadOob {
                size,
                index,
                shared: shared.clone(),
            })
            .collect()
    }
}

impl Oob for ThreadOob {
    fn size(&self) -> u32 {
        self.size
    }
    fn index(&self) -> u32 {
        self.index
    }
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), DocaError> {
        let (buf, barrier) = &*self.shared;
        let n = send.len();
        if recv.len() != n * self.size as usize {
            return Err(DocaError::INVALID_VALUE);
        }
        {
            let mut b = buf.lock().unwrap_or_else(|p| p.into_inner());
            if b.len() != recv.len() {
                b.resize(recv.len(), 0);
            }
            let at = self.index as usize * n;
            b[at..at + n].copy_from_slice(send);
        }
        barrier.wait();
        recv.copy_from_slice(&buf.lock().unwrap_or_else(|p| p.into_inner()));
        barrier.wait();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allgathers_every_participant_in_index_order_twice() {
        let oobs = ThreadOob::group(3);
        let got: Vec<Vec<u8>> = std::thread::scope(|s| {
            let hs: Vec<_> = oobs
                .iter()
                .map(|o| {
                    s.spawn(move || {
                        let i = o.index() as u8;
                        let mut all = Vec::new();
                        for round in 0..2u8 {
                            let mut recv = vec![0u8; 6];
                            o.allgather(&[i, round], &mut recv).unwrap();
                            all.extend(recv);
                        }
                        all
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for g in &got {
            assert_eq!(g, &[0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1]);
        }
        let mut short = [0u8; 2];
        assert_eq!(
            ThreadOob::group(1)[0].allgather(&[1, 2], &mut short[..1]),
            Err(DocaError::INVALID_VALUE)
        );
    }
}
