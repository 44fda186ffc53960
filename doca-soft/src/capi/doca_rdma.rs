//! `doca_rdma.h`: RDMA contexts whose data path runs on the GPU (see the engine's `rdma`
//! module). Setters work while IDLE (BAD_STATE after start); export, connect, the GPU handle
//! and the RDMA-CM calls need a started context. The librdmacm bridge
//! (`doca_rdma_bridge_*` of this header) is NOT_SUPPORTED, with a log line.

use std::ffi::c_char;

use super::toolkit::{
    call, call_ptr, handle, new_handle, non_null, str_arg, take_handle, write_out,
};
use crate::ctx::Ctx;
use crate::dev::{Dev, DevInfo};
use crate::error::DocaError;
use crate::rdma::config::{self, RdmaCfg};
use crate::rdma::Callbacks;
pub use crate::rdma::{ConnEventCb, RequestCb};
use crate::types::DocaData;

pub use crate::rdma::{Rdma, RdmaAddr, RdmaConnection};

/// `struct doca_rdma_gid`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RdmaGid {
    /// The 16 bytes.
    pub raw: [u8; 16],
}

/// `DOCA_RDMA_TRANSPORT_TYPE_RC` / `_DC`.
pub use crate::rdma::config::{TRANSPORT_DC, TRANSPORT_RC};

fn unsupported(func: &str, what: &str) -> Result<(), DocaError> {
    sdk_err!("rdma", "{func}: {what} is not supported by doca-soft");
    Err(DocaError::NOT_SUPPORTED)
}

// ---- capabilities ------------------------------------------------------------------------

/// `doca_rdma_cap_task_write_is_supported(devinfo)`: every device has a soft NIC.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_cap_task_write_is_supported(devinfo: *const DevInfo) -> u32 {
    call("doca_rdma_cap_task_write_is_supported", || {
        // SAFETY: C API contract (null or a live list entry).
        unsafe { handle(devinfo) }.map(|_| ())
    })
}

macro_rules! cap_u32 {
    ($(#[$m:meta])* $name:ident, $value:expr) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(devinfo: *const DevInfo, out: *mut u32) -> u32 {
            call(stringify!($name), || {
                // SAFETY: C API contract (null or live; null or writable).
                unsafe {
                    handle(devinfo)?;
                    write_out(out, $value)
                }
            })
        }
    };
}

cap_u32!(
    /// `doca_rdma_cap_get_max_recv_queue_size(devinfo, &n)`.
    doca_rdma_cap_get_max_recv_queue_size,
    config::MAX_QUEUE_SIZE
);
cap_u32!(
    /// `doca_rdma_cap_get_max_send_queue_size(devinfo, &n)`.
    doca_rdma_cap_get_max_send_queue_size,
    config::MAX_QUEUE_SIZE
);
cap_u32!(
    /// `doca_rdma_cap_get_max_send_buf_list_len(devinfo, &n)`.
    doca_rdma_cap_get_max_send_buf_list_len,
    config::MAX_SEND_BUF_LIST_LEN
);
cap_u32!(
    /// `doca_rdma_cap_get_max_message_size(devinfo, &n)`.
    doca_rdma_cap_get_max_message_size,
    config::MAX_MESSAGE_SIZE
);
cap_u32!(
    /// `doca_rdma_cap_get_gid_table_size(devinfo, &n)`: one entry.
    doca_rdma_cap_get_gid_table_size,
    config::GID_TABLE_SIZE
);

/// `doca_rdma_cap_get_gid(devinfo, start, n, gids)`: entry 0 is the device's IPv4 address
/// in IPv4-mapped form (RoCE v2 style); INVALID_VALUE beyond the table.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_cap_get_gid(
    devinfo: *const DevInfo,
    start_index: u32,
    num_entries: u32,
    gid_array: *mut RdmaGid,
) -> u32 {
    call("doca_rdma_cap_get_gid", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(devinfo) }?;
        non_null(gid_array)?;
        let end = start_index
            .checked_add(num_entries)
            .ok_or(DocaError::INVALID_VALUE)?;
        if num_entries == 0 || end > config::GID_TABLE_SIZE {
            return Err(DocaError::INVALID_VALUE);
        }
        let ip = crate::gpuqp::bind_addr(d);
        let mut g = RdmaGid::default();
        g.raw[10] = 0xff;
        g.raw[11] = 0xff;
        g.raw[12..].copy_from_slice(&ip.octets());
        // SAFETY: C API contract: `num_entries` (here 1) writable entries.
        unsafe { gid_array.write(g) };
        Ok(())
    })
}

/// `doca_rdma_cap_transport_type_is_supported(devinfo, type)`: RC only.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_cap_transport_type_is_supported(
    devinfo: *const DevInfo,
    transport_type: u32,
) -> u32 {
    call("doca_rdma_cap_transport_type_is_supported", || {
        // SAFETY: C API contract.
        unsafe { handle(devinfo) }?;
        match transport_type {
            TRANSPORT_RC => Ok(()),
            TRANSPORT_DC => Err(DocaError::NOT_SUPPORTED),
            _ => Err(DocaError::INVALID_VALUE),
        }
    })
}

// ---- life cycle ----------------------------------------------------------------------------

/// `doca_rdma_create(dev, &rdma)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_create(dev: *mut Dev, rdma: *mut *mut Rdma) -> u32 {
    call("doca_rdma_create", || {
        // SAFETY: C API contract (null or a live device).
        let d = unsafe { handle(dev) }?;
        non_null(rdma)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(rdma, Rdma::new(d)) }
    })
}

/// `doca_rdma_destroy(rdma)`: BAD_STATE unless the context is stopped.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_destroy(rdma: *mut Rdma) -> u32 {
    call("doca_rdma_destroy", || {
        // SAFETY: C API contract (null or live, not used afterwards).
        unsafe { handle(rdma) }?.close()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(rdma) }?);
        Ok(())
    })
}

/// `doca_rdma_as_ctx(rdma)`: NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_as_ctx(rdma: *mut Rdma) -> *mut Ctx {
    call_ptr("doca_rdma_as_ctx", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(rdma) }?.ctx_ptr())
    })
}

// ---- settings ---------------------------------------------------------------------------------

macro_rules! setting {
    ($(#[$m:meta])* $set:ident, $get:ident, $ty:ty, $getter_ptr:ty, |$c:ident, $v:ident| $apply:expr, |$g:ident| $read:expr) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $set(rdma: *mut Rdma, $v: $ty) -> u32 {
            call(stringify!($set), || {
                // SAFETY: C API contract (null or live).
                unsafe { handle(rdma) }?.configure(|$c: &mut RdmaCfg| {
                    $apply;
                    Ok(())
                })
            })
        }

        #[doc = concat!("`", stringify!($get), "(rdma, &value)`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $get(rdma: $getter_ptr, out: *mut $ty) -> u32 {
            call(stringify!($get), || {
                // SAFETY: C API contract (null or live; null or writable).
                unsafe {
                    let $g = handle(rdma)?.cfg();
                    write_out(out, $read)
                }
            })
        }
    };
}

setting!(
    /// `doca_rdma_set_permissions(rdma, flags)`: RDMA access flags only.
    doca_rdma_set_permissions, doca_rdma_get_permissions, u32, *mut Rdma,
    |c, permissions| c.permissions = config::permissions(permissions)?,
    |g| g.permissions
);
setting!(
    /// `doca_rdma_set_gid_index(rdma, index)`.
    doca_rdma_set_gid_index, doca_rdma_get_gid_index, u32, *const Rdma,
    |c, gid_index| c.gid_index = config::gid_index(gid_index)?,
    |g| g.gid_index
);
setting!(
    /// `doca_rdma_set_grh_enabled(rdma, on)`.
    doca_rdma_set_grh_enabled, doca_rdma_get_grh_enabled, u8, *const Rdma,
    |c, grh_enabled| c.grh_enabled = grh_enabled,
    |g| g.grh_enabled
);
setting!(
    /// `doca_rdma_set_send_queue_size(rdma, n)`: rounded up to a power of two.
    doca_rdma_set_send_queue_size, doca_rdma_get_send_queue_size, u32, *const Rdma,
    |c, send_queue_size| c.send_queue_size = config::queue_size(send_queue_size)?,
    |g| g.send_queue_size
);
setting!(
    /// `doca_rdma_set_recv_queue_size(rdma, n)`: rounded up to a power of two.
    doca_rdma_set_recv_queue_size, doca_rdma_get_recv_queue_size, u32, *const Rdma,
    |c, recv_queue_size| c.recv_queue_size = config::queue_size(recv_queue_size)?,
    |g| g.recv_queue_size
);
setting!(
    /// `doca_rdma_set_max_num_connections(rdma, n)`: 1 to 256.
    doca_rdma_set_max_num_connections, doca_rdma_get_max_num_connections, u16, *mut Rdma,
    |c, max_num_connections| c.max_connections = config::max_connections(max_num_connections)?,
    |g| g.max_connections
);
setting!(
    /// `doca_rdma_set_transport_type(rdma, type)`: DC is accepted here and refused at
    /// start (GPU data path: RC only).
    doca_rdma_set_transport_type, doca_rdma_get_transport_type, u32, *const Rdma,
    |c, transport_type| c.transport = config::transport(transport_type)?,
    |g| g.transport
);
setting!(
    /// `doca_rdma_set_mtu(rdma, mtu)` (exchanged only: the soft NIC has no MTU).
    doca_rdma_set_mtu, doca_rdma_get_mtu, u32, *const Rdma,
    |c, mtu| c.mtu = config::mtu(mtu)?,
    |g| g.mtu
);
setting!(
    /// `doca_rdma_set_sl(rdma, sl)`.
    doca_rdma_set_sl, doca_rdma_get_sl, u32, *const Rdma,
    |c, sl| c.sl = sl,
    |g| g.sl
);
setting!(
    /// `doca_rdma_set_connection_request_timeout(rdma, ms)`.
    doca_rdma_set_connection_request_timeout, doca_rdma_get_connection_request_timeout, u16, *const Rdma,
    |c, timeout| c.conn_request_timeout = timeout,
    |g| g.conn_request_timeout
);
setting!(
    /// `doca_rdma_set_rnr_retry_count(rdma, n)`.
    doca_rdma_set_rnr_retry_count, doca_rdma_get_rnr_retry_count, u8, *const Rdma,
    |c, rnr_retry_count| c.rnr_retry_count = rnr_retry_count,
    |g| g.rnr_retry_count
);
setting!(
    /// `doca_rdma_set_max_send_buf_list_len(rdma, n)`: 1 (the device API sends one buffer).
    doca_rdma_set_max_send_buf_list_len, doca_rdma_get_max_send_buf_list_len, u32, *const Rdma,
    |c, max_send_buf_list_len| c.max_send_buf_list_len = config::send_buf_list_len(max_send_buf_list_len)?,
    |g| g.max_send_buf_list_len
);

// ---- out-of-band connection --------------------------------------------------------------------

/// `doca_rdma_export(rdma, &details, &size, &connection)`: BAD_STATE before start, FULL
/// when every connection is in use.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_export(
    rdma: *mut Rdma,
    local_rdma_conn_details: *mut *const u8,
    local_rdma_conn_details_size: *mut usize,
    rdma_connection: *mut *mut RdmaConnection,
) -> u32 {
    call("doca_rdma_export", || {
        // SAFETY: C API contract.
        let r = unsafe { handle(rdma) }?;
        non_null(local_rdma_conn_details)?;
        non_null(local_rdma_conn_details_size)?;
        non_null(rdma_connection)?;
        let (p, n, c) = r.export()?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(local_rdma_conn_details, p)?;
            write_out(local_rdma_conn_details_size, n)?;
            write_out(rdma_connection, c)
        }
    })
}

/// `doca_rdma_connect(rdma, details, size, connection)`: CONNECTION_ABORTED for bytes that
/// are not a peer's export; BAD_STATE when not started or already connected.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connect(
    rdma: *mut Rdma,
    remote_rdma_conn_details: *const u8,
    remote_rdma_conn_details_size: usize,
    rdma_connection: *mut RdmaConnection,
) -> u32 {
    call("doca_rdma_connect", || {
        // SAFETY: C API contract.
        let r = unsafe { handle(rdma) }?;
        non_null(remote_rdma_conn_details)?;
        non_null(rdma_connection)?;
        // SAFETY: C API contract: `size` readable bytes (null checked).
        let blob = unsafe {
            std::slice::from_raw_parts(remote_rdma_conn_details, remote_rdma_conn_details_size)
        };
        r.connect(blob, rdma_connection)
    })
}

/// `doca_rdma_get_gpu_handle(rdma, &gpu_rdma)`: BAD_STATE before start or without the GPU
/// data path.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_get_gpu_handle(
    rdma: *mut Rdma,
    gpu_rdma: *mut *mut std::ffi::c_void,
) -> u32 {
    call("doca_rdma_get_gpu_handle", || {
        // SAFETY: C API contract.
        let r = unsafe { handle(rdma) }?;
        non_null(gpu_rdma)?;
        let h = r.gpu_handle()?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(gpu_rdma, h as *mut std::ffi::c_void) }
    })
}

// ---- RDMA-CM --------------------------------------------------------------------------------------

/// `doca_rdma_addr_create(type, address, port, &addr)`: INVALID_VALUE for text that is not
/// an address of that type.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_addr_create(
    addr_type: u32,
    address: *const c_char,
    port: u16,
    addr: *mut *mut RdmaAddr,
) -> u32 {
    call("doca_rdma_addr_create", || {
        // SAFETY: C API contract (null or NUL-terminated).
        let text = unsafe { str_arg(address) }?;
        non_null(addr)?;
        let a = RdmaAddr::parse(addr_type, text, port)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(addr, a) }
    })
}

/// `doca_rdma_addr_destroy(addr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_addr_destroy(addr: *mut RdmaAddr) -> u32 {
    call("doca_rdma_addr_destroy", || {
        // SAFETY: C API contract (null or from addr_create, given up).
        drop(unsafe { take_handle(addr) }?);
        Ok(())
    })
}

/// `doca_rdma_addr_get_params(addr, &type, &address, &port)` (the text lives as long as
/// the address).
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_addr_get_params(
    addr: *mut RdmaAddr,
    addr_type: *mut u32,
    address: *mut *const c_char,
    port: *mut u16,
) -> u32 {
    call("doca_rdma_addr_get_params", || {
        // SAFETY: C API contract.
        let a = unsafe { handle(addr) }?;
        non_null(addr_type)?;
        non_null(address)?;
        non_null(port)?;
        let (t, text, p) = a.params();
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(addr_type, t)?;
            write_out(address, text.as_ptr())?;
            write_out(port, p)
        }
    })
}

/// `doca_rdma_start_listen_to_port(rdma, port)`: RUNNING; requests are reported in
/// `doca_pe_progress`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_start_listen_to_port(rdma: *mut Rdma, port: u16) -> u32 {
    call("doca_rdma_start_listen_to_port", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma) }?.listen(port)
    })
}

/// `doca_rdma_stop_listen_to_port(rdma, port)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_stop_listen_to_port(rdma: *mut Rdma, port: u16) -> u32 {
    call("doca_rdma_stop_listen_to_port", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma) }?.stop_listen(port)
    })
}

/// `doca_rdma_connect_to_addr(rdma, addr, user_data)`: the result comes through the
/// established or failure callback in `doca_pe_progress`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connect_to_addr(
    rdma: *mut Rdma,
    addr: *mut RdmaAddr,
    connection_user_data: DocaData,
) -> u32 {
    call("doca_rdma_connect_to_addr", || {
        // SAFETY: C API contract (null or live, both).
        let (r, a) = unsafe { (handle(rdma)?, handle(addr)?) };
        r.connect_to_addr(a, connection_user_data)
    })
}

/// `doca_rdma_connection_accept(connection, private_data, len)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_accept(
    rdma_connection: *mut RdmaConnection,
    private_data: *mut std::ffi::c_void,
    private_data_len: u8,
) -> u32 {
    call("doca_rdma_connection_accept", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(rdma_connection) }?;
        let private: &[u8] = if private_data_len == 0 {
            &[]
        } else {
            non_null(private_data)?;
            // SAFETY: C API contract: `len` readable bytes (null checked).
            unsafe {
                std::slice::from_raw_parts(private_data.cast::<u8>(), private_data_len as usize)
            }
        };
        c.accept(private)
    })
}

/// `doca_rdma_connection_reject(connection)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_reject(rdma_connection: *mut RdmaConnection) -> u32 {
    call("doca_rdma_connection_reject", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma_connection) }?.reject()
    })
}

/// `doca_rdma_connection_disconnect(connection)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_disconnect(
    rdma_connection: *mut RdmaConnection,
) -> u32 {
    call("doca_rdma_connection_disconnect", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma_connection) }?.disconnect()
    })
}

/// `doca_rdma_connection_set_user_data(connection, user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_set_user_data(
    rdma_connection: *mut RdmaConnection,
    connection_user_data: DocaData,
) -> u32 {
    call("doca_rdma_connection_set_user_data", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma_connection) }?.set_user_data(connection_user_data);
        Ok(())
    })
}

/// `doca_rdma_connection_get_user_data(connection, &user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_get_user_data(
    rdma_connection: *const RdmaConnection,
    connection_user_data: *mut DocaData,
) -> u32 {
    call("doca_rdma_connection_get_user_data", || {
        // SAFETY: C API contract.
        unsafe { write_out(connection_user_data, handle(rdma_connection)?.user_data()) }
    })
}

/// `doca_rdma_connection_get_id(connection, &id)`: the connection index device code uses.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_get_id(
    rdma_connection: *const RdmaConnection,
    connection_id: *mut u32,
) -> u32 {
    call("doca_rdma_connection_get_id", || {
        // SAFETY: C API contract.
        unsafe { write_out(connection_id, handle(rdma_connection)?.id()) }
    })
}

/// `doca_rdma_connection_get_addr(connection, &addr)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_connection_get_addr(
    rdma_connection: *const RdmaConnection,
    addr: *mut *mut RdmaAddr,
) -> u32 {
    call("doca_rdma_connection_get_addr", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma_connection) }?;
        non_null(addr)?;
        unsupported(
            "doca_rdma_connection_get_addr",
            "the peer address of a connection",
        )
    })
}

/// `doca_rdma_set_connection_state_callbacks(rdma, request, established, failure,
/// disconnect)` (IDLE only; `request` may be NULL for a pure client).
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_set_connection_state_callbacks(
    rdma: *mut Rdma,
    request: RequestCb,
    established: ConnEventCb,
    failure: ConnEventCb,
    disconnect: ConnEventCb,
) -> u32 {
    call("doca_rdma_set_connection_state_callbacks", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma) }?.set_callbacks(Callbacks {
            request,
            established,
            failure,
            disconnect,
        })
    })
}

// ---- librdmacm bridge (not supported) ------------------------------------------------------

/// `doca_rdma_bridge_prepare_connection(rdma, cm_id, &connection)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_prepare_connection(
    rdma: *mut Rdma,
    _cm_id: *mut std::ffi::c_void,
    _rdma_connection: *mut *mut RdmaConnection,
) -> u32 {
    call("doca_rdma_bridge_prepare_connection", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma) }?;
        unsupported(
            "doca_rdma_bridge_prepare_connection",
            "a program's own librdmacm connection (use doca_rdma_connect_to_addr)",
        )
    })
}

/// `doca_rdma_bridge_accept(rdma, private_data, len, connection)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_accept(
    rdma: *mut Rdma,
    _private_data: *mut std::ffi::c_void,
    _private_data_len: u8,
    _rdma_connection: *mut RdmaConnection,
) -> u32 {
    call("doca_rdma_bridge_accept", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma) }?;
        unsupported(
            "doca_rdma_bridge_accept",
            "a program's own librdmacm connection (use doca_rdma_start_listen_to_port)",
        )
    })
}

/// `doca_rdma_bridge_established(rdma, connection)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_established(
    rdma: *mut Rdma,
    _rdma_connection: *mut RdmaConnection,
) -> u32 {
    call("doca_rdma_bridge_established", || {
        // SAFETY: C API contract.
        unsafe { handle(rdma) }?;
        unsupported(
            "doca_rdma_bridge_established",
            "a program's own librdmacm connection",
        )
    })
}
