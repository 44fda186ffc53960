#!/usr/bin/env python3
"""The `verbs` target of scripts/bench: the nine GPU verbs samples as server + client
process pairs on one GPU, next to ucx_perftest with CUDA memory measured in the same run
(issue 13's figures). One JSON line per figure on stdout (the format of
benches/support/report.rs); progress on stderr.

  scripts/bench-verbs.py --bin DIR [--quick] [--budget S] [--pair-timeout S]
                         [--sizes 8,64,...] [--samples write_bw,...]
  scripts/bench-verbs.py --self-test     # parsers, figures, tables and plot on canned output
  scripts/bench-verbs.py --parse FILE    # a sample's table as this script reads it: the
                                         # kind, then "size iterations value" per row
                                         # (FILE - for stdin; tests/verbs_samples.rs
                                         # checks it against real output)

Figures:
  verbs/<sample>/<size>  bandwidth samples: the client's "BW average[MB/sec]" (MiB/s);
                         latency samples: the client's "Unidirectional[usec]" (half a
                         round trip).
  Baselines, ucx_perftest -m cuda between two processes on this machine, same size:
    put bandwidth (ucp_put_bw; write_bw, put_bw, put_signal_bw, put_counter_bw and
    twosided_bw), get bandwidth (ucp_get; get_bw): the overall bandwidth (MB/s = 2^20 B/s);
    put latency (ucp_put_lat; the latency samples): the one-way median.
  Targets (issue 13, as issue 12): bandwidth ratio >= 0.8 from 64 KiB on; latency
  <= 1.5 x perftest + the proxy's poll interval (DOCA_SOFT_NIC_SLEEP_US, default 100 us:
  the longest sleep of the soft NIC's idle loop, see doca-soft-nic/src/rdma/engine/mod.rs).

Runs: the sizes up to 4 KiB in one pair per sample (the samples' defaults: 512 threads,
2048 iterations), every larger size in a pair of its own with 64 threads and fewer
iterations (ITERS_BY_SIZE), so each pair moves at most about 1 GiB per launch. Each pair is
killed after --pair-timeout seconds (default 40): its figures without a table row are
reported as STALL with the last lines of both processes; a pair that fails prints no row
and its figures are misses saying why. A pair's bound is cut to what is left of
--budget (scripts/bench passes its bound for the target, less 20 s); no pair starts with
less than 15 s left, its figures say skipped. Size groups run outside, samples inside.
Data checks: the samples validate their data (server or client line); a figure whose
validation line is missing has status miss and says so.

Without a CUDA driver every figure is skipped with the reason.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SIZES = [8, 64, 512, 4096, 65536, 1 << 20, 4 << 20]
QUICK_SIZES = [8, 4096, 65536, 4 << 20]
SMALL_MAX = 4096
# Iterations per launch of the larger sizes (bandwidth, latency), and their threads.
ITERS_BY_SIZE = {65536: (4096, 1024), 1 << 20: (1024, 128), 4 << 20: (256, 64)}
LARGE_THREADS = 64
SMALL_ITERS, SMALL_THREADS, SMALL_LAT_ITERS = 2048, 512, 2048
QUICK_DIV = 4

BW_TARGET = 0.8
BW_TARGET_FROM = 65536

VALID_BW_CLIENT = "Validation successful! Data received correctly from client"
VALID_SIGNAL = "Data validation successful! Data received correctly from client"

# name: (kind, has -t, server runs until SIGTERM, (who validates, line), perftest test)
SAMPLES = {
    "write_bw": ("bw", True, True, ("server", VALID_BW_CLIENT), "ucp_put_bw"),
    "put_bw": ("bw", True, True, ("server", VALID_BW_CLIENT), "ucp_put_bw"),
    "get_bw": ("bw", True, True,
               ("client", "Validation successful! Data received correctly from server"), "ucp_get"),
    "put_signal_bw": ("bw", True, True, ("server", VALID_SIGNAL), "ucp_put_bw"),
    "put_counter_bw": ("bw", True, True, ("server", VALID_SIGNAL), "ucp_put_bw"),
    "twosided_bw": ("bw", True, False, ("server", VALID_SIGNAL), "ucp_put_bw"),
    "write_lat": ("lat", False, False,
                  ("both", "Validation successful! The last round trip of every size arrived"),
                  "ucp_put_lat"),
    "put_signal_lat": ("lat", False, False,
                       ("both", "Validation successful! Every round trip signalled its flag"),
                       "ucp_put_lat"),
    "put_counter_lat": ("lat", False, False,
                        ("both", "Validation successful! Every round trip signalled its flag"),
                        "ucp_put_lat"),
}
# Where the data goes (the samples' memory: facts section 4.2).
PATHS = {"write_bw": "client GPU -> server host memory",
         "put_bw": "client GPU -> server host memory",
         "get_bw": "server host memory -> client GPU (reads)",
         "put_signal_bw": "client GPU -> server host memory, + a signal per put",
         "put_counter_bw": "client GPU -> server host memory, + a counter per put",
         "twosided_bw": "client GPU -> server GPU, send/receive"}
PERFTEST_NAMES = {
    "ucp_put_bw": ("ucx/perftest-put-bw-cuda", "MB/s", "overall bandwidth"),
    "ucp_get": ("ucx/perftest-get-bw-cuda", "MB/s", "overall bandwidth"),
    "ucp_put_lat": ("ucx/perftest-put-lat-cuda", "us", "one-way median"),
}


QUIET = []


def log(msg):
    if QUIET:
        return
    sys.stderr.write("verbs: %s\n" % msg)
    sys.stderr.flush()


# ---- parsing -------------------------------------------------------------------------

_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+([-+0-9.eE]+|nan|NaN|inf)\s+([-+0-9.eE]+|nan|NaN|inf)\s+"
                  r"([-+0-9.eE]+|nan|NaN|inf)\s*$")


def parse_table(text):
    """The result table of a sample's stdout: its kind ('bw', 'lat' or None) and rows
    {size: (iterations, first value, second value, kernel time)}. Bandwidth rows: MB/s,
    Mpps, ms; latency rows: unidirectional us, bidirectional us, total us."""
    kind, rows = None, {}
    for line in text.splitlines():
        if "BW average[MB/sec]" in line:
            kind = "bw"
        elif "Unidirectional[usec]" in line:
            kind = "lat"
        m = _ROW.match(line)
        if m and kind:
            rows[int(m.group(1))] = (int(m.group(2)), float(m.group(3)), float(m.group(4)),
                                     float(m.group(5)))
    return kind, rows


def parse_perftest(text):
    """The `Final:` columns of ucx_perftest's output: iterations, typical (50%ile) and
    average and overall latency (us), average and overall bandwidth (MB/s), average and
    overall message rate; None when there is no complete Final line."""
    for line in reversed(text.splitlines()):
        s = line.strip()
        if s.startswith("Final:"):
            try:
                cols = [float(c) for c in s.split()[1:]]
            except ValueError:
                return None
            return cols if len(cols) >= 6 else None
    return None


# ---- figures -------------------------------------------------------------------------

def figure(name, value, unit, status, notes, **extra):
    f = {"figure": name, "value": value, "unit": unit, "baseline": None,
         "baseline_value": None, "target": None, "ratio": None, "status": status,
         "notes": notes}
    f.update(extra)
    return f


def poll_interval_us():
    try:
        return float(os.environ.get("DOCA_SOFT_NIC_SLEEP_US", "100"))
    except ValueError:
        return 100.0


def sample_figure(sample, size, value, notes, base, validated):
    """The figure of `sample` at `size` with `value` (None: not measured; notes say why),
    compared with `base` = (name, value) or (None, why)."""
    kind, _, _, _, test = SAMPLES[sample]
    unit = "MB/s" if kind == "bw" else "us"
    name = "verbs/%s/%d" % (sample, size)
    extra = {"sample": sample, "size": size, "kind": kind}
    if value is None:
        return figure(name, None, unit, "skipped", notes, **extra)
    f = figure(name, value, unit, "info", notes, **extra)
    bname, bval = base
    if bname is None:
        f["notes"] += "; no baseline: %s" % bval
    else:
        f["baseline"], f["baseline_value"] = bname, bval
        f["ratio"] = value / bval if bval else None
        if kind == "bw":
            if size >= BW_TARGET_FROM:
                f["target"] = "ratio >= %.1f" % BW_TARGET
                f["status"] = "pass" if (f["ratio"] or 0) >= BW_TARGET else "miss"
        else:
            p = poll_interval_us()
            f["target"] = "<= 1.5 x baseline + %g us" % p
            f["status"] = "pass" if value <= 1.5 * bval + p else "miss"
    if not validated:
        f["status"] = "miss"
        f["notes"] += "; DATA CHECK FAILED: %s" % validated.reason
    return f


class Validation:
    """Whether a pair's validation line was printed (falsy with a reason when not)."""

    def __init__(self, ok, reason=""):
        self.ok, self.reason = ok, reason

    def __bool__(self):
        return self.ok


def validated(sample, server_out, client_out):
    who, line = SAMPLES[sample][3]
    outs = {"server": [server_out], "client": [client_out], "both": [server_out, client_out]}
    for o in outs[who]:
        if line not in o:
            return Validation(False, "no %r from %s" % (
                line, "server and client" if who == "both" else "the " + who))
    return Validation(True)


# ---- running -------------------------------------------------------------------------

def gpu_reason():
    """None when a CUDA driver with a device is present, else why not (the self-test's
    stand-in samples need none: BENCH_VERBS_FAKE_GPU=1)."""
    if os.environ.get("BENCH_VERBS_FAKE_GPU") == "1":
        return None
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "needs GPU: skipped (no CUDA driver on this machine)"
    if cuda.cuInit(0) != 0:
        return "needs GPU: skipped (cuInit failed)"
    n = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value < 1:
        return "needs GPU: skipped (no CUDA device)"
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Proc:
    """A child in a process group of its own, output into files."""

    def __init__(self, argv, env=None):
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(argv, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL,
                                  env=env, start_new_session=True)

    def wait(self, deadline):
        left = max(0.0, deadline - time.monotonic())
        try:
            return self.p.wait(timeout=left)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.p.wait()

    def text(self):
        out = []
        for f in (self.out, self.err):
            f.seek(0)
            out.append(f.read().decode("utf-8", "replace"))
        return out


def tail(text, n=3):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return " / ".join(lines[-n:]) if lines else "(nothing)"


def run_pair(binary, sample, sizes, iters, threads, opts, bound):
    """Runs one server + client pair of `sample` for `sizes`; returns (rows, validation,
    stall note or None, seconds)."""
    kind, has_t, signalled, _, _ = SAMPLES[sample]
    port = str(free_port())
    argv = [binary, "-d", opts.device, "-g", opts.gpu, "--oob-port", port,
            "--sizes", ",".join(map(str, sizes)), "-i", str(iters)]
    if has_t:
        argv += ["-t", str(threads)]
    t0 = time.monotonic()
    deadline = t0 + bound
    server = Proc(argv)
    client = Proc(argv + ["-c", "127.0.0.1"])
    stall = None
    rc = client.wait(deadline)
    if rc is None:
        stall = "client still running after %d s" % bound
    elif rc == 0 and signalled:
        # The bandwidth servers validate once told to stop (SIGINT/SIGTERM).
        server.p.send_signal(signal.SIGTERM)
    if rc is not None and rc != 0:
        # A failed client leaves the server waiting for it: a short grace, then killed.
        deadline = min(deadline, time.monotonic() + 5)
    src = server.wait(deadline)
    if stall is None and src is None and rc == 0:
        stall = "server still running after %d s" % bound
    client.kill()
    server.kill()
    (cout, cerr), (sout, serr) = client.text(), server.text()
    _, rows = parse_table(cout)
    v = validated(sample, sout, cout)
    if rc not in (0, None):
        v = Validation(False, "client exited %s: %s" % (rc, tail(cout + cerr)))
    elif src not in (0, None) and v:
        v = Validation(False, "server exited %s: %s" % (src, tail(sout + serr)))
    if stall:
        stall += "; client: %s; server: %s" % (tail(cout + cerr), tail(sout + serr))
    if opts.log_dir and (stall or not v):
        # The whole output of a pair that went wrong, for whoever debugs it.
        os.makedirs(opts.log_dir, exist_ok=True)
        stem = os.path.join(opts.log_dir, "%s-%s" % (sample, "-".join(map(str, sizes))))
        for suffix, text in ((".client.out", cout), (".client.err", cerr),
                             (".server.out", sout), (".server.err", serr)):
            with open(stem + suffix, "w") as fh:
                fh.write(text)
        note = "; full output in %s.{client,server}.{out,err}" % stem
        if stall:
            stall += note
        else:
            v.reason += note
    return rows, v, stall, time.monotonic() - t0


def perftest_run(exe, test, size, iters, bound):
    """One ucx_perftest run with CUDA memory on both sides: (Final columns, None) or
    (None, why)."""
    env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n")
    port = str(free_port())
    warm = str(max(1, iters // 10))
    deadline = time.monotonic() + bound
    server = Proc([exe, "-p", port, "-m", "cuda"], env)
    why = "client never connected"
    try:
        # The client gives up at once while the server is not listening yet: a few tries.
        for _ in range(25):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.2)
            client = Proc([exe, "127.0.0.1", "-p", port, "-t", test, "-m", "cuda", "-s", str(size),
                           "-n", str(iters), "-w", warm], env)
            rc = client.wait(deadline)
            client.kill()
            out, err = client.text()
            cols = parse_perftest(out + err)
            if cols:
                return cols, None
            why = "no Final line (exit %s): %s" % (rc, tail(out + err, 1))
            if rc is None:
                why = "ran past %d s" % bound
                break
    finally:
        server.kill()
    return None, why


def perftest_iters(test, size, quick):
    n = (256 << 20) // size if test != "ucp_put_lat" else (16 << 20) // size
    n = max(100, min(n, 20000 if test != "ucp_put_lat" else 5000))
    return max(100, n // QUICK_DIV) if quick else n


def find_perftest(opts):
    for c in (opts.perftest, os.environ.get("UCX_PERFTEST"),
              os.path.join(opts.bin or "", "ucx_perftest"), shutil.which("ucx_perftest")):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def plan(sizes, quick):
    """The pairs of one sample: [(sizes, bw iterations, latency iterations, threads)]."""
    small = [s for s in sizes if s <= SMALL_MAX]
    pairs = []
    div = QUICK_DIV if quick else 1
    if small:
        pairs.append((small, SMALL_ITERS // div, SMALL_LAT_ITERS // div, SMALL_THREADS))
    for s in sizes:
        if s > SMALL_MAX:
            bw, lat = ITERS_BY_SIZE.get(s, (max(LARGE_THREADS, (256 << 20) // s), 64))
            bw = max(LARGE_THREADS, bw // div)
            bw -= bw % LARGE_THREADS
            pairs.append(([s], bw, max(16, lat // div), LARGE_THREADS))
    return pairs


def emit(f):
    sys.stdout.write(json.dumps(f) + "\n")
    sys.stdout.flush()


def run(opts):
    t_start = time.monotonic()
    sizes = opts.sizes or (QUICK_SIZES if opts.quick else SIZES)
    samples = opts.samples or list(SAMPLES)
    for s in samples:
        if s not in SAMPLES:
            sys.exit("unknown sample %r (one of %s)" % (s, ", ".join(SAMPLES)))
    bad = [s for s in sizes if s <= 0 or s > (4 << 20)]
    if bad:
        sys.exit("sizes must be 1 B to 4 MiB: %s" % bad)

    def skip_all(why, only=None):
        for s in only or samples:
            for z in sizes:
                emit(sample_figure(s, z, None, why, (None, why), Validation(True)))

    why = gpu_reason()
    if why:
        return skip_all(why)
    missing = [s for s in samples
               if not os.access(os.path.join(opts.bin, "verbs_" + s), os.X_OK)]
    if missing:
        skip_all("no verbs_%s binary in %s (scripts/bench prepare, or scripts/pack-gpu bench)"
                 % (missing[0], opts.bin), missing)
        samples = [s for s in samples if s not in missing]

    # Baselines first (bounded share of the budget), each (test, size) once.
    base = {}
    exe = find_perftest(opts)
    tests = sorted({SAMPLES[s][4] for s in samples})
    pt_deadline = t_start + opts.budget * 0.25
    for test in tests:
        name, unit, what = PERFTEST_NAMES[test]
        for z in sizes:
            key = (test, z)
            if exe is None:
                base[key] = (None, "no ucx_perftest (set UCX_PERFTEST, or pack it)")
                continue
            left = pt_deadline - time.monotonic()
            if left < 5:
                base[key] = (None, "perftest share of the budget used up")
                emit(figure("%s/%d" % (name, z), None, unit, "skipped", base[key][1],
                            perftest=test, size=z))
                continue
            n = perftest_iters(test, z, opts.quick)
            cols, err = perftest_run(exe, test, z, n, min(30.0, left))
            if cols is None:
                base[key] = (None, err)
                emit(figure("%s/%d" % (name, z), None, unit, "skipped", err,
                            perftest=test, size=z))
                continue
            v = cols[1] if test == "ucp_put_lat" else cols[5]
            base[key] = ("%s/%d" % (name, z), v)
            emit(figure("%s/%d" % (name, z), v, unit, "info",
                        "%s; ucx_perftest -t %s -m cuda -s %d -n %d, two processes on this "
                        "machine, UCX's own transport choice" % (what, test, z, n),
                        perftest=test, size=z))
            log("%s %d B: %.3f %s" % (test, z, v, unit))

    deadline = t_start + opts.budget
    # Size groups outside, samples inside: when time runs short, every sample has its
    # smaller sizes measured and only the largest ones are left out.
    for group, bw_iters, lat_iters, threads in plan(sizes, opts.quick):
        for sample in samples:
            kind = SAMPLES[sample][0]
            binary = os.path.join(opts.bin, "verbs_" + sample)
            iters = bw_iters if kind == "bw" else lat_iters
            left = deadline - time.monotonic()
            if left < min(opts.pair_timeout, 15):
                for z in group:
                    emit(sample_figure(sample, z, None, "not run: %d s budget of the verbs "
                                       "target used up" % opts.budget, (None, ""),
                                       Validation(True)))
                continue
            bound = min(opts.pair_timeout, left)
            rows, v, stall, secs = run_pair(binary, sample, group, iters, threads, opts, bound)
            log("%s %s: %d rows in %.1f s%s" % (sample, group, len(rows), secs,
                                                "" if v else " (%s)" % v.reason))
            for z in group:
                key = (SAMPLES[sample][4], z)
                if z not in rows:
                    # A GPU is here: a pair that printed no row failed (or stalled).
                    why = stall or ("FAILED, no table row: %s" % (v.reason or "no reason"))
                    f = sample_figure(sample, z, None, why, (None, ""), Validation(True))
                    f["status"] = "STALL" if stall else "miss"
                    emit(f)
                    continue
                n, a, b, ms = rows[z]
                value = a
                if stall:
                    # Measured, then hung (a bandwidth server validating, a latency peer).
                    v = Validation(False, stall)
                if kind == "bw":
                    notes = ("client table; %d messages by %d threads in %.3f ms (timed launch "
                             "after a warm-up); %s over lo" % (n, threads, ms, PATHS[sample]))
                else:
                    notes = ("client table; half of %.2f us per round trip, %d round trips, "
                             "one thread each side, GPU <-> GPU over lo" % (b, n))
                f = sample_figure(sample, z, value, notes, base.get(key, (None, "not run")), v)
                if stall:
                    f["status"] = "STALL"
                emit(f)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", help="directory with verbs_<sample> binaries (and ucx_perftest)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--budget", type=float, default=540.0,
                   help="seconds for the whole target (default 540)")
    p.add_argument("--pair-timeout", type=float, default=40.0,
                   help="seconds one server + client pair may run (default 40)")
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--samples", type=lambda s: s.split(","))
    p.add_argument("--perftest", help="ucx_perftest (default: UCX_PERFTEST, --bin, PATH)")
    p.add_argument("--device", default="lo")
    p.add_argument("--gpu", default="0")
    p.add_argument("--log-dir", help="keep the output of pairs that fail or stall here")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--parse", metavar="FILE")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    if a.parse:
        text = sys.stdin.read() if a.parse == "-" else open(a.parse).read()
        kind, rows = parse_table(text)
        print(kind)
        for size in sorted(rows):
            print("%d %d %r" % (size, rows[size][0], rows[size][1]))
        return None
    if not a.bin:
        p.error("--bin DIR")
    run(a)


# ---- self-test -----------------------------------------------------------------------

def _bw_row(size, iters, ms):
    """A bandwidth row as examples/verbs_common/report.rs prints it."""
    bw = size * iters / ms * 1000 / (1 << 20)
    rate = iters / ms * 1000 / 1e6
    return " %-7d    \t%-7d           %-7.6f            %-7.6f            %-7.6f" % (
        size, iters, bw, rate, ms)


def _lat_row(size, iters, ms):
    us = ms * 1000
    return " %-7d \t\t%-7d          %-7.2f       \t\t%-7.2f    \t \t%-7.2f" % (
        size, iters, us / (2 * iters), us / iters, us)


def self_test():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import importlib.util

    import importlib.machinery

    def load(name, file):
        loader = importlib.machinery.SourceFileLoader(name, os.path.join(here, file))
        spec = importlib.util.spec_from_loader(name, loader)
        m = importlib.util.module_from_spec(spec)
        loader.exec_module(m)
        return m

    bw_out = "\n".join([
        "[DOCA][INF][verbs_write_bw] Launching verbs_write_bw kernel with 1 CUDA Blocks, 64 CUDA threads",
        "-" * 84,
        " #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]    CUDA Kernel[ms]",
        "-" * 84,
        _bw_row(8, 2048, 0.5),
        _bw_row(65536, 4096, 40.0),
        _bw_row(4194304, 256, 300.0),
    ])
    kind, rows = parse_table(bw_out)
    assert kind == "bw", kind
    assert sorted(rows) == [8, 65536, 4194304], rows
    assert rows[65536][0] == 4096
    assert abs(rows[65536][1] - 65536 * 4096 / 40.0 * 1000 / (1 << 20)) < 1e-3, rows[65536]
    assert abs(rows[4194304][3] - 300.0) < 1e-6
    lat_out = "\n".join(["-" * 94,
                         " #bytes \t#iterations    Unidirectional[usec]    Bidirectional[usec]    CUDA Kernel[usec]",
                         "-" * 94, _lat_row(8, 2048, 61.44), _lat_row(65536, 1024, 102.4)])
    kind, rows = parse_table(lat_out)
    assert kind == "lat" and sorted(rows) == [8, 65536], (kind, rows)
    assert abs(rows[8][1] - 15.0) < 0.01 and abs(rows[8][2] - 30.0) < 0.01, rows[8]
    # Not a table: log lines and a header alone.
    assert parse_table("[DOCA][INF][x] 12 34\n")[1] == {}
    pt = ("+---...\n|  Stage |  # iterations | 50.0%ile | average | overall |  average | overall |"
          "  average | overall |\nFinal:               512      1.234      1.500      1.500"
          "    20000.00   21000.00       5000       5000\n")
    cols = parse_perftest(pt)
    assert cols and cols[0] == 512 and cols[1] == 1.234 and cols[5] == 21000.0, cols
    assert parse_perftest("Final: 1 2\n") is None and parse_perftest("nothing\n") is None

    ok = Validation(True)
    f = sample_figure("write_bw", 65536, 18000.0, "n", ("ucx/perftest-put-bw-cuda/65536", 20000.0), ok)
    assert f["status"] == "pass" and abs(f["ratio"] - 0.9) < 1e-9, f
    f = sample_figure("write_bw", 65536, 10000.0, "n", ("ucx/perftest-put-bw-cuda/65536", 20000.0), ok)
    assert f["status"] == "miss", f
    f = sample_figure("put_bw", 8, 10.0, "n", ("ucx/perftest-put-bw-cuda/8", 100.0), ok)
    assert f["status"] == "info" and f["target"] is None, f
    os.environ["DOCA_SOFT_NIC_SLEEP_US"] = "100"
    f = sample_figure("write_lat", 8, 101.0, "n", ("ucx/perftest-put-lat-cuda/8", 1.0), ok)
    assert f["status"] == "pass", f
    f = sample_figure("write_lat", 8, 102.0, "n", ("ucx/perftest-put-lat-cuda/8", 1.0), ok)
    assert f["status"] == "miss", f
    bad = Validation(False, "no line")
    f = sample_figure("get_bw", 65536, 30000.0, "n", ("ucx/perftest-get-bw-cuda/65536", 20000.0), bad)
    assert f["status"] == "miss" and "DATA CHECK FAILED" in f["notes"], f
    assert not validated("get_bw", "", "")
    assert validated("get_bw", "", "x Validation successful! Data received correctly from server")
    assert not validated("write_lat", "Validation successful! The last round trip of every size arrived", "")
    p = plan(SIZES, False)
    assert p[0][0] == [8, 64, 512, 4096] and [g for g, *_ in p[1:]] == [[65536], [1 << 20], [4 << 20]], p
    for group, bw, lat, t in p:
        assert bw % t == 0 and bw >= t and lat >= 16, (group, bw, t)
        # At most about 1 GiB per launch (buffers are threads x size).
        assert group[-1] * bw <= (1 << 30), (group, bw)

    # Tables and plot from figures like a run's (a skipped, a STALL and an rdma_dma one).
    figs = [
        figure("ucx/perftest-put-bw-cuda/65536", 20000.0, "MB/s", "info", "b", perftest="ucp_put_bw", size=65536),
        sample_figure("write_bw", 8, 12.5, "n", ("ucx/perftest-put-bw-cuda/8", 50.0), ok),
        sample_figure("write_bw", 65536, 18000.0, "n", ("ucx/perftest-put-bw-cuda/65536", 20000.0), ok),
        sample_figure("get_bw", 65536, 9000.0, "n", ("ucx/perftest-get-bw-cuda/65536", 20000.0), ok),
        sample_figure("write_lat", 8, 40.0, "n", ("ucx/perftest-put-lat-cuda/8", 2.0), ok),
        dict(sample_figure("put_bw", 4194304, None, "client still running", (None, ""), ok), status="STALL"),
        figure("rdma/write-bw/65536", 15000.0, "MB/s", "pass", "r", baseline="ucx/perftest-put-bw-cuda/65536",
               baseline_value=17000.0, ratio=15000 / 17000, target="ratio >= 0.8"),
        figure("rdma/write-lat/8", 30.0, "us", "miss", "r"),
        figure("dma/copy-bw/4194304", 1.0e6, "MB/s", "info", "d"),
        figure("rx/other/1", 1.0, "Mpps", "info", "other bench"),
    ]
    tmp = tempfile.mkdtemp()
    res = os.path.join(tmp, "run.jsonl")
    with open(res, "w") as fh:
        for g in figs:
            fh.write(json.dumps(g) + "\n")
    bt = load("bench_table", "bench-table.py")
    md = bt.table(res, "machine", "cmd", "label", "date", plot="benches/rdma-verbs-bw.svg")
    assert "## GPU verbs samples" in md and "## GPU RDMA and DMA" in md, md
    assert "| write_bw | 65536 | 18000.0 | MB/s | 20000.0 | 0.9 | ratio >= 0.8 | yes |" in md, md
    assert "| put_bw | 4194304 |" in md and "STALL" in md
    assert "| write_lat | 8 | 40 | us | 2 |" in md
    assert "| rdma write-bw | 65536 |" in md, md
    assert "![" in md and "benches/rdma-verbs-bw.svg" in md
    assert "| rx/other/1 |" in md and "| verbs/write_bw/8 |" not in md
    plot = load("bench_plot_verbs", "bench-plot-verbs")
    svg = plot.svg(plot.load([res]))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>"), svg[:80]
    for label in ("write_bw", "get_bw", "rdma write", "perftest put", "perftest get"):
        assert label in svg, label
    assert "write_lat" not in svg and "put_bw" not in svg  # latency, and no measured points
    import xml.dom.minidom
    xml.dom.minidom.parseString(svg)  # well-formed
    shutil.rmtree(tmp)
    run_self_test()
    print("bench-verbs self-test: ok")


# Stand-ins for the samples and ucx_perftest: they print what the real ones print.
FAKE_SAMPLE = r"""#!/usr/bin/env python3
import os, signal, sys, time
name = os.path.basename(sys.argv[0])[len("verbs_"):]
a = sys.argv[1:]
def arg(f):
    return a[a.index(f) + 1]
sizes = [int(x) for x in arg("--sizes").split(",")]
iters = int(arg("-i"))
client = "-c" in a
lat = name.endswith("_lat")
# As with the real samples, the client cannot finish before the server is set up.
ready = os.path.join(os.path.dirname(sys.argv[0]), "ready-" + arg("--oob-port"))
if client:
    t0 = time.time()
    while not os.path.exists(ready) and time.time() - t0 < 10:
        time.sleep(0.01)
if not client and name in ("write_bw", "put_bw", "get_bw"):
    got = []
    signal.signal(signal.SIGTERM, lambda s, f: got.append(s))
    open(ready, "w").close()
    while not got:
        time.sleep(0.01)
    print("[DOCA][INF][verbs_%s] Signal 15 received, preparing to exit!" % name)
    if name != "get_bw":
        print("[DOCA][WRN][verbs_%s] Validation successful! Data received correctly from client" % name)
    sys.exit(0)
if client and name == "put_bw":
    time.sleep(60)
if not client and name == "put_signal_bw":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(ready, "w").close()
    time.sleep(60)
if not client:
    open(ready, "w").close()
if lat:
    print("-" * 94)
    print(" #bytes \t#iterations    Unidirectional[usec]    Bidirectional[usec]    CUDA Kernel[usec]")
    for z in sizes:
        us = 20.0 * iters
        print(" %-7d \t\t%-7d          %-7.2f       \t\t%-7.2f    \t \t%-7.2f" % (z, iters, us / (2 * iters), us / iters, us))
    print("[DOCA][WRN][verbs_%s] Validation successful! The last round trip of every size arrived" % name)
elif client:
    print("-" * 84)
    print(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]    CUDA Kernel[ms]")
    for z in sizes:
        ms = z * iters / (900.0 * (1 << 20)) * 1000
        print(" %-7d    \t%-7d           %-7.6f            %-7.6f            %-7.6f" % (z, iters, z * iters / ms * 1000 / (1 << 20), iters / ms * 1000 / 1e6, ms))
    if name == "get_bw":
        print("[DOCA][ERR][verbs_get_bw] Validation error: buffer 0 pos 0 has invalid data 0")
"""

FAKE_PERFTEST = r"""#!/usr/bin/env python3
import sys, time
a = sys.argv[1:]
if a[0] == "-p":
    time.sleep(0.5)
    sys.exit(0)
t = a[a.index("-t") + 1]
n = int(a[a.index("-n") + 1])
assert a[a.index("-m") + 1] == "cuda" and "-w" in a
print("Final: %d 2.0 2.5 2.5 1000.0 1000.0 1 1" % n)
"""


def run_self_test():
    """run() against the stand-ins: figures with baselines and targets, a missing data
    check, a STALL, and pairs the budget leaves out."""
    import io
    tmp = tempfile.mkdtemp()
    for name, text in [("verbs_" + s, FAKE_SAMPLE) for s in SAMPLES] + [("ucx_perftest", FAKE_PERFTEST)]:
        path = os.path.join(tmp, name)
        with open(path, "w") as fh:
            fh.write(text)
        os.chmod(path, 0o755)
    os.environ["BENCH_VERBS_FAKE_GPU"] = "1"
    QUIET.append(1)

    # Bounds far above what the stand-ins need (a loaded CI machine), except for the
    # pairs that are meant to stall, which run one size each.
    def go(budget, samples, sizes=(8, 65536), pair_timeout=30.0):
        opts = argparse.Namespace(bin=tmp, quick=True, budget=budget, pair_timeout=pair_timeout,
                                  sizes=list(sizes), samples=samples, perftest=None,
                                  device="lo", gpu="0", log_dir=os.path.join(tmp, "logs"))
        old, sys.stdout = sys.stdout, io.StringIO()
        try:
            run(opts)
            text = sys.stdout.getvalue()
        finally:
            sys.stdout = old
        return {f["figure"]: f for f in map(json.loads, text.splitlines())}

    figs = go(300, ["write_bw", "get_bw", "write_lat"])
    figs.update(go(300, ["put_bw"], (8,), 6.0))
    figs.update(go(300, ["put_signal_bw"], (65536,), 6.0))
    f = figs["verbs/write_bw/65536"]
    assert f["status"] == "pass" and abs(f["value"] - 900.0) < 1 and f["baseline_value"] == 1000.0, f
    assert figs["verbs/write_bw/8"]["status"] == "info", figs["verbs/write_bw/8"]
    f = figs["verbs/get_bw/65536"]
    assert f["status"] == "miss" and "DATA CHECK FAILED" in f["notes"], f
    f = figs["verbs/put_bw/8"]
    assert f["status"] == "STALL" and f["value"] is None and "client still running" in f["notes"], f
    assert os.path.isfile(os.path.join(tmp, "logs", "put_bw-8.client.out")), f
    assert "full output in" in figs["verbs/get_bw/65536"]["notes"]
    f = figs["verbs/put_signal_bw/65536"]
    assert f["status"] == "STALL" and f["value"] > 0 and "server still running" in f["notes"], f
    f = figs["verbs/write_lat/8"]
    assert f["status"] == "pass" and f["value"] == 10.0 and f["baseline_value"] == 2.0, f
    assert figs["ucx/perftest-get-bw-cuda/65536"]["value"] == 1000.0
    figs = go(0, ["write_bw"])
    f = figs["verbs/write_bw/8"]
    assert f["status"] == "skipped" and "budget" in f["notes"], f
    del os.environ["BENCH_VERBS_FAKE_GPU"]
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
