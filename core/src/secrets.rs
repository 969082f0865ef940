//! Secrets in URLs — a Redis URL's password, a proxy's credentials — kept out
//! of every text the library shows: URLs shown redacted, and the passwords
//! found in them scrubbed from any message that might quote one.

/// The query parameters that carry a password in a URL (`pass`, as the redis
/// crate reads `redis+unix:///path?pass=…`; `password`, which other clients
/// accept, hidden too in case a user writes it; `sentinel_password`, the
/// sentinels' own in a `redis+sentinel://` URL).
const PASSWORD_PARAMS: [&str; 3] = ["pass", "password", "sentinel_password"];

/// Where `url`'s user information (`user:password@`) and query start and end.
fn url_parts(url: &str) -> (usize, Option<(usize, usize)>, Option<usize>) {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let query = url[scheme_end..].find('?').map(|i| scheme_end + i);
    let before_query = &url[..query.unwrap_or(url.len())];
    // The last `@` before the query: a password may itself hold an `@`.
    let user_info = before_query
        .rfind('@')
        .filter(|&at| at >= scheme_end)
        .map(|at| (scheme_end, at));
    (scheme_end, user_info, query)
}

/// `url` with its user information and every password query parameter shown as `REDACTED`.
pub(crate) fn redacted_url(url: &str) -> String {
    let (_, user_info, query) = url_parts(url);
    let mut out = String::with_capacity(url.len());
    let head_end = query.unwrap_or(url.len());
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
        let (pairs, fragment) = match url[q + 1..].split_once('#') {
            Some((pairs, fragment)) => (pairs, Some(fragment)),
            None => (&url[q + 1..], None),
        };
        let shown: Vec<String> = pairs
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if is_password_param(name) => format!("{name}=REDACTED"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push_str(&shown.join("&"));
        if let Some(fragment) = fragment {
            out.push('#');
            out.push_str(fragment);
        }
    }
    out
}

fn is_password_param(name: &str) -> bool {
    let name = percent_decode(name);
    PASSWORD_PARAMS.iter().any(|p| name.eq_ignore_ascii_case(p))
}

/// Every password in `url` (user information and query), as written and as
/// decoded, to scrub from any text that might quote one.
pub(crate) fn passwords_of(url: &str) -> Vec<String> {
    let (_, user_info, query) = url_parts(url);
    let mut found = Vec::new();
    if let Some((start, at)) = user_info {
        let credentials = &url[start..at];
        if let Some((_, password)) = credentials.split_once(':') {
            found.push(password.to_owned());
        }
    }
    if let Some(q) = query {
        let pairs = url[q + 1..].split('#').next().unwrap_or_default();
        for pair in pairs.split('&') {
            if let Some((name, value)) = pair.split_once('=') {
                if is_password_param(name) {
                    found.push(value.to_owned());
                    found.push(percent_decode(&value.replace('+', " ")));
                }
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
            "unix:///run/r.sock?Password=REDACTED&user=u#x"
        );
        // An `@` in a query password is not taken for user information.
        assert_eq!(
            redacted_url("redis+unix:///r.sock?pass=a@b"),
            "redis+unix:///r.sock?pass=REDACTED"
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
