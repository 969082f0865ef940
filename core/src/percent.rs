//! Percent-encoding, the one rule for query components and path segments:
//! what the wire layer sends, and what the error layer scrubs secrets in.

/// Appends `text` percent-encoded to `out`.
pub(crate) fn encode_into(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
}

/// Percent-encodes a query name or value: everything but `A-Z a-z 0-9 - . _ ~`.
pub fn encode_query_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    encode_into(text, &mut out);
    out
}

/// Percent-encodes one path segment, so that an id such as `../users` or
/// `a?b#c` stays one segment: `/`, `?`, `#`, `%` and the rest are encoded, and
/// a segment of only dots is encoded whole (`..` → `%2E%2E`).
pub fn encode_path_segment(segment: &str) -> String {
    if !segment.is_empty() && segment.bytes().all(|b| b == b'.') {
        return "%2E".repeat(segment.len());
    }
    encode_query_component(segment)
}
