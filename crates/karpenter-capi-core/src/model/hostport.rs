//! Host ports a pod takes on its node, and when two of them clash (Karpenter core
//! `pkg/scheduling/hostportusage.go`, `HostPort.Matches`).

use std::fmt;
use std::net::IpAddr;

use serde::Serialize;

/// One `hostPort` of a container: protocol, port and the host address it binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostPort {
    /// `TCP` (the API default), `UDP` or `SCTP`.
    pub(crate) protocol: String,
    /// The port on the host.
    pub(crate) port: i32,
    /// The host address; None when unspecified (`0.0.0.0`, `::` or empty): every address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host_ip: Option<String>,
}

impl HostPort {
    /// A port from a container port's fields; an empty or unspecified address (`0.0.0.0`, `::`)
    /// is None, an address is kept in its canonical form (so `::ffff:10.0.0.1` is `10.0.0.1`).
    pub(crate) fn new(protocol: Option<&str>, port: i32, host_ip: Option<&str>) -> HostPort {
        let protocol = match protocol {
            None | Some("") => "TCP".to_string(),
            Some(p) => p.to_string(),
        };
        let host_ip = host_ip.filter(|ip| !ip.is_empty()).and_then(|ip| {
            match ip.parse::<IpAddr>() {
                Ok(addr) if addr.to_canonical().is_unspecified() => None,
                Ok(addr) => Some(addr.to_canonical().to_string()),
                // Not an address the API server would accept; compared as written.
                Err(_) => Some(ip.to_string()),
            }
        });
        HostPort {
            protocol,
            port,
            host_ip,
        }
    }

    /// Whether two ports cannot be taken on one node: same protocol and port, and the same
    /// address or either one unspecified.
    pub(crate) fn clashes(&self, other: &HostPort) -> bool {
        self.protocol == other.protocol
            && self.port == other.port
            && match (&self.host_ip, &other.host_ip) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host_ip {
            Some(ip) if ip.contains(':') => write!(f, "{}/[{ip}]:{}", self.protocol, self.port),
            Some(ip) => write!(f, "{}/{ip}:{}", self.protocol, self.port),
            None => write!(f, "{}/{}", self.protocol, self.port),
        }
    }
}

/// The first port of `wanted` that clashes with one of `taken`.
pub fn first_clash<'a>(wanted: &'a [HostPort], taken: &[HostPort]) -> Option<&'a HostPort> {
    wanted.iter().find(|w| taken.iter().any(|t| w.clashes(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(protocol: Option<&str>, port: i32, ip: Option<&str>) -> HostPort {
        HostPort::new(protocol, port, ip)
    }

    #[test]
    fn clash_needs_protocol_and_port_and_an_overlapping_address() {
        let any80 = port(None, 80, None);
        let cases = [
            // (a, b, clash)
            (any80.clone(), port(Some("TCP"), 80, Some("0.0.0.0")), true),
            (any80.clone(), port(None, 80, Some("10.0.0.1")), true),
            (any80.clone(), port(Some("UDP"), 80, None), false),
            (any80.clone(), port(None, 81, None), false),
            (
                port(None, 80, Some("10.0.0.1")),
                port(None, 80, Some("10.0.0.2")),
                false,
            ),
            (
                port(None, 80, Some("10.0.0.1")),
                port(None, 80, Some("::ffff:10.0.0.1")),
                true,
            ),
            (
                port(None, 80, Some("::")),
                port(None, 80, Some("fd00::1")),
                true,
            ),
            (
                port(None, 80, Some("fd00::1")),
                port(None, 80, Some("fd00::2")),
                false,
            ),
        ];
        for (a, b, clash) in cases {
            assert_eq!(a.clashes(&b), clash, "{a} vs {b}");
            assert_eq!(b.clashes(&a), clash, "{b} vs {a}");
        }
    }

    #[test]
    fn unspecified_addresses_and_protocol_are_normalised() {
        assert_eq!(port(Some(""), 53, Some("")).to_string(), "TCP/53");
        assert_eq!(port(None, 53, Some("::")).host_ip, None);
        assert_eq!(
            port(Some("UDP"), 53, Some("10.0.0.9")).to_string(),
            "UDP/10.0.0.9:53"
        );
        assert_eq!(
            port(None, 8080, Some("fd00::1")).to_string(),
            "TCP/[fd00::1]:8080"
        );
        let taken = [port(None, 80, Some("10.0.0.1"))];
        let wanted = [port(None, 443, None), port(None, 80, None)];
        assert_eq!(first_clash(&wanted, &taken), Some(&wanted[1]));
        assert_eq!(first_clash(&wanted[..1], &taken), None);
    }
}
