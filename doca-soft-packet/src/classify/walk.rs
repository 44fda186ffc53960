//! The per-frame walk from a port's root pipe to a [`Verdict`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{apply, rss, Egress, Fwd, Key, Parsed, Pipe, PipeKind, Scratch};

/// Outcome of classification.
#[derive(Clone)]
pub enum Verdict {
    /// Deliver to this queue id.
    Queue(u16),
    /// Send out of a port.
    Port(Arc<dyn Egress>),
    /// A DROP forward.
    Drop,
    /// Nothing matched (or a forward to the kernel).
    NoMatch,
}

impl std::fmt::Debug for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Queue(q) => write!(f, "Queue({q})"),
            Verdict::Port(_) => f.write_str("Port"),
            Verdict::Drop => f.write_str("Drop"),
            Verdict::NoMatch => f.write_str("NoMatch"),
        }
    }
}

impl PartialEq for Verdict {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Verdict::Queue(a), Verdict::Queue(b)) => a == b,
            (Verdict::Port(a), Verdict::Port(b)) => Arc::ptr_eq(a, b),
            (Verdict::Drop, Verdict::Drop) | (Verdict::NoMatch, Verdict::NoMatch) => true,
            _ => false,
        }
    }
}

/// Longest pipe chain followed before a packet is dropped (a guard: `flow/` refuses loops).
pub const MAX_HOPS: usize = 16;

/// The frame being classified: the original or the scratch copy actions rewrote.
fn current<'a>(frame: &'a [u8], pkt: &'a Parsed, sc: &'a Scratch) -> (&'a [u8], &'a Parsed) {
    match (&sc.parsed, sc.active) {
        (Some(p), true) => (&sc.buf, p),
        _ => (frame, pkt),
    }
}

/// Classifies `frame` (parsed as `pkt`) starting at `root`, at time `now` (ns). Actions
/// that rewrite the frame leave the rewritten copy in `sc` (`sc.active`): that is the
/// frame to deliver.
pub fn classify(root: &Pipe, frame: &[u8], pkt: &Parsed, sc: &mut Scratch, now: u64) -> Verdict {
    sc.reset();
    if root.kind != PipeKind::PortRoot {
        return walk(root, 0, frame, pkt, sc, now);
    }
    let port_id = root.port_id.load(Ordering::Relaxed);
    let v = match root.root() {
        Some(user) => walk(&user, port_id, frame, pkt, sc, now),
        None => Verdict::NoMatch,
    };
    if v != Verdict::NoMatch {
        return v;
    }
    let (f, _) = current(frame, pkt, sc);
    if let Some(c) = &root.miss_counter {
        c.add(f.len());
    }
    match root.miss() {
        Fwd::Drop => Verdict::Drop,
        _ => Verdict::NoMatch,
    }
}

fn walk(
    start: &Pipe,
    port_id: u16,
    frame: &[u8],
    pkt: &Parsed,
    sc: &mut Scratch,
    now: u64,
) -> Verdict {
    let mut key: Option<Key> = None;
    let mut next: Option<Arc<Pipe>> = None;
    for _ in 0..MAX_HOPS {
        let pipe: &Pipe = next.as_deref().unwrap_or(start);
        let st = pipe.read();
        let hop = {
            let rule = if st.len == 0 {
                None
            } else {
                let (f, p) = current(frame, pkt, sc);
                let k = key.get_or_insert_with(|| Key::new(p, f, port_id));
                if pipe.l4_csum.load(Ordering::Relaxed) {
                    k.ensure_l4_checksums(p, f);
                }
                Pipe::lookup(&st, k)
            };
            let (f, _) = current(frame, pkt, sc);
            let len = f.len();
            let fwd = match rule {
                Some(r) => {
                    r.count(len, now);
                    if let Some(acts) = &r.actions {
                        let k = key.as_mut().expect("a hit implies a key");
                        if apply(acts, frame, pkt, sc, k).is_err() {
                            return Verdict::Drop;
                        }
                    }
                    match &r.fwd {
                        Fwd::None => &st.fwd,
                        f => f,
                    }
                }
                None => {
                    if let Some(c) = &pipe.miss_counter {
                        c.add(len);
                    }
                    &st.miss
                }
            };
            match fwd {
                Fwd::None | Fwd::Kernel => return Verdict::NoMatch,
                Fwd::Drop => return Verdict::Drop,
                Fwd::Rss { queues, flags } => {
                    let (_, p) = current(frame, pkt, sc);
                    return rss::pick(p, *flags, queues).map_or(Verdict::Drop, Verdict::Queue);
                }
                Fwd::RssCfg(cfg) => {
                    let (_, p) = current(frame, pkt, sc);
                    return cfg.pick(p).map_or(Verdict::Drop, Verdict::Queue);
                }
                Fwd::SharedRss(s) => {
                    let (_, p) = current(frame, pkt, sc);
                    return s
                        .get()
                        .and_then(|cfg| cfg.pick(p))
                        .map_or(Verdict::Drop, Verdict::Queue);
                }
                Fwd::Port(link) => return link.get().map_or(Verdict::Drop, Verdict::Port),
                Fwd::Pipe(w) => match w.upgrade() {
                    Some(p) => p,
                    None => return Verdict::Drop,
                },
            }
        };
        drop(st);
        next = Some(hop);
    }
    Verdict::Drop
}
