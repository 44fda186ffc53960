//! What carries a port's frames: the backend a device names.

use std::path::PathBuf;

/// What carries a device's frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortSpec {
    /// AF_PACKET on a Linux interface.
    Linux {
        /// Interface name.
        ifname: String,
        /// Interface index.
        ifindex: u32,
    },
    /// `DOCA_SOFT_PORTS` entry `xdp:IFACE[,native|,zerocopy]`: AF_XDP on a Linux interface
    /// (the device keeps the interface's name, address and MAC); AF_PACKET, with one log
    /// line naming the reason, where AF_XDP cannot be used.
    Xdp {
        /// Interface name.
        ifname: String,
        /// Attach the XDP program in driver mode instead of generic mode.
        native: bool,
        /// Ask for zero-copy sockets (driver mode); copy mode when the driver refuses.
        zerocopy: bool,
    },
    /// `DOCA_SOFT_PORTS` entry `pcap:IN,OUT`: frames read from IN, sent frames written to OUT.
    Pcap {
        /// Capture file read as received traffic.
        input: PathBuf,
        /// Capture file that receives sent frames.
        output: PathBuf,
    },
    /// `DOCA_SOFT_PORTS` entry `wire:NAME`: two ports NAME0 (side 0) and NAME1 (side 1)
    /// joined by an in-process wire.
    Wire {
        /// Wire name.
        name: String,
        /// 0 or 1.
        side: u8,
    },
}
