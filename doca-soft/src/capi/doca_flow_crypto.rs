//! `doca_flow_crypto.h`: PSP key bulks and IPsec sequence numbers. The software runtime has
//! no crypto engine: every call checks its arguments (INVALID_VALUE for NULL handles and
//! out-parameters) and then fails with NOT_SUPPORTED and one log line.

use super::toolkit::{call, non_null};
use crate::error::{DocaError, DocaResult};
use crate::flow::handles::FlowPort;

/// `struct doca_flow_crypto_psp_spi_key_bulk` (none is ever created).
pub enum PspSpiKeyBulk {}

fn not_supported(what: &str) -> DocaResult<()> {
    sdk_err!("flow", "{what} is not supported (no crypto engine)");
    Err(DocaError::NOT_SUPPORTED)
}

/// `doca_flow_crypto_psp_master_key_rotate(port)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_master_key_rotate(port: *mut FlowPort) -> u32 {
    call("doca_flow_crypto_psp_master_key_rotate", || {
        non_null(port)?;
        not_supported("PSP master key rotation")
    })
}

/// `doca_flow_crypto_psp_spi_key_bulk_alloc(port, key_type, n, &bulk)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_spi_key_bulk_alloc(
    port: *mut FlowPort,
    key_type: u32,
    nr_spi_keys: u32,
    bulk: *mut *mut PspSpiKeyBulk,
) -> u32 {
    call("doca_flow_crypto_psp_spi_key_bulk_alloc", || {
        non_null(port)?;
        non_null(bulk)?;
        if key_type > 1 || nr_spi_keys == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        not_supported("PSP SPI key bulks")
    })
}

/// `doca_flow_crypto_psp_spi_key_bulk_generate(bulk)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_spi_key_bulk_generate(bulk: *mut PspSpiKeyBulk) -> u32 {
    call("doca_flow_crypto_psp_spi_key_bulk_generate", || {
        non_null(bulk)?;
        not_supported("PSP SPI key bulks")
    })
}

/// `doca_flow_crypto_psp_spi_key_bulk_get(bulk, idx, &spi, key)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_spi_key_bulk_get(
    bulk: *mut PspSpiKeyBulk,
    _idx: u32,
    spi: *mut u32,
    key: *mut u32,
) -> u32 {
    call("doca_flow_crypto_psp_spi_key_bulk_get", || {
        non_null(bulk)?;
        non_null(spi)?;
        non_null(key)?;
        not_supported("PSP SPI key bulks")
    })
}

/// `doca_flow_crypto_psp_spi_key_wipe(bulk, idx)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_spi_key_wipe(bulk: *mut PspSpiKeyBulk, _idx: u32) -> u32 {
    call("doca_flow_crypto_psp_spi_key_wipe", || {
        non_null(bulk)?;
        not_supported("PSP SPI key bulks")
    })
}

/// `doca_flow_crypto_psp_spi_key_bulk_clear(bulk)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_spi_key_bulk_clear(bulk: *mut PspSpiKeyBulk) -> u32 {
    call("doca_flow_crypto_psp_spi_key_bulk_clear", || {
        non_null(bulk)?;
        not_supported("PSP SPI key bulks")
    })
}

/// `doca_flow_crypto_psp_spi_key_bulk_free(bulk)`: no bulk can exist; INVALID_VALUE.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_psp_spi_key_bulk_free(bulk: *mut PspSpiKeyBulk) -> u32 {
    call("doca_flow_crypto_psp_spi_key_bulk_free", || {
        non_null(bulk)?;
        // No bulk is ever allocated, so any handle is foreign.
        Err(DocaError::INVALID_VALUE)
    })
}

/// `doca_flow_crypto_ipsec_resource_handle(port, quota, max)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_ipsec_resource_handle(
    port: *mut FlowPort,
    _quota: u64,
    _max_processed_resources: u32,
) -> u32 {
    call("doca_flow_crypto_ipsec_resource_handle", || {
        non_null(port)?;
        not_supported("IPsec SA resources")
    })
}

/// `doca_flow_crypto_ipsec_update_sn(id, sn)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_crypto_ipsec_update_sn(_shared_res_id: u32, _sn: u64) -> u32 {
    call("doca_flow_crypto_ipsec_update_sn", || {
        not_supported("IPsec SA resources")
    })
}

/// `doca_flow_port_crypto_ipsec_update_sn(port, id, sn)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_port_crypto_ipsec_update_sn(
    port: *mut FlowPort,
    _shared_res_id: u32,
    _sn: u64,
) -> u32 {
    call("doca_flow_port_crypto_ipsec_update_sn", || {
        non_null(port)?;
        not_supported("IPsec SA resources")
    })
}
