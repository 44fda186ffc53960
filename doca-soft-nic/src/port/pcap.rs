//! pcap port (`pcap:IN,OUT`): RX replays IN once, as fast as the dispatcher takes it
//! (capture timestamps are kept as the frames' timestamps), starting when the port is armed
//! (see `Port::arm`); TX appends to OUT, a standard pcap (Ethernet, microsecond stamps)
//! written unbuffered so readers see every frame at once. IN may be pcap or pcapng, of
//! Ethernet or raw IP (see `capture`).

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapWriter};

use super::capture::{read_capture, Record};
use super::{now_ns, Backend, RxSource};
use crate::error::{DocaError, DocaResult};

/// Largest frame a pcap port carries.
pub(super) const PCAP_MAX_FRAME: usize = 65535;

/// What the replay shares with the port.
struct Replay {
    frames: Vec<Record>,
    /// Next frame to replay; replay happens once per port, across dispatcher restarts.
    next: Mutex<usize>,
    armed: AtomicBool,
}

/// A pcap file pair port.
pub(crate) struct PcapPort {
    replay: Arc<Replay>,
    out: Mutex<PcapWriter<File>>,
}

impl PcapPort {
    /// Reads all of `input` (see `capture::read_capture` for its errors) and creates
    /// (truncates) `output`.
    pub(crate) fn open(input: &Path, output: &Path) -> DocaResult<PcapPort> {
        let frames = read_capture(input)?;
        let out = File::create(output).map_err(|e| {
            sdk_err!("pcap", "cannot create {}: {e}", output.display());
            DocaError::IO_FAILED
        })?;
        let writer = PcapWriter::new(out).map_err(|_| DocaError::IO_FAILED)?;
        Ok(PcapPort {
            replay: Arc::new(Replay {
                frames,
                next: Mutex::new(0),
                armed: AtomicBool::new(false),
            }),
            out: Mutex::new(writer),
        })
    }
}

impl Backend for PcapPort {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        let mut w = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let ts = Duration::from_nanos(now_ns());
        let pkt = PcapPacket::new(ts, frame.len() as u32, frame);
        // Unbuffered: every record is in the file when send returns.
        w.write_packet(&pkt).map_err(|_| DocaError::IO_FAILED)?;
        Ok(())
    }

    fn max_frame(&self) -> usize {
        PCAP_MAX_FRAME
    }

    fn open_rx(&self, lane: usize) -> DocaResult<Option<Box<dyn RxSource>>> {
        // One replay, in file order: lane 0 reads it; other lanes only drain their queues.
        Ok((lane == 0).then(|| Box::new(ReplaySource(self.replay.clone())) as Box<dyn RxSource>))
    }

    fn arm(&self) {
        self.replay.armed.store(true, Ordering::Release);
    }
}

struct ReplaySource(Arc<Replay>);

impl RxSource for ReplaySource {
    fn poll(&mut self, max: usize, _: Duration, f: &mut dyn FnMut(&[u8], u64, usize)) -> usize {
        if !self.0.armed.load(Ordering::Acquire) {
            return 0;
        }
        let mut next = self.0.next.lock().unwrap_or_else(|e| e.into_inner());
        let end = (*next + max).min(self.0.frames.len());
        for r in &self.0.frames[*next..end] {
            f(&r.data, r.ts_ns, r.orig_len);
        }
        let n = end - *next;
        *next = end;
        n
    }

    fn waits(&self) -> bool {
        false
    }
}
