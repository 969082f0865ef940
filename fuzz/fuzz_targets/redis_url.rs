//! A client built with `RedisBudget::new(url)` for arbitrary Redis URLs of
//! every form (one server, `redis+cluster://`, `redis+sentinel://`, their TLS
//! forms, unix sockets), a known password placed in the user information or a
//! password parameter (`pass`, `password`, `sentinel_password`), after
//! characters of the fuzzer's own (`?`, `#`, `/`, `@` and all: a password may
//! hold them written as is).
//! Checks: no panic; building never connects; an error is a Configuration error;
//! neither an error, the budget's `Debug` nor its `redacted_url` shows the password.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat::{Client, ErrorKind, OnRedisError, RedisBudget};
use roomchat_fuzz::ArbStr;

const PASSWORD: &str = "FuzzRedisPw9";
const SCHEMES: [&str; 9] = [
    "redis",
    "rediss",
    "redis+cluster",
    "rediss+cluster",
    "redis+sentinel",
    "rediss+sentinel",
    "redis+unix",
    "unix",
    "REDIS+Cluster",
];
const HOSTS: [&str; 6] = ["127.0.0.1:7000", "localhost", "[::1]:26379", "h", "", "a:b:c"];

#[derive(Arbitrary, Debug)]
enum Scheme {
    Known(u8),
    Text(String),
}

#[derive(Arbitrary, Debug)]
enum Password {
    None,
    UserInfo { user: Option<String>, chars: String },
    Param { name: u8, chars: String },
}

#[derive(Arbitrary, Debug)]
struct Input {
    scheme: Scheme,
    password: Password,
    hosts: Vec<ArbStr>,
    known_hosts: Vec<u8>,
    path: ArbStr,
    query: Option<String>,
}

fuzz_target!(|input: Input| {
    let scheme = match &input.scheme {
        Scheme::Known(n) => SCHEMES[*n as usize % SCHEMES.len()].to_owned(),
        // A scheme is letters, digits, `+`, `-` and `.`: text with a `?` or `/`
        // there puts the user information this target writes into a query or
        // path, where no URL parser reads a password.
        Scheme::Text(t) => t
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || "+-.".contains(*c))
            .collect(),
    };
    let mut hosts: Vec<String> = input.hosts.iter().take(8).map(ArbStr::get).collect();
    hosts.extend(input.known_hosts.iter().take(8).map(|n| HOSTS[*n as usize % HOSTS.len()].to_owned()));
    let mut query = input.query.clone().unwrap_or_default();
    let userinfo = match &input.password {
        Password::None => String::new(),
        // A user name holds no `/`, `?`, `#` or `@` (they would end the user information).
        // The password's own characters may be anything: it ends at the URL's last `@`.
        Password::UserInfo { user, chars } => format!(
            "{}:{}{PASSWORD}@",
            user.as_deref()
                .unwrap_or("")
                .replace(['/', '?', '#', '@', ':'], ""),
            chars
        ),
        // A parameter's value ends at an `&` (and a `#` starts the fragment, shown
        // redacted anyway): anything else may be in it.
        Password::Param { name, chars } => {
            let name = ["pass", "password", "sentinel_password"][*name as usize % 3];
            query = format!("{name}={}{PASSWORD}&{query}", chars.replace('&', ""));
            String::new()
        }
    };
    let query = if query.is_empty() { String::new() } else { format!("?{query}") };
    let url = format!("{scheme}://{userinfo}{}/{}{query}", hosts.join(","), input.path.get());
    // The password counts as leaked only where the fuzzer did not also write it elsewhere.
    let judged = url.matches(PASSWORD).count() == usize::from(!matches!(input.password, Password::None));
    let budget = RedisBudget::new(url.clone()).on_error(OnRedisError::FailClosed);
    if judged {
        assert!(!format!("{budget:?}").contains(PASSWORD), "{budget:?}");
        assert!(!budget.redacted_url().contains(PASSWORD), "{}", budget.redacted_url());
    }
    let started = std::time::Instant::now();
    let built = Client::builder("sk_FUZZ_redis_url_key")
        .base_url("http://127.0.0.1:9")
        .redis_budget(budget)
        .build();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "building connected: {url:?}"
    );
    if let Err(e) = built {
        assert_eq!(e.kind(), ErrorKind::Configuration, "{e}");
        if judged {
            assert!(!e.to_string().contains(PASSWORD), "{e}");
            assert!(!format!("{e:?}").contains(PASSWORD), "{e:?}");
        }
    }
});
