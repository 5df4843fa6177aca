//! Query values in the links pages write.

/// `text` percent-encoded for a URL's query (RFC 3986's unreserved
/// characters as they are, every other byte as %XX).
pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
