//! Plugin discovery: every `.so` in the `UROM_PLUGIN_PATH` directories (separated by `;`,
//! scanned in order, files sorted by name) that exports `urom_plugin_get_version` and
//! `urom_plugin_get_iface`. Plugin `i` (in discovery order) gets id `1 << i`, so ids work
//! as the bit mask `doca_urom_worker_set_plugins` takes. Hosts only ever name plugins by
//! these ids: the daemon never opens a path that did not come from this scan.

use crate::urom::wire::PluginDesc;
use crate::urom::worker::plugin;
use std::path::{Path, PathBuf};

/// `DOCA_UROM_PLUGIN_NAME_MAX_LEN` (including the NUL).
pub(crate) const NAME_MAX_LEN: usize = 48;

/// A plugin the daemon can hand to workers.
#[derive(Debug, Clone)]
pub(crate) struct Plugin {
    /// What hosts see.
    pub desc: PluginDesc,
    /// Where it lives.
    pub path: PathBuf,
}

fn probe(path: &Path) -> Option<u64> {
    // SAFETY: loading runs the library's initialisers; only files from the operator's
    // UROM_PLUGIN_PATH are loaded.
    let lib = unsafe { libloading::Library::new(path) }.ok()?;
    plugin::probe(&lib).ok().map(|(v, _)| v)
}

/// Scans `path_list` (the value of `UROM_PLUGIN_PATH`).
pub(crate) fn discover(path_list: &str) -> Vec<Plugin> {
    let mut out: Vec<Plugin> = Vec::new();
    for dir in path_list.split(';').filter(|d| !d.is_empty()) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            sdk_warn!("urom_daemon", "plugin directory {dir} not readable");
            continue;
        };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            if f.extension().and_then(|e| e.to_str()) != Some("so") || out.len() >= 64 {
                continue;
            }
            let Some(name) = f.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
                continue;
            };
            if name.len() >= NAME_MAX_LEN || out.iter().any(|p| p.desc.name == name) {
                continue;
            }
            let Some(version) = probe(&f) else {
                sdk_warn!("urom_daemon", "{} is not a UROM plugin", f.display());
                continue;
            };
            let id = 1u64 << out.len();
            out.push(Plugin {
                desc: PluginDesc { id, version, name },
                path: f,
            });
        }
    }
    out
}
