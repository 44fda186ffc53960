//! `doca_verbs.h`, address handle attributes.

use super::VerbsGid;
use crate::capi::toolkit::{call, handle, handle_mut, new_handle, take_handle};
use crate::verbs::{VerbsAhAttr, VerbsContext};

/// `doca_verbs_ah_attr_create(ctx, &ah)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_ah_attr_create(
    verbs_ctx: *mut VerbsContext,
    verbs_ah_attr: *mut *mut VerbsAhAttr,
) -> u32 {
    call("doca_verbs_ah_attr_create", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_ah_attr, VerbsAhAttr::new(c)) }
    })
}

/// `doca_verbs_ah_attr_destroy(ah)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_ah_attr_destroy(verbs_ah_attr: *mut VerbsAhAttr) -> u32 {
    call("doca_verbs_ah_attr_destroy", || {
        // SAFETY: C API contract (null or a live AH attribute, given up).
        drop(unsafe { take_handle(verbs_ah_attr) }?);
        Ok(())
    })
}

setter!(
    /// `doca_verbs_ah_attr_set_gid(ah, gid)`: the peer NIC's GID.
    doca_verbs_ah_attr_set_gid(VerbsAhAttr, gid: VerbsGid) |a| {
        a.attr.set_gid(gid.raw);
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_addr_type(ah, type)`.
    doca_verbs_ah_attr_set_addr_type(VerbsAhAttr, addr_type: u32) |a| a.attr.set_addr_type(addr_type)
);
setter!(
    /// `doca_verbs_ah_attr_set_dlid(ah, lid)`: 16 bits.
    doca_verbs_ah_attr_set_dlid(VerbsAhAttr, dlid: u32) |a| a.attr.set_dlid(dlid)
);
setter!(
    /// `doca_verbs_ah_attr_set_sl(ah, sl)`: 4 bits.
    doca_verbs_ah_attr_set_sl(VerbsAhAttr, sl: u8) |a| a.attr.set_sl(sl)
);
setter!(
    /// `doca_verbs_ah_attr_set_sgid_index(ah, i)`: every index names the NIC's one GID.
    doca_verbs_ah_attr_set_sgid_index(VerbsAhAttr, sgid_index: u8) |a| {
        a.attr.sgid_index = sgid_index;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_static_rate(ah, rate)`: kept.
    doca_verbs_ah_attr_set_static_rate(VerbsAhAttr, static_rate: u8) |a| {
        a.attr.static_rate = static_rate;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_hop_limit(ah, hops)`: kept.
    doca_verbs_ah_attr_set_hop_limit(VerbsAhAttr, hop_limit: u8) |a| {
        a.attr.hop_limit = hop_limit;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_traffic_class(ah, tc)`: kept.
    doca_verbs_ah_attr_set_traffic_class(VerbsAhAttr, traffic_class: u8) |a| {
        a.attr.traffic_class = traffic_class;
        Ok(())
    }
);
