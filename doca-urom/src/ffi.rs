//! The C functions this crate calls, declared from the DOCA UROM facts. Private: the lead
//! replaces this module with `doca-sys` once its bindings cover UROM.
#![allow(non_camel_case_types, missing_docs, dead_code)]

use std::ffi::{c_char, c_void};

macro_rules! opaque {
    ($($n:ident),*) => { $(#[repr(C)] pub struct $n { _p: [u8; 0] })* };
}
opaque!(
    doca_pe,
    doca_ctx,
    doca_task,
    doca_buf,
    doca_dev,
    doca_devinfo,
    doca_urom_service,
    doca_urom_worker,
    doca_urom_worker_cmd_task,
    doca_urom_domain,
    doca_urom_service_get_workers_by_gid_task
);

pub type doca_error_t = u32;

#[repr(C)]
#[derive(Clone, Copy)]
pub union doca_data {
    pub ptr: *mut c_void,
    pub u64_: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct doca_urom_service_plugin_info {
    pub id: u64,
    pub version: u64,
    pub plugin_name: [c_char; 48],
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct doca_cpu_set_t {
    pub ucs_bits: [u64; 16],
}

pub type cmd_cb =
    Option<unsafe extern "C" fn(*mut doca_urom_worker_cmd_task, doca_data, doca_data)>;
pub type gid_cb = Option<
    unsafe extern "C" fn(*mut doca_urom_service_get_workers_by_gid_task, doca_data, doca_data),
>;
pub type allgather_cb = Option<
    unsafe extern "C" fn(
        *mut c_void,
        *mut c_void,
        usize,
        *mut c_void,
        *mut *mut c_void,
    ) -> doca_error_t,
>;
pub type req_cb = Option<unsafe extern "C" fn(*mut c_void) -> doca_error_t>;

#[repr(C)]
pub struct doca_urom_domain_oob_coll {
    pub allgather: allgather_cb,
    pub req_test: req_cb,
    pub req_free: req_cb,
    pub coll_info: *mut c_void,
    pub n_oob_indexes: u32,
    pub oob_index: u32,
}

pub const DOCA_CTX_STATE_IDLE: u32 = 0;
pub const DOCA_CTX_STATE_STARTING: u32 = 1;
pub const DOCA_CTX_STATE_RUNNING: u32 = 2;
pub const DOCA_CTX_STATE_STOPPING: u32 = 3;

extern "C" {
    pub fn doca_error_get_name(e: doca_error_t) -> *const c_char;
    pub fn doca_error_get_descr(e: doca_error_t) -> *const c_char;

    pub fn doca_pe_create(pe: *mut *mut doca_pe) -> doca_error_t;
    pub fn doca_pe_destroy(pe: *mut doca_pe) -> doca_error_t;
    pub fn doca_pe_progress(pe: *mut doca_pe) -> u8;
    pub fn doca_pe_connect_ctx(pe: *mut doca_pe, ctx: *mut doca_ctx) -> doca_error_t;
    pub fn doca_ctx_start(ctx: *mut doca_ctx) -> doca_error_t;
    pub fn doca_ctx_stop(ctx: *mut doca_ctx) -> doca_error_t;
    pub fn doca_ctx_get_state(ctx: *const doca_ctx, state: *mut u32) -> doca_error_t;
    pub fn doca_task_submit(task: *mut doca_task) -> doca_error_t;
    pub fn doca_task_get_status(task: *const doca_task) -> doca_error_t;
    pub fn doca_task_set_user_data(task: *mut doca_task, ud: doca_data);
    pub fn doca_buf_get_data(buf: *const doca_buf, data: *mut *mut c_void) -> doca_error_t;
    pub fn doca_buf_get_data_len(buf: *const doca_buf, len: *mut usize) -> doca_error_t;
    pub fn doca_buf_set_data(buf: *mut doca_buf, data: *mut c_void, len: usize) -> doca_error_t;

    pub fn doca_devinfo_create_list(list: *mut *mut *mut doca_devinfo, n: *mut u32)
        -> doca_error_t;
    pub fn doca_devinfo_destroy_list(list: *mut *mut doca_devinfo) -> doca_error_t;
    pub fn doca_devinfo_get_ibdev_name(
        d: *const doca_devinfo,
        name: *mut c_char,
        len: u32,
    ) -> doca_error_t;
    pub fn doca_devinfo_get_iface_name(
        d: *const doca_devinfo,
        name: *mut c_char,
        len: u32,
    ) -> doca_error_t;
    pub fn doca_devinfo_get_pci_addr_str(d: *const doca_devinfo, pci: *mut c_char) -> doca_error_t;
    pub fn doca_dev_open(d: *mut doca_devinfo, dev: *mut *mut doca_dev) -> doca_error_t;
    pub fn doca_dev_close(dev: *mut doca_dev) -> doca_error_t;
    pub fn doca_dev_as_devinfo(dev: *const doca_dev) -> *mut doca_devinfo;

    pub fn doca_urom_service_create(s: *mut *mut doca_urom_service) -> doca_error_t;
    pub fn doca_urom_service_destroy(s: *mut doca_urom_service) -> doca_error_t;
    pub fn doca_urom_service_set_max_comm_msg_size(
        s: *mut doca_urom_service,
        n: usize,
    ) -> doca_error_t;
    pub fn doca_urom_service_set_max_workers(s: *mut doca_urom_service, n: u32) -> doca_error_t;
    pub fn doca_urom_service_set_dev(s: *mut doca_urom_service, dev: *mut doca_dev)
        -> doca_error_t;
    pub fn doca_urom_service_as_ctx(s: *mut doca_urom_service) -> *mut doca_ctx;
    pub fn doca_urom_service_get_plugins_list(
        s: *mut doca_urom_service,
        plugins: *mut *const doca_urom_service_plugin_info,
        n: *mut usize,
    ) -> doca_error_t;
    pub fn doca_urom_service_get_cpuset(
        s: *mut doca_urom_service,
        set: *mut doca_cpu_set_t,
    ) -> doca_error_t;
    pub fn doca_urom_service_get_workers_by_gid_task_allocate_init(
        s: *mut doca_urom_service,
        gid: u32,
        cb: gid_cb,
        task: *mut *mut doca_urom_service_get_workers_by_gid_task,
    ) -> doca_error_t;
    pub fn doca_urom_service_get_workers_by_gid_task_release(
        t: *mut doca_urom_service_get_workers_by_gid_task,
    ) -> doca_error_t;
    pub fn doca_urom_service_get_workers_by_gid_task_as_task(
        t: *mut doca_urom_service_get_workers_by_gid_task,
    ) -> *mut doca_task;
    pub fn doca_urom_service_get_workers_by_gid_task_get_workers_count(
        t: *mut doca_urom_service_get_workers_by_gid_task,
    ) -> usize;
    pub fn doca_urom_service_get_workers_by_gid_task_get_worker_ids(
        t: *mut doca_urom_service_get_workers_by_gid_task,
    ) -> *const u64;

    pub fn doca_urom_worker_create(w: *mut *mut doca_urom_worker) -> doca_error_t;
    pub fn doca_urom_worker_destroy(w: *mut doca_urom_worker) -> doca_error_t;
    pub fn doca_urom_worker_set_service(
        w: *mut doca_urom_worker,
        s: *mut doca_urom_service,
    ) -> doca_error_t;
    pub fn doca_urom_worker_set_id(w: *mut doca_urom_worker, id: u64) -> doca_error_t;
    pub fn doca_urom_worker_set_plugins(w: *mut doca_urom_worker, plugins: u64) -> doca_error_t;
    pub fn doca_urom_worker_set_cpuset(
        w: *mut doca_urom_worker,
        set: doca_cpu_set_t,
    ) -> doca_error_t;
    pub fn doca_urom_worker_set_gid(w: *mut doca_urom_worker, gid: u32) -> doca_error_t;
    pub fn doca_urom_worker_set_max_inflight_tasks(
        w: *mut doca_urom_worker,
        n: u32,
    ) -> doca_error_t;
    pub fn doca_urom_worker_set_env(
        w: *mut doca_urom_worker,
        env: *const *const c_char,
        n: usize,
    ) -> doca_error_t;
    pub fn doca_urom_worker_get_id(w: *mut doca_urom_worker, id: *mut u64) -> doca_error_t;
    pub fn doca_urom_worker_get_gid(w: *mut doca_urom_worker, gid: *mut u32) -> doca_error_t;
    pub fn doca_urom_worker_as_ctx(w: *mut doca_urom_worker) -> *mut doca_ctx;
    pub fn doca_urom_worker_cmd_task_allocate_init(
        w: *mut doca_urom_worker,
        plugin: u64,
        t: *mut *mut doca_urom_worker_cmd_task,
    ) -> doca_error_t;
    pub fn doca_urom_worker_cmd_task_release(t: *mut doca_urom_worker_cmd_task) -> doca_error_t;
    pub fn doca_urom_worker_cmd_task_set_cb(t: *mut doca_urom_worker_cmd_task, cb: cmd_cb);
    pub fn doca_urom_worker_cmd_task_get_payload(
        t: *mut doca_urom_worker_cmd_task,
    ) -> *mut doca_buf;
    pub fn doca_urom_worker_cmd_task_get_response(
        t: *mut doca_urom_worker_cmd_task,
    ) -> *mut doca_buf;
    pub fn doca_urom_worker_cmd_task_get_user_data(
        t: *mut doca_urom_worker_cmd_task,
    ) -> *mut c_void;
    pub fn doca_urom_worker_cmd_task_as_task(t: *mut doca_urom_worker_cmd_task) -> *mut doca_task;

    pub fn doca_urom_domain_create(d: *mut *mut doca_urom_domain) -> doca_error_t;
    pub fn doca_urom_domain_destroy(d: *mut doca_urom_domain) -> doca_error_t;
    pub fn doca_urom_domain_set_buffers_count(d: *mut doca_urom_domain, n: usize) -> doca_error_t;
    pub fn doca_urom_domain_add_buffer(
        d: *mut doca_urom_domain,
        buf: *mut c_void,
        len: usize,
        memh: *mut c_void,
        memh_len: usize,
        mkey: *mut c_void,
        mkey_len: usize,
    ) -> doca_error_t;
    pub fn doca_urom_domain_set_oob(
        d: *mut doca_urom_domain,
        oob: *mut doca_urom_domain_oob_coll,
    ) -> doca_error_t;
    pub fn doca_urom_domain_set_workers(
        d: *mut doca_urom_domain,
        ids: *mut u64,
        workers: *mut *mut doca_urom_worker,
        n: usize,
    ) -> doca_error_t;
    pub fn doca_urom_domain_as_ctx(d: *mut doca_urom_domain) -> *mut doca_ctx;
}
