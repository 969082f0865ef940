//! The request journal: a ring of the latest arrivals, each of bounded size, so
//! that its memory is bounded by its capacity times the cap of one entry
//! however many requests arrive.

use std::collections::VecDeque;
use std::time::SystemTime;

use hyper::HeaderMap;

use crate::JournalEntry;

/// The entries a journal keeps when nobody says otherwise.
pub const DEFAULT_CAPACITY: usize = 10_000;
/// The largest capacity the admin API and the binary accept.
pub const MAX_CAPACITY: usize = 1_000_000;
/// The bytes of a request body an entry keeps (the start of the body).
pub const BODY_CAP: usize = 64 * 1024;
/// The bytes of the path, of the query and of the `User-Agent` an entry keeps.
pub const TEXT_CAP: usize = 8 * 1024;
/// The bytes of request headers an entry keeps, names and values together
/// (the first headers, in the order they came).
pub const HEADERS_CAP: usize = 8 * 1024;

/// Whether a header's value is a credential, shown as `REDACTED`: the
/// `Authorization` kinds, cookies, and any name that says it holds a token,
/// a key, a secret or a password. Core's rule for a query's credentials
/// (`roomchat::wire::is_credential_query_name`, of a crate this one does not
/// depend on), with `auth` anywhere in the name: compared without case, `-`
/// or `_`, a name holding `token`, `secret`, `passw`, `credential`,
/// `session`, `signature`, `jwt`, `bearer` or `auth`, ending in `key` or
/// `keys`, or `sig`, `pwd` or `code` (`x-api-key`, `x-private-key`,
/// `ocp-apim-subscription-key`, `x-amz-signature`).
fn is_credential(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    matches!(name, "cookie" | "set-cookie")
        || ["sig", "pwd", "code"].contains(&folded.as_str())
        || [
            "token",
            "secret",
            "passw",
            "credential",
            "session",
            "signature",
            "jwt",
            "bearer",
            "auth",
        ]
        .iter()
        .any(|word| folded.contains(word))
        || folded.ends_with("key")
        || folded.ends_with("keys")
}

pub(crate) struct Journal {
    entries: VecDeque<JournalEntry>,
    capacity: usize,
    dropped: u64,
    next_seq: u64,
}

impl Journal {
    pub fn new(capacity: usize) -> Journal {
        Journal {
            entries: VecDeque::new(),
            capacity,
            dropped: 0,
            next_seq: 1,
        }
    }

    /// Records an arrival, dropping the oldest entry when full; returns its sequence number.
    pub fn record(
        &mut self,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
        user_agent: Option<&str>,
        headers: &HeaderMap,
    ) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.capacity == 0 {
            self.dropped += 1;
            return seq;
        }
        let mut truncated = false;
        let mut keep = |text: &str, cap: usize| {
            let cut = floor_char_boundary(text.as_bytes(), cap);
            truncated |= cut < text.len();
            text[..cut].to_owned()
        };
        let method = keep(method, TEXT_CAP);
        let path = keep(path, TEXT_CAP);
        let query = keep(&redact_query(query), TEXT_CAP);
        let user_agent = user_agent.map(|ua| keep(ua, TEXT_CAP));
        let mut kept_headers = Vec::with_capacity(headers.len());
        let mut left = HEADERS_CAP;
        for (name, value) in headers {
            let name = name.as_str();
            let value = if is_credential(name) {
                "REDACTED".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            if name.len() + value.len() > left {
                truncated = true;
                break;
            }
            left -= name.len() + value.len();
            kept_headers.push((name.to_owned(), value));
        }
        // Cut the bytes before decoding, so that a large body is never copied whole.
        let body_cut = floor_char_boundary(body, BODY_CAP);
        truncated |= body_cut < body.len();
        let body = String::from_utf8_lossy(&body[..body_cut]).into_owned();
        while self.entries.len() >= self.capacity {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back(JournalEntry {
            seq,
            method,
            path,
            query,
            body,
            received_at: SystemTime::now(),
            status: 0,
            user_agent,
            headers: kept_headers,
            truncated,
        });
        seq
    }

    /// Records the status answered to arrival `seq`, if the journal still holds it.
    pub fn set_status(&mut self, seq: u64, status: u16) {
        if let Ok(i) = self.entries.binary_search_by_key(&seq, |e| e.seq) {
            self.entries[i].status = status;
        }
    }

    /// Changes the capacity; the oldest entries beyond it are dropped now.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.entries.len() > capacity {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.shrink_to(capacity);
    }

    /// Empties the journal and its dropped count; sequence numbers go on.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.entries.shrink_to(self.capacity);
        self.dropped = 0;
    }

    pub fn entries(&self) -> impl Iterator<Item = &JournalEntry> {
        self.entries.iter()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries dropped to keep within the capacity since the last clear.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The largest `n <= cap` that does not split a UTF-8 sequence of `bytes`
/// (when `bytes` is valid UTF-8; otherwise it only avoids splitting one).
fn floor_char_boundary(bytes: &[u8], cap: usize) -> usize {
    if bytes.len() <= cap {
        return bytes.len();
    }
    let mut n = cap;
    // At most 3 continuation bytes (0b10xx_xxxx) precede a boundary.
    while n > 0 && cap - n < 3 && bytes[n] & 0xC0 == 0x80 {
        n -= 1;
    }
    n
}

/// The query string with the values of `auth` and `publicKey` replaced by `REDACTED`
/// (names compared decoded, as the handlers read them: `au%74h` is `auth`).
pub fn redact_query(query: &str) -> String {
    let is_key = |name: &str| {
        let decoded = form_urlencoded::parse(name.as_bytes()).next();
        decoded.is_some_and(|(n, _)| n == "auth" || n == "publicKey")
    };
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_key(name) => format!("{name}=REDACTED"),
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_keys_only() {
        assert_eq!(redact_query("auth=sk&limit=5"), "auth=REDACTED&limit=5");
        assert_eq!(redact_query("publicKey=pk"), "publicKey=REDACTED");
        assert_eq!(redact_query("author=x"), "author=x");
        // Found by fuzzing (emulator_requests): the handlers decode the names.
        assert_eq!(
            redact_query("au%74h=sk&public%4Bey=pk&a=1"),
            "au%74h=REDACTED&public%4Bey=REDACTED&a=1"
        );
        assert_eq!(redact_query(""), "");
    }

    #[test]
    fn keeps_the_latest_entries_and_counts_the_rest() {
        let mut journal = Journal::new(3);
        for n in 1..=5u64 {
            assert_eq!(
                journal.record(
                    "GET",
                    &format!("/{n}"),
                    "auth=k",
                    b"",
                    None,
                    &HeaderMap::new()
                ),
                n
            );
        }
        let paths: Vec<&str> = journal.entries().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["/3", "/4", "/5"]);
        assert_eq!(journal.dropped(), 2);
        journal.set_status(4, 201);
        journal.set_status(1, 500); // dropped: no effect, no panic
        assert_eq!(journal.entries().nth(1).unwrap().status, 201);
        journal.set_capacity(1);
        assert_eq!(journal.dropped(), 4);
        assert_eq!(journal.entries().next().unwrap().seq, 5);
        journal.clear();
        assert_eq!((journal.entries().count(), journal.dropped()), (0, 0));
        assert_eq!(
            journal.record("GET", "/", "", b"", None, &HeaderMap::new()),
            6,
            "seq goes on"
        );
        journal.set_capacity(0);
        assert_eq!(
            journal.record("GET", "/", "", b"", None, &HeaderMap::new()),
            7
        );
        assert_eq!((journal.entries().count(), journal.dropped()), (0, 2));
    }

    #[test]
    fn caps_each_entry_without_splitting_characters() {
        let mut journal = Journal::new(2);
        let mut body = vec![b'x'; BODY_CAP - 1];
        body.extend_from_slice("é and more".as_bytes());
        journal.record(
            "POST",
            "/p",
            "auth=secret",
            &body,
            Some("ua"),
            &HeaderMap::new(),
        );
        let entry = journal.entries().next().unwrap();
        assert!(entry.truncated);
        assert_eq!(
            entry.body.len(),
            BODY_CAP - 1,
            "the 2-byte é would cross the cap"
        );
        assert_eq!(entry.query, "auth=REDACTED");
        let long_query = format!("auth=k&q={}", "y".repeat(TEXT_CAP * 2));
        journal.record("GET", "/p", &long_query, b"{}", None, &HeaderMap::new());
        let entry = journal.entries().nth(1).unwrap();
        assert!(entry.truncated && entry.query.len() == TEXT_CAP);
        assert!(entry.query.starts_with("auth=REDACTED&q=yyy"));
        journal.record("GET", "/p", "a=b", b"{}", None, &HeaderMap::new());
        assert!(!journal.entries().nth(1).unwrap().truncated);
    }

    #[test]
    fn keeps_headers_in_order_with_credentials_redacted_and_bounded() {
        use hyper::header::{HeaderName, HeaderValue};
        let mut journal = Journal::new(2);
        let mut headers = HeaderMap::new();
        for (name, value) in [
            (
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
            ("authorization", "Bearer s3cret"),
            ("cookie", "session=s3cret"),
            ("x-api-key", "s3cret"),
            ("x-private-key", "s3cret"),
            ("ocp-apim-subscription-key", "s3cret"),
            ("x-amz-signature", "s3cret"),
            ("x-passwd", "s3cret"),
            ("x-credentials", "s3cret"),
            ("x-team", "payments"),
        ] {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        journal.record("GET", "/p", "", b"", None, &headers);
        let entry = journal.entries().next().unwrap();
        let shown: Vec<(&str, &str)> = entry
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "traceparent",
                    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
                ),
                ("authorization", "REDACTED"),
                ("cookie", "REDACTED"),
                ("x-api-key", "REDACTED"),
                ("x-private-key", "REDACTED"),
                ("ocp-apim-subscription-key", "REDACTED"),
                ("x-amz-signature", "REDACTED"),
                ("x-passwd", "REDACTED"),
                ("x-credentials", "REDACTED"),
                ("x-team", "payments"),
            ]
        );
        assert!(!entry.truncated);
        let mut many = HeaderMap::new();
        for n in 0..100 {
            let name = HeaderName::from_bytes(format!("x-h{n}").as_bytes()).unwrap();
            many.insert(name, HeaderValue::from_str(&"v".repeat(200)).unwrap());
        }
        journal.record("GET", "/p", "", b"", None, &many);
        let entry = journal.entries().nth(1).unwrap();
        let bytes: usize = entry.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
        assert!(entry.truncated && bytes <= HEADERS_CAP, "{bytes}");
        assert!(HEADERS_CAP - bytes < 205, "as many as fit: {bytes}");
    }
}
