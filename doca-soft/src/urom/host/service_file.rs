//! `DOCA_UROM_SERVICE_FILE`: how a host finds its UROM service. One service per line,
//! whitespace separated: `<app_hostname> <service_type> <dev_hostname> <dev_pci_addr>
//! <net_devs>`. The line matching this host's name, type `dpu` and the PCI address of the
//! device given to `doca_urom_service_set_dev` wins. In doca-soft the dev_hostname column
//! carries the daemon's `host:port` (host as an IPv4 address or a resolvable name).

use crate::error::{DocaError, DocaResult};
use std::net::{SocketAddr, SocketAddrV4, ToSocketAddrs};

/// Normalises a PCI address for comparison (lowercase, without a `0000:` domain).
fn norm_pci(s: &str) -> String {
    let s = s.to_ascii_lowercase();
    match s.split(':').count() {
        3 => s.split_once(':').map(|(_, r)| r.to_owned()).unwrap_or(s),
        _ => s,
    }
}

/// This machine's host name.
pub fn local_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } != 0 {
        return String::new();
    }
    let n = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn resolve(hostport: &str) -> DocaResult<SocketAddrV4> {
    if let Ok(a) = hostport.parse::<SocketAddrV4>() {
        return Ok(a);
    }
    let addrs = hostport
        .to_socket_addrs()
        .map_err(|_| DocaError::NOT_FOUND)?;
    addrs
        .filter_map(|a| match a {
            SocketAddr::V4(v) => Some(v),
            SocketAddr::V6(_) => None,
        })
        .next()
        .ok_or(DocaError::NOT_FOUND)
}

/// Finds the service for (`hostname`, `pci`) in the file's `text`.
pub(crate) fn lookup_in(text: &str, hostname: &str, pci: &str) -> DocaResult<SocketAddrV4> {
    let want = norm_pci(pci);
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        if f[0] == hostname && f[1] == "dpu" && norm_pci(f[3]) == want {
            return resolve(f[2]);
        }
    }
    Err(DocaError::NOT_FOUND)
}

/// Looks the service up in `$DOCA_UROM_SERVICE_FILE` for this host and `pci`.
pub(crate) fn lookup(pci: &str) -> DocaResult<SocketAddrV4> {
    let path = std::env::var_os("DOCA_UROM_SERVICE_FILE").ok_or_else(|| {
        sdk_err!("urom", "DOCA_UROM_SERVICE_FILE is not set");
        DocaError::NOT_FOUND
    })?;
    let text = std::fs::read_to_string(&path).map_err(|_| DocaError::NOT_FOUND)?;
    lookup_in(&text, &local_hostname(), pci)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_matches_host_type_and_pci() {
        let text = "other dpu 127.0.0.1:1 17:00.0 x\n\
                    me host 127.0.0.1:2 17:00.0 x\n\
                    # comment\n\
                    me dpu 127.0.0.1:3 0000:17:00.0 lo\n";
        assert_eq!(lookup_in(text, "me", "17:00.0").unwrap().port(), 3);
        assert_eq!(lookup_in(text, "me", "0000:17:00.0").unwrap().port(), 3);
        assert_eq!(lookup_in(text, "me", "18:00.0"), Err(DocaError::NOT_FOUND));
        assert_eq!(
            lookup_in(text, "nobody", "17:00.0"),
            Err(DocaError::NOT_FOUND)
        );
        assert_eq!(
            lookup_in("me dpu localhost:9 17:00.0 lo", "me", "17:00.0")
                .unwrap()
                .port(),
            9
        );
        assert_eq!(
            lookup_in("me dpu no-such-host.invalid:9 17:00.0 lo", "me", "17:00.0"),
            Err(DocaError::NOT_FOUND)
        );
    }
}
