//! The three pages of the GPU HTTP server: complete HTTP/1.1 responses (CRLF line ends)
//! that each fit one 512-byte frame slot with their 54 bytes of headers. The texts are this
//! port's own; what a client can check matches the original: the status line, a
//! Content-Length equal to the body length, and one frame per response.

#![allow(dead_code)]

use cuda_kernels::{HttpPage, GPP_TCP_HDRS, GPP_TX_BUF_MAX_SZ};

const INDEX_BODY: &str = "<html><head><title>GPUNetIO</title></head><body><h1>doca-rs</h1><p>Served from a CUDA kernel.</p></body></html>";
const CONTACTS_BODY: &str = "<html><head><title>Contacts</title></head><body><h1>Contacts</h1><p>doca-rs, gpu_packet_processing.</p></body></html>";
const NOT_FOUND_BODY: &str =
    "<html><head><title>404</title></head><body><h1>Not Found</h1></body></html>";

const DATE: &str = "Mon, 02 Jun 2025 10:00:00 GMT";
const LAST_MODIFIED: &str = "Mon, 02 Jun 2025 09:00:00 GMT";
const SERVER: &str = "doca-rs GPU HTTP server";

/// The full HTTP response (status line, headers, blank line, body) for `page`.
pub fn response(page: HttpPage) -> Vec<u8> {
    let (status, body, tail) = match page {
        HttpPage::Index => (
            "200 OK",
            INDEX_BODY,
            "Accept-Ranges: bytes\r\nConnection: keep-alive\r\n",
        ),
        HttpPage::Contacts => (
            "200 OK",
            CONTACTS_BODY,
            "Accept-Ranges: bytes\r\nConnection: keep-alive\r\n",
        ),
        HttpPage::NotFound => ("404 Not Found", NOT_FOUND_BODY, "Connection: close\r\n"),
    };
    format!(
        "HTTP/1.1 {status}\r\nDate: {DATE}\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Length: {}\r\nLast-Modified: {LAST_MODIFIED}\r\nServer: {SERVER}\r\n{tail}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The pages in kernel order (index, contacts, not found).
pub const PAGES: [HttpPage; 3] = [HttpPage::Index, HttpPage::Contacts, HttpPage::NotFound];

/// Whether every response fits a frame slot (checked at start and in the tests).
pub fn all_fit() -> bool {
    PAGES
        .iter()
        .all(|p| GPP_TCP_HDRS + response(*p).len() <= GPP_TX_BUF_MAX_SZ)
}
