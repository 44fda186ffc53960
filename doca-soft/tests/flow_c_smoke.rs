//! Builds tests/c/flow_smoke.c against include/ and libdoca_soft.so and runs it on a wire
//! port named through DOCA_SOFT_PORTS: C objects reach the `_v1` symbols and the structs
//! cross the ABI as the header lays them out.

mod cdylib;

#[test]
fn c_program_drives_flow_through_libdoca_soft() {
    if !doca_test_support::require_tool("cc", doca_test_support::GET_A_C_COMPILER) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = cdylib::build_c_program("flow_smoke", "c11", dir.path());
    let stdout = cdylib::run_on_wire(&exe, "smokewire", "smokewire1");
    assert!(stdout.contains("flow smoke ok"));
}
