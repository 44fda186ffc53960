//! PCI addresses: parsing `BB:DD.F` / `DDDD:BB:DD.F`, printing, and the stable synthetic
//! address every port gets from its name.

use crate::error::{DocaError, DocaResult};

/// A PCI address (domain, bus, device 0-31, function 0-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PciAddr {
    /// PCI domain (always 0 for synthetic addresses).
    pub domain: u16,
    /// Bus number.
    pub bus: u8,
    /// Device number (5 bits).
    pub dev: u8,
    /// Function number (3 bits).
    pub func: u8,
}

/// Lowest bus of synthetic addresses (real NICs usually sit on lower buses).
const SYNTH_BUS_FIRST: u8 = 0x80;
/// Highest bus of synthetic addresses.
const SYNTH_BUS_LAST: u8 = 0xfe;

impl PciAddr {
    /// Parses `BB:DD.F` or `DDDD:BB:DD.F` (hexadecimal, case-insensitive).
    pub(crate) fn parse(s: &str) -> DocaResult<PciAddr> {
        let bad = DocaError::INVALID_VALUE;
        let parts: Vec<&str> = s.trim().split(':').collect();
        let (domain, bus, devfn) = match parts.as_slice() {
            [b, df] => ("0", *b, *df),
            [d, b, df] => (*d, *b, *df),
            _ => return Err(bad),
        };
        let (dev, func) = devfn.split_once('.').ok_or(bad)?;
        let hex = |t: &str, max_len: usize| -> DocaResult<u32> {
            if t.is_empty() || t.len() > max_len || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad);
            }
            u32::from_str_radix(t, 16).map_err(|_| bad)
        };
        // CUDA prints 8-digit domains (00000000:00:06.0); the value must fit 16 bits.
        let domain = hex(domain, 8)?;
        if domain > 0xffff {
            return Err(bad);
        }
        let bus = hex(bus, 2)?;
        let dev = hex(dev, 2)?;
        let func = hex(func, 1)?;
        if dev > 0x1f || func > 7 {
            return Err(bad);
        }
        Ok(PciAddr {
            domain: domain as u16,
            bus: bus as u8,
            dev: dev as u8,
            func: func as u8,
        })
    }

    /// `BB:DD.F`.
    pub fn short(&self) -> String {
        format!("{:02x}:{:02x}.{:x}", self.bus, self.dev, self.func)
    }

    /// `DDDD:BB:DD.F` (12 characters, what `doca_devinfo_get_pci_addr_str` writes).
    pub fn long(&self) -> String {
        format!(
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.dev, self.func
        )
    }

    /// The synthetic address of a port name: an FNV-1a hash of the name spread over buses
    /// 0x80-0xfe and devices 0-31, function 0. The same name gives the same address on
    /// every machine and run.
    pub fn synthetic(name: &str) -> PciAddr {
        let h = fnv1a(name.as_bytes());
        let span = u64::from(SYNTH_BUS_LAST - SYNTH_BUS_FIRST) + 1;
        PciAddr {
            domain: 0,
            bus: SYNTH_BUS_FIRST + (h % span) as u8,
            dev: ((h >> 32) % 32) as u8,
            func: 0,
        }
    }

    /// The next synthetic slot after this one (used to step past collisions).
    pub fn next_synthetic(&self) -> PciAddr {
        let mut n = *self;
        n.func = 0;
        if n.dev < 31 {
            n.dev += 1;
        } else {
            n.dev = 0;
            n.bus = if n.bus >= SYNTH_BUS_LAST {
                SYNTH_BUS_FIRST
            } else {
                n.bus + 1
            };
        }
        n
    }
}

/// 64-bit FNV-1a.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_short_and_long_forms() {
        let a = PciAddr::parse("17:00.0").unwrap();
        assert_eq!((a.domain, a.bus, a.dev, a.func), (0, 0x17, 0, 0));
        assert_eq!(PciAddr::parse("0000:17:00.0").unwrap(), a);
        assert_eq!(PciAddr::parse("0000:AB:1f.7").unwrap().short(), "ab:1f.7");
        assert_eq!(a.long(), "0000:17:00.0");
        assert_eq!(a.long().len(), 12);
        assert_eq!(PciAddr::parse("00000000:17:00.0").unwrap(), a);
        assert_eq!(
            PciAddr::parse("00010000:17:00.0"),
            Err(DocaError::INVALID_VALUE)
        );
    }

    #[test]
    fn rejects_malformed_addresses() {
        for s in [
            "",
            "17",
            "17:00",
            "17:20.0",
            "17:00.8",
            "x7:00.0",
            "1:2:3:4.0",
            "lo",
        ] {
            assert_eq!(PciAddr::parse(s), Err(DocaError::INVALID_VALUE), "{s}");
        }
    }

    #[test]
    fn synthetic_addresses_are_deterministic_and_in_range() {
        let lo = PciAddr::synthetic("lo");
        assert_eq!(lo, PciAddr::synthetic("lo"));
        // Pinned: `lo` must get this address everywhere (documented for users).
        assert_eq!(lo.short(), "a2:07.0");
        for name in ["lo", "eth0", "veth1", "wire0", "pcap3"] {
            let a = PciAddr::synthetic(name);
            assert!((0x80..=0xfe).contains(&a.bus), "{name}");
            assert!(a.dev < 32 && a.func == 0);
        }
        assert_ne!(PciAddr::synthetic("eth0"), PciAddr::synthetic("eth1"));
        let last = PciAddr {
            domain: 0,
            bus: 0xfe,
            dev: 31,
            func: 0,
        };
        assert_eq!(last.next_synthetic().short(), "80:00.0");
    }
}
