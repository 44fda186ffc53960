#!/usr/bin/env python3
"""Golden frames for tests/gpu_packet_processing.rs, built independently of the Rust code
(struct packing and an RFC 1071 checksum written here). Run it to print the Rust constants;
the test embeds its output."""
import struct

def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF

def ip4(src, dst, proto, payload_len, ttl=64, ident=0, flags=0, with_csum=True):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + payload_len, ident, flags, ttl, proto, 0,
                    bytes(src), bytes(dst))
    if with_csum:
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h

def tcp(src_ip, dst_ip, sport, dport, seq, ack, flags, window, options=b"", payload=b"", with_csum=True):
    off = (20 + len(options)) // 4
    h = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, window, 0, 0) + options
    seg = h + payload
    if with_csum:
        pseudo = bytes(src_ip) + bytes(dst_ip) + struct.pack("!BBH", 0, 6, len(seg))
        c = csum(pseudo + seg)
        seg = seg[:16] + struct.pack("!H", c) + seg[18:]
    return seg

CLIENT_MAC = bytes([0x02, 0, 0, 0, 0, 0x01])
SERVER_MAC = bytes([0x02, 0, 0, 0, 0, 0x02])
CLIENT_IP = [127, 0, 0, 1]
SERVER_IP = [127, 0, 0, 2]

def eth(dst, src):
    return dst + src + b"\x08\x00"

def hexs(name, b):
    print(f"const {name}: &str = \"{b.hex()}\";")

# ICMP echo request, 56 bytes of data, followed by 6 bytes of Ethernet padding junk.
data = bytes((i * 7 + 3) & 0xFF for i in range(56))
icmp = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 7) + data
icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
req = eth(SERVER_MAC, CLIENT_MAC) + ip4(CLIENT_IP, SERVER_IP, 1, len(icmp), ident=0x4242, flags=0x4000) + icmp
hexs("ICMP_REQUEST", req + b"\xde\xad\xbe\xef\x55\xaa")
rep_icmp = struct.pack("!BBHHH", 0, 0, 0, 0x1234, 7) + data
rep_icmp = rep_icmp[:2] + struct.pack("!H", csum(rep_icmp)) + rep_icmp[4:]
# The wire frame: IPv4 checksum filled (the L3 offload), TTL 128, id/flags kept.
rep = eth(CLIENT_MAC, SERVER_MAC) + ip4(SERVER_IP, CLIENT_IP, 1, len(rep_icmp), ttl=128, ident=0x4242, flags=0x4000) + rep_icmp
hexs("ICMP_REPLY_WIRE", rep)

# SYN with MSS, SACK permitted, timestamps (TSval 0x01020304), NOP, window scale 7.
opts = bytes([2, 4, 0x05, 0xb4, 4, 2, 8, 10]) + struct.pack("!II", 0x01020304, 0) + bytes([1, 3, 3, 7])
seg = tcp(CLIENT_IP, SERVER_IP, 40000, 80, 0x11223344, 0, 0x02, 64240, opts)
syn = eth(SERVER_MAC, CLIENT_MAC) + ip4(CLIENT_IP, SERVER_IP, 6, len(seg), ident=1, flags=0x4000) + seg
hexs("SYN_REQUEST", syn)
# SYN-ACK, TSval 0x65000000 (given), TSecr = the client's TSval; both checksums filled.
sa_opts = bytes([2, 4, 0x20, 0x00, 4, 2, 8, 10]) + struct.pack("!II", 0x65000000, 0x01020304) + bytes([1, 3, 3, 7])
seg = tcp(SERVER_IP, CLIENT_IP, 80, 40000, 1000, 0x11223345, 0x12, 60000, sa_opts)
synack = eth(CLIENT_MAC, SERVER_MAC) + ip4(SERVER_IP, CLIENT_IP, 6, len(seg), ident=0, flags=0x4000) + seg
hexs("SYN_ACK_WIRE", synack)

# FIN|ACK from the client and the ACK the CPU answers with.
seg = tcp(CLIENT_IP, SERVER_IP, 40000, 80, 0x11223400, 1500, 0x11, 502)
fin = eth(SERVER_MAC, CLIENT_MAC) + ip4(CLIENT_IP, SERVER_IP, 6, len(seg), ident=9, flags=0x4000) + seg
hexs("FIN_REQUEST", fin)
seg = tcp(SERVER_IP, CLIENT_IP, 80, 40000, 1500, 0x11223401, 0x10, 60000)
ack = eth(CLIENT_MAC, SERVER_MAC) + ip4(SERVER_IP, CLIENT_IP, 6, len(seg), ident=0, flags=0x4000) + seg
hexs("FIN_ACK_WIRE", ack)

# A GET with a timestamp option (data offset 8) and its response headers for a 7-byte payload.
get_payload = b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n"
opts = bytes([1, 1, 8, 10]) + struct.pack("!II", 5, 6)
seg = tcp(CLIENT_IP, SERVER_IP, 40000, 80, 0x11223345, 1001, 0x18, 502, opts, get_payload)
get = eth(SERVER_MAC, CLIENT_MAC) + ip4(CLIENT_IP, SERVER_IP, 6, len(seg), ident=3, flags=0x4000) + seg
hexs("GET_REQUEST", get)
body = b"HTTP/1.1 200 OK\r\n\r\n"
seg = tcp(SERVER_IP, CLIENT_IP, 80, 40000, 1001, 0x11223345 + len(get_payload), 0x18, 6000, b"", body)
resp = eth(CLIENT_MAC, SERVER_MAC) + ip4(SERVER_IP, CLIENT_IP, 6, len(seg), ttl=60) + seg
hexs("HTTP_RESPONSE_WIRE", resp)
