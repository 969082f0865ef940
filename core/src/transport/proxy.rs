//! Which proxy a client's requests go through: an explicit choice, or the
//! environment read the way requests and curl read it.
//!
//! The choice is made once, when the client is built, for its base URL: a
//! client talks to one host. Whatever the choice, two rules hold:
//!
//! * **Loopback is never proxied.** A request to `localhost`, `127.0.0.0/8` or
//!   `::1` stays on the host (a proxy elsewhere would see the key).
//! * **Plain `http://` goes through a proxy only when the client was told it may
//!   send the key in clear** ([`ClientBuilder::allow_insecure_http`](crate::ClientBuilder::allow_insecure_http)).
//!
//! A proxy the client cannot use (SOCKS, an unknown scheme, a malformed URL) is
//! a configuration error when the client is built, never a failure of every call.

use std::fmt;
use std::net::IpAddr;

use crate::error::{Error, Result};

/// Which proxy a client's requests go through. Set with
/// [`ClientBuilder::proxy`](crate::ClientBuilder::proxy).
///
/// ```
/// use roomchat::{Client, Proxy};
/// let through = Client::builder("sk_live_…")
///     .base_url("https://api.example.com")
///     .proxy(Proxy::url("http://user:password@proxy.internal:3128"))
///     .build()?;
/// let direct = Client::builder("sk_live_…")
///     .base_url("https://api.example.com")
///     .proxy(Proxy::None)
///     .build()?;
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Proxy {
    /// From the environment, as requests and curl read it (the default):
    /// `https_proxy`/`HTTPS_PROXY` for an `https://` base URL, `http_proxy`/`HTTP_PROXY`
    /// for `http://` (only with `allow_insecure_http`), `all_proxy`/`ALL_PROXY`
    /// when the one for the scheme is unset (lower case first; an empty value
    /// counts as unset), and none when `no_proxy`/`NO_PROXY` names the host:
    /// by name (`example.com` also covers its subdomains; `.example.com` and
    /// `*.example.com` likewise), by IP address, by CIDR range (`10.0.0.0/8`), or
    /// `*` for every host. Ports in `NO_PROXY` entries are ignored.
    #[default]
    Environment,
    /// No proxy, whatever the environment says.
    None,
    /// This proxy: `http://[user:password@]host[:port]` or `https://…` (TLS to the
    /// proxy); `https://` base URLs are tunnelled with `CONNECT`. The user
    /// information is a secret: it is shown as `REDACTED` everywhere.
    Url(String),
}

impl Proxy {
    /// [`Proxy::Url`] of `url`.
    pub fn url(url: impl Into<String>) -> Proxy {
        Proxy::Url(url.into())
    }
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Proxy::Environment => f.write_str("Environment"),
            Proxy::None => f.write_str("None"),
            Proxy::Url(url) => f
                .debug_tuple("Url")
                .field(&crate::secrets::redacted_url(url))
                .finish(),
        }
    }
}

/// The proxy a client uses, with the secrets its URL holds.
pub(crate) struct Chosen {
    /// What ureq is configured with.
    pub(crate) proxy: ureq::Proxy,
    /// The proxy's URL with its user information redacted.
    pub(crate) shown: String,
    /// Whether the proxy is reached over TLS (`https://`).
    pub(crate) over_tls: bool,
    /// The user information as written and decoded, to scrub from every error.
    pub(crate) secrets: Vec<String>,
}

/// The proxy for a client of `scheme://host`, or none.
pub(crate) fn choose(
    choice: &Proxy,
    scheme: &str,
    host: &str,
    allow_insecure: bool,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Chosen>> {
    // A proxy URL given is checked whatever the base URL: a typo is an error on the
    // developer's loopback emulator too, not first in production.
    let given = match choice {
        Proxy::Url(url) => Some(parse(url, "the proxy URL")?),
        _ => None,
    };
    if is_loopback(host) {
        return Ok(None);
    }
    let https = scheme.eq_ignore_ascii_case("https");
    if !https && !allow_insecure {
        return Ok(None);
    }
    let (url, from) = match choice {
        Proxy::None => return Ok(None),
        Proxy::Url(_) => return Ok(given),
        Proxy::Environment => {
            let var = |name: &str| {
                [name.to_ascii_lowercase(), name.to_owned()]
                    .into_iter()
                    .find_map(|n| env(&n).filter(|v| !v.trim().is_empty()).map(|v| (v, n)))
            };
            let found = if https {
                var("HTTPS_PROXY")
            } else {
                var("HTTP_PROXY")
            }
            .or_else(|| var("ALL_PROXY"));
            let Some((url, name)) = found else {
                return Ok(None);
            };
            if var("NO_PROXY").is_some_and(|(list, _)| no_proxy_matches(&list, host)) {
                return Ok(None);
            }
            (
                url.trim().to_owned(),
                format!("the environment variable {name}"),
            )
        }
    };
    parse(&url, &from).map(Some)
}

/// Checks a proxy URL and makes ureq's proxy of it.
fn parse(url: &str, from: &str) -> Result<Chosen> {
    let shown = crate::secrets::redacted_url(url);
    let refuse = |why: &str| {
        Error::configuration(format!(
            "{from} ({shown}) {why}; set an http:// or https:// proxy, or turn proxies off"
        ))
    };
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        // curl and requests take a bare `host:port` as an http proxy.
        None => ("http".to_owned(), url),
    };
    match scheme.as_str() {
        "http" | "https" => {}
        s if s.starts_with("socks") => {
            return Err(refuse(
                "is a SOCKS proxy, which this client does not support",
            ))
        }
        _ => return Err(refuse("has a scheme this client cannot use")),
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    if host_port.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refuse("is not a valid URL"));
    }
    // ureq checks neither: `http://p:abc`, `http://:3128` or `http://p:` were taken, and
    // every call then failed with a refused connection.
    let (host, port) = match host_port.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, after)) => (host, after.strip_prefix(':')),
            None => return Err(refuse("is not a valid URL")),
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    if host.is_empty() {
        return Err(refuse("has no host"));
    }
    if port.is_some_and(|p| {
        !p.bytes().all(|b| b.is_ascii_digit()) || p.parse::<u16>().map_or(true, |n| n == 0)
    }) {
        return Err(refuse("has a port that is not a number from 1 to 65535"));
    }
    let proxy = ureq::Proxy::new(&format!("{scheme}://{authority}"))
        .map_err(|_| refuse("is not a valid URL"))?;
    let mut secrets = crate::secrets::passwords_of(url);
    if let Some((user_info, _)) = authority.rsplit_once('@') {
        // A proxy's user information without a colon is a token: secret too.
        if !user_info.contains(':') {
            secrets.push(user_info.to_owned());
        }
        secrets.extend(proxy.password().map(str::to_owned));
        secrets.retain(|s| !s.is_empty());
        secrets.sort();
        secrets.dedup();
        // Longest first: a secret that contains another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
    Ok(Chosen {
        proxy,
        shown,
        over_tls: scheme == "https",
        secrets,
    })
}

/// Whether `host` (a name, an IPv4 address, or an IPv6 address with or without brackets) is loopback.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether the `NO_PROXY` list `list` names `host`.
fn no_proxy_matches(list: &str, host: &str) -> bool {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let ip = host.parse::<IpAddr>().ok();
    list.split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            let entry = entry.to_ascii_lowercase();
            if let Some((net, bits)) = entry.split_once('/') {
                return match (ip, net.parse::<IpAddr>(), bits.parse::<u8>()) {
                    (Some(ip), Ok(net), Ok(bits)) => in_cidr(ip, net, bits),
                    _ => false,
                };
            }
            let bare = entry.trim_start_matches('[');
            let bare = match bare.split_once(']') {
                // `[::1]:8080`
                Some((v6, _)) => v6.to_owned(),
                // `host:port` (one colon: not an IPv6 address)
                None if bare.matches(':').count() == 1 => {
                    bare.split(':').next().unwrap_or_default().to_owned()
                }
                None => bare.to_owned(),
            };
            if let Ok(entry_ip) = bare.parse::<IpAddr>() {
                return ip == Some(entry_ip);
            }
            let domain = bare
                .trim_start_matches("*.")
                .trim_start_matches('.')
                .trim_end_matches('.');
            !domain.is_empty()
                && (host == domain
                    || host
                        .strip_suffix(domain)
                        .is_some_and(|head| head.ends_with('.')))
        })
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn chosen(
        choice: &Proxy,
        scheme: &str,
        host: &str,
        insecure: bool,
        vars: &'static [(&'static str, &'static str)],
    ) -> Option<String> {
        choose(choice, scheme, host, insecure, env(vars))
            .unwrap()
            .map(|c| c.shown)
    }

    #[test]
    fn the_environment_is_read_per_scheme_lower_case_first() {
        let all = &[
            ("HTTPS_PROXY", "http://upper-https:1"),
            ("https_proxy", "http://lower-https:1"),
            ("HTTP_PROXY", "http://upper-http:1"),
            ("ALL_PROXY", "http://all:1"),
        ];
        let e = &Proxy::Environment;
        assert_eq!(
            chosen(e, "https", "api.example.com", false, all).as_deref(),
            Some("http://lower-https:1")
        );
        assert_eq!(
            chosen(e, "http", "api.example.com", true, all).as_deref(),
            Some("http://upper-http:1")
        );
        // Plain http without allow_insecure_http, and loopback: never.
        assert_eq!(chosen(e, "http", "api.example.com", false, all), None);
        for host in ["127.0.0.1", "localhost", "[::1]", "::1", "127.8.9.10"] {
            assert_eq!(chosen(e, "https", host, true, all), None, "{host}");
            assert_eq!(chosen(e, "http", host, true, all), None, "{host}");
        }
        // ALL_PROXY when the scheme's own is unset or empty.
        let fallback = &[("https_proxy", " "), ("all_proxy", "proxy.internal:3128")];
        assert_eq!(
            chosen(e, "https", "api.example.com", false, fallback).as_deref(),
            Some("proxy.internal:3128")
        );
        assert_eq!(chosen(e, "https", "api.example.com", false, &[]), None);
        // Proxy::None ignores the environment; an explicit URL is used as given.
        assert_eq!(
            chosen(&Proxy::None, "https", "api.example.com", false, all),
            None
        );
        assert_eq!(
            chosen(
                &Proxy::url("https://u:pw@p:8443"),
                "https",
                "api.example.com",
                false,
                &[]
            )
            .as_deref(),
            Some("https://REDACTED@p:8443")
        );
        // A URL given is checked even where it would not be used (loopback, plain http): a
        // typo fails on the developer's emulator, not first in production.
        for (scheme, host) in [
            ("http", "127.0.0.1"),
            ("https", "localhost"),
            ("http", "a.b"),
        ] {
            for bad in [
                "not a url",
                "ftp://p:1",
                "socks5://p:1",
                "http://p:abc",
                "http://p:99999",
                "http://p:",
                "http://p:0",
                "http://:3128",
                "http://u:pw@:3128",
                "http://p:-1",
                "http://[::1",
                "http://[::1]:x",
            ] {
                let e = choose(&Proxy::url(bad), scheme, host, false, env(&[]))
                    .err()
                    .unwrap_or_else(|| panic!("{bad} for {scheme}://{host}"));
                assert_eq!(e.kind(), crate::ErrorKind::Configuration, "{e}");
                assert!(e.to_string().ends_with("or turn proxies off"), "{e}");
            }
            for fine in [
                "http://p:3128",
                "p:3128",
                "http://[::1]:3128",
                "https://u:pw@p",
                "http://[::1]",
            ] {
                let chosen = choose(&Proxy::url(fine), scheme, host, false, env(&[]));
                assert!(chosen.is_ok(), "{fine} for {scheme}://{host}");
            }
        }
    }

    #[test]
    fn no_proxy_names_hosts_suffixes_addresses_and_ranges() {
        let list = "internal.example, .corp.example, *.lab.example, 10.1.2.3, 192.168.0.0/16, fd00::/8, [2001:db8::1]:443, api.test:8443";
        for host in [
            "internal.example",
            "a.internal.example",
            "x.corp.example",
            "corp.example",
            "deep.x.lab.example",
            "10.1.2.3",
            "192.168.44.5",
            "fd12::1",
            "[2001:db8::1]",
            "api.test",
            "INTERNAL.EXAMPLE.",
        ] {
            assert!(no_proxy_matches(list, host), "{host}");
        }
        for host in [
            "notinternal.example",
            "example",
            "10.1.2.4",
            "192.169.0.1",
            "fe80::1",
            "2001:db8::2",
            "api.test.evil",
        ] {
            assert!(!no_proxy_matches(list, host), "{host}");
        }
        assert!(no_proxy_matches("*", "anything.example"));
        assert!(no_proxy_matches("0.0.0.0/0", "8.8.8.8"));
        let vars = &[("HTTPS_PROXY", "http://p:1"), ("no_proxy", "example.com")];
        assert_eq!(
            chosen(&Proxy::Environment, "https", "api.example.com", false, vars),
            None
        );
        assert!(chosen(&Proxy::Environment, "https", "api.example.org", false, vars).is_some());
    }

    #[test]
    fn an_unusable_proxy_is_a_configuration_error_that_hides_its_password() {
        for (choice, vars) in [
            (
                Proxy::Environment,
                &[("ALL_PROXY", "socks5://u:hunter2@p:1080")][..],
            ),
            (Proxy::url("socks5h://u:hunter2@p:1080"), &[][..]),
            (Proxy::url("ftp://u:hunter2@p:21"), &[][..]),
            (Proxy::url("http://u:hunter2@"), &[][..]),
            (Proxy::url("http://u:hunter2@p :1"), &[][..]),
        ] {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            let error = choose(&choice, "https", "api.example.com", false, |name| {
                vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
            })
            .err()
            .unwrap_or_else(|| panic!("{choice:?} was accepted"));
            assert_eq!(error.kind(), crate::ErrorKind::Configuration);
            let shown = format!("{error} {error:?} {choice:?}");
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        let chosen = choose(
            &Proxy::url("http://me:p%40ss@p:3128"),
            "https",
            "h.example",
            false,
            |_| None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(chosen.secrets, ["p%40ss", "p@ss"]);
        assert_eq!(chosen.shown, "http://REDACTED@p:3128");
    }
}
