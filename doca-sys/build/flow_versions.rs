//! DOCA Flow 3.3's versioned names (reference flow-3.3-layout.md section 2.4): the struct
//! and union tags and the functions whose public names are macros for `<name>_v1`.
//!
//! The 3.3 headers declare both the plain and the `_v1` items, but only the `_v1` ones are
//! what C code reaches (and what the library is known to export). bindgen sees both, so the
//! plain ones are left out of the bindings and `flow_aliases.rs` re-exports each `_v1` item
//! under its plain name: `doca_sys::doca_flow_init` is `doca_flow_init_v1` with either
//! backend.

/// Versioned struct and union tags, without the `doca_flow_` prefix.
pub const TAGS: &[&str] = &[
    "action_desc",
    "action_descs",
    "actions",
    "crypto",
    "crypto_action",
    "crypto_encap_action",
    "crypto_key_cfg",
    "desc_field",
    "encap_action",
    "entropy_format",
    "fwd",
    "header_eth",
    "header_eth_vlan",
    "header_format",
    "header_geneve",
    "header_ib_bth",
    "header_icmp",
    "header_ip4",
    "header_ip6",
    "header_l4_port",
    "header_psp",
    "header_roce_v2",
    "header_tcp",
    "header_udp",
    "match",
    "match_condition",
    "meta",
    "monitor",
    "nat64_action",
    "ordered_list",
    "ordered_list_element",
    "parser_meta",
    "push_action",
    "push_vlan_action",
    "resource_decap_cfg",
    "resource_encap_cfg",
    "resource_ipsec_sa_cfg",
    "resource_meter_cfg",
    "resource_psp_cfg",
    "resource_query",
    "resource_rss_cfg",
    "shared_resource_cfg",
    "tun",
    "geneve_option",
];

/// Versioned functions, without the `doca_flow_` prefix.
pub const FUNCTIONS: &[&str] = &[
    "init",
    "pipe_acl_add_entry",
    "pipe_acl_update_entry",
    "pipe_basic_add_entry",
    "pipe_basic_update_entry",
    "pipe_calc_hash",
    "pipe_cfg_set_actions",
    "pipe_cfg_set_match",
    "pipe_cfg_set_monitor",
    "pipe_cfg_set_ordered_lists",
    "pipe_control_add_entry",
    "pipe_create",
    "pipe_hash_add_entry",
    "pipe_lpm_add_entry",
    "pipe_lpm_update_entry",
    "pipe_ordered_list_add_entry",
    "pipe_update_miss",
    "port_calc_entropy",
    "port_query_default_miss",
    "port_shared_resource_set_cfg",
    "port_shared_resources_query",
    "resource_query_entry",
    "resource_query_pipe_miss",
    "shared_resource_set_cfg",
    "shared_resources_query",
];

/// A regex matching the plain versioned types (and their anonymous member types).
pub fn plain_types() -> String {
    format!("^doca_flow_({})(__bindgen_.*)?$", TAGS.join("|"))
}

/// A regex matching the plain versioned functions.
pub fn plain_functions() -> String {
    format!("^doca_flow_({})$", FUNCTIONS.join("|"))
}
