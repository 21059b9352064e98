//! Which IP addresses a tenant's outbound request may reach: public unicast only.
//!
//! Refused: loopback, private (RFC 1918, IPv6 unique-local), carrier-grade NAT, link-local
//! (the cloud metadata endpoints live there), multicast, broadcast, unspecified, documentation
//! and benchmarking ranges, and the IPv4 addresses hidden in IPv6 (mapped `::ffff:a.b.c.d`,
//! compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), judged as the IPv4
//! address they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not a public address, or `None` when it is.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        Some("an unspecified (0.0.0.0/8) address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private-network address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a carrier-grade NAT (100.64.0.0/10) address")
    } else if ip.is_link_local() {
        Some("a link-local address (cloud metadata endpoints live there)")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.is_broadcast() || a >= 240 {
        Some("a reserved or broadcast address")
    } else if a == 192 && b == 0 && (c == 0 || c == 2) {
        Some("a special-purpose (192.0.0.0/24, 192.0.2.0/24) address")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("a benchmarking (198.18.0.0/15) address")
    } else if (a == 198 && b == 51 && c == 100) || (a == 203 && b == 0 && c == 113) {
        Some("a documentation address")
    } else {
        None
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return v4_reason(v4);
    }
    let first = ip.segments()[0];
    if ip.is_unspecified() {
        Some("an unspecified (::) address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private-network (unique local fc00::/7) address")
    } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        Some("a documentation (2001:db8::/32) address")
    } else if first == 0x0100 && ip.segments()[1..4] == [0, 0, 0] {
        Some("a discard-only (100::/64) address")
    } else {
        None
    }
}

/// The IPv4 address an IPv6 address carries: mapped, compatible, NAT64 or 6to4.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    // `::a.b.c.d` (deprecated "compatible"), but not `::` and `::1`, judged on their own.
    if s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1) {
        return Some(tail());
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail());
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        non_public_reason(text.parse().unwrap()).is_some()
    }

    #[test]
    fn every_non_public_range_is_refused() {
        for address in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "169.254.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "::",
            "::1",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "100::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:0.0.0.0",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
        ] {
            assert!(refused(address), "{address} must be refused");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "169.255.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(!refused(address), "{address} is public");
        }
    }

    #[test]
    fn the_reason_names_the_range() {
        assert_eq!(
            non_public_reason("169.254.169.254".parse().unwrap()),
            Some("a link-local address (cloud metadata endpoints live there)")
        );
        assert_eq!(non_public_reason("::ffff:127.0.0.1".parse().unwrap()), Some("a loopback address"));
    }
}
