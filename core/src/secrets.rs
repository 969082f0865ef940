//! Secrets in URLs — a Redis URL's password, a proxy's credentials — kept out
//! of every text the library shows: URLs shown redacted, and the passwords
//! found in them scrubbed from any message that might quote one.

use std::borrow::Cow;

/// The query parameters that carry a password in a URL (`pass`, as the redis
/// crate reads `redis+unix:///path?pass=…`; `password`, which other clients
/// accept, hidden too in case a user writes it; `sentinel_password`, the
/// sentinels' own in a `redis+sentinel://` URL).
const PASSWORD_PARAMS: [&str; 3] = ["pass", "password", "sentinel_password"];

/// Where `url`'s parts are: the end of its scheme, its user information
/// (`user:password@`), its query (at the `?`) and its fragment (at the `#`).
struct UrlParts {
    scheme_end: usize,
    user_info: Option<(usize, usize)>,
    query: Option<usize>,
    fragment: Option<usize>,
    /// Whether the URL reads two ways (an `@` in a password parameter's value
    /// that might also end user information whose password holds a `?` or
    /// `#`): then what precedes the query is not shown either.
    ambiguous: bool,
}

/// Where the user information of `rest` (a URL after its `scheme://`) ends:
/// the offset of its `@`, if it has any.
///
/// A password may hold an `@`, `/`, `?` or `#` written as is (`redis://:S3cr?t9@host`):
/// the user information ends at the last `@` of the URL, unless that `@` is in
/// a password parameter's value (`redis://h/0?pass=a@b`), where it ends at the
/// last `@` before the query. A URL whose authority is empty (`redis+unix:///…`)
/// has none. The Redis deployments and [`redacted_url`] read it the same way.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // the Redis URL forms use it
pub(crate) fn user_info_end(rest: &str) -> Option<usize> {
    user_info_reading(rest).0
}

/// [`user_info_end`], and whether `rest` also reads another way.
fn user_info_reading(rest: &str) -> (Option<usize>, bool) {
    if rest.starts_with('/') {
        return (None, false);
    }
    let Some(last_at) = rest.rfind('@') else {
        return (None, false);
    };
    let boundary = rest.find(['?', '#']).unwrap_or(rest.len());
    if last_at < boundary {
        return (Some(last_at), false);
    }
    // The `@` is past a `?` or `#`: is it in a password parameter's value (of
    // the query, or of a fragment written as one)? Then the URL reads two ways.
    let in_password_value = query_pieces(&rest[boundary + 1..last_at])
        .iter()
        .any(|piece| matches!(piece, QueryPiece::Password { .. }));
    if in_password_value {
        (rest[..boundary].rfind('@'), true)
    } else {
        (Some(last_at), false)
    }
}

/// `url` with the `/`, `?`, `#` and `@` of its user information percent-encoded,
/// so that a URL parser reads the user information as [`user_info_end`] does
/// (`redis://:S3cr?t9@host` → `redis://:S3cr%3Ft9@host`); other URLs unchanged.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // the Redis URL forms use it
pub(crate) fn with_user_info_encoded(url: &str) -> Cow<'_, str> {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return Cow::Borrowed(url);
    };
    match user_info_end(&url[scheme_end..]) {
        Some(at) => {
            let user_info = &url[scheme_end..scheme_end + at];
            match encoded_user_info(user_info) {
                Cow::Borrowed(_) => Cow::Borrowed(url),
                Cow::Owned(encoded) => Cow::Owned(format!(
                    "{}{encoded}{}",
                    &url[..scheme_end],
                    &url[scheme_end + at..]
                )),
            }
        }
        None => Cow::Borrowed(url),
    }
}

/// User information (`user:password`) with the characters that would end it
/// for a URL parser (`/`, `?`, `#`, `@`) percent-encoded.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // the Redis URL forms use it
pub(crate) fn encoded_user_info(user_info: &str) -> Cow<'_, str> {
    if !user_info.contains(['/', '?', '#', '@']) {
        return Cow::Borrowed(user_info);
    }
    let mut out = String::with_capacity(user_info.len() + 8);
    for c in user_info.chars() {
        match c {
            '/' => out.push_str("%2F"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            '@' => out.push_str("%40"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn url_parts(url: &str) -> UrlParts {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let (at, ambiguous) = user_info_reading(&url[scheme_end..]);
    let user_info = at.map(|at| (scheme_end, scheme_end + at));
    let after_user_info = user_info.map_or(scheme_end, |(_, at)| at);
    let query = url[after_user_info..]
        .find('?')
        .map(|i| after_user_info + i);
    let fragment = url[after_user_info..]
        .find('#')
        .map(|i| after_user_info + i);
    // A `?` after the `#` is the fragment's, not a query.
    let query = query.filter(|&q| fragment.is_none_or(|f| q < f));
    UrlParts {
        scheme_end,
        user_info,
        query,
        fragment,
        ambiguous,
    }
}

/// A query (the text after its `?`) in pieces: text shown as written, and each
/// password parameter's name and value. A parameter's value runs to the next
/// `&`; in other parameters a further `?` starts another one, as far as showing
/// goes (`?=y?pass=…` holds a `pass` parameter, though a URL parser reads one
/// parameter `=y?pass=…`): hiding a harmless value costs less than showing a password.
enum QueryPiece<'a> {
    Shown(&'a str),
    Password { name: &'a str, value: &'a str },
}

fn query_pieces(query: &str) -> Vec<QueryPiece<'_>> {
    let mut pieces = Vec::new();
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            pieces.push(QueryPiece::Shown("&"));
        }
        let mut pair = pair;
        loop {
            match pair.split_once('=') {
                Some((name, value)) if is_password_param(name) => {
                    pieces.push(QueryPiece::Password { name, value });
                    break;
                }
                _ => match pair.find('?') {
                    Some(q) => {
                        pieces.push(QueryPiece::Shown(&pair[..=q]));
                        pair = &pair[q + 1..];
                    }
                    None => {
                        pieces.push(QueryPiece::Shown(pair));
                        break;
                    }
                },
            }
        }
    }
    pieces
}

/// `url` with its user information and every password query parameter shown
/// as `REDACTED`; a fragment other than `#insecure` (the one the redis crate
/// reads) is shown as `#REDACTED`, as a password may have been written there.
/// A URL that reads two ways (see [`user_info_end`]) is shown as its scheme alone.
pub(crate) fn redacted_url(url: &str) -> String {
    let UrlParts {
        scheme_end,
        user_info,
        query,
        fragment,
        ambiguous,
    } = url_parts(url);
    let mut out = String::with_capacity(url.len());
    let head_end = query.or(fragment).unwrap_or(url.len());
    if ambiguous {
        out.push_str(&url[..scheme_end]);
        out.push_str("REDACTED");
        return out;
    }
    match user_info {
        Some((start, at)) => {
            out.push_str(&url[..start]);
            out.push_str("REDACTED");
            out.push_str(&url[at..head_end]);
        }
        None => out.push_str(&url[..head_end]),
    }
    if let Some(q) = query {
        out.push('?');
        let pairs = &url[q + 1..fragment.unwrap_or(url.len())];
        for piece in query_pieces(pairs) {
            match piece {
                QueryPiece::Shown(text) => out.push_str(text),
                QueryPiece::Password { name, .. } => {
                    out.push_str(name);
                    out.push_str("=REDACTED");
                }
            }
        }
    }
    if let Some(f) = fragment {
        let text = &url[f + 1..];
        out.push('#');
        out.push_str(if text.eq_ignore_ascii_case("insecure") {
            text
        } else {
            "REDACTED"
        });
    }
    out
}

/// Whether a query parameter may carry a password: its name ends with one of
/// [`PASSWORD_PARAMS`] (so `?pass` in a query written `/??pass=…`, or `x;pass`,
/// counts too: hiding a harmless value costs less than showing a password).
fn is_password_param(name: &str) -> bool {
    let name = percent_decode(name).to_ascii_lowercase();
    PASSWORD_PARAMS.iter().any(|p| name.ends_with(p))
}

/// Every password in `url` (user information and query), as written and as
/// decoded, to scrub from any text that might quote one.
pub(crate) fn passwords_of(url: &str) -> Vec<String> {
    let UrlParts {
        scheme_end,
        user_info,
        query,
        fragment,
        ambiguous,
    } = url_parts(url);
    let mut found = Vec::new();
    let mut user_password = |credentials: &str| {
        if let Some((_, password)) = credentials.split_once(':') {
            found.push(password.to_owned());
        }
    };
    if let Some((start, at)) = user_info {
        user_password(&url[start..at]);
    }
    if ambiguous {
        // The other reading: user information up to the URL's last `@`.
        if let Some(at) = url.rfind('@').filter(|&at| at > scheme_end) {
            user_password(&url[scheme_end..at]);
        }
    }
    if let Some(q) = query {
        let pairs = &url[q + 1..fragment.unwrap_or(url.len())];
        for piece in query_pieces(pairs) {
            if let QueryPiece::Password { value, .. } = piece {
                found.push(value.to_owned());
                found.push(percent_decode(&value.replace('+', " ")));
            }
        }
    }
    let decoded: Vec<String> = found.iter().map(|p| percent_decode(p)).collect();
    found.extend(decoded);
    found.retain(|p| !p.is_empty());
    found.sort();
    found.dedup();
    // Longest first: a password that contains another is replaced whole.
    found.sort_by_key(|p| std::cmp::Reverse(p.len()));
    found
}

/// `%XX` escapes decoded (invalid ones kept as written; invalid UTF-8 replaced).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with every one of `passwords` replaced by `REDACTED`.
pub(crate) fn scrub(text: &str, passwords: &[String]) -> String {
    let mut out = text.to_owned();
    for p in passwords {
        if out.contains(p.as_str()) {
            out = out.replace(p.as_str(), "REDACTED");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            redacted_url("redis://:s3cret@10.0.0.5:6379/0"),
            "redis://REDACTED@10.0.0.5:6379/0"
        );
        assert_eq!(
            redacted_url("rediss://user:p@ss@host"),
            "rediss://REDACTED@host"
        );
        assert_eq!(
            redacted_url("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(
            redacted_url("redis+unix:///run/redis.sock?db=2&pass=s3cret"),
            "redis+unix:///run/redis.sock?db=2&pass=REDACTED"
        );
        assert_eq!(
            redacted_url("unix:///run/r.sock?Password=a%40b&user=u#x"),
            "unix:///run/r.sock?Password=REDACTED&user=u#REDACTED"
        );
        // A fragment may hold what looks like a query (found by fuzz/redis_url);
        // `#insecure` is the one fragment the redis crate reads.
        assert_eq!(redacted_url(":///a?b#c?pass=pw9&"), ":///a?b#REDACTED");
        assert_eq!(redacted_url("redis://h/0#pass=pw9"), "redis://h/0#REDACTED");
        assert_eq!(
            redacted_url("rediss+cluster:///??pass=pw9&"),
            "rediss+cluster:///??pass=REDACTED&"
        );
        assert_eq!(
            redacted_url("rediss://h/0#insecure"),
            "rediss://h/0#insecure"
        );
        assert_eq!(
            redacted_url("redis+sentinel://:a@s1,s2/svc?sentinel_password=b&db=1"),
            "redis+sentinel://REDACTED@s1,s2/svc?sentinel_password=REDACTED&db=1"
        );
        assert_eq!(
            passwords_of("redis+sentinel://:a@s1/svc?sentinel_password=b"),
            ["a", "b"]
        );
        // An `@` in a query password is not taken for user information.
        assert_eq!(
            redacted_url("redis+unix:///r.sock?pass=a@b"),
            "redis+unix:///r.sock?pass=REDACTED"
        );
        // A password holding a `?`, `#` or `/` written as is (issue 37, item 8).
        for (url, shown) in [
            ("redis://:S3cr?t9@host", "redis://REDACTED@host"),
            ("redis://u:S3cr#t9@host:1/0", "redis://REDACTED@host:1/0"),
            (
                "redis://:S3/cr?t9@host/2?protocol=resp3",
                "redis://REDACTED@host/2?protocol=resp3",
            ),
            (
                "rediss+cluster://:a?b#c/d@h1,h2",
                "rediss+cluster://REDACTED@h1,h2",
            ),
            (
                "redis+sentinel://:S3cr?t9@s1/svc?sentinel_password=x?y",
                "redis+sentinel://REDACTED@s1/svc?sentinel_password=REDACTED",
            ),
            // A `pass=` after a second `?` (fuzz/redis_url).
            (
                "rediss+cluster://h/x?=y?pass=S3crt9",
                "rediss+cluster://h/x?=y?pass=REDACTED",
            ),
            // A password parameter's value runs to the next `&`, `?` and `@` included.
            (
                "redis+unix:///r.sock?pass=S3cr?t9&db=1",
                "redis+unix:///r.sock?pass=REDACTED&db=1",
            ),
            ("redis://h/0?pass=a?S3crt9@b", "redis://REDACTED"),
            (
                "redis://:S3?c#r@t9@s1?sentinel_password=S3?c#r@t9",
                "redis://REDACTED",
            ),
        ] {
            assert_eq!(redacted_url(url), shown, "{url}");
            assert!(!passwords_of(url).is_empty(), "{url}");
        }
        assert_eq!(passwords_of("redis://:S3cr?t9@host"), ["S3cr?t9"]);
        assert_eq!(user_info_end("h/0?pass=a@b"), None);
        assert_eq!(user_info_end(":x@h/0?pass=a@b"), Some(2));
        assert_eq!(user_info_end("/r.sock?pass=a@b"), None);
        assert_eq!(
            with_user_info_encoded("redis://u:S3/c?r#t@9@host:1/0?db=1"),
            "redis://u:S3%2Fc%3Fr%23t%409@host:1/0?db=1"
        );
        assert_eq!(
            with_user_info_encoded("redis://:plain@h"),
            "redis://:plain@h"
        );
        assert_eq!(passwords_of("redis://:s3cret@h:1"), ["s3cret"]);
        assert_eq!(passwords_of("redis://user:p@ss@h"), ["p@ss"]);
        assert!(passwords_of("redis://h:1").is_empty());
        assert!(passwords_of("redis://user@h:1").is_empty());
        assert_eq!(
            passwords_of("redis+unix:///r.sock?pass=p%26q+r&db=1"),
            ["p%26q+r", "p&q r", "p&q+r"]
        );
        for url in [
            "redis://:s3cret@h:1",
            "redis+unix:///r.sock?pass=s3cret",
            "redis+unix:///r.sock?password=s3cret",
            "unix:///r.sock?user=me&pass=s3cret",
            "http://user:s3cret@proxy.internal:3128",
        ] {
            assert!(!redacted_url(url).contains("s3cret"), "{url}");
            assert_eq!(
                scrub("AUTH s3cret failed", &passwords_of(url)),
                "AUTH REDACTED failed"
            );
        }
    }
}
