//! The own-kernel binary end to end. Without a CUDA driver (CI) it must say why it does not
//! run and exit 0; with one (a GPU machine; root for the software runtime's AF_PACKET port)
//! `--probe` must load and run the fatbin, and the kernel must count exactly the UDP frames
//! this test sends to its port on `lo`. (Named `gpu_*` so that scripts/pack-gpu packs it;
//! on a GPU machine the binary comes from the packed examples, `DOCA_RS_EXAMPLES`.)

use doca_test_support::{cuda_driver_present, require_cuda, require_raw_sockets, skip};
use doca_test_support::{wait_for_file, PATIENCE};
use std::net::UdpSocket;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The own-kernel binary: in `DOCA_RS_EXAMPLES` when set (packed for a GPU machine), else
/// the one cargo built with this test.
fn bin() -> std::path::PathBuf {
    std::env::var_os("DOCA_RS_EXAMPLES")
        .map(|d| std::path::PathBuf::from(d).join("own-kernel"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_own-kernel").into())
}

use doca_test_support::process::describe as text;

/// The `key=value` pairs of the last line of `out` starting with `prefix`.
fn pairs(out: &Output, prefix: &str) -> std::collections::HashMap<String, String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .rfind(|l| l.starts_with(prefix))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn without_a_driver_it_says_why_and_exits_0() {
    if cuda_driver_present() {
        skip("a CUDA driver is present: the GPU tests of this file run instead");
        return;
    }
    let out = Command::new(bin())
        .args(["-d", "1"])
        .output()
        .expect("run own-kernel");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("skipped: own-kernel: no CUDA driver on this machine"),
        "{}",
        text(&out)
    );
}

#[test]
fn bad_flags_exit_2_and_help_exits_0() {
    // --module only goes with --probe.
    for args in [
        &["-d", "0"][..],
        &["--bogus"],
        &["-p", "70000"],
        &["--module", "k.fatbin"],
    ] {
        let out = Command::new(bin()).args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
    let out = Command::new(bin()).arg("--help").output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--probe"));
}

#[test]
fn probe_loads_and_runs_the_fatbin() {
    if !require_cuda("own-kernel --probe") {
        return;
    }
    let out = Command::new(bin()).arg("--probe").output().expect("run");
    // Printed for the record: the driver version and GPU this ran on.
    println!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "{}", text(&out));
    let p = pairs(&out, "probe ");
    assert_eq!(
        p.get("load").map(String::as_str),
        Some("ok"),
        "{}",
        text(&out)
    );
    assert_eq!(
        p.get("launch").map(String::as_str),
        Some("ok"),
        "{}",
        text(&out)
    );
}

#[test]
fn probe_names_a_module_it_cannot_load_and_the_step_that_failed() {
    if !require_cuda("own-kernel --probe --module") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // `own-kernel --probe --module <a file holding text>`, which must exit 1.
    let probe_file = |name: &str, text_of_file: &str| -> Output {
        let path = t.path().join(name);
        std::fs::write(&path, text_of_file).unwrap();
        let out = Command::new(bin())
            .args(["--probe", "--module"])
            .arg(&path)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out));
        out
    };
    // Text without a .version line: refused before the driver sees it.
    let out = probe_file("empty.ptx", ".target sm_80\n");
    assert!(
        text(&out).contains("without a .version line"),
        "{}",
        text(&out)
    );
    // PTX of an ISA no driver knows: the driver refuses it at load.
    let out = probe_file(
        "future.ptx",
        ".version 99.0\n.target sm_80\n.address_size 64\n\
         .visible .entry own_kernel_probe(.param .u64 p) { ret; }\n",
    );
    let p = pairs(&out, "probe ");
    assert_eq!(
        p.get("kind").map(String::as_str),
        Some("ptx"),
        "{}",
        text(&out)
    );
    assert_eq!(p.get("ptx_isa").map(String::as_str), Some("99.0"));
    assert_eq!(
        p.get("load").map(String::as_str),
        Some("failed"),
        "{}",
        text(&out)
    );
}

#[test]
fn the_kernel_counts_exactly_the_frames_sent_to_its_port() {
    if !require_cuda("own-kernel receiving on lo") || !require_raw_sockets() {
        return;
    }
    const PORT: u16 = 47_123;
    const FRAMES: u64 = 300;
    let dir = std::env::temp_dir().join(format!("own-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ready = dir.join("ready");
    let _ = std::fs::remove_file(&ready);
    let rx = Command::new(bin())
        .args([
            "-n",
            "lo",
            "-p",
            &PORT.to_string(),
            "-c",
            &FRAMES.to_string(),
        ])
        .args(["-d", "60", "-R"])
        .arg(&ready)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn own-kernel");
    wait_for_file(&ready, PATIENCE);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..FRAMES {
        tx.send_to(&[i as u8; 100], ("127.0.0.1", PORT)).unwrap();
        if i % 32 == 31 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let out = rx.wait_with_output().expect("own-kernel output");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", text(&out));
    let s = pairs(&out, "summary ");
    assert_eq!(
        s.get("stop").map(String::as_str),
        Some("count"),
        "{}",
        text(&out)
    );
    assert_eq!(
        s.get("port_frames").and_then(|v| v.parse::<u64>().ok()),
        Some(FRAMES),
        "{}",
        text(&out)
    );
    assert_eq!(
        s.get("errors").map(String::as_str),
        Some("0"),
        "{}",
        text(&out)
    );
}
