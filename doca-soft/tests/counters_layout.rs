//! The counter structs of the doca-soft extensions (`doca_soft_port.h`,
//! `doca_soft_queue.h`) have the layout of their one Rust definition: gcc checks every size
//! and field offset with static assertions.

use doca_soft::capi::doca_soft_port::PortCountersSnapshot;
use doca_soft::capi::doca_soft_queue::{RxqCountersSnapshot, TxqCountersSnapshot};
use std::mem::{offset_of, size_of};

#[test]
fn counter_structs_match_their_c_declarations() {
    let checks = [
        (
            "sizeof(struct doca_soft_port_counters)",
            size_of::<PortCountersSnapshot>(),
        ),
        (
            "offsetof(struct doca_soft_port_counters, received)",
            offset_of!(PortCountersSnapshot, received),
        ),
        (
            "offsetof(struct doca_soft_port_counters, delivered)",
            offset_of!(PortCountersSnapshot, delivered),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_no_match)",
            offset_of!(PortCountersSnapshot, dropped_no_match),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_by_flow)",
            offset_of!(PortCountersSnapshot, dropped_by_flow),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_no_queue)",
            offset_of!(PortCountersSnapshot, dropped_no_queue),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_too_big)",
            offset_of!(PortCountersSnapshot, dropped_too_big),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_ring_full)",
            offset_of!(PortCountersSnapshot, dropped_ring_full),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_stopped)",
            offset_of!(PortCountersSnapshot, dropped_stopped),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_malformed)",
            offset_of!(PortCountersSnapshot, dropped_malformed),
        ),
        (
            "offsetof(struct doca_soft_port_counters, sent)",
            offset_of!(PortCountersSnapshot, sent),
        ),
        (
            "offsetof(struct doca_soft_port_counters, send_errors)",
            offset_of!(PortCountersSnapshot, send_errors),
        ),
        (
            "offsetof(struct doca_soft_port_counters, dropped_truncated)",
            offset_of!(PortCountersSnapshot, dropped_truncated),
        ),
        (
            "sizeof(struct doca_soft_rxq_counters)",
            size_of::<RxqCountersSnapshot>(),
        ),
        (
            "offsetof(struct doca_soft_rxq_counters, delivered)",
            offset_of!(RxqCountersSnapshot, delivered),
        ),
        (
            "offsetof(struct doca_soft_rxq_counters, dropped_too_big)",
            offset_of!(RxqCountersSnapshot, dropped_too_big),
        ),
        (
            "offsetof(struct doca_soft_rxq_counters, dropped_ring_full)",
            offset_of!(RxqCountersSnapshot, dropped_ring_full),
        ),
        (
            "sizeof(struct doca_soft_txq_counters)",
            size_of::<TxqCountersSnapshot>(),
        ),
        (
            "offsetof(struct doca_soft_txq_counters, completed)",
            offset_of!(TxqCountersSnapshot, completed),
        ),
        (
            "offsetof(struct doca_soft_txq_counters, errors)",
            offset_of!(TxqCountersSnapshot, errors),
        ),
    ];
    let mut src = String::from(
        "#include <stddef.h>\n#include <doca_soft_port.h>\n#include <doca_soft_queue.h>\n",
    );
    for (i, (expr, v)) in checks.iter().enumerate() {
        src += &format!("_Static_assert({expr} == {v}, \"check {i}: {expr} == {v}\");\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("counters.c");
    std::fs::write(&c, src).unwrap();
    doca_test_support::cc::must_succeed(
        doca_test_support::cc::strict("gcc", "-std=gnu11")
            .args(["-DDOCA_ALLOW_EXPERIMENTAL_API", "-fsyntax-only"])
            .arg(&c),
        "C layout differs from the Rust definition",
    );
}
