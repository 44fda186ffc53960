//! The samples' command-line parser (examples/common/cli.rs) on valid input; invalid
//! input exits the process, which tests/pktgen.rs and tests/samples_e2e.rs check through
//! the example binaries.

#[path = "../examples/common/cli.rs"]
mod cli;

use cli::{Cli, Opt};

const OPTS: &[Opt] = &[
    Opt {
        short: 'g',
        long: "gpu",
        takes_value: true,
        help: "",
    },
    Opt {
        short: 'n',
        long: "nic",
        takes_value: true,
        help: "",
    },
    Opt {
        short: 'e',
        long: "exec-scope",
        takes_value: true,
        help: "",
    },
    Opt {
        short: 'v',
        long: "verbose",
        takes_value: false,
        help: "",
    },
];

fn parse(args: &[&str]) -> Cli {
    Cli::parse_from("t", "test", OPTS, args.iter().map(|s| s.to_string()))
}

#[test]
fn short_long_and_inline_forms_give_the_same_values() {
    for args in [
        &["-g", "17:00.0", "-n", "lo", "-e", "1"][..],
        &["--gpu", "17:00.0", "--nic", "lo", "--exec-scope", "1"],
        &["--gpu=17:00.0", "--nic=lo", "--exec-scope=1"],
        &["-g17:00.0", "-nlo", "-e1"],
    ] {
        let c = parse(args);
        assert_eq!(
            c.get::<String>("gpu").as_deref(),
            Some("17:00.0"),
            "{args:?}"
        );
        assert_eq!(c.require::<String>("nic"), "lo", "{args:?}");
        assert_eq!(c.get::<u32>("exec-scope"), Some(1), "{args:?}");
        assert!(!c.flag("verbose"));
    }
}

#[test]
fn flags_defaults_and_positionals() {
    let c = parse(&["send", "-v", "extra"]);
    assert!(c.flag("verbose"));
    assert_eq!(c.get_or::<u32>("exec-scope", 2), 2);
    assert_eq!(c.get::<String>("gpu"), None);
    assert_eq!(c.positional(), &["send".to_string(), "extra".to_string()]);
}
