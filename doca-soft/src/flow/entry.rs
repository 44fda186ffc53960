//! `struct doca_flow_pipe_entry`: adding, updating and removing entries through pipe
//! queues, completing them (`doca_flow_entries_process`: status, callbacks), aging, queries.
//!
//! An entry takes effect as soon as it is added (the operation cannot fail later); its
//! status stays IN_PROCESS until `doca_flow_entries_process` on its queue completes the
//! operation and runs the entry callback with op ADD (UPD, DEL) and status SUCCESS. A
//! removed entry stops matching at once; its handle stays valid for its DEL callback and is
//! freed right after it.

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::actions::{compile, is_empty, ActionBytes, ActionSet, Desc};
use super::handles::{Completion, EntryHandle, Forward, PipeEvent, PipeHandle, SILENT_QUEUE_CAP};
use super::matching::{compile_match, MatchBytes};
use super::monitor::{CounterKind, Monitor};
use super::state::{Callback, State};
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::actions::Actions;
use crate::packet::classify::{realtime_ns, Counter, InsertError, Matcher, PipeKind, Rule};

/// Entry flags the runtime knows.
const KNOWN_ENTRY_FLAGS: u32 =
    sys::DOCA_FLOW_ENTRY_FLAGS_NO_WAIT | sys::DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH;

/// What an entry asks for besides its match.
pub(crate) struct EntryArgs<'a> {
    pub pipe_queue: u16,
    pub action_idx: u8,
    pub actions: Option<&'a ActionBytes>,
    pub actions_mask: Option<&'a ActionBytes>,
    pub descs: Vec<Desc>,
    pub monitor: Option<&'a sys::doca_flow_monitor_v1>,
    pub fwd: Option<&'a sys::doca_flow_fwd_v1>,
    pub flags: u32,
    pub usr_ctx: *mut c_void,
}

/// INVALID_VALUE for unknown entry flags, or both set.
pub(crate) fn check_flags(flags: u32) -> DocaResult<()> {
    if flags & !KNOWN_ENTRY_FLAGS != 0 || flags == KNOWN_ENTRY_FLAGS {
        sdk_err!(
            "flow",
            "entry flags {flags:#x}: at most one of NO_WAIT and WAIT_FOR_BATCH"
        );
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(())
}

impl State {
    fn check_entry_queue(&self, pipe: usize, queue: u16) -> DocaResult<()> {
        self.check_queue(queue)?;
        let ph = self.pipe_mut(pipe)?;
        if ph.excluded_queue == Some(queue) {
            sdk_err!("flow", "pipe {:?} excludes queue {queue}", ph.name);
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    /// The counter of an entry with monitor `m` on port `port`: FULL when the non-shared
    /// counters configured are used up; INVALID_VALUE for a shared counter that does not
    /// exist.
    fn counter_for(&mut self, port: usize, m: Monitor) -> DocaResult<(Option<Arc<Counter>>, bool)> {
        match m.counter {
            CounterKind::None => Ok((None, false)),
            CounterKind::Own => {
                let port_mode = self.cfg()?.port_mode;
                let (limit, used) = if port_mode {
                    self.port_mut(port)?.counters
                } else {
                    (self.cfg()?.nr_counters, self.counters_used)
                };
                if limit != 0 && used >= limit {
                    sdk_err!("flow", "all {limit} configured counters are in use");
                    return Err(DocaError::FULL);
                }
                if port_mode {
                    self.port_mut(port)?.counters.1 += 1;
                } else {
                    self.counters_used += 1;
                }
                Ok((Some(Arc::new(Counter::default())), true))
            }
            CounterKind::Shared(id) => Ok((Some(self.shared_counter(port, id)?), false)),
        }
    }

    fn release_counter(&mut self, port: usize) {
        let port_mode = self.cfg.as_ref().is_some_and(|c| c.port_mode);
        if port_mode {
            if let Ok(fp) = self.port_mut(port) {
                fp.counters.1 = fp.counters.1.saturating_sub(1);
            }
        } else {
            self.counters_used = self.counters_used.saturating_sub(1);
        }
    }

    /// The actions of a BASIC or HASH entry: the pipe's actions array entry `idx` with the
    /// entry's values.
    fn entry_actions(
        &self,
        pipe: usize,
        idx: u8,
        entry: Option<&ActionBytes>,
    ) -> DocaResult<Option<Arc<Actions>>> {
        let ph = self.pipe_mut(pipe)?;
        if ph.actions.is_empty() {
            if entry.is_some_and(|a| !is_empty(a)) {
                sdk_err!(
                    "flow",
                    "entry actions on pipe {:?}, which has none (doca_flow_pipe_cfg_set_actions)",
                    ph.name
                );
                return Err(DocaError::INVALID_VALUE);
            }
            return Ok(None);
        }
        let Some(set) = ph.actions.get(usize::from(idx)) else {
            sdk_err!(
                "flow",
                "action_idx {idx} beyond the {} actions of pipe {:?}",
                ph.actions.len(),
                ph.name
            );
            return Err(DocaError::INVALID_VALUE);
        };
        Ok(Some(Arc::new(compile(set, entry, true)?)))
    }

    /// The forward of an entry (`None`: the pipe's), checked against the pipe graph.
    fn entry_forward(
        &mut self,
        pipe: usize,
        f: Option<&sys::doca_flow_fwd_v1>,
    ) -> DocaResult<Forward> {
        let (port, changeable, name) = {
            let ph = self.pipe_mut(pipe)?;
            (ph.port, ph.fwd_changeable, ph.name.clone())
        };
        let fwd = match f {
            Some(f) => self.forward(port, f)?,
            None => Forward::none(),
        };
        if fwd.changeable {
            sdk_err!("flow", "an entry's forward cannot be CHANGEABLE");
            return Err(DocaError::INVALID_VALUE);
        }
        if changeable && f.is_none() {
            sdk_err!(
                "flow",
                "pipe {name:?} has a CHANGEABLE forward: each entry must give one"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        self.check_edge(pipe, fwd.to_pipe)?;
        Ok(fwd)
    }

    /// Registers a rule built for `pipe` as an entry and queues its ADD completion.
    fn register(
        &mut self,
        pipe: usize,
        rule: Rule,
        args: &EntryArgs,
        fwd_to: Option<usize>,
        own_counter: bool,
        aging_sec: u32,
    ) -> DocaResult<*mut EntryHandle> {
        let ph = self.pipe_mut(pipe)?;
        let port = ph.port;
        let rule = match ph.pipe.insert(rule) {
            Ok(r) => r,
            Err(e) => {
                if own_counter {
                    self.release_counter(port);
                }
                return Err(match e {
                    InsertError::Taken => {
                        sdk_err!("flow", "the HASH pipe's slot is taken");
                        DocaError::ALREADY_EXIST
                    }
                    InsertError::OutOfRange => {
                        sdk_err!("flow", "the HASH pipe has no such slot");
                        DocaError::INVALID_VALUE
                    }
                });
            }
        };
        let h = Box::into_raw(Box::new(EntryHandle {
            pipe,
            port,
            rule,
            queue: args.pipe_queue,
            usr_ctx: args.usr_ctx,
            status: sys::DOCA_FLOW_ENTRY_STATUS_IN_PROCESS,
            removed: false,
            fwd_to,
            own_counter,
            aging_sec,
            aged: false,
        })) as usize;
        ph.entries.push(h);
        self.entries.insert(h);
        self.edge(pipe, fwd_to, true);
        let fp = self.port_mut(port)?;
        if aging_sec > 0 {
            fp.aging.push(h);
        }
        self.complete_later(port, args.pipe_queue, h, sys::DOCA_FLOW_ENTRY_OP_ADD);
        self.check_congestion(pipe);
        Ok(h as *mut EntryHandle)
    }

    /// Queues a completion (the oldest are completed silently when no callback is
    /// registered and the queue is very long).
    fn complete_later(&mut self, port: usize, queue: u16, entry: usize, op: u32) {
        let silent = self.cfg.as_ref().is_some_and(|c| c.cb_entry.is_none());
        let Ok(fp) = self.port_mut(port) else {
            return;
        };
        let Some(q) = fp.queues.get_mut(usize::from(queue)) else {
            return;
        };
        q.push_back(Completion {
            entry,
            op,
            status: sys::DOCA_FLOW_ENTRY_STATUS_SUCCESS,
        });
        if silent && q.len() > SILENT_QUEUE_CAP {
            if let Some(c) = q.pop_front() {
                self.finish(c);
            }
        }
    }

    /// Applies a completion to its entry; returns the entry to free (DEL).
    fn finish(&mut self, c: Completion) -> Option<usize> {
        if !self.entries.contains(&c.entry) {
            return None;
        }
        // SAFETY: registered entries are live boxes (removed ones included).
        let e = unsafe { &mut *(c.entry as *mut EntryHandle) };
        e.status = c.status;
        (c.op == sys::DOCA_FLOW_ENTRY_OP_DEL).then_some(c.entry)
    }

    /// `doca_flow_pipe_basic_add_entry`.
    pub(crate) fn add_basic_entry(
        &mut self,
        pipe: usize,
        m: Option<&MatchBytes>,
        args: EntryArgs,
    ) -> DocaResult<*mut EntryHandle> {
        check_flags(args.flags)?;
        self.check_entry_queue(pipe, args.pipe_queue)?;
        let ph = self.pipe_of_kind(pipe, PipeKind::Basic)?;
        let values = ph.template.entry_values(m)?;
        self.add_with_action_set(pipe, Matcher::Exact(values), args)
    }

    /// `doca_flow_pipe_hash_add_entry`: the entry at slot `index`.
    pub(crate) fn add_hash_entry(
        &mut self,
        pipe: usize,
        index: u32,
        args: EntryArgs,
    ) -> DocaResult<*mut EntryHandle> {
        check_flags(args.flags)?;
        self.check_entry_queue(pipe, args.pipe_queue)?;
        let ph = self.pipe_of_kind(pipe, PipeKind::Hash)?;
        if index >= ph.nr_entries {
            sdk_err!(
                "flow",
                "hash entry index {index} beyond the {} entries of pipe {:?}",
                ph.nr_entries,
                ph.name
            );
            return Err(DocaError::INVALID_VALUE);
        }
        self.add_with_action_set(pipe, Matcher::Index(index), args)
    }

    /// A live pipe of `kind`; INVALID_VALUE (one log line) for a pipe of another type.
    fn pipe_of_kind<'a>(&self, pipe: usize, kind: PipeKind) -> DocaResult<&'a mut PipeHandle> {
        let ph = self.pipe_mut(pipe)?;
        if ph.pipe.kind != kind {
            let name = format!("{kind:?}").to_uppercase();
            sdk_err!(
                "flow",
                "{} entry on pipe {:?}, which is not {name}",
                name.to_lowercase(),
                ph.name
            );
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(ph)
    }

    /// The rest of a BASIC or HASH entry add once its matcher is known: the pipe's action
    /// set `action_idx` with the entry's values, the entry's monitor over the pipe's, its
    /// forward, a counter when it counts, and its registration.
    fn add_with_action_set(
        &mut self,
        pipe: usize,
        matcher: Matcher,
        args: EntryArgs,
    ) -> DocaResult<*mut EntryHandle> {
        let ph = self.pipe_mut(pipe)?;
        let pipe_monitor = ph.monitor;
        let port = ph.port;
        let acts = self.entry_actions(pipe, args.action_idx, args.actions)?;
        let mon = match args.monitor {
            Some(m) => Monitor::of(m)?.over(pipe_monitor),
            None => pipe_monitor,
        };
        let fwd = self.entry_forward(pipe, args.fwd)?;
        let (counter, own) = self.counter_for(port, mon)?;
        let rule = Rule::new(matcher, 0, fwd.fwd, acts, counter, mon.aging_sec > 0);
        self.register(pipe, rule, &args, fwd.to_pipe, own, mon.aging_sec)
    }

    /// `doca_flow_pipe_control_add_entry`: its own match, mask, actions, priority and
    /// forward (required); match conditions are NOT_SUPPORTED.
    pub(crate) fn add_control_entry(
        &mut self,
        pipe: usize,
        m: Option<&MatchBytes>,
        mask: Option<&MatchBytes>,
        has_condition: bool,
        priority: u32,
        args: EntryArgs,
    ) -> DocaResult<*mut EntryHandle> {
        self.check_entry_queue(pipe, args.pipe_queue)?;
        let ph = self.pipe_of_kind(pipe, PipeKind::Control)?;
        if has_condition {
            sdk_err!("flow", "match conditions are not supported");
            return Err(DocaError::NOT_SUPPORTED);
        }
        let (port, pipe_monitor) = (ph.port, ph.monitor);
        let Some(f) = args.fwd else {
            sdk_err!("flow", "a control entry needs a forward");
            return Err(DocaError::INVALID_VALUE);
        };
        let pattern =
            compile_match(m.unwrap_or(&[0; crate::packet::key::KEY_BYTES]), mask)?.pattern();
        let acts = match args.actions {
            Some(a) => {
                let set = ActionSet {
                    actions: Box::new(*a),
                    mask: args.actions_mask.map(|k| Box::new(*k)),
                    descs: args.descs.clone(),
                };
                Some(Arc::new(compile(&set, None, false)?))
            }
            None => None,
        };
        let mon = match args.monitor {
            Some(m) => Monitor::of(m)?.over(pipe_monitor),
            None => pipe_monitor,
        };
        let fwd = self.forward(port, f)?;
        if matches!(fwd.fwd, crate::packet::classify::Fwd::None) {
            sdk_err!(
                "flow",
                "a control entry needs a forward other than NONE/CHANGEABLE"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        self.check_edge(pipe, fwd.to_pipe)?;
        let (counter, own) = self.counter_for(port, mon)?;
        let rule = Rule::new(
            Matcher::Pattern(pattern),
            priority,
            fwd.fwd,
            acts,
            counter,
            mon.aging_sec > 0,
        );
        self.register(pipe, rule, &args, fwd.to_pipe, own, mon.aging_sec)
    }

    /// `doca_flow_pipe_basic_update_entry`: new actions, monitor (counter kept unless it
    /// changes kind) or forward for a BASIC entry; completes as UPD.
    pub(crate) fn update_basic_entry(
        &mut self,
        pipe: usize,
        h: usize,
        args: EntryArgs,
    ) -> DocaResult<()> {
        check_flags(args.flags)?;
        self.check_entry_queue(pipe, args.pipe_queue)?;
        let e = self.entry_mut(h)?;
        if e.pipe != pipe {
            sdk_err!("flow", "the entry does not belong to this pipe");
            return Err(DocaError::INVALID_VALUE);
        }
        let ph = self.pipe_mut(pipe)?;
        if ph.pipe.kind != PipeKind::Basic {
            sdk_err!("flow", "basic entry update on a pipe that is not BASIC");
            return Err(DocaError::INVALID_VALUE);
        }
        let port = ph.port;
        let pipe_monitor = ph.monitor;
        let acts = self.entry_actions(pipe, args.action_idx, args.actions)?;
        let (fwd, fwd_to) = match args.fwd {
            Some(_) => {
                let f = self.entry_forward(pipe, args.fwd)?;
                (f.fwd, f.to_pipe)
            }
            None => (e.rule.fwd.clone(), e.fwd_to),
        };
        let (mut counter, mut own) = (e.rule.counter.clone(), e.own_counter);
        let mut aging = e.aging_sec;
        if let Some(m) = args.monitor {
            let mon = Monitor::of(m)?.over(pipe_monitor);
            let now_own = mon.counter == CounterKind::Own;
            if !(now_own && own) {
                let (c, o) = self.counter_for(port, mon)?;
                if own {
                    self.release_counter(port);
                }
                counter = c;
                own = o;
            }
            aging = mon.aging_sec;
        }
        let rule = Rule::new(
            e.rule.matcher.clone(),
            e.rule.priority,
            fwd,
            acts,
            counter,
            aging > 0,
        );
        let ph = self.pipe_mut(pipe)?;
        let Some(new) = ph.pipe.replace_rule(&e.rule, rule) else {
            return Err(DocaError::NOT_FOUND);
        };
        let old_to = std::mem::replace(&mut e.fwd_to, fwd_to);
        e.rule = new;
        e.own_counter = own;
        e.status = sys::DOCA_FLOW_ENTRY_STATUS_IN_PROCESS;
        if aging > 0 && e.aging_sec == 0 {
            self.port_mut(port)?.aging.push(h);
        }
        e.aging_sec = aging;
        e.aged = false;
        e.queue = args.pipe_queue;
        self.edge(pipe, old_to, false);
        self.edge(pipe, fwd_to, true);
        self.complete_later(port, args.pipe_queue, h, sys::DOCA_FLOW_ENTRY_OP_UPD);
        Ok(())
    }

    /// `doca_flow_pipe_remove_entry`: the entry stops matching now; its DEL completes (and
    /// the handle is freed) with the next processing of `pipe_queue`. NOT_FOUND for an
    /// unknown or removed entry.
    pub(crate) fn remove_entry(&mut self, pipe_queue: u16, flags: u32, h: usize) -> DocaResult<()> {
        check_flags(flags)?;
        let e = self.entry_mut(h)?;
        self.check_entry_queue(e.pipe, pipe_queue)?;
        let ph = self.pipe_mut(e.pipe)?;
        ph.pipe.remove_rule(&e.rule);
        e.removed = true;
        e.status = sys::DOCA_FLOW_ENTRY_STATUS_IN_PROCESS;
        let (pipe, port, to, own) = (e.pipe, e.port, e.fwd_to, e.own_counter);
        e.own_counter = false;
        self.edge(pipe, to, false);
        if own {
            self.release_counter(port);
        }
        self.complete_later(port, pipe_queue, h, sys::DOCA_FLOW_ENTRY_OP_DEL);
        self.check_congestion(pipe);
        Ok(())
    }

    /// Frees an entry handle (its pipe is being destroyed, or its DEL completed).
    pub(crate) fn free_entry(&mut self, h: usize) {
        if !self.entries.remove(&h) {
            return;
        }
        // SAFETY: h was a registered live box; unregistered now and freed once.
        let e = unsafe { Box::from_raw(h as *mut EntryHandle) };
        if !e.removed {
            if let Ok(ph) = self.pipe_mut(e.pipe) {
                ph.pipe.remove_rule(&e.rule);
            }
            self.edge(e.pipe, e.fwd_to, false);
            if e.own_counter {
                self.release_counter(e.port);
            }
        }
        if let Ok(ph) = self.pipe_mut(e.pipe) {
            ph.entries.retain(|x| *x != h);
        }
        if let Ok(fp) = self.port_mut(e.port) {
            fp.aging.retain(|x| *x != h);
            for q in &mut fp.queues {
                q.retain(|c| c.entry != h);
            }
        }
    }

    /// `doca_flow_entries_process`: completes up to `max` (0: all) pending operations of
    /// `pipe_queue`, and the port's pipe events and resizes. Returns the callbacks to run
    /// and the entries to free after them. Arms the port (a pcap port starts its replay).
    pub(crate) fn process(
        &mut self,
        port: usize,
        pipe_queue: u16,
        max: u32,
    ) -> DocaResult<(Vec<Callback>, Vec<usize>)> {
        let fp = self.port_mut(port)?;
        self.check_queue(pipe_queue)?;
        fp.port.arm();
        let cfg = self.cfg()?;
        let (cb_entry, cb_pipe) = (cfg.cb_entry, cfg.cb_pipe);
        let mut cbs = Vec::new();
        let mut free = Vec::new();
        let n = if max == 0 { usize::MAX } else { max as usize };
        let q = &mut fp.queues[usize::from(pipe_queue)];
        let batch: Vec<Completion> = q.drain(..n.min(q.len())).collect();
        for c in batch {
            let (entry, op, status) = (c.entry, c.op, c.status);
            let ctx = self.entry_ctx(entry);
            if let Some(e) = self.finish(c) {
                free.push(e);
            }
            if let Some(cb) = cb_entry {
                cbs.push(Callback::Entry {
                    cb,
                    entry,
                    queue: pipe_queue,
                    status,
                    op,
                    ctx,
                });
            }
        }
        // Resizes: the new capacity, then each entry relocated (context may change).
        for &p in &fp.pipes.clone() {
            let Ok(ph) = self.pipe_mut(p) else { continue };
            if ph.excluded_queue == Some(pipe_queue) {
                continue;
            }
            let Some(r) = ph.resize.take() else { continue };
            if let Some(cb) = r.nr_entries_changed {
                // SAFETY: the application's callback for this pipe's user context.
                let rc = unsafe { cb(ph.user_ctx, r.new_nr_entries) };
                if rc != 0 {
                    sdk_warn!(
                        "flow",
                        "resize of {:?}: nr_entries callback said {rc}",
                        ph.name
                    );
                }
            }
            ph.nr_entries = r.new_nr_entries;
            ph.congested = false;
            if let Some(cb) = r.relocate {
                for &e in &ph.entries {
                    // SAFETY: registered entries are live boxes.
                    let eh = unsafe { &mut *(e as *mut EntryHandle) };
                    let mut new_ctx = eh.usr_ctx;
                    // SAFETY: the application's callback; new_ctx is valid storage.
                    let rc = unsafe { cb(ph.user_ctx, eh.queue, eh.usr_ctx, &mut new_ctx) };
                    if rc == 0 {
                        eh.usr_ctx = new_ctx;
                    }
                }
            }
            fp.pipe_events.push_back(PipeEvent {
                pipe: p,
                op: sys::DOCA_FLOW_PIPE_OP_RESIZED,
            });
        }
        let events: Vec<_> = fp.pipe_events.drain(..).collect();
        for ev in events {
            let Some(cb) = cb_pipe else { continue };
            let ctx = self
                .pipe_mut(ev.pipe)
                .map_or(std::ptr::null_mut(), |p| p.user_ctx);
            cbs.push(Callback::Pipe {
                cb,
                pipe: ev.pipe,
                status: sys::DOCA_FLOW_PIPE_STATUS_SUCCESS,
                op: ev.op,
                ctx,
            });
        }
        Ok((cbs, free))
    }

    fn entry_ctx(&self, h: usize) -> *mut c_void {
        if !self.entries.contains(&h) {
            return std::ptr::null_mut();
        }
        // SAFETY: registered entries are live boxes.
        unsafe { &*(h as *const EntryHandle) }.usr_ctx
    }

    /// `doca_flow_aging_handle`: reports (op AGED) the entries of `queue` idle for their
    /// aging period, at most `max` (0: no limit). Returns how many, or -1 when none aged
    /// (the scan is complete in one call), and the callbacks to run.
    pub(crate) fn handle_aging(
        &mut self,
        port: usize,
        queue: u16,
        max: u64,
    ) -> DocaResult<(i32, Vec<Callback>)> {
        self.check_queue(queue)?;
        let fp = self.port_mut(port)?;
        let now = realtime_ns();
        let cb = self.cfg()?.cb_entry;
        let mut n: u64 = 0;
        let mut cbs = Vec::new();
        for &h in &fp.aging {
            if max != 0 && n >= max {
                break;
            }
            // SAFETY: the aging list holds live entry handles.
            let e = unsafe { &mut *(h as *mut EntryHandle) };
            if e.queue != queue || e.aged || e.removed {
                continue;
            }
            let last = e
                .rule
                .last_hit
                .as_ref()
                .map_or(now, |t| t.load(Ordering::Relaxed));
            if now.saturating_sub(last) < u64::from(e.aging_sec) * 1_000_000_000 {
                continue;
            }
            e.aged = true;
            n += 1;
            if let Some(cb) = cb {
                cbs.push(Callback::Entry {
                    cb,
                    entry: h,
                    queue,
                    status: sys::DOCA_FLOW_ENTRY_STATUS_SUCCESS,
                    op: sys::DOCA_FLOW_ENTRY_OP_AGED,
                    ctx: e.usr_ctx,
                });
            }
        }
        let r = if n == 0 {
            -1
        } else {
            n.min(i32::MAX as u64) as i32
        };
        Ok((r, cbs))
    }

    /// `doca_flow_pipe_entry_get_status`: ERROR for an unknown entry.
    pub(crate) fn entry_status(&self, h: usize) -> u32 {
        if !self.entries.contains(&h) {
            return sys::DOCA_FLOW_ENTRY_STATUS_ERROR;
        }
        // SAFETY: registered entries are live boxes.
        unsafe { &*(h as *const EntryHandle) }.status
    }

    /// Packets and bytes of a counting entry; NOT_FOUND for an unknown entry,
    /// NOT_SUPPORTED (logged) when it has no counter.
    pub(crate) fn query_entry(&self, h: usize) -> DocaResult<(u64, u64)> {
        let e = self.entry_mut(h)?;
        match &e.rule.counter {
            Some(c) => Ok(c.get()),
            None => {
                sdk_err!("flow", "querying an entry without a counter (monitor counter_type NONE) is not supported");
                Err(DocaError::NOT_SUPPORTED)
            }
        }
    }

    /// Packets and bytes a pipe missed; NOT_SUPPORTED (logged) without a miss counter.
    pub(crate) fn query_pipe_miss(&self, h: usize) -> DocaResult<(u64, u64)> {
        let ph = self.pipe_mut(h)?;
        match &ph.pipe.miss_counter {
            Some(c) => Ok(c.get()),
            None => {
                sdk_err!(
                    "flow",
                    "querying the misses of pipe {:?} without a miss counter is not supported",
                    ph.name
                );
                Err(DocaError::NOT_SUPPORTED)
            }
        }
    }
}
