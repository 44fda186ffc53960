//! `doca_flow.h`, GENEVE option parsers (refused) and the MPLS label helpers.

use super::not_supported;
use crate::capi::toolkit::{call, handle, non_null, write_out};
use crate::error::DocaError;
use crate::flow::handles::FlowPort;
use crate::flow::sys::*;

/// `doca_flow_parser_geneve_opt_create(port, tlv_list, n, &parser)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_parser_geneve_opt_create(
    port: *const FlowPort,
    tlv_list: *const doca_flow_parser_geneve_opt_cfg,
    nb_options: u8,
    parser: *mut *mut doca_flow_parser,
) -> u32 {
    call("doca_flow_parser_geneve_opt_create", || {
        non_null(port)?;
        non_null(tlv_list)?;
        non_null(parser)?;
        if nb_options == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        not_supported("GENEVE option parsers")
    })
}

/// `doca_flow_parser_geneve_opt_destroy(parser)`: no parser can exist; INVALID_VALUE.
#[no_mangle]
pub extern "C" fn doca_flow_parser_geneve_opt_destroy(parser: *mut doca_flow_parser) -> u32 {
    call("doca_flow_parser_geneve_opt_destroy", || {
        non_null(parser)?;
        // No parser is ever created, so any handle is foreign.
        Err(DocaError::INVALID_VALUE)
    })
}

/// `doca_flow_mpls_label_encode(label, tc, ttl, bos, &mpls)`: label (20 bits), traffic
/// class (3), bottom of stack, TTL (8) in one big-endian word.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_mpls_label_encode(
    label: u32,
    traffic_class: u8,
    ttl: u8,
    bottom_of_stack: bool,
    mpls: *mut doca_flow_header_mpls,
) -> u32 {
    call("doca_flow_mpls_label_encode", || {
        non_null(mpls)?;
        if label >= 1 << 20 || traffic_class >= 8 {
            return Err(DocaError::INVALID_VALUE);
        }
        let w = (label << 12)
            | (u32::from(traffic_class) << 9)
            | (u32::from(bottom_of_stack) << 8)
            | u32::from(ttl);
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(mpls, doca_flow_header_mpls { label: w.to_be() }) }
    })
}

/// `doca_flow_mpls_label_decode(mpls, &label, &tc, &ttl, &bos)`: the reverse, host order.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_mpls_label_decode(
    mpls: *const doca_flow_header_mpls,
    label: *mut u32,
    traffic_class: *mut u8,
    ttl: *mut u8,
    bottom_of_stack: *mut bool,
) -> u32 {
    call("doca_flow_mpls_label_decode", || {
        // SAFETY: C API contract.
        let m = unsafe { handle(mpls) }?;
        for p in [
            label as *const u8,
            traffic_class,
            ttl,
            bottom_of_stack as *const u8,
        ] {
            non_null(p)?;
        }
        let w = u32::from_be(m.label);
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(label, w >> 12)?;
            write_out(traffic_class, ((w >> 9) & 7) as u8)?;
            write_out(bottom_of_stack, (w >> 8) & 1 == 1)?;
            write_out(ttl, w as u8)?;
        }
        Ok(())
    })
}
