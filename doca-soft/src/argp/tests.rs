//! Tests of the argument parser (instances, no global state) and one run of the C API.

use super::*;
use crate::capi::doca_argp::*;
use std::ffi::{c_char, CStr};

#[derive(Default, Debug)]
struct Cfg {
    nic: String,
    count: i32,
    flag: bool,
    ratio: f64,
    threads: i32,
}

unsafe extern "C" fn cb_nic(p: *mut c_void, c: *mut c_void) -> u32 {
    // SAFETY: STRING parameters get a char*; config is a Cfg.
    unsafe {
        (*c.cast::<Cfg>()).nic = CStr::from_ptr(p.cast()).to_str().unwrap().to_owned();
    }
    0
}
unsafe extern "C" fn cb_count(p: *mut c_void, c: *mut c_void) -> u32 {
    // SAFETY: INT parameters get an int*; config is a Cfg.
    unsafe { (*c.cast::<Cfg>()).count = *p.cast::<c_int>() };
    0
}
unsafe extern "C" fn cb_flag(p: *mut c_void, c: *mut c_void) -> u32 {
    // SAFETY: BOOLEAN parameters get a bool*; config is a Cfg.
    unsafe { (*c.cast::<Cfg>()).flag = *p.cast::<bool>() };
    0
}
unsafe extern "C" fn cb_ratio(p: *mut c_void, c: *mut c_void) -> u32 {
    // SAFETY: DOUBLE parameters get a double*; config is a Cfg.
    unsafe { (*c.cast::<Cfg>()).ratio = *p.cast::<f64>() };
    0
}
unsafe extern "C" fn cb_threads(p: *mut c_void, c: *mut c_void) -> u32 {
    // SAFETY: INT parameters get an int*; config is a Cfg.
    let v = unsafe { *p.cast::<c_int>() };
    if v % 32 != 0 {
        return DocaError::INVALID_VALUE.0;
    }
    // SAFETY: config is a Cfg.
    unsafe { (*c.cast::<Cfg>()).threads = v };
    0
}

fn param(
    short: Option<&str>,
    long: Option<&str>,
    kind: u32,
    cb: ParamCb,
    mandatory: bool,
) -> Param {
    Param {
        short_name: short.map(str::to_owned),
        long_name: long.map(str::to_owned),
        arguments: Some("<x>".into()),
        description: Some(format!("the {long:?} parameter")),
        cb,
        kind,
        mandatory,
        cli_only: false,
        multiple: false,
    }
}

fn parser() -> Argp {
    let mut a = Argp::new("prog");
    a.register(param(
        Some("n"),
        Some("nic"),
        TYPE_DEVICE,
        Some(cb_nic),
        true,
    ))
    .unwrap();
    let mut count = param(Some("c"), Some("count"), TYPE_INT, Some(cb_count), false);
    count.multiple = true;
    a.register(count).unwrap();
    a.register(param(
        Some("b"),
        Some("flag"),
        TYPE_BOOLEAN,
        Some(cb_flag),
        false,
    ))
    .unwrap();
    a.register(param(
        None,
        Some("ratio"),
        TYPE_DOUBLE,
        Some(cb_ratio),
        false,
    ))
    .unwrap();
    a.register(param(
        Some("t"),
        Some("threads"),
        TYPE_INT,
        Some(cb_threads),
        false,
    ))
    .unwrap();
    a
}

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn parses_every_type_and_runs_callbacks_in_order() {
    let a = parser();
    let o = a
        .parse(&args("-n 17:00.0 --count 5 -b --ratio=2.5 -t64 --count=-7"))
        .unwrap();
    let Outcome::Run {
        values,
        log_level,
        sdk_log_level,
    } = o
    else {
        panic!("expected Run")
    };
    assert_eq!((log_level, sdk_log_level), (None, None));
    assert_eq!(
        values,
        vec![
            (0, Value::Str("17:00.0".into())),
            (1, Value::Int(5)),
            (2, Value::Bool(true)),
            (3, Value::Double(2.5)),
            (4, Value::Int(64)),
            (1, Value::Int(-7)),
        ]
    );
    let mut cfg = Cfg::default();
    // SAFETY: the callbacks expect a Cfg.
    unsafe { a.run_callbacks(&values, (&mut cfg as *mut Cfg).cast()) }.unwrap();
    assert_eq!(cfg.nic, "17:00.0");
    assert_eq!(cfg.count, -7, "the later value wins");
    assert!(cfg.flag);
    assert_eq!(cfg.ratio, 2.5);
    assert_eq!(cfg.threads, 64);
}

unsafe extern "C" fn validate(c: *mut c_void) -> u32 {
    // SAFETY: config is a Cfg.
    if unsafe { (*c.cast::<Cfg>()).count } > 100 {
        DocaError::BAD_CONFIG.0
    } else {
        0
    }
}

#[test]
fn validation_callback_runs_after_parameters() {
    let mut a = parser();
    a.validation_cb = Some(validate);
    let mut cfg = Cfg::default();
    let Outcome::Run { values, .. } = a.parse(&args("-n x -c 101")).unwrap() else {
        panic!("expected Run")
    };
    assert_eq!(
        // SAFETY: the callbacks expect a Cfg.
        unsafe { a.run_callbacks(&values, (&mut cfg as *mut Cfg).cast()) },
        Err(DocaError::BAD_CONFIG)
    );
    assert_eq!(cfg.count, 101, "parameter callbacks ran first");
    let Outcome::Run { values, .. } = a.parse(&args("-n x -c 100")).unwrap() else {
        panic!("expected Run")
    };
    assert_eq!(
        // SAFETY: the callbacks expect a Cfg.
        unsafe { a.run_callbacks(&values, (&mut cfg as *mut Cfg).cast()) },
        Ok(())
    );
}

#[test]
fn callback_errors_are_returned() {
    let a = parser();
    let Outcome::Run { values, .. } = a.parse(&args("-n x -t 33")).unwrap() else {
        panic!("expected Run")
    };
    let mut cfg = Cfg::default();
    assert_eq!(
        // SAFETY: the callbacks expect a Cfg.
        unsafe { a.run_callbacks(&values, (&mut cfg as *mut Cfg).cast()) },
        Err(DocaError::INVALID_VALUE)
    );
}

#[test]
fn errors_for_missing_unknown_and_malformed() {
    let a = parser();
    let e = a.parse(&args("-c 3")).unwrap_err();
    assert!(e.contains("missing mandatory parameter --nic"), "{e}");
    let e = a.parse(&args("-n x --bogus 1")).unwrap_err();
    assert!(e.contains("unknown flag"), "{e}");
    let e = a.parse(&args("-n x -c abc")).unwrap_err();
    assert!(e.contains("integer"), "{e}");
    let e = a.parse(&args("-n x --ratio nan-ish")).unwrap_err();
    assert!(e.contains("number"), "{e}");
    let e = a.parse(&args("-n")).unwrap_err();
    assert!(e.contains("needs a value"), "{e}");
    let e = a.parse(&args("-n x stray")).unwrap_err();
    assert!(e.contains("unexpected argument"), "{e}");
    let e = a.parse(&args("-n x --flag=maybe")).unwrap_err();
    assert!(e.contains("true or false"), "{e}");
    let e = a.parse(&args("-n x -n y")).unwrap_err();
    assert!(e.contains("--nic given more than once"), "{e}");
    let e = a.parse(&args("-n x -bx")).unwrap_err();
    assert!(
        e.contains("unknown flag"),
        "booleans take no attached value: {e}"
    );
}

#[test]
fn help_version_and_log_levels() {
    let a = parser();
    let Outcome::Help(u) = a.parse(&args("-c 1 --help")).unwrap() else {
        panic!("expected Help")
    };
    assert!(u.starts_with("Usage: prog"));
    assert!(u.contains("-n, --nic <x>"), "{u}");
    assert!(u.contains("(mandatory)"));
    assert!(u.contains("(repeatable)"));
    assert!(u.contains("--sdk-log-level"));
    assert!(matches!(a.parse(&args("-h")).unwrap(), Outcome::Help(_)));
    assert!(matches!(a.parse(&args("-v")).unwrap(), Outcome::Version(v) if v.contains("3.3")));
    let Outcome::Run {
        log_level,
        sdk_log_level,
        ..
    } = a.parse(&args("-l 60 -n x --sdk-log-level=40")).unwrap()
    else {
        panic!("expected Run")
    };
    assert_eq!((log_level, sdk_log_level), (Some(60), Some(40)));
    assert!(a
        .parse(&args("-n x -l 55"))
        .unwrap_err()
        .contains("log level"));
}

#[test]
fn registration_rules() {
    let mut a = parser();
    let dup = param(Some("n"), None, TYPE_STRING, Some(cb_nic), false);
    assert_eq!(a.register(dup), Err(DocaError::INVALID_VALUE));
    let general = param(Some("h"), Some("hh"), TYPE_STRING, Some(cb_nic), false);
    assert_eq!(a.register(general), Err(DocaError::INVALID_VALUE));
    let no_cb = param(Some("z"), None, TYPE_STRING, None, false);
    assert_eq!(a.register(no_cb), Err(DocaError::INVALID_VALUE));
    let no_type = param(Some("z"), None, TYPE_UNKNOWN, Some(cb_nic), false);
    assert_eq!(a.register(no_type), Err(DocaError::INVALID_VALUE));
    let no_name = param(None, None, TYPE_STRING, Some(cb_nic), false);
    assert_eq!(a.register(no_name), Err(DocaError::INVALID_VALUE));
    assert_eq!(
        a.register(param(Some("z"), None, TYPE_STRING, Some(cb_nic), false)),
        Ok(())
    );
}

#[test]
fn c_api_round_trip() {
    let mut cfg = Cfg::default();
    let mut p: *mut Param = std::ptr::null_mut();
    let argv_s = ["prog", "--nic", "lo", "-c", "12"].map(|s| CString::new(s).unwrap());
    let mut argv: Vec<*mut c_char> = argv_s.iter().map(|s| s.as_ptr() as *mut c_char).collect();
    // SAFETY: valid strings, out-pointers and argv; the only test touching the global parser.
    unsafe {
        assert_eq!(
            doca_argp_register_param(std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_argp_init(c"prog".as_ptr(), (&mut cfg as *mut Cfg).cast()),
            0
        );
        assert_eq!(
            doca_argp_init(c"prog".as_ptr(), std::ptr::null_mut()),
            DocaError::BAD_STATE.0
        );
        for (s, l, t, cb) in [
            (
                c"n",
                c"nic",
                TYPE_STRING,
                cb_nic as unsafe extern "C" fn(_, _) -> _,
            ),
            (c"c", c"count", TYPE_INT, cb_count),
        ] {
            assert_eq!(doca_argp_param_create(&mut p), 0);
            doca_argp_param_set_short_name(p, s.as_ptr());
            doca_argp_param_set_long_name(p, l.as_ptr());
            doca_argp_param_set_arguments(p, c"<v>".as_ptr());
            doca_argp_param_set_description(p, c"a value".as_ptr());
            doca_argp_param_set_callback(p, Some(cb));
            doca_argp_param_set_type(p, t);
            doca_argp_param_set_mandatory(p);
            assert_eq!(doca_argp_register_param(p), 0);
        }
        doca_argp_param_set_type(std::ptr::null_mut(), TYPE_INT); // logged, ignored

        // Misuse of a registered parameter is an error, not a double free.
        assert_eq!(doca_argp_register_param(p), DocaError::BAD_STATE.0);
        assert_eq!(doca_argp_param_destroy(p), DocaError::BAD_STATE.0);
        doca_argp_param_set_type(p, TYPE_BOOLEAN); // logged, ignored: argp owns it
                                                   // A destroyed parameter and a pointer that never was one are not parameters.
        let mut q: *mut Param = std::ptr::null_mut();
        assert_eq!(doca_argp_param_create(&mut q), 0);
        assert_eq!(doca_argp_param_destroy(q), 0);
        assert_eq!(doca_argp_param_destroy(q), DocaError::INVALID_VALUE.0);
        let bogus = std::ptr::dangling_mut::<Param>();
        assert_eq!(doca_argp_register_param(bogus), DocaError::INVALID_VALUE.0);
        assert_eq!(doca_argp_param_destroy(bogus), DocaError::INVALID_VALUE.0);
        assert_eq!(doca_argp_start(argv.len() as c_int, argv.as_mut_ptr()), 0);
        assert_eq!(cfg.nic, "lo");
        assert_eq!(cfg.count, 12);
        assert_eq!(
            doca_argp_start(3, argv.as_mut_ptr()),
            DocaError::INVALID_VALUE.0,
            "no -c"
        );
        assert_eq!(doca_argp_destroy(), 0);
        // The parser freed its parameters: p is no parameter any more.
        assert_eq!(doca_argp_param_destroy(p), DocaError::INVALID_VALUE.0);
        assert_eq!(doca_argp_destroy(), DocaError::BAD_STATE.0);
        assert_eq!(
            doca_argp_start(1, argv.as_mut_ptr()),
            DocaError::BAD_STATE.0
        );
    }
}
