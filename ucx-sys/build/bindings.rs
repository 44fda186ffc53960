//! bindgen over `<ucp/api/ucp.h>`, limited to what the workspace calls. Enums are plain
//! constants (an unknown value from C must not be UB); doc comments are not copied.

use crate::find::Ucx;
use std::path::PathBuf;

/// Writes `$OUT_DIR/ucx_bindings.rs`.
pub fn generate(ucx: &Ucx) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let header = out.join("ucx_wrapper.h");
    std::fs::write(&header, "#include <ucp/api/ucp.h>\n").expect("write ucx_wrapper.h");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", ucx.include.display()))
        .allowlist_function(
            "ucp_(init_version|cleanup|config_read|config_release|config_modify|get_version|get_version_string)",
        )
        .allowlist_function(
            "ucp_worker_(create|destroy|progress|get_efd|arm|wait|signal|query|get_address|release_address|fence|set_am_recv_handler)",
        )
        .allowlist_function("ucp_listener_(create|destroy|query|reject)")
        .allowlist_function("ucp_conn_request_query")
        .allowlist_function("ucp_ep_(create|close_nbx|flush_nbx|rkey_unpack|query)")
        .allowlist_function("ucp_(put|get)_nbx")
        .allowlist_function("ucp_am_(send_nbx|recv_data_nbx|data_release)")
        .allowlist_function("ucp_stream_(send_nbx|recv_data_nb|data_release)")
        .allowlist_function("ucp_tag_(send_nbx|recv_nbx|recv_request_test)")
        .allowlist_function("ucp_request_(check_status|free|cancel)")
        .allowlist_function("ucp_mem_(map|unmap|query)")
        .allowlist_function("ucp_rkey_(pack|buffer_release|destroy)")
        .allowlist_function("ucs_status_string")
        .allowlist_type("ucp_.*")
        .allowlist_type("ucs_cpu_set_t")
        .allowlist_var("UCP_.*")
        .allowlist_var("UCS_.*")
        .generate_comments(false)
        .layout_tests(false)
        .derive_default(true)
        .generate()
        .unwrap_or_else(|e| {
            panic!(
                "bindgen over ucp/api/ucp.h in {} failed: {e}",
                ucx.include.display()
            )
        });
    bindings
        .write_to_file(out.join("ucx_bindings.rs"))
        .expect("write ucx_bindings.rs");
}
