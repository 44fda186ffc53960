//! Parsing a DOCA log line back into its parts.
//!
//! Backends print `[HH:MM:SS:micro][pid][DOCA][LEVEL][source:line][func] message`, the
//! `[DOCA]` tag only on the library's own (SDK) lines. Level tags are read in their short
//! and long spellings (`WARN`, `WRN`, `WARNING`, ...), so lines of NVIDIA's SDK and of the
//! software runtime parse alike; a line in no known shape is kept whole.

/// One line, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// Whether it is the library's own message (`[DOCA]`).
    pub sdk: bool,
    /// Its level (`Info` when the line names none).
    pub level: ::log::Level,
    /// The DOCA source (`""` when the line names none).
    pub source: &'a str,
    /// The line in the source file, when printed.
    pub line: Option<u32>,
    /// The message.
    pub msg: &'a str,
}

fn level_of(tag: &str) -> Option<::log::Level> {
    Some(match tag {
        "CRIT" | "CRT" | "CRITICAL" | "ERR" | "ERROR" => ::log::Level::Error,
        "WARN" | "WRN" | "WARNING" => ::log::Level::Warn,
        "INFO" | "INF" => ::log::Level::Info,
        "DBG" | "DEBUG" => ::log::Level::Debug,
        "TRC" | "TRACE" => ::log::Level::Trace,
        _ => return None,
    })
}

/// Parses `text` (one line, without its newline).
pub(crate) fn parse(text: &str) -> Line<'_> {
    let mut groups: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(inner) = rest.strip_prefix('[') {
        let Some(end) = inner.find(']') else { break };
        groups.push(&inner[..end]);
        rest = &inner[end + 1..];
    }
    let msg = rest.strip_prefix(' ').unwrap_or(rest);
    let Some(at) = groups.iter().position(|g| level_of(g).is_some()) else {
        return Line {
            sdk: false,
            level: ::log::Level::Info,
            source: "",
            line: None,
            msg: text,
        };
    };
    let sdk = groups[..at].contains(&"DOCA");
    let level = level_of(groups[at]).unwrap_or(::log::Level::Info);
    let (source, line) = match groups.get(at + 1) {
        Some(g) => match g.rsplit_once(':') {
            Some((s, n)) if n.parse::<u32>().is_ok() => (s, n.parse().ok()),
            _ => (*g, None),
        },
        None => ("", None),
    };
    Line {
        sdk,
        level,
        source,
        line,
        msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::log::Level;

    #[test]
    fn runtime_lines_parse() {
        let l = parse("[12:01:02:000123][4242][DOCA][WARN][dev:95][from_env] ignoring [x] y");
        assert_eq!(
            l,
            Line {
                sdk: true,
                level: Level::Warn,
                source: "dev",
                line: Some(95),
                msg: "ignoring [x] y",
            }
        );
        let l = parse("[12:01:02:000123][4242][ERR][MY_APP:7][main] boom");
        assert!(!l.sdk);
        assert_eq!(
            (l.level, l.source, l.line, l.msg),
            (Level::Error, "MY_APP", Some(7), "boom")
        );
    }

    #[test]
    fn sdk_spellings_and_odd_lines_parse() {
        let l = parse("[00:00:00:000001][1][DOCA][WRN][doca_dev.c:123][priv_open] slow");
        assert_eq!(
            (l.sdk, l.level, l.source, l.line),
            (true, Level::Warn, "doca_dev.c", Some(123))
        );
        assert_eq!(parse("[t][1][DOCA][CRIT][s][f] m").level, Level::Error);
        assert_eq!(parse("[t][1][DOCA][TRC][s][f] m").level, Level::Trace);
        assert_eq!(parse("[t][1][DBG][s][f] m").line, None);
        let odd = parse("no brackets at all");
        assert_eq!(
            (odd.level, odd.source, odd.msg),
            (Level::Info, "", "no brackets at all")
        );
        assert_eq!(parse("[unclosed").msg, "[unclosed");
    }
}
