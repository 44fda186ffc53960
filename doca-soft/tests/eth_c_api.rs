//! Builds tests/c/eth_queues.c against include/ and libdoca_soft.so and runs it on a wire
//! port named through DOCA_SOFT_PORTS: the Ethernet queue host API from C, with the ABI the
//! headers declare.

mod cdylib;

#[test]
fn c_program_drives_eth_queues_through_libdoca_soft() {
    let dir = tempfile::tempdir().unwrap();
    let exe = cdylib::build_c_program("eth_queues", "gnu11", dir.path());
    let stdout = cdylib::run_on_wire(&exe, "ethcwire", "ethcwire0");
    assert!(stdout.contains("eth queues c smoke ok"));
}
