//! The build script's pure parts: what it says when no usable UCX is found (it must name
//! what it found and where, and every way to point it at another UCX), and how it reads the
//! function list the trampolines are generated from.

#[path = "../build/message.rs"]
mod message;
#[path = "../build/trampolines.rs"]
#[allow(dead_code)]
mod trampolines;

#[test]
fn not_found_names_what_was_found_and_every_way_to_point_at_a_ucx() {
    let text = message::not_found(&[
        "UCX_HOME: not set".into(),
        "pkg-config: no ucx.pc (PKG_CONFIG_PATH=<unset>)".into(),
        "the system library search: UCX 1.13.1: a run-time libucp.so.0 without headers (/usr/lib/x86_64-linux-gnu/libucp.so.0)".into(),
    ]);
    assert!(text.contains("no UCX >= 1.15"), "{text}");
    assert!(text.contains("UCX 1.13.1"), "what was found: {text}");
    assert!(
        text.contains("/usr/lib/x86_64-linux-gnu/libucp.so.0"),
        "where: {text}"
    );
    for way in [
        "UCX_HOME=",
        "PKG_CONFIG_PATH",
        "HPC-X",
        "HPCX_UCX_DIR",
        "Spack",
        "scripts/setup",
    ] {
        assert!(text.contains(way), "mentions {way}: {text}");
    }
}

#[test]
fn too_old_names_the_version_the_place_and_the_floor() {
    let text = message::too_old((1, 13), "/usr/include", "pkg-config's ucx");
    assert!(
        text.contains("UCX 1.13 found through pkg-config's ucx"),
        "{text}"
    );
    assert!(text.contains("/usr/include"), "{text}");
    assert!(text.contains(">= 1.15"), "{text}");
    assert!(text.contains("UCX_HOME="), "{text}");
}

#[test]
fn function_names_are_read_from_bindgen_output() {
    let b = "unsafe extern \"C\" {\n    pub fn ucp_init_version(\n        a: u32,\n    ) -> i8;\n}\n\
             pub type ucp_x = u32;\nunsafe extern \"C\" {\n    pub fn ucs_status_string(status: i8) -> *const i8;\n}\n";
    assert_eq!(
        trampolines::function_names(b),
        vec![
            "ucp_init_version".to_string(),
            "ucs_status_string".to_string()
        ]
    );
}
