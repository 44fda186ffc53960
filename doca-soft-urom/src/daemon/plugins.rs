//! Plugin discovery: every `.so` in the `UROM_PLUGIN_PATH` directories (separated by `;`,
//! scanned in order, files sorted by name) that exports `urom_plugin_get_version` and
//! `urom_plugin_get_iface`. Plugin `i` (in discovery order) gets id `1 << i`, so ids work
//! as the bit mask `doca_urom_worker_set_plugins` takes. Hosts only ever name plugins by
//! these ids: the daemon never opens a path that did not come from this scan.
//!
//! Each file is probed in a child process (`doca_urom_worker --probe PATH`): loading a
//! library runs its constructors, and one that crashes, exits or hangs must cost the daemon
//! only that plugin (a probe gets [`PROBE_TIMEOUT`]). Every file skipped is reported with
//! the reason, so a wrong directory or a broken plugin is never silent.
//!
//! Names: a plugin's name is its file name without `.so` (`worker_graph.so` is
//! `worker_graph`), as DOCA's daemon does. Cargo names a Rust plugin's library
//! `lib<crate>.so`: such a file is offered as `<crate>` when the library itself says that
//! is its name (the SDK's `export_plugin!` exports `doca_soft_urom_plugin_name`, the
//! crate's name), so `libworker_graph.so` built by cargo can be used as it is; any other
//! `lib*.so` keeps its full stem (`libucc_doca_urom_plugin`). Two files with one name: the
//! first found wins, the other is skipped.

use super::procs::{describe_exit, launch, read_answer, ANSWER_FD};
use crate::wire::PluginDesc;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `DOCA_UROM_PLUGIN_NAME_MAX_LEN` (including the NUL).
pub(crate) const NAME_MAX_LEN: usize = 48;
/// Most plugins (ids are the bits of a `u64`).
pub(crate) const MAX_PLUGINS: usize = 64;
/// How long a plugin probe may take.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// What a probe prints (on its answer descriptor) for a plugin: `<prefix> <version> <name>`
/// (name `-` when the library declares none).
pub(crate) const PROBE_OK: &str = "UROM_PLUGIN_PROBE";
/// What a probe prints when the library is no plugin: `<prefix> <reason>`.
pub(crate) const PROBE_ERR: &str = "UROM_PLUGIN_NOT_A_PLUGIN";

/// A plugin the daemon can hand to workers.
#[derive(Debug, Clone)]
pub(crate) struct Plugin {
    /// What hosts see.
    pub desc: PluginDesc,
    /// Where it lives.
    pub path: PathBuf,
}

/// What a scan found.
#[derive(Debug, Default)]
pub(crate) struct Discovery {
    /// The plugins, in id order.
    pub plugins: Vec<Plugin>,
    /// Everything passed over: (file or directory, why).
    pub skipped: Vec<(String, String)>,
}

/// What a probe said about one file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// A plugin: its version and the name it declares (if any).
    Plugin { version: u64, name: Option<String> },
    /// Not one, and why.
    Not(String),
}

/// Parses a probe's answer line.
pub(crate) fn parse_probe(line: &str) -> Probe {
    let mut w = line.split_whitespace();
    match w.next() {
        Some(PROBE_OK) => {
            let version = w.next().and_then(|v| v.parse().ok());
            let name = w.next().filter(|n| *n != "-").map(str::to_owned);
            match version {
                Some(version) => Probe::Plugin { version, name },
                None => Probe::Not(format!("the probe said {line:?}")),
            }
        }
        Some(PROBE_ERR) => Probe::Not(line[PROBE_ERR.len()..].trim().to_owned()),
        _ => Probe::Not(format!("the probe said {line:?}")),
    }
}

/// Loads `path` in a child (`worker_bin --probe`) and reports what it is.
fn probe(worker_bin: &Path, path: &Path) -> Probe {
    let args: Vec<OsString> = vec![
        "--probe".into(),
        path.as_os_str().to_owned(),
        "--port-fd".into(),
        ANSWER_FD.to_string().into(),
    ];
    let mut l = match launch(worker_bin, &args, &[], None, true) {
        Ok(l) => l,
        Err(e) => {
            return Probe::Not(format!(
                "cannot run the worker binary {} to probe it: {e}",
                worker_bin.display()
            ))
        }
    };
    let deadline = Instant::now() + PROBE_TIMEOUT;
    let mut line = Vec::new();
    let answer = loop {
        if let Some(a) = read_answer(&mut l.answer, &mut line) {
            break Some(a);
        }
        if Instant::now() > deadline {
            break None;
        }
        let mut pfd = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&l.answer),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 50) };
    };
    let r = match answer {
        Some(Ok(text)) => parse_probe(&text),
        Some(Err(())) => {
            // Give it a moment to finish exiting so its status can be told.
            let t = Instant::now() + Duration::from_millis(500);
            while matches!(l.child.try_wait(), Ok(None)) && Instant::now() < t {
                std::thread::sleep(Duration::from_millis(5));
            }
            Probe::Not(format!(
                "loading it {} (a constructor that crashes or exits?)",
                describe_exit(&mut l.child).replacen("exited", "made the process exit", 1)
            ))
        }
        None => Probe::Not(format!(
            "loading it did not finish within {PROBE_TIMEOUT:?} (a constructor that hangs?)"
        )),
    };
    let _ = l.child.kill();
    let _ = l.child.wait();
    r
}

/// The name a file is offered under (see the module docs).
fn plugin_name(file: &Path, declared: Option<&str>) -> Option<String> {
    let stem = file.file_stem()?.to_str()?;
    match (stem.strip_prefix("lib"), declared) {
        (Some(rest), Some(d)) if rest == d => Some(d.to_owned()),
        _ => Some(stem.to_owned()),
    }
}

/// Scans `path_list` (the value of `UROM_PLUGIN_PATH`), probing with `worker_bin`.
pub(crate) fn discover(path_list: &str, worker_bin: &Path) -> Discovery {
    let mut d = Discovery::default();
    for dir in path_list.split(';').filter(|d| !d.is_empty()) {
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                d.skipped.push((
                    dir.to_owned(),
                    format!("plugin directory not readable: {e}"),
                ));
                continue;
            }
        };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        if files.is_empty() {
            d.skipped
                .push((dir.to_owned(), "plugin directory is empty".into()));
        }
        for f in files {
            let shown = f.display().to_string();
            let mut skip = |why: String| d.skipped.push((shown.clone(), why));
            if f.is_dir() {
                skip("a directory (plugin directories are not searched recursively)".into());
                continue;
            }
            if f.extension().and_then(|e| e.to_str()) != Some("so") {
                skip("not a .so file".into());
                continue;
            }
            if d.plugins.len() >= MAX_PLUGINS {
                skip(format!(
                    "more than {MAX_PLUGINS} plugins (ids are the bits of a u64)"
                ));
                continue;
            }
            let (version, declared) = match probe(worker_bin, &f) {
                Probe::Plugin { version, name } => (version, name),
                Probe::Not(why) => {
                    skip(format!("not a UROM plugin: {why}"));
                    continue;
                }
            };
            let Some(name) = plugin_name(&f, declared.as_deref()) else {
                skip("its name is not UTF-8".into());
                continue;
            };
            if name.len() >= NAME_MAX_LEN {
                skip(format!(
                    "its name {name:?} is longer than {} bytes (DOCA_UROM_PLUGIN_NAME_MAX_LEN)",
                    NAME_MAX_LEN - 1
                ));
                continue;
            }
            if let Some(first) = d.plugins.iter().find(|p| p.desc.name == name) {
                let why = format!(
                    "plugin {name:?} was found first in {}",
                    first.path.display()
                );
                skip(why);
                continue;
            }
            let id = 1u64 << d.plugins.len();
            d.plugins.push(Plugin {
                desc: PluginDesc { id, version, name },
                path: f,
            });
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_answers_parse() {
        assert_eq!(
            parse_probe("UROM_PLUGIN_PROBE 1 worker_graph"),
            Probe::Plugin {
                version: 1,
                name: Some("worker_graph".into())
            }
        );
        assert_eq!(
            parse_probe("UROM_PLUGIN_PROBE 7 -"),
            Probe::Plugin {
                version: 7,
                name: None
            }
        );
        assert_eq!(
            parse_probe("UROM_PLUGIN_NOT_A_PLUGIN no urom_plugin_get_iface"),
            Probe::Not("no urom_plugin_get_iface".into())
        );
        assert!(matches!(parse_probe("garbage"), Probe::Not(_)));
        assert!(matches!(parse_probe("UROM_PLUGIN_PROBE x"), Probe::Not(_)));
    }

    #[test]
    fn cargo_library_names_need_the_library_to_agree() {
        let p = |f: &str, d: Option<&str>| plugin_name(Path::new(f), d).unwrap();
        assert_eq!(p("/x/worker_graph.so", None), "worker_graph");
        assert_eq!(
            p("/x/libworker_graph.so", Some("worker_graph")),
            "worker_graph"
        );
        assert_eq!(p("/x/libworker_graph.so", None), "libworker_graph");
        assert_eq!(
            p("/x/libucc_doca_urom_plugin.so", None),
            "libucc_doca_urom_plugin"
        );
        assert_eq!(p("/x/libfoo.so", Some("bar")), "libfoo");
        assert_eq!(p("/x/foo.so", Some("foo")), "foo");
    }
}
