//! Bit sets of DOCA Flow: RSS hash fields and TCP flags.

bitflags::bitflags! {
    /// Header fields the RSS hash covers (`enum doca_flow_rss_type`, `outer_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct RssFlags: u32 {
        /// IPv4 source and destination addresses.
        const IPV4 = 1 << 0;
        /// IPv6 source and destination addresses.
        const IPV6 = 1 << 1;
        /// UDP ports.
        const UDP = 1 << 2;
        /// TCP ports.
        const TCP = 1 << 3;
        /// ESP SPI.
        const ESP = 1 << 4;
        /// Only the IPv4 source address.
        const IPV4_SRC_ONLY = 1 << 5;
        /// Only the IPv4 destination address.
        const IPV4_DST_ONLY = 1 << 6;
        /// Only the IPv6 source address.
        const IPV6_SRC_ONLY = 1 << 7;
        /// Only the IPv6 destination address.
        const IPV6_DST_ONLY = 1 << 8;
        /// Only the UDP source port.
        const UDP_SRC_ONLY = 1 << 9;
        /// Only the UDP destination port.
        const UDP_DST_ONLY = 1 << 10;
        /// Only the TCP source port.
        const TCP_SRC_ONLY = 1 << 11;
        /// Only the TCP destination port.
        const TCP_DST_ONLY = 1 << 12;
        /// Let the library choose.
        const AUTO = 1 << 30;
    }
}

bitflags::bitflags! {
    /// TCP header flags (`enum doca_flow_match_tcp_flags`, `outer.tcp.flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct TcpFlags: u8 {
        /// FIN.
        const FIN = 1 << 0;
        /// SYN.
        const SYN = 1 << 1;
        /// RST.
        const RST = 1 << 2;
        /// PSH.
        const PSH = 1 << 3;
        /// ACK.
        const ACK = 1 << 4;
        /// URG.
        const URG = 1 << 5;
        /// ECE.
        const ECE = 1 << 6;
        /// CWR.
        const CWR = 1 << 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_have_doca_values() {
        // Values from DOCA 3.3's doca_rss_type / doca_flow_match_tcp_flags.
        assert_eq!(RssFlags::IPV4.bits(), 1);
        assert_eq!((RssFlags::IPV4 | RssFlags::UDP).bits(), 0b101);
        assert_eq!(RssFlags::TCP.bits(), 8);
        assert_eq!(RssFlags::TCP_DST_ONLY.bits(), 1 << 12);
        assert_eq!(RssFlags::AUTO.bits(), 1 << 30);
        assert_eq!(TcpFlags::FIN.bits(), 1);
        assert_eq!(TcpFlags::SYN.bits(), 2);
        assert_eq!(TcpFlags::RST.bits(), 4);
        assert_eq!(TcpFlags::ACK.bits(), 16);
        assert_eq!(TcpFlags::CWR.bits(), 128);
        assert_eq!(TcpFlags::all().bits(), 0xff);
    }
}
