//! The environment knobs for devices: `DOCA_SOFT_PORTS` (extra ports) and
//! `DOCA_SOFT_PCI_MAP` (fixed PCI addresses for named ports). Parsing is done by pure
//! functions over a string so tests never touch the process environment.

use super::pci::PciAddr;
use super::PortSpec;
use crate::error::{DocaError, DocaResult};
use std::path::PathBuf;

/// Environment variable listing extra ports: `pcap:IN,OUT`, `wire:NAME` and
/// `xdp:IFACE[,native|,zerocopy]`, `;`-separated.
pub(crate) const PORTS_ENV: &str = "DOCA_SOFT_PORTS";
/// Environment variable mapping PCI addresses to port names: `17:00.0=lo;18:00.0=eth1`.
pub(crate) const PCI_MAP_ENV: &str = "DOCA_SOFT_PCI_MAP";

/// One extra port: its name and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraPort {
    /// Port name (iface name of the device): `pcapN` (N counts pcap entries from 0),
    /// `NAME0` / `NAME1` for the two sides of a wire, IFACE for `xdp:IFACE`.
    pub name: String,
    /// What carries its frames.
    pub spec: PortSpec,
}

/// Parses a `DOCA_SOFT_PORTS` value. Empty entries are skipped; anything else malformed is
/// INVALID_VALUE.
pub fn parse_ports(value: &str) -> DocaResult<Vec<ExtraPort>> {
    let mut out = Vec::new();
    let mut pcap_n = 0;
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (kind, arg) = entry.split_once(':').ok_or(DocaError::INVALID_VALUE)?;
        match kind.trim() {
            "pcap" => {
                let (input, output) = arg.split_once(',').ok_or(DocaError::INVALID_VALUE)?;
                let (input, output) = (input.trim(), output.trim());
                if input.is_empty() || output.is_empty() {
                    return Err(DocaError::INVALID_VALUE);
                }
                out.push(ExtraPort {
                    name: format!("pcap{pcap_n}"),
                    spec: PortSpec::Pcap {
                        input: PathBuf::from(input),
                        output: PathBuf::from(output),
                    },
                });
                pcap_n += 1;
            }
            "wire" => {
                let name = arg.trim();
                let valid = !name.is_empty()
                    && name.len() <= 14
                    && name
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
                if !valid {
                    return Err(DocaError::INVALID_VALUE);
                }
                for side in 0..2u8 {
                    out.push(ExtraPort {
                        name: format!("{name}{side}"),
                        spec: PortSpec::Wire {
                            name: name.to_owned(),
                            side,
                        },
                    });
                }
            }
            "xdp" => {
                let mut parts = arg.split(',').map(str::trim);
                let name = parts.next().unwrap_or("");
                // IFNAMSIZ - 1 bytes, no '/', no whitespace.
                let valid = !name.is_empty()
                    && name.len() <= 15
                    && !name.bytes().any(|c| c == b'/' || c.is_ascii_whitespace());
                if !valid {
                    return Err(DocaError::INVALID_VALUE);
                }
                let (mut native, mut zerocopy) = (false, false);
                for opt in parts {
                    match opt {
                        "native" => native = true,
                        "zerocopy" => zerocopy = true,
                        _ => return Err(DocaError::INVALID_VALUE),
                    }
                }
                out.push(ExtraPort {
                    name: name.to_owned(),
                    spec: PortSpec::Xdp {
                        ifname: name.to_owned(),
                        native,
                        zerocopy,
                    },
                });
            }
            _ => return Err(DocaError::INVALID_VALUE),
        }
    }
    Ok(out)
}

/// Parses a `DOCA_SOFT_PCI_MAP` value into (address, port name) pairs. Malformed entries
/// and addresses given twice are INVALID_VALUE.
pub fn parse_pci_map(value: &str) -> DocaResult<Vec<(PciAddr, String)>> {
    let mut out: Vec<(PciAddr, String)> = Vec::new();
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (addr, name) = entry.split_once('=').ok_or(DocaError::INVALID_VALUE)?;
        let addr = PciAddr::parse(addr)?;
        let name = name.trim();
        if name.is_empty() || out.iter().any(|(a, _)| *a == addr) {
            return Err(DocaError::INVALID_VALUE);
        }
        out.push((addr, name.to_owned()));
    }
    Ok(out)
}

/// Reads and parses an environment variable with `parse`; a malformed value is reported
/// (SDK warning) and treated as empty.
pub(crate) fn from_env<T>(var: &str, parse: fn(&str) -> DocaResult<Vec<T>>) -> Vec<T> {
    match std::env::var(var) {
        Ok(v) => parse(&v).unwrap_or_else(|e| {
            sdk_warn!("dev", "ignoring malformed {var}={v:?}: {e}");
            Vec::new()
        }),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_parse_pcap_and_wire() {
        let p = parse_ports("pcap:/tmp/in.pcap,/tmp/out.pcap; wire:w ;pcap:a,b;").unwrap();
        let names: Vec<&str> = p.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["pcap0", "w0", "w1", "pcap1"]);
        assert_eq!(
            p[0].spec,
            PortSpec::Pcap {
                input: "/tmp/in.pcap".into(),
                output: "/tmp/out.pcap".into()
            }
        );
        assert_eq!(
            p[2].spec,
            PortSpec::Wire {
                name: "w".into(),
                side: 1
            }
        );
        assert!(parse_ports("").unwrap().is_empty());
    }

    #[test]
    fn ports_parse_xdp_with_options() {
        let p = parse_ports("xdp:veth0; xdp:eth1,zerocopy; xdp:eth2,native").unwrap();
        let names: Vec<&str> = p.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["veth0", "eth1", "eth2"]);
        assert_eq!(
            p[0].spec,
            PortSpec::Xdp {
                ifname: "veth0".into(),
                native: false,
                zerocopy: false
            }
        );
        assert!(matches!(
            p[1].spec,
            PortSpec::Xdp {
                zerocopy: true,
                native: false,
                ..
            }
        ));
        assert!(matches!(
            p[2].spec,
            PortSpec::Xdp {
                zerocopy: false,
                native: true,
                ..
            }
        ));
    }

    #[test]
    fn ports_reject_malformed_entries() {
        for bad in [
            "pcap:only",
            "pcap:,x",
            "wire:",
            "wire:a b",
            "xdp:",
            "xdp:a/b",
            "xdp:averyveryverylongname",
            "xdp:eth0,fast",
            "tap:x",
            "nonsense",
        ] {
            assert_eq!(parse_ports(bad), Err(DocaError::INVALID_VALUE), "{bad}");
        }
    }

    #[test]
    fn pci_map_parses_pairs_and_rejects_duplicates() {
        let m = parse_pci_map("17:00.0=lo; 0000:18:00.1=eth1").unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0.short(), "17:00.0");
        assert_eq!(m[0].1, "lo");
        assert_eq!(m[1].0.short(), "18:00.1");
        assert_eq!(
            parse_pci_map("17:00.0=lo;17:00.0=eth0"),
            Err(DocaError::INVALID_VALUE)
        );
        assert_eq!(parse_pci_map("17:00.0"), Err(DocaError::INVALID_VALUE));
        assert_eq!(parse_pci_map("zz=lo"), Err(DocaError::INVALID_VALUE));
    }
}
