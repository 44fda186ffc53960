//! Classification tables: pipes (BASIC, CONTROL, HASH) of compiled entries, forwards (RSS,
//! pipe, port, drop, kernel), per-entry counters, aging timestamps and actions; and the
//! per-frame walk from a port's root pipe to a [`Verdict`]. Independent of the C structs:
//! `flow/` compiles `struct doca_flow_match` into [`Pattern`]s and [`Shape`]s over the
//! match `Key`.
//!
//! Cost per frame: a pipe with entries builds the frame's `Key` once (the first time one
//! is needed); a BASIC or HASH pipe then costs one hash lookup of the words its template
//! compares, a CONTROL pipe a scan of its entries in priority order (each a few masked
//! word compares). Nothing on this path allocates: lookups build their search key in a
//! stack array.

// The rest of the packet engine, imported once here for the files below.
use super::actions::{apply, Actions, Scratch};
use super::key::{off, props, Key, KEY_WORDS};
use super::parser::Parsed;
use super::rss::{self, RssCfg};

mod entry;
mod field;
mod fwd;
mod pattern;
mod pipe;
mod walk;

pub use entry::*;
pub use field::*;
pub use fwd::*;
pub use pattern::*;
pub use pipe::*;
pub use walk::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{icmp4_echo, tcp4, udp4};
    use crate::parser::parse;
    use std::sync::Arc;

    fn eq(field: Field, value: u64) -> FieldMatch {
        FieldMatch {
            field,
            value,
            mask: field.full_mask(),
        }
    }

    fn entry(matches: Vec<FieldMatch>, priority: u32, fwd: Fwd) -> Entry {
        Entry {
            matches,
            priority,
            fwd,
            counter: Some(Counter::default()),
        }
    }

    fn rss(q: &[u16]) -> Fwd {
        Fwd::Rss {
            queues: q.to_vec(),
            flags: rss::RSS_IPV4 | rss::RSS_UDP | rss::RSS_TCP,
        }
    }

    fn run(root: &Pipe, f: &[u8]) -> Verdict {
        let mut sc = Scratch::default();
        classify(root, f, &parse(f).unwrap(), &mut sc, 0)
    }

    #[test]
    fn basic_hits_and_misses() {
        let p = Pipe::new("udp", PipeKind::Basic, rss(&[3]), Fwd::Drop, true);
        let e = p.add(entry(vec![eq(Field::UdpDst, 53)], 0, Fwd::None));
        let dns = udp4([1, 1, 1, 1], [2, 2, 2, 2], 999, 53, b"q");
        let other = udp4([1, 1, 1, 1], [2, 2, 2, 2], 999, 54, b"q");
        let tcp = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 999, 53, 2, b"");
        assert_eq!(run(&p, &dns), Verdict::Queue(3));
        assert_eq!(run(&p, &other), Verdict::Drop);
        assert_eq!(run(&p, &tcp), Verdict::Drop, "UDP port does not match TCP");
        assert_eq!(e.counter.as_ref().unwrap().get(), (1, dns.len() as u64));
        assert_eq!(p.miss_counter.as_ref().unwrap().get().0, 2);
        // Without a miss forward a miss is a no-match.
        let q = Pipe::new("q", PipeKind::Basic, rss(&[0]), Fwd::None, false);
        assert_eq!(run(&q, &dns), Verdict::NoMatch);
        // Removed entries stop matching.
        assert!(p.remove(&e));
        assert!(!p.remove(&e));
        assert_eq!(run(&p, &dns), Verdict::Drop);
    }

    #[test]
    fn control_priorities_and_masks() {
        let root = Pipe::new("root", PipeKind::Control, Fwd::None, Fwd::None, false);
        let tcp_any = root.add(entry(vec![eq(Field::OuterL4Meta, 1)], 3, rss(&[4])));
        let syn = FieldMatch {
            field: Field::TcpFlags,
            value: 0x02,
            mask: 0x07,
        };
        let ctl = root.add(entry(vec![eq(Field::OuterL4Meta, 1), syn], 1, rss(&[12])));
        let udp = root.add(entry(vec![eq(Field::OuterL4Meta, 2)], 0, rss(&[0])));
        let data = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 80, 0x18, b"GET");
        let syn_pkt = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 80, 0x02, b"");
        let synack = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 80, 0x12, b"");
        assert_eq!(run(&root, &data), Verdict::Queue(4));
        assert_eq!(run(&root, &syn_pkt), Verdict::Queue(12));
        assert_eq!(
            run(&root, &synack),
            Verdict::Queue(12),
            "ACK bit is masked out"
        );
        assert_eq!(
            run(&root, &udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"")),
            Verdict::Queue(0)
        );
        assert_eq!(
            run(&root, &icmp4_echo([1, 1, 1, 1], [2, 2, 2, 2], b"")),
            Verdict::NoMatch
        );
        assert_eq!(tcp_any.counter.as_ref().unwrap().get().0, 1);
        assert_eq!(ctl.counter.as_ref().unwrap().get().0, 2);
        assert_eq!(udp.counter.as_ref().unwrap().get().0, 1);
        // Equal priorities: the earlier entry wins.
        let tie = Pipe::new("tie", PipeKind::Control, Fwd::None, Fwd::None, false);
        tie.add(entry(vec![eq(Field::Ip4Proto, 17)], 5, rss(&[7])));
        tie.add(entry(vec![eq(Field::OuterL3Meta, 1)], 5, rss(&[8])));
        assert_eq!(
            run(&tie, &udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"")),
            Verdict::Queue(7)
        );
    }

    #[test]
    fn forward_to_pipe_chains_and_dangling_pipes() {
        let udp = Arc::new(Pipe::new(
            "udp",
            PipeKind::Basic,
            rss(&[9]),
            Fwd::Drop,
            false,
        ));
        udp.add(entry(vec![eq(Field::UdpDst, 4791)], 0, Fwd::None));
        let root = Pipe::new("root", PipeKind::Control, Fwd::None, Fwd::None, false);
        root.add(entry(
            vec![
                eq(Field::EthType, 0x0800),
                eq(Field::L3Type, 1),
                eq(Field::Ip4Proto, 17),
            ],
            0,
            Fwd::Pipe(Arc::downgrade(&udp)),
        ));
        root.add(entry(vec![eq(Field::OuterL4Meta, 3)], 1, Fwd::Drop));
        let hit = udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 4791, b"");
        assert_eq!(run(&root, &hit), Verdict::Queue(9));
        assert_eq!(
            run(&root, &udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 5, b"")),
            Verdict::Drop
        );
        assert_eq!(
            run(&root, &icmp4_echo([1, 1, 1, 1], [2, 2, 2, 2], b"")),
            Verdict::Drop
        );
        drop(udp);
        assert_eq!(run(&root, &hit), Verdict::Drop, "pipe destroyed");
        // A loop is cut after MAX_HOPS.
        let a = Arc::new(Pipe::new("a", PipeKind::Basic, Fwd::None, Fwd::None, false));
        a.add(entry(vec![], 0, Fwd::Pipe(Arc::downgrade(&a))));
        assert_eq!(run(&a, &hit), Verdict::Drop);
    }

    #[test]
    fn exact_basic_and_hash_tables() {
        // A BASIC pipe over the UDP destination port: entries found by hash.
        let mut b = PatternBuilder::default();
        b.bytes(off::OUTER + off::hf::L4 + 2, &[0xff, 0xff], &[0, 0]);
        b.need = props::bit(props::OUTER, props::UDP);
        let shape = b.shape();
        let p = Pipe::basic("exact", shape.clone(), rss(&[1]), Fwd::Drop, false);
        let mut rules = Vec::new();
        for (port, q) in [(53u16, 5u16), (80, 6)] {
            let mut v = b.clone();
            v.bytes(
                off::OUTER + off::hf::L4 + 2,
                &[0xff, 0xff],
                &port.to_be_bytes(),
            );
            let r = Rule::new(
                Matcher::Exact(v.values(&shape)),
                0,
                rss(&[q]),
                None,
                Some(Arc::new(Counter::default())),
                false,
            );
            rules.push(p.insert(r).unwrap());
        }
        let f = |port| udp4([1, 1, 1, 1], [2, 2, 2, 2], 7, port, b"");
        assert_eq!(run(&p, &f(53)), Verdict::Queue(5));
        assert_eq!(run(&p, &f(80)), Verdict::Queue(6));
        assert_eq!(run(&p, &f(81)), Verdict::Drop);
        assert_eq!(rules[0].counter.as_ref().unwrap().get().0, 1);
        assert!(p.remove_rule(&rules[0]));
        assert_eq!(run(&p, &f(53)), Verdict::Drop);
        assert_eq!(p.len(), 1);

        // A HASH pipe with IDENTITY over the destination port: port % 4 picks the slot.
        let h = Pipe::hash("hash", shape, 4, true, Fwd::None, Fwd::Drop, false);
        for i in 0..4u32 {
            let r = Rule::new(
                Matcher::Index(i),
                0,
                rss(&[10 + i as u16]),
                None,
                None,
                false,
            );
            h.insert(r).unwrap();
        }
        let taken = Rule::new(Matcher::Index(1), 0, Fwd::Drop, None, None, false);
        assert_eq!(h.insert(taken).unwrap_err(), InsertError::Taken);
        let beyond = Rule::new(Matcher::Index(4), 0, Fwd::Drop, None, None, false);
        assert_eq!(h.insert(beyond).unwrap_err(), InsertError::OutOfRange);
        for port in [100u16, 101, 102, 103, 104] {
            assert_eq!(run(&h, &f(port)), Verdict::Queue(10 + port % 4));
        }
    }

    #[test]
    fn port_root_applies_the_default_miss() {
        let user = Arc::new(Pipe::new(
            "u",
            PipeKind::Control,
            Fwd::None,
            Fwd::None,
            false,
        ));
        user.add(entry(vec![eq(Field::OuterL4Meta, 2)], 0, rss(&[2])));
        let root = Pipe::port_root(3);
        let udp = udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"");
        let tcp = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, 2, b"");
        assert_eq!(run(&root, &udp), Verdict::NoMatch, "no root pipe yet");
        root.set_root(Some(&user));
        assert_eq!(run(&root, &udp), Verdict::Queue(2));
        assert_eq!(run(&root, &tcp), Verdict::NoMatch);
        root.set_miss(Fwd::Drop);
        assert_eq!(run(&root, &tcp), Verdict::Drop);
        assert_eq!(root.miss_counter.as_ref().unwrap().get().0, 3);
    }

    #[test]
    fn rss_spreads_flows_and_is_stable() {
        let queues = [0u16, 1, 2, 3];
        let p = Pipe::new("rss", PipeKind::Basic, rss(&queues), Fwd::Drop, false);
        p.add(entry(vec![eq(Field::OuterL4Meta, 2)], 0, Fwd::None));
        let mut per_queue = [0usize; 4];
        for flow in 0..256u16 {
            let f = udp4(
                [10, 0, (flow >> 8) as u8, flow as u8],
                [10, 1, 0, 1],
                1000 + flow,
                53,
                b"x",
            );
            let Verdict::Queue(q) = run(&p, &f) else {
                panic!("not delivered")
            };
            per_queue[usize::from(q)] += 1;
            // Same 5-tuple, same queue, whatever the payload.
            let g = udp4(
                [10, 0, (flow >> 8) as u8, flow as u8],
                [10, 1, 0, 1],
                1000 + flow,
                53,
                b"other",
            );
            assert_eq!(run(&p, &g), Verdict::Queue(q));
        }
        assert!(per_queue.iter().all(|&n| n > 0), "spread {per_queue:?}");
        // Without hash flags everything goes to the first queue.
        let first = Pipe::new(
            "f",
            PipeKind::Basic,
            Fwd::Rss {
                queues: queues.to_vec(),
                flags: 0,
            },
            Fwd::Drop,
            false,
        );
        first.add(entry(vec![], 0, Fwd::None));
        for flow in 0..16u16 {
            let f = udp4([1, 2, 3, 4], [5, 6, 7, 8], flow, 9, b"");
            assert_eq!(run(&first, &f), Verdict::Queue(0));
        }
    }
}
