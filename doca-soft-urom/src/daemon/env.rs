//! What a host may put in a worker's environment (`doca_urom_worker_set_env`).
//!
//! A worker runs the plugins of `UROM_PLUGIN_PATH` and nothing else; an environment variable
//! can change that (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `UCX_MODULE_DIR`, ...), so the daemon
//! passes a host's entries only when the operator's allowlist (`--worker-env-allow`) names
//! them, and never a `LD_*` one. The default allows UCX tuning (transports, devices, sizes,
//! protocol thresholds, logging level) and doca-soft's own worker knobs; not UCX variables
//! that load code, write files or run programs (`UCX_MODULE_DIR`, `UCX_LOG_FILE`,
//! `UCX_GDB_COMMAND`, ...).

/// The default `--worker-env-allow`.
pub(crate) const DEFAULT_ALLOW: &str = "UCX_TLS,UCX_NET_DEVICES,UCX_LOG_LEVEL,\
UCX_WARN_UNUSED_ENV_VARS,UCX_*_THRESH,UCX_RNDV_*,UCX_ZCOPY_*,UCX_PROTO_ENABLE,UCX_PROTO_INFO,\
UCX_MAX_EAGER_LANES,UCX_MAX_RNDV_LANES,UCX_TCP_*,UCX_IB_*,UCX_RC_*,UCX_UD_*,UCX_DC_*,\
UCX_KEEPALIVE_*,UCX_SOCKADDR_TLS_PRIORITY,UCX_USE_MT_MUTEX,DOCA_SOFT_UROM_*";

/// One allowlist entry: a name, or a pattern with one `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    prefix: String,
    /// `None`: an exact name (`prefix`).
    suffix: Option<String>,
}

impl Pattern {
    fn matches(&self, name: &str) -> bool {
        match &self.suffix {
            None => name == self.prefix,
            Some(s) => {
                name.len() >= self.prefix.len() + s.len()
                    && name.starts_with(&self.prefix)
                    && name.ends_with(s.as_str())
            }
        }
    }
}

/// The worker environment allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvAllow {
    patterns: Vec<Pattern>,
    text: String,
}

impl EnvAllow {
    /// Parses a comma-separated list (`--worker-env-allow`); refuses patterns that could
    /// allow `LD_*`, empty ones, and more than one `*` per pattern.
    pub(crate) fn parse(text: &str) -> Result<EnvAllow, String> {
        let mut patterns = Vec::new();
        for p in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if p.matches('*').count() > 1 {
                return Err(format!("{p:?}: one '*' per pattern"));
            }
            if !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
            {
                return Err(format!("{p:?}: names are letters, digits and '_'"));
            }
            let pat = match p.split_once('*') {
                Some((a, b)) => Pattern {
                    prefix: a.to_owned(),
                    suffix: Some(b.to_owned()),
                },
                None => Pattern {
                    prefix: p.to_owned(),
                    suffix: None,
                },
            };
            // `LD_*` is never allowed (whatever the patterns, see `allows`); a pattern that
            // names them, or allows everything, is a mistake worth stopping at.
            let names_ld = pat.prefix.starts_with("LD_")
                || (pat.suffix.is_some()
                    && !pat.prefix.is_empty()
                    && "LD_".starts_with(&pat.prefix));
            if names_ld || (pat.prefix.is_empty() && pat.suffix.as_deref() == Some("")) {
                return Err(format!(
                    "{p:?} would allow LD_* variables (never passed to workers) or everything"
                ));
            }
            patterns.push(pat);
        }
        Ok(EnvAllow {
            patterns,
            text: text.to_owned(),
        })
    }

    /// Whether a host may set `name`.
    pub(crate) fn allows(&self, name: &str) -> bool {
        !name.starts_with("LD_") && self.patterns.iter().any(|p| p.matches(name))
    }

    /// The list as given.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_allows_ucx_tuning_and_our_knobs_only() {
        let a = EnvAllow::parse(DEFAULT_ALLOW).unwrap();
        for ok in [
            "UCX_TLS",
            "UCX_LOG_LEVEL",
            "UCX_RNDV_THRESH",
            "UCX_ZCOPY_THRESH",
            "UCX_TCP_CM_REUSEADDR",
            "DOCA_SOFT_UROM_SPIN_US",
        ] {
            assert!(a.allows(ok), "{ok}");
        }
        for bad in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "UCX_MODULE_DIR",
            "UCX_MODULES",
            "UCX_LOG_FILE",
            "UCX_GDB_COMMAND",
            "UCX_ERROR_MAIL_TO",
            "UROM_PLUGIN_PATH",
            "DOCA_UROM_WORKER_TOKEN",
            "PATH",
            "X_TEST",
        ] {
            assert!(!a.allows(bad), "{bad}");
        }
    }

    #[test]
    fn patterns_match_and_ld_is_refused_in_any_form() {
        let a = EnvAllow::parse("A,B_*,*_C,D*E").unwrap();
        assert!(a.allows("A") && !a.allows("AB"));
        assert!(a.allows("B_X") && a.allows("B_"));
        assert!(a.allows("X_C") && !a.allows("X_CD"));
        assert!(a.allows("DxE") && a.allows("DE") && !a.allows("D"));
        for bad in ["LD_PRELOAD", "LD_*", "*", "L*", "LD*", "A**", "A B"] {
            assert!(EnvAllow::parse(bad).is_err(), "{bad}");
        }
        let any_suffix = EnvAllow::parse("*_PATH,*PRELOAD").unwrap();
        assert!(!any_suffix.allows("LD_PRELOAD"), "LD_ never passes");
        assert!(!any_suffix.allows("LD_LIBRARY_PATH"), "LD_ never passes");
        assert!(any_suffix.allows("MY_PATH"));
    }
}
