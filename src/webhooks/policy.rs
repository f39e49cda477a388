use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

use crate::domain::{CallbackUrl, DomainError};

/// Which callback URLs are accepted.
///
/// The default accepts only `https` URLs whose host is a public name or a public IP address.
/// `allow_http` and `allow_private` exist for local development and tests on loopback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallbackPolicy {
    /// Accept plain `http` callbacks.
    pub allow_http: bool,
    /// Accept loopback, private, link-local and other non-public addresses.
    pub allow_private: bool,
}

impl CallbackPolicy {
    /// Everything allowed: for local development and tests only.
    pub fn local_development() -> Self {
        Self {
            allow_http: true,
            allow_private: true,
        }
    }

    /// Checks a callback URL. Names are checked for form here and resolved at delivery.
    pub fn check(&self, url: &CallbackUrl) -> Result<(), DomainError> {
        let u = url.url();
        if u.scheme() != "https" && !self.allow_http {
            return Err(DomainError::new(
                "callback_url",
                "must use https (plain http is accepted only when the server runs in local-development mode)",
            ));
        }
        if self.allow_private {
            return Ok(());
        }
        let private = || {
            DomainError::new(
                "callback_url",
                "points at a loopback, private or reserved address; use a public host",
            )
        };
        match u.host() {
            Some(Host::Ipv4(ip)) if !is_public_ip(IpAddr::V4(ip)) => Err(private()),
            Some(Host::Ipv6(ip)) if !is_public_ip(IpAddr::V6(ip)) => Err(private()),
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                let local = name == "localhost"
                    || [".localhost", ".local", ".internal", ".home.arpa", ".lan"]
                        .iter()
                        .any(|s| name.ends_with(s))
                    || !name.contains('.');
                if local {
                    Err(private())
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }
}

/// Whether an address is globally routable: not loopback, private, link-local, CGNAT,
/// multicast, documentation, benchmarking or otherwise reserved. IPv4-mapped and
/// IPv4-compatible IPv6 addresses are judged by their IPv4 address.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4() {
                // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible); :: and ::1 land here too.
                return is_public_v4(v4) && !v6.is_loopback() && !v6.is_unspecified();
            }
            is_public_v6(v6)
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments 192.0.0/24
        || (a == 192 && b == 88 && c == 99) // 6to4 relay
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18/15
        || a >= 240) // reserved 240/4
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // Only global unicast (2000::/3) is routable on the internet; within it, carve out the
    // special-purpose blocks.
    (s[0] & 0xe000) == 0x2000
        && !(is_unreachable_protocol_assignment(ip) // 2001::/23: Teredo, benchmarking, ORCHID…
            || (s[0] == 0x3fff && (s[1] & 0xf000) == 0)) // documentation 3fff::/20
        && !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0064 && s[1] == 0xff9b) // NAT64 64:ff9b::/96
        || s[0] == 0x2002 // 6to4 may wrap private IPv4
        || s[0] == 0x0100) // discard-only 100::/64
}

/// Whether an address is in the IETF protocol assignments block 2001::/23 and not in one of
/// the parts of it the IANA special-purpose registry lists as globally reachable (the
/// anycast addresses 2001:1::1 to 2001:1::3, AMT 2001:3::/32, AS112-v6 2001:4:112::/48,
/// ORCHIDv2 2001:20::/28, DETs 2001:30::/28). Teredo (2001::/32), benchmarking
/// (2001:2::/48), the deprecated ORCHID (2001:10::/28) and the unassigned rest are refused.
fn is_unreachable_protocol_assignment(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if s[0] != 0x2001 || s[1] >= 0x0200 {
        return false;
    }
    let anycast = s[1] == 0x0001 && s[2..7] == [0; 5] && (1..=3).contains(&s[7]);
    let reachable = anycast
        || s[1] == 0x0003
        || (s[1] == 0x0004 && s[2] == 0x0112)
        || (s[1] & 0xfff0) == 0x0020
        || (s[1] & 0xfff0) == 0x0030;
    !reachable
}

setters!(CallbackPolicy {
    allow_http: bool,
    allow_private: bool,
});

#[cfg(test)]
mod tests {
    use super::*;

    fn check(policy: CallbackPolicy, url: &str) -> bool {
        CallbackUrl::parse(url).is_ok_and(|u| policy.check(&u).is_ok())
    }

    #[test]
    fn the_default_policy_refuses_http_and_every_non_public_address() {
        let p = CallbackPolicy::default();
        assert!(check(p, "https://hooks.example.com/x"));
        assert!(check(p, "https://93.184.216.34/x"));
        assert!(check(p, "https://[2606:4700::1111]/x"));
        for url in [
            "http://hooks.example.com/x",
            "https://127.0.0.1/x",
            "https://10.1.2.3/x",
            "https://172.16.0.1/x",
            "https://192.168.1.1/x",
            "https://169.254.169.254/latest",
            "https://100.64.0.1/x",
            "https://0.0.0.0/x",
            "https://224.0.0.1/x",
            "https://255.255.255.255/x",
            "https://[::1]/x",
            "https://[::]/x",
            "https://[fe80::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://localhost/x",
            "https://api.localhost/x",
            "https://printer.local/x",
            "https://intranet/x",
            "https://2130706433/x",
            "https://0x7f.1/x",
            "https://[2001:2::1]/x",
            "https://[3fff::1]/x",
            "https://[5f00::1]/x",
            "https://[64:ff9b::a00:1]/x",
        ] {
            assert!(!check(p, url), "{url} should be refused");
        }
    }

    #[test]
    fn local_development_allows_loopback_http() {
        assert!(check(
            CallbackPolicy::local_development(),
            "http://127.0.0.1:9000/hook"
        ));
    }
}
