//! The configuration objects behind `struct doca_flow_cfg`, `struct doca_flow_port_cfg`,
//! `struct doca_flow_tune_cfg` and `struct doca_flow_pipe_cfg`, and their setters' checks.

use std::ffi::c_void;

use super::actions::ActionSet;
use super::matching::{MatchBytes, Template};
use super::monitor::Monitor;
use super::sys;
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};

/// Every bit of `enum doca_flow_pipe_hash_map_algorithm` (HASH .. SELECT_ENABLED).
pub(crate) const HASH_MAP_ALGORITHMS: u32 = 0x3f;

/// `doca_flow_entry_process_cb`.
pub type EntryProcessCb =
    unsafe extern "C" fn(*mut sys::doca_flow_pipe_entry, u16, u32, u32, *mut c_void);
/// `doca_flow_pipe_process_cb`.
pub type PipeProcessCb = unsafe extern "C" fn(*mut sys::doca_flow_pipe, u32, u32, *mut c_void);
/// `doca_flow_shared_resource_unbind_cb`.
pub type UnbindCb = unsafe extern "C" fn(u32, u32, *mut c_void);

/// Kinds of shared resources (`enum doca_flow_shared_resource_type`) and of per-port pools
/// (`enum doca_flow_resource`): the same seven, in the same order.
pub(crate) const RESOURCE_KINDS: usize = 7;
/// Index of the counter kind.
pub(crate) const RES_COUNTER: usize = 1;
/// Index of the RSS kind.
pub(crate) const RES_RSS: usize = 2;
/// Names of the kinds, for messages.
pub(crate) const RESOURCE_NAMES: [&str; RESOURCE_KINDS] = [
    "meter", "counter", "RSS", "PSP", "encap", "decap", "IPsec SA",
];

/// `struct doca_flow_cfg`.
#[derive(Debug, Clone)]
pub struct FlowCfg {
    /// Pipe queues (entry-operation queues); at least 1.
    pub(crate) pipe_queues: u16,
    /// Mode string.
    pub(crate) mode_args: String,
    /// Operations a queue holds before an add processes its completions itself (0: the
    /// default).
    pub(crate) queue_depth: u32,
    /// SYSTEM mode: non-shared counters (0: unlimited).
    pub(crate) nr_counters: u32,
    /// SYSTEM mode: meters (recorded; meters are not supported).
    pub(crate) nr_meters: u32,
    /// SYSTEM mode: ids of each shared-resource kind.
    pub(crate) nr_shared: [u32; RESOURCE_KINDS],
    /// ACL collisions (recorded; ACL pipes are not supported).
    pub(crate) nr_acl_collisions: u8,
    /// PORT resource mode (else SYSTEM).
    pub(crate) port_mode: bool,
    /// Entry completion callback.
    pub(crate) cb_entry: Option<EntryProcessCb>,
    /// Pipe event callback.
    pub(crate) cb_pipe: Option<PipeProcessCb>,
    /// Shared-resource unbind callback.
    pub(crate) cb_unbind: Option<UnbindCb>,
    /// RSS key (seeds the RSS hash).
    pub(crate) rss_key: Option<Vec<u8>>,
}

impl FlowCfg {
    /// What `doca_flow_cfg_create` makes: one pipe queue, mode "vnf", SYSTEM resources.
    pub(crate) fn new() -> FlowCfg {
        FlowCfg {
            pipe_queues: 1,
            mode_args: "vnf".into(),
            queue_depth: 0,
            nr_counters: 0,
            nr_meters: 0,
            nr_shared: [0; RESOURCE_KINDS],
            nr_acl_collisions: 0,
            port_mode: false,
            cb_entry: None,
            cb_pipe: None,
            cb_unbind: None,
            rss_key: None,
        }
    }

    /// `set_mode_args`: the first word is `vnf` or `switch` (INVALID_VALUE otherwise); the
    /// modifiers (`hws`, `isolated`, `expert`, `cpds`, ...) change nothing in the emulation.
    pub(crate) fn set_mode_args(&mut self, mode: &str) -> DocaResult<()> {
        let first = mode.split(',').next().unwrap_or("").trim();
        if first != "vnf" && first != "switch" {
            sdk_err!(
                "flow",
                "mode_args {mode:?}: the first word must be vnf or switch"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        self.mode_args = mode.to_owned();
        Ok(())
    }

    /// Whether the mode is "switch".
    pub(crate) fn switch_mode(&self) -> bool {
        self.mode_args.starts_with("switch")
    }
}

/// `struct doca_flow_tune_cfg`.
#[derive(Debug, Default, Clone)]
pub struct TuneCfg {
    /// `enum doca_flow_tune_profile`.
    pub(crate) profile: u32,
}

/// `struct doca_flow_port_cfg`.
#[derive(Debug)]
pub struct PortCfg {
    /// Flow port id.
    pub(crate) port_id: u16,
    /// The device (`struct doca_dev *`), not owned.
    pub(crate) dev: *const Dev,
    /// Device arguments (recorded).
    pub(crate) devargs: String,
    /// Bytes of the per-port user area.
    pub(crate) priv_data_size: u16,
    /// Action memory (bytes, a power of two of at least 64; 0: default).
    pub(crate) actions_mem_size: u32,
    /// PORT mode pools, per `enum doca_flow_resource`.
    pub(crate) nr_resources: [u32; RESOURCE_KINDS],
    /// `enum doca_flow_port_operation_state`.
    pub(crate) operation_state: u32,
    /// IPsec sequence-number offload disabled (recorded).
    pub(crate) ipsec_sn_offload_disabled: bool,
    /// Service thread core and cycle (recorded: the runtime has no service threads).
    pub(crate) service_core: u32,
    /// Service thread cycle in milliseconds.
    pub(crate) service_cycle_ms: u32,
}

impl PortCfg {
    /// What `doca_flow_port_cfg_create` makes: port 0, no device.
    pub(crate) fn new() -> PortCfg {
        PortCfg {
            port_id: 0,
            dev: std::ptr::null(),
            devargs: String::new(),
            priv_data_size: 0,
            actions_mem_size: 0,
            nr_resources: [0; RESOURCE_KINDS],
            operation_state: 0,
            ipsec_sn_offload_disabled: false,
            service_core: 0,
            service_cycle_ms: 1000,
        }
    }
}

/// `struct doca_flow_pipe_cfg`.
#[derive(Debug)]
pub struct PipeCfg {
    /// Port handle the pipe will be created on.
    pub(crate) port: usize,
    /// Name.
    pub(crate) name: String,
    /// Label.
    pub(crate) label: String,
    /// `enum doca_flow_pipe_type` value.
    pub(crate) kind: u32,
    /// Root pipe of the port.
    pub(crate) is_root: bool,
    /// `enum doca_flow_pipe_domain` value, once set.
    pub(crate) domain: Option<u32>,
    /// Entry capacity (default 8k).
    pub(crate) nr_entries: u32,
    /// The match and mask as given (compiled at pipe creation, for the pipe's type).
    pub(crate) match_: Option<(Box<MatchBytes>, Option<Box<MatchBytes>>)>,
    /// The actions array.
    pub(crate) actions: Vec<ActionSet>,
    /// The monitor.
    pub(crate) monitor: Monitor,
    /// The pipe counts misses.
    pub(crate) miss_counter: bool,
    /// Resizable.
    pub(crate) is_resizable: bool,
    /// Excluded pipe queue.
    pub(crate) excluded_queue: Option<u16>,
    /// Congestion threshold in percent (0: none).
    pub(crate) congestion: u8,
    /// User context of pipe events.
    pub(crate) user_ctx: *mut c_void,
    /// HASH pipes: `enum doca_flow_pipe_hash_map_algorithm` bits.
    pub(crate) hash_algorithm: u32,
}

/// Default entry capacity of a pipe.
pub(crate) const DEFAULT_NR_ENTRIES: u32 = 8192;

impl PipeCfg {
    /// What `doca_flow_pipe_cfg_create` makes for the port handle `port`: a BASIC pipe of
    /// the default domain, no match.
    pub(crate) fn new(port: usize) -> PipeCfg {
        PipeCfg {
            port,
            name: String::new(),
            label: String::new(),
            kind: sys::DOCA_FLOW_PIPE_BASIC,
            is_root: false,
            domain: None,
            nr_entries: DEFAULT_NR_ENTRIES,
            match_: None,
            actions: Vec::new(),
            monitor: Monitor::default(),
            miss_counter: false,
            is_resizable: false,
            excluded_queue: None,
            congestion: 0,
            user_ctx: std::ptr::null_mut(),
            hash_algorithm: 0,
        }
    }

    /// `set_type`: INVALID_VALUE for an unknown type.
    pub(crate) fn set_type(&mut self, kind: u32) -> DocaResult<()> {
        if kind > sys::DOCA_FLOW_PIPE_HASH {
            sdk_err!("flow", "pipe type {kind} is out of range");
            return Err(DocaError::INVALID_VALUE);
        }
        self.kind = kind;
        Ok(())
    }

    /// `set_domain`: INVALID_VALUE for an unknown domain, ALREADY_EXIST when set before.
    pub(crate) fn set_domain(&mut self, domain: u32) -> DocaResult<()> {
        if domain > sys::DOCA_FLOW_PIPE_DOMAIN_SECURE_EGRESS {
            sdk_err!("flow", "pipe domain {domain} is out of range");
            return Err(DocaError::INVALID_VALUE);
        }
        if self.domain.is_some() {
            return Err(DocaError::ALREADY_EXIST);
        }
        self.domain = Some(domain);
        Ok(())
    }

    /// `set_congestion_level_threshold`: a percentage in (0, 100].
    pub(crate) fn set_congestion(&mut self, pct: u8) -> DocaResult<()> {
        if pct == 0 || pct > 100 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.congestion = pct;
        Ok(())
    }

    /// `set_hash_map_algorithm`: known bits only.
    pub(crate) fn set_hash_algorithm(&mut self, flags: u32) -> DocaResult<()> {
        if flags == 0 || flags & !HASH_MAP_ALGORITHMS != 0 {
            sdk_err!("flow", "hash map algorithm flags {flags:#x} are not valid");
            return Err(DocaError::INVALID_VALUE);
        }
        self.hash_algorithm = flags;
        Ok(())
    }
}

/// The BASIC/HASH template of a pipe configuration's match.
pub(crate) fn template_of(c: &PipeCfg) -> DocaResult<Template> {
    match &c.match_ {
        None => Ok(Template::default()),
        Some((m, k)) => super::matching::compile_template(m, k.as_deref()),
    }
}
