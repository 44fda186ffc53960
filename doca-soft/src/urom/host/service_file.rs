//! `DOCA_UROM_SERVICE_FILE`: how a host finds its UROM service. One service per line,
//! whitespace separated: `<app_hostname> <service_type> <dev_hostname> <dev_pci_addr>
//! <net_devs>`; `#` starts a comment. The line matching this host's name (as
//! `gethostname()` returns it), type `dpu` and the PCI address of the device given to
//! `doca_urom_service_set_dev` wins. In doca-soft the dev_hostname column carries the
//! daemon's `host:port` (host as an IPv4 address or a resolvable name).
//!
//! The file is read carefully: opened non-blocking, refused unless it is a regular file (a
//! FIFO without a writer would block forever, `/dev/zero` never ends) and at most
//! [`MAX_LEN`] bytes. Every failure is logged naming the file and what was looked for,
//! and what the file holds instead.

use crate::error::{DocaError, DocaResult};
use std::io::Read;
use std::net::{SocketAddr, SocketAddrV4, ToSocketAddrs};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The environment variable naming the service file.
pub const SERVICE_FILE_ENV: &str = "DOCA_UROM_SERVICE_FILE";
/// Largest service file read (a line per service: far more than any machine needs).
pub(crate) const MAX_LEN: u64 = 1 << 20;

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

fn resolve(hostport: &str) -> Result<SocketAddrV4, String> {
    if let Ok(a) = hostport.parse::<SocketAddrV4>() {
        return Ok(a);
    }
    let addrs = hostport.to_socket_addrs().map_err(|e| {
        format!("its service address {hostport:?} is not IPv4:PORT and does not resolve ({e})")
    })?;
    addrs
        .filter_map(|a| match a {
            SocketAddr::V4(v) => Some(v),
            SocketAddr::V6(_) => None,
        })
        .next()
        .ok_or_else(|| format!("its service address {hostport:?} has no IPv4 address"))
}

/// Finds the service for (`hostname`, `pci`) in the file's `text`; the error says what
/// the file has instead.
pub(crate) fn lookup_in(text: &str, hostname: &str, pci: &str) -> Result<SocketAddrV4, String> {
    let want = norm_pci(pci);
    let mut hosts: Vec<&str> = Vec::new();
    let mut ours: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        if !hosts.contains(&f[0]) {
            hosts.push(f[0]);
        }
        if f[0] != hostname {
            continue;
        }
        if f[1] == "dpu" && norm_pci(f[3]) == want {
            return resolve(f[2]).map_err(|e| format!("the line for this host and device: {e}"));
        }
        ours.push(format!("{} {}", f[1], f[3]));
    }
    if hosts.is_empty() {
        return Err("it has no service lines (`<host> dpu <ip:port> <pci> <devs>`)".into());
    }
    if ours.is_empty() {
        return Err(format!(
            "no line is for this host: its lines are for {} (the first column must be this \
             host's name as gethostname() returns it)",
            hosts
                .iter()
                .map(|h| format!("{h:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Err(format!(
        "this host's lines are for other devices or types ({}): none is `dpu` with PCI {want}",
        ours.join("; ")
    ))
}

/// Reads a service file: a regular file of at most [`MAX_LEN`] bytes, opened without
/// blocking.
pub(crate) fn read(path: &Path) -> Result<String, (DocaError, String)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| (DocaError::NOT_FOUND, format!("cannot open it: {e}")))?;
    let meta = f
        .metadata()
        .map_err(|e| (DocaError::NOT_FOUND, format!("cannot stat it: {e}")))?;
    if !meta.is_file() {
        let what = {
            use std::os::unix::fs::FileTypeExt;
            let t = meta.file_type();
            if t.is_fifo() {
                "a FIFO"
            } else if t.is_char_device() || t.is_block_device() {
                "a device"
            } else if t.is_dir() {
                "a directory"
            } else if t.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            }
        };
        return Err((
            DocaError::BAD_CONFIG,
            format!("it is {what}; a service file must be a regular file"),
        ));
    }
    if meta.len() > MAX_LEN {
        return Err((
            DocaError::BAD_CONFIG,
            format!(
                "it is {} bytes; a service file is at most {MAX_LEN}",
                meta.len()
            ),
        ));
    }
    let mut text = String::new();
    f.take(MAX_LEN + 1).read_to_string(&mut text).map_err(|e| {
        (
            DocaError::BAD_CONFIG,
            format!("cannot read it as text: {e}"),
        )
    })?;
    if text.len() as u64 > MAX_LEN {
        return Err((
            DocaError::BAD_CONFIG,
            format!("it grew beyond {MAX_LEN} bytes"),
        ));
    }
    Ok(text)
}

/// Looks the service up in `$DOCA_UROM_SERVICE_FILE` for this host and `pci`. Failures
/// are logged naming the file, this host, the device and what the file has.
pub(crate) fn lookup(pci: &str) -> DocaResult<SocketAddrV4> {
    let host = local_hostname();
    let Some(path) = std::env::var_os(SERVICE_FILE_ENV) else {
        sdk_err!(
            "urom",
            "{SERVICE_FILE_ENV} is not set: it names the file that lists UROM services, a line \
             `<host> dpu <daemon IP:PORT> <PCI> <devices>` each (looking for host {host:?}, \
             device {pci})"
        );
        return Err(DocaError::NOT_FOUND);
    };
    let path = Path::new(&path);
    let fail = |code: DocaError, why: String| {
        sdk_err!(
            "urom",
            "{SERVICE_FILE_ENV}={}: no UROM service for host {host:?} and device {pci}: {why}",
            path.display()
        );
        code
    };
    let text = read(path).map_err(|(code, why)| fail(code, why))?;
    lookup_in(&text, &host, pci).map_err(|why| fail(DocaError::NOT_FOUND, why))
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
        let e = lookup_in(text, "me", "18:00.0").unwrap_err();
        assert!(
            e.contains("dpu 0000:17:00.0") && e.contains("18:00.0"),
            "{e}"
        );
        let e = lookup_in(text, "nobody", "17:00.0").unwrap_err();
        assert!(
            e.contains("\"other\", \"me\"") && e.contains("first column"),
            "{e}"
        );
        assert_eq!(
            lookup_in("me dpu localhost:9 17:00.0 lo", "me", "17:00.0")
                .unwrap()
                .port(),
            9
        );
        let e = lookup_in("me dpu no-such-host.invalid:9 17:00.0 lo", "me", "17:00.0").unwrap_err();
        assert!(e.contains("no-such-host.invalid:9"), "{e}");
        assert!(lookup_in("", "me", "17:00.0")
            .unwrap_err()
            .contains("no service lines"));
    }

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (code, why) = read(&fifo).unwrap_err();
        assert_eq!(code, DocaError::BAD_CONFIG);
        assert!(why.contains("FIFO"), "{why}");
        let (code, why) = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(code, DocaError::BAD_CONFIG);
        assert!(why.contains("device"), "{why}");
        let (code, why) = read(dir.path()).unwrap_err();
        assert!(
            why.contains("directory") || code == DocaError::NOT_FOUND,
            "{why}"
        );
        let (code, _) = read(&dir.path().join("missing")).unwrap_err();
        assert_eq!(code, DocaError::NOT_FOUND);
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'#'; MAX_LEN as usize + 1]).unwrap();
        let (code, why) = read(&big).unwrap_err();
        assert_eq!(code, DocaError::BAD_CONFIG);
        assert!(why.contains("at most"), "{why}");
        let ok = dir.path().join("ok");
        std::fs::write(&ok, "h dpu 127.0.0.1:1 17:00.0 lo\n").unwrap();
        assert!(read(&ok).unwrap().starts_with("h dpu"));
    }
}
