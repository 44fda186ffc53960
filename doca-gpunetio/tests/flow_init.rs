//! `Flow` is process-global: a second init while one exists is refused, ports keep the
//! library alive, and it can be initialized again once everything is dropped.

// These tests drive the software runtime (its host-memory hooks and wire ports).
#![cfg(doca_backend = "soft")]

mod eth_support;

use doca_gpunetio::{take_drop_errors, Error, Flow, FlowConfig, FlowPort, Pipe};
use eth_support::*;
use std::sync::Mutex;

/// Tests of this binary share the process-global library: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn second_init_is_refused_until_the_first_is_gone() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    declare_wires(&["sfli"]);
    assert!(!Flow::is_initialized());
    let flow = Flow::init(FlowConfig::default()).unwrap();
    assert!(Flow::is_initialized());
    let e = Flow::init(FlowConfig::default()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("already initialized")),
        "{e}"
    );
    let clone = flow.clone();
    drop(flow);
    assert!(Flow::is_initialized(), "a clone keeps it");
    let (dev, _) = wire("sfli");
    let port = FlowPort::start(&clone, &dev, 0).unwrap();
    assert_eq!(port.port_id(), 0);
    assert_eq!(port.device().info().iface_name(), "sfli0");
    drop(clone);
    assert!(Flow::is_initialized(), "a port keeps it");
    let root = Pipe::control_root(&port).unwrap();
    drop(port);
    assert!(
        Flow::is_initialized(),
        "a pipe keeps its port and so the library"
    );
    drop(root);
    assert!(!Flow::is_initialized());
    // And again.
    let again = Flow::init(FlowConfig {
        pipe_queues: 2,
        mode_args: "vnf,hws".into(),
        nr_counters: 1024,
    })
    .unwrap();
    drop(again);
    assert!(take_drop_errors().is_empty());
}

#[test]
fn bad_configs_are_refused_without_initializing() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = Flow::init(FlowConfig {
        pipe_queues: 0,
        ..FlowConfig::default()
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("pipe_queues")),
        "{e}"
    );
    let e = Flow::init(FlowConfig {
        mode_args: "vnf\0hws".into(),
        ..FlowConfig::default()
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("NUL")),
        "{e}"
    );
    assert!(!Flow::is_initialized());
    let f = Flow::init(FlowConfig::default()).unwrap();
    drop(f);
    assert!(take_drop_errors().is_empty());
}
