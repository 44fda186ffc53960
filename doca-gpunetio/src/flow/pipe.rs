//! DOCA Flow pipes (`doca_flow_pipe`) and their entries.

use super::flags::{RssFlags, TcpFlags};
use super::matching::{Forward, Match};
use super::pipe_handle::{Pipe, PipeInner};
use super::FlowPort;
use doca_common::error::{check, DocaError, Error, Result};
use doca_sys as sys;
use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// A pipe config being built; destroyed on drop.
struct PipeCfg(NonNull<sys::doca_flow_pipe_cfg>);
impl Drop for PipeCfg {
    fn drop(&mut self) {
        // SAFETY: created by doca_flow_pipe_cfg_create, destroyed once.
        unsafe { sys::doca_flow_pipe_cfg_destroy(self.0.as_ptr()) };
    }
}

impl PipeCfg {
    fn new(
        port: &FlowPort,
        name: &str,
        kind: sys::doca_flow_pipe_type,
        is_root: bool,
    ) -> Result<PipeCfg> {
        let cname = CString::new(name).map_err(|_| {
            Error::InvalidArgument(format!("pipe name {name:?} contains a NUL byte"))
        })?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the port is live; `raw` is a valid out-pointer.
        check("doca_flow_pipe_cfg_create", unsafe {
            sys::doca_flow_pipe_cfg_create(&mut raw, port.as_raw())
        })?;
        let c = PipeCfg(NonNull::new(raw).ok_or(Error::Doca {
            op: "doca_flow_pipe_cfg_create",
            code: DocaError::UNEXPECTED,
        })?);
        // SAFETY (all three): `c` is live; `cname` outlives the call.
        check("doca_flow_pipe_cfg_set_name", unsafe {
            sys::doca_flow_pipe_cfg_set_name(c.0.as_ptr(), cname.as_ptr())
        })?;
        // SAFETY: as above.
        check("doca_flow_pipe_cfg_set_type", unsafe {
            sys::doca_flow_pipe_cfg_set_type(c.0.as_ptr(), kind)
        })?;
        // SAFETY: as above.
        check("doca_flow_pipe_cfg_set_is_root", unsafe {
            sys::doca_flow_pipe_cfg_set_is_root(c.0.as_ptr(), is_root)
        })?;
        Ok(c)
    }

    fn create(
        self,
        port: &FlowPort,
        name: &str,
        is_control: bool,
        fwd: Option<&Forward>,
        miss: Option<&Forward>,
    ) -> Result<Pipe> {
        let fwd_raw = fwd.map(Forward::to_raw);
        let miss_raw = miss.map(Forward::to_raw);
        let mut raw = std::ptr::null_mut();
        // SAFETY: the config is complete; the forwards (and the queue lists they point at)
        // live until the call returns; `raw` is a valid out-pointer.
        check("doca_flow_pipe_create", unsafe {
            sys::doca_flow_pipe_create(
                self.0.as_ptr(),
                fwd_raw.as_ref().map_or(std::ptr::null(), |f| &f.raw),
                miss_raw.as_ref().map_or(std::ptr::null(), |f| &f.raw),
                &mut raw,
            )
        })?;
        let raw = NonNull::new(raw).ok_or(Error::Doca {
            op: "doca_flow_pipe_create",
            code: DocaError::UNEXPECTED,
        })?;
        let targets = [fwd, miss]
            .into_iter()
            .flatten()
            .filter_map(|f| match f {
                Forward::Pipe(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        Ok(Pipe {
            inner: Arc::new(PipeInner {
                raw,
                name: name.to_owned(),
                is_control,
                port: port.clone(),
                targets: Mutex::new(targets),
            }),
        })
    }
}

/// A monitor with a non-shared counter.
fn counter_monitor() -> sys::doca_flow_monitor {
    sys::doca_flow_monitor {
        counter_type: sys::doca_flow_resource_type::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
        ..Default::default()
    }
}

/// Configures a BASIC pipe. Obtained from [`Pipe::basic`].
#[must_use = "a builder does nothing until build()"]
pub struct BasicPipeBuilder {
    port: FlowPort,
    name: String,
    is_root: bool,
    matching: Match,
    fwd: Option<Forward>,
    miss: Option<Forward>,
    counter: bool,
}

impl BasicPipeBuilder {
    /// Matches frames the parser found to be IPv4/UDP (parser metadata, as the samples'
    /// UDP pipe).
    pub fn match_udp_ipv4(mut self) -> Self {
        self.matching = Match::new().meta_ipv4().meta_udp();
        self
    }

    /// Matches frames the parser found to be IPv4/TCP.
    pub fn match_tcp_ipv4(mut self) -> Self {
        self.matching = Match::new().meta_ipv4().meta_tcp();
        self
    }

    /// Matches frames the parser found to be IPv4/ICMP.
    pub fn match_icmp_ipv4(mut self) -> Self {
        self.matching = Match::new().meta_ipv4().meta_icmp();
        self
    }

    /// Matches with any [`Match`] (default: everything).
    pub fn matching(mut self, m: Match) -> Self {
        self.matching = m;
        self
    }

    /// Forwards matches to the RX queues with these ids, spread by an RSS hash of `flags`.
    pub fn rss_to(mut self, queues: &[u16], flags: RssFlags) -> Self {
        self.fwd = Some(Forward::rss(queues, flags));
        self
    }

    /// Forwards matches to another pipe.
    pub fn forward_to(mut self, pipe: &Pipe) -> Self {
        self.fwd = Some(Forward::Pipe(pipe.clone()));
        self
    }

    /// Drops matches.
    pub fn drop_matches(mut self) -> Self {
        self.fwd = Some(Forward::Drop);
        self
    }

    /// Drops frames that match no entry (default: the library's miss behaviour).
    pub fn miss_drop(mut self) -> Self {
        self.miss = Some(Forward::Drop);
        self
    }

    /// Counts packets and bytes per entry (non-shared counter), read with [`Entry::query`].
    pub fn counter(mut self) -> Self {
        self.counter = true;
        self
    }

    /// Makes this the port's root pipe (where classification starts).
    pub fn root(mut self) -> Self {
        self.is_root = true;
        self
    }

    /// Creates the pipe.
    pub fn build(self) -> Result<Pipe> {
        let what = format!("Pipe::basic({:?}).build", self.name);
        let fwd = self.fwd.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what}: no forward; call rss_to(), forward_to() or drop_matches()"
            ))
        })?;
        fwd.validate(&what)?;
        let _g = self.port.flow().lock();
        let cfg = PipeCfg::new(
            &self.port,
            &self.name,
            sys::doca_flow_pipe_type::DOCA_FLOW_PIPE_BASIC,
            self.is_root,
        )?;
        // SAFETY: `cfg` is live; the match is copied by the call.
        check("doca_flow_pipe_cfg_set_match", unsafe {
            sys::doca_flow_pipe_cfg_set_match(
                cfg.0.as_ptr(),
                self.matching.as_raw(),
                std::ptr::null(),
            )
        })?;
        if self.counter {
            let mon = counter_monitor();
            // SAFETY: `cfg` is live; the monitor is copied by the call.
            check("doca_flow_pipe_cfg_set_monitor", unsafe {
                sys::doca_flow_pipe_cfg_set_monitor(cfg.0.as_ptr(), &mon)
            })?;
        }
        cfg.create(
            &self.port,
            &self.name,
            false,
            Some(&fwd),
            self.miss.as_ref(),
        )
    }
}

impl Pipe {
    /// Starts configuring a BASIC pipe named `name` on `port`.
    pub fn basic(port: &FlowPort, name: &str) -> BasicPipeBuilder {
        BasicPipeBuilder {
            port: port.clone(),
            name: name.to_owned(),
            is_root: false,
            matching: Match::new(),
            fwd: None,
            miss: None,
            counter: false,
        }
    }

    /// Creates the port's root CONTROL pipe: entries with priorities that send frames on to
    /// other pipes or queues (the samples' "root" pipe).
    pub fn control_root(port: &FlowPort) -> Result<Pipe> {
        Self::control(port, "root", true)
    }

    /// Creates a CONTROL pipe.
    pub fn control(port: &FlowPort, name: &str, is_root: bool) -> Result<Pipe> {
        let _g = port.flow().lock();
        let cfg = PipeCfg::new(
            port,
            name,
            sys::doca_flow_pipe_type::DOCA_FLOW_PIPE_CONTROL,
            is_root,
        )?;
        cfg.create(port, name, true, None, None)
    }

    /// Adds an entry to a BASIC pipe whose match has no per-entry fields
    /// (`doca_flow_pipe_basic_add_entry`, no wait).
    pub fn add_entry(&self) -> Result<Entry> {
        self.add_basic_entry(&Match::new())
    }

    /// Adds an entry to a BASIC pipe matching `m` (for pipes whose match leaves fields to
    /// the entries).
    pub fn add_basic_entry(&self, m: &Match) -> Result<Entry> {
        self.add_basic_entry_on(0, m)
    }

    /// Adds an entry to a BASIC pipe matching `m` through pipe queue `pipe_queue` (one of
    /// the [`FlowConfig::pipe_queues`](super::FlowConfig::pipe_queues) queues; threads that
    /// add entries at run time each use their own). The entry takes effect once
    /// [`FlowPort::entries_process_on`] ran for that queue.
    pub fn add_basic_entry_on(&self, pipe_queue: u16, m: &Match) -> Result<Entry> {
        if self.inner.is_control {
            return Err(Error::InvalidArgument(format!(
                "Pipe::add_entry: {:?} is a CONTROL pipe; use add_control_entry or forward_*",
                self.inner.name
            )));
        }
        let _g = self.inner.port.flow().lock();
        let mut e = std::ptr::null_mut();
        // SAFETY: the pipe is live; `m` is copied; `e` is a valid out-pointer.
        check("doca_flow_pipe_basic_add_entry", unsafe {
            sys::doca_flow_pipe_basic_add_entry(
                pipe_queue,
                self.as_raw(),
                m.as_raw(),
                0,
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                sys::doca_flow_entry_flags::DOCA_FLOW_ENTRY_FLAGS_NO_WAIT.0,
                std::ptr::null_mut(),
                &mut e,
            )
        })?;
        self.entry(e, "doca_flow_pipe_basic_add_entry")
    }

    /// Adds an entry to a CONTROL pipe: frames matching `m` under `mask` (`None`: the
    /// fields set in `m`) go to `fwd`; lower `priority` values are tried first. Each
    /// control entry counts its packets (non-shared counter), read with [`Entry::query`].
    pub fn add_control_entry(
        &self,
        priority: u32,
        m: &Match,
        mask: Option<&Match>,
        fwd: impl Into<Forward>,
    ) -> Result<Entry> {
        let fwd = fwd.into();
        if !self.inner.is_control {
            return Err(Error::InvalidArgument(format!(
                "Pipe::add_control_entry: {:?} is not a CONTROL pipe",
                self.inner.name
            )));
        }
        fwd.validate("Pipe::add_control_entry")?;
        let raw_fwd = fwd.to_raw();
        let mon = counter_monitor();
        let _g = self.inner.port.flow().lock();
        let mut e = std::ptr::null_mut();
        // SAFETY: the pipe is live; match, mask and forward (with its queue list) are live
        // for the call and copied by it; `e` is a valid out-pointer.
        check("doca_flow_pipe_control_add_entry", unsafe {
            sys::doca_flow_pipe_control_add_entry(
                0,
                self.as_raw(),
                m.as_raw(),
                mask.map_or(std::ptr::null(), |k| k.as_raw()),
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                &mon,
                priority,
                &raw_fwd.raw,
                std::ptr::null_mut(),
                &mut e,
            )
        })?;
        if let Forward::Pipe(p) = &fwd {
            self.inner
                .targets
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(p.clone());
        }
        self.entry(e, "doca_flow_pipe_control_add_entry")
    }

    /// CONTROL entry: IPv4/UDP frames go to `pipe`.
    pub fn forward_ipv4_udp_to(&self, pipe: &Pipe, priority: u32) -> Result<Entry> {
        self.add_control_entry(priority, &Match::new().udp(), None, pipe)
    }

    /// CONTROL entry: IPv4 frames with next protocol `proto` go to `pipe`.
    pub fn forward_ipv4_proto_to(&self, proto: u8, pipe: &Pipe, priority: u32) -> Result<Entry> {
        self.add_control_entry(priority, &Match::new().ip_proto(proto), None, pipe)
    }

    /// CONTROL entries: IPv4/TCP frames with any of the TCP flags in `flags` set go to
    /// `target` (a pipe, RSS queues or drop). One entry per flag (a frame with several of
    /// them set is counted by the first entry that matches); returned in flag bit order.
    pub fn forward_tcp_flags_to(
        &self,
        flags: TcpFlags,
        target: impl Into<Forward>,
        priority: u32,
    ) -> Result<Vec<Entry>> {
        if flags.is_empty() {
            return Err(Error::InvalidArgument(
                "Pipe::forward_tcp_flags_to: empty TCP flag set".into(),
            ));
        }
        let target = target.into();
        flags
            .iter()
            .map(|flag| {
                let (m, mask) = Match::tcp_flag_set(flag);
                self.add_control_entry(priority, &m, Some(&mask), target.clone())
            })
            .collect()
    }

    /// Packets and bytes that matched no entry (`doca_flow_resource_query_pipe_miss`).
    pub fn query_miss(&self) -> Result<(u64, u64)> {
        let _g = self.inner.port.flow().lock();
        let mut q = sys::doca_flow_resource_query::default();
        // SAFETY: the pipe is live; `q` is a valid out-pointer.
        check("doca_flow_resource_query_pipe_miss", unsafe {
            sys::doca_flow_resource_query_pipe_miss(self.as_raw(), &mut q)
        })?;
        // SAFETY: a counter query fills the counter member.
        let c = unsafe { q.__bindgen_anon_1.counter };
        Ok((c.total_pkts, c.total_bytes))
    }

    fn entry(&self, e: *mut sys::doca_flow_pipe_entry, op: &'static str) -> Result<Entry> {
        let raw = NonNull::new(e).ok_or(Error::Doca {
            op,
            code: DocaError::UNEXPECTED,
        })?;
        Ok(Entry {
            raw,
            pipe: self.clone(),
        })
    }
}

/// One entry of a pipe. It lives as long as its pipe (DOCA frees entries with the pipe);
/// [`remove`](Self::remove) takes it out earlier. Holds its pipe. `Send + Sync`.
pub struct Entry {
    raw: NonNull<sys::doca_flow_pipe_entry>,
    pipe: Pipe,
}

// SAFETY: the entry is used only under the Flow lock.
unsafe impl Send for Entry {}
// SAFETY: as above.
unsafe impl Sync for Entry {}

impl Entry {
    /// Packets and bytes counted for this entry (`doca_flow_resource_query_entry`; the
    /// pipe needs a counter, see [`BasicPipeBuilder::counter`]).
    pub fn query(&self) -> Result<(u64, u64)> {
        let _g = self.pipe.inner.port.flow().lock();
        let mut q = sys::doca_flow_resource_query::default();
        // SAFETY: the entry is live (its pipe is held); `q` is a valid out-pointer.
        check("doca_flow_resource_query_entry", unsafe {
            sys::doca_flow_resource_query_entry(self.raw.as_ptr(), &mut q)
        })?;
        // SAFETY: a counter query fills the counter member.
        let c = unsafe { q.__bindgen_anon_1.counter };
        Ok((c.total_pkts, c.total_bytes))
    }

    /// Removes the entry from its pipe (`doca_flow_pipe_remove_entry`, no wait).
    pub fn remove(self) -> Result<()> {
        self.remove_on(0)
    }

    /// Removes the entry through pipe queue `pipe_queue` (no wait); the removal completes
    /// with the next [`FlowPort::entries_process_on`] for that queue.
    pub fn remove_on(self, pipe_queue: u16) -> Result<()> {
        let _g = self.pipe.inner.port.flow().lock();
        // SAFETY: the entry is live and removed once (consumes self).
        check("doca_flow_pipe_remove_entry", unsafe {
            sys::doca_flow_pipe_remove_entry(
                pipe_queue,
                sys::doca_flow_entry_flags::DOCA_FLOW_ENTRY_FLAGS_NO_WAIT.0,
                self.raw.as_ptr(),
            )
        })
    }

    /// The pipe this entry belongs to.
    pub fn pipe(&self) -> &Pipe {
        &self.pipe
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_flow_pipe_entry {
        self.raw.as_ptr()
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("pipe", &self.pipe.inner.name)
            .finish()
    }
}
