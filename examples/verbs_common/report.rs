//! The samples' result tables (printed to stdout with their exact formats).

/// Prints the bandwidth table header.
pub fn bw_header() {
    let dashes = "-".repeat(84);
    println!("{dashes}");
    println!(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]    CUDA Kernel[ms]");
    println!("{dashes}");
}

/// Prints one bandwidth row: `size` bytes, `iters` messages in `ms` milliseconds
/// (MiB/s labelled MB/sec, computed in single precision as the samples do).
pub fn bw_row(size: u32, iters: u32, ms: f32) {
    let bw = (size as f32 * iters as f32) / ms * 1000.0 / (1u32 << 20) as f32;
    let rate = iters as f32 / ms * 1000.0 / 1e6;
    println!(
        " {:<7}    \t{:<7}           {:<7.6}            {:<7.6}            {:<7.6}",
        size, iters, bw as f64, rate as f64, ms as f64
    );
}

/// Prints the latency table header.
pub fn lat_header() {
    let dashes = "-".repeat(94);
    println!("{dashes}");
    println!(
        " #bytes \t#iterations    Unidirectional[usec]    Bidirectional[usec]    CUDA Kernel[usec]"
    );
    println!("{dashes}");
}

/// Prints one latency row: `iters` round trips of `size` bytes in `ms` milliseconds.
pub fn lat_row(size: u32, iters: u32, ms: f32) {
    let us = ms as f64 * 1000.0;
    let n = iters.max(1) as f64;
    println!(
        " {:<7} \t\t{:<7}          {:<7.2}       \t\t{:<7.2}    \t \t{:<7.2}",
        size,
        iters,
        us / (2.0 * n),
        us / n,
        us
    );
}
