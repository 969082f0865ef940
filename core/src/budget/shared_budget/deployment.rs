//! The three ways a Redis deployment is reached, as the budget's URL names it:
//! one server, a Redis Cluster (`redis+cluster://`) and a primary watched by
//! Sentinel (`redis+sentinel://`). Each gives pooled connections on which the
//! budget's scripts run; every socket is made by [`connection`](super::connection).

use std::sync::Arc;
use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterClientBuilder, ClusterConnection};
use redis::{ConnectionInfo, ConnectionLike, RedisError, RedisResult, Value};

use super::connection::{tls_for, with_node_settings, Connection, Target};
use crate::secrets::{encoded_user_info, user_info_end, with_user_info_encoded};

/// The port of a sentinel whose address names none.
const SENTINEL_PORT: u16 = 26379;

/// The schemes of the multi-node forms, each with its kind and whether it is over TLS.
const MULTI_NODE_SCHEMES: [(&str, MultiNode, bool); 4] = [
    ("redis+cluster", MultiNode::Cluster, false),
    ("rediss+cluster", MultiNode::Cluster, true),
    ("redis+sentinel", MultiNode::Sentinel, false),
    ("rediss+sentinel", MultiNode::Sentinel, true),
];

/// The one-server schemes over TLS (as the redis crate reads them).
const SERVER_TLS_SCHEMES: [&str; 2] = ["rediss", "valkeys"];

#[derive(Clone, Copy)]
enum MultiNode {
    Cluster,
    Sentinel,
}

/// Whether the deployment `url` names is reached over TLS.
pub(super) fn over_tls(url: &str) -> bool {
    SERVER_TLS_SCHEMES
        .iter()
        .any(|scheme| strip_scheme(url, scheme).is_some())
        || MULTI_NODE_SCHEMES
            .iter()
            .any(|(scheme, _, tls)| *tls && strip_scheme(url, scheme).is_some())
}

/// Where the budget lives.
pub(super) enum Deployment {
    /// One server (or a primary that never moves).
    Server(Target),
    /// A Redis Cluster, reached from its seed nodes.
    Cluster(Box<ClusterNodes>),
    /// The primary that a set of sentinels names for a service.
    Sentinel(Sentinels),
}

/// A connection to the deployment, as pooled by the link.
pub(super) enum Pooled {
    Server(Connection),
    /// One connection to each node the cluster connection has needed so far.
    Cluster(Box<ClusterConnection<Connection>>),
}

pub(super) struct ClusterNodes {
    client: ClusterClient,
    /// The first seed node, asked why when the cluster cannot be mapped ([`Deployment::explain`]).
    first_seed: ConnectionInfo,
    tls: Option<Arc<rustls::ClientConfig>>,
    connect_timeout: Duration,
    io_timeout: Duration,
}

pub(super) struct Sentinels {
    /// Each sentinel, asked in order until one names the primary.
    sentinels: Vec<Target>,
    service: String,
    /// The primary's URL with `{address}` where its host and port go.
    primary_url: String,
    tls: Option<Arc<rustls::ClientConfig>>,
}

/// A URL split as the cluster and sentinel forms read it:
/// `scheme://[userinfo@]host[:port][,host[:port]…][/path][?query]`.
struct Parts<'a> {
    tls: bool,
    userinfo: Option<&'a str>,
    hosts: Vec<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
}

fn split(rest: &str, tls: bool) -> Parts<'_> {
    // The user information first, as `secrets` reads it: a password may hold a
    // `?`, `#` or `/` written as is.
    let (userinfo, after) = match user_info_end(rest) {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (location, query) = match after.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (after, None),
    };
    let (hosts, path) = location.split_once('/').unwrap_or((location, ""));
    Parts {
        tls,
        userinfo,
        hosts: hosts.split(',').filter(|h| !h.is_empty()).collect(),
        path: path.trim_end_matches('/'),
        query,
    }
}

impl Parts<'_> {
    /// A one-server URL for `host` with this URL's user information, `path` and
    /// query parameters (less those named in `leave_out`).
    fn server_url(&self, host: &str, path: &str, leave_out: &[&str]) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let userinfo = self
            .userinfo
            .map(|u| format!("{}@", encoded_user_info(u)))
            .unwrap_or_default();
        let query = self.query_without(leave_out);
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        format!("{scheme}://{userinfo}{host}/{path}{query}")
    }

    fn query_without(&self, leave_out: &[&str]) -> String {
        self.query
            .unwrap_or("")
            .split('&')
            .filter(|pair| {
                !pair.is_empty()
                    && !leave_out.contains(&pair.split_once('=').map_or(*pair, |(name, _)| name))
            })
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The value of the query parameter `name`, as written (percent-encoded).
    fn query_value(&self, name: &str) -> Option<&str> {
        self.query?
            .split('&')
            .find_map(|pair| pair.split_once('=').filter(|(n, _)| *n == name))
            .map(|(_, value)| value)
    }
}

/// The scheme of `url` when it is one of `schemes`, case-insensitively, and what follows it.
fn strip_scheme<'a>(url: &'a str, scheme: &str) -> Option<&'a str> {
    let prefix = format!("{scheme}://");
    url.get(..prefix.len())
        .filter(|s| s.eq_ignore_ascii_case(&prefix))
        .map(|_| &url[prefix.len()..])
}

/// `host` with the sentinel port added when it names none (`[::1]` stays bracketed).
fn with_sentinel_port(host: &str) -> String {
    let has_port = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.contains("]:"),
        None => host.contains(':'),
    };
    if has_port {
        host.to_owned()
    } else {
        format!("{host}:{SENTINEL_PORT}")
    }
}

fn parse_info(url: &str) -> Result<ConnectionInfo, String> {
    redis::IntoConnectionInfo::into_connection_info(url).map_err(|e| format!("is not valid: {e}"))
}

impl Deployment {
    /// The deployment `url` names; TLS ones trust the DER certificates `roots`.
    /// `Err` says why the URL cannot serve (a sentence, which may quote the
    /// URL's password: the caller scrubs it).
    pub(super) fn new(
        url: &str,
        roots: &[&[u8]],
        connect_timeout: Duration,
        io_timeout: Duration,
    ) -> Result<Deployment, String> {
        for (scheme, kind, tls) in MULTI_NODE_SCHEMES {
            if let Some(rest) = strip_scheme(url, scheme) {
                let parts = split(rest, tls);
                return match kind {
                    MultiNode::Cluster => {
                        ClusterNodes::new(parts, roots, connect_timeout, io_timeout)
                            .map(|nodes| Deployment::Cluster(Box::new(nodes)))
                    }
                    MultiNode::Sentinel => Sentinels::new(parts, roots).map(Deployment::Sentinel),
                };
            }
        }
        Target::new(parse_info(&with_user_info_encoded(url))?, roots).map(Deployment::Server)
    }

    /// A new connection, ready for the budget's scripts.
    pub(super) fn connect(
        &self,
        connect_timeout: Duration,
        io_timeout: Duration,
    ) -> RedisResult<Pooled> {
        match self {
            Deployment::Server(target) => target
                .connect(connect_timeout, io_timeout)
                .map(Pooled::Server),
            Deployment::Cluster(nodes) => nodes.within(|| {
                let connection = nodes.client.get_generic_connection::<Connection>()?;
                Ok(Pooled::Cluster(Box::new(connection)))
            }),
            Deployment::Sentinel(sentinels) => sentinels
                .connect(connect_timeout, io_timeout)
                .map(Pooled::Server),
        }
    }

    /// The error to tell for `e`, a failed connect or round trip. The redis crate tells
    /// a cluster whose slot map it could not get as "no connections found", which hides
    /// a seed refusing `CLUSTER SLOTS` to the URL's user (its ACL lacks
    /// `+cluster|slots`): the first seed is asked, and its refusal told instead. Within
    /// the caller's I/O deadline ([`connection::until`](super::connection::until)).
    pub(super) fn explain(&self, e: RedisError) -> RedisError {
        match self {
            Deployment::Cluster(nodes)
                if e.kind() == redis::ErrorKind::ClusterConnectionNotFound =>
            {
                nodes.refusal().unwrap_or(e)
            }
            _ => e,
        }
    }

    /// Runs `f`, a round trip on one of this deployment's connections (a
    /// cluster connection may connect to a node it was redirected to meanwhile).
    pub(super) fn within<T>(&self, f: impl FnOnce() -> T) -> T {
        match self {
            Deployment::Cluster(nodes) => nodes.within(f),
            _ => f(),
        }
    }
}

// ---- Redis Cluster ---------------------------------------------------------------------

impl ClusterNodes {
    fn new(
        parts: Parts<'_>,
        roots: &[&[u8]],
        connect_timeout: Duration,
        io_timeout: Duration,
    ) -> Result<ClusterNodes, String> {
        if parts.hosts.is_empty() {
            return Err("names no seed node (redis+cluster://host:port[,host:port…])".into());
        }
        if !matches!(parts.path, "" | "0") {
            return Err("names a database other than 0, which a cluster does not have".into());
        }
        let seeds = parts
            .hosts
            .iter()
            .map(|host| parse_info(&parts.server_url(host, "", &[])))
            .collect::<Result<Vec<_>, _>>()?;
        let tls = tls_for(seeds[0].addr(), roots)?;
        let first_seed = seeds[0].clone();
        let client = ClusterClientBuilder::new(seeds)
            .connection_timeout(connect_timeout)
            .response_timeout(io_timeout)
            // Redirects and a moving topology are retried a few times, briefly: a
            // caller waits for the budget within its call's time, and a cluster
            // that stays unreachable is the circuit breaker's (and policy's) to handle.
            .retries(3)
            .min_retry_wait(5)
            .max_retry_wait(50)
            .build()
            .map_err(|e| format!("is not valid: {e}"))?;
        Ok(ClusterNodes {
            client,
            first_seed,
            tls,
            connect_timeout,
            io_timeout,
        })
    }

    /// The first seed's refusal of `CLUSTER SLOTS` to the URL's user, if it refuses it.
    fn refusal(&self) -> Option<RedisError> {
        let seed = Target::with_tls(self.first_seed.clone(), self.tls.clone());
        let mut connection = seed.connect(self.connect_timeout, self.io_timeout).ok()?;
        let e = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query::<Value>(&mut connection)
            .err()?;
        super::refused_by_acl(&e).then_some(e)
    }

    fn within<T>(&self, f: impl FnOnce() -> T) -> T {
        let settings = (self.tls.clone(), self.connect_timeout, self.io_timeout);
        with_node_settings(settings, f)
    }
}

// ---- Sentinel --------------------------------------------------------------------------

impl Sentinels {
    fn new(parts: Parts<'_>, roots: &[&[u8]]) -> Result<Sentinels, String> {
        if parts.hosts.is_empty() {
            return Err(
                "names no sentinel (redis+sentinel://host[:port][,host[:port]…]/service)".into(),
            );
        }
        let (service, db) = parts.path.split_once('/').unwrap_or((parts.path, "0"));
        if service.is_empty() {
            return Err("names no service (redis+sentinel://host[:port]…/service[/db])".into());
        }
        let sentinel_credentials = match (
            parts.query_value("sentinel_username"),
            parts.query_value("sentinel_password"),
        ) {
            (None, None) => String::new(),
            (user, password) => format!("{}:{}@", user.unwrap_or(""), password.unwrap_or("")),
        };
        let primary_url =
            parts.server_url("{address}", db, &["sentinel_username", "sentinel_password"]);
        // Checked now: a URL that cannot name a primary is refused when the client is built.
        let primary = parse_info(&primary_url.replace("{address}", "127.0.0.1:6379"))?;
        // One TLS configuration (the scheme's) serves the sentinels and the primary.
        let tls = tls_for(primary.addr(), roots)?;
        let scheme = if parts.tls { "rediss" } else { "redis" };
        let sentinels = parts
            .hosts
            .iter()
            .map(|host| {
                let url = format!(
                    "{scheme}://{sentinel_credentials}{}",
                    with_sentinel_port(host)
                );
                Ok(Target::with_tls(parse_info(&url)?, tls.clone()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Sentinels {
            sentinels,
            service: service.to_owned(),
            primary_url,
            tls,
        })
    }

    /// A connection to the primary that the first sentinel to answer names,
    /// once that server says it is a primary.
    fn connect(&self, connect_timeout: Duration, io_timeout: Duration) -> RedisResult<Connection> {
        let mut last_error = None;
        for sentinel in &self.sentinels {
            let named = sentinel
                .connect(connect_timeout, io_timeout)
                .and_then(|mut connection| {
                    redis::cmd("SENTINEL")
                        .arg("get-master-addr-by-name")
                        .arg(&self.service)
                        .query::<Option<(String, u16)>>(&mut connection)
                });
            match named {
                Ok(Some((host, port))) => {
                    return self.connect_primary(&host, port, connect_timeout, io_timeout)
                }
                Ok(None) => {
                    last_error = Some(RedisError::from((
                        redis::ErrorKind::Client,
                        "a sentinel does not know the service",
                        self.service.clone(),
                    )))
                }
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| {
            RedisError::from((redis::ErrorKind::Client, "no sentinel answered"))
        }))
    }

    fn connect_primary(
        &self,
        host: &str,
        port: u16,
        connect_timeout: Duration,
        io_timeout: Duration,
    ) -> RedisResult<Connection> {
        let address = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let info = redis::IntoConnectionInfo::into_connection_info(
            self.primary_url.replace("{address}", &address).as_str(),
        )?;
        let mut connection =
            Target::with_tls(info, self.tls.clone()).connect(connect_timeout, io_timeout)?;
        // Just after a failover a sentinel may still name the old primary, now a replica.
        let role = redis::cmd("ROLE").query::<Value>(&mut connection)?;
        let is_primary = matches!(&role, Value::Array(fields)
            if matches!(fields.first(), Some(Value::BulkString(r)) if r == b"master"));
        if !is_primary {
            return Err(RedisError::from((
                redis::ErrorKind::Client,
                "the server the sentinels name is not a primary (yet)",
            )));
        }
        Ok(connection)
    }
}

// ---- pooled connections ----------------------------------------------------------------

impl ConnectionLike for Pooled {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Pooled::Server(c) => c.req_packed_command(cmd),
            Pooled::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match self {
            Pooled::Server(c) => c.req_packed_commands(cmd, offset, count),
            Pooled::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Pooled::Server(c) => c.get_db(),
            Pooled::Cluster(c) => c.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Pooled::Server(c) => c.check_connection(),
            Pooled::Cluster(c) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Pooled::Server(c) => c.is_open(),
            Pooled::Cluster(c) => c.is_open(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_and_sentinel_urls_split_into_their_parts() {
        let parts = split(":p%40ss@a:1,b:2,[::1]:3/0?protocol=resp3", false);
        assert_eq!(parts.userinfo, Some(":p%40ss"));
        assert_eq!(parts.hosts, ["a:1", "b:2", "[::1]:3"]);
        assert_eq!((parts.path, parts.query), ("0", Some("protocol=resp3")));
        assert_eq!(
            parts.server_url("a:1", "", &[]),
            "redis://:p%40ss@a:1/?protocol=resp3"
        );
        let parts = split(
            "s1,s2:5/mymaster/2?sentinel_password=x&protocol=resp3",
            true,
        );
        assert_eq!(parts.path, "mymaster/2");
        assert_eq!(parts.query_value("sentinel_password"), Some("x"));
        assert_eq!(
            parts.server_url("{address}", "2", &["sentinel_password"]),
            "rediss://{address}/2?protocol=resp3"
        );
        // A password holding `?`, `#` or `/` as is: the user information ends at
        // the last `@`, and reaches each server percent-encoded.
        let parts = split(":S3cr?t#9/x@a:1,b:2/0?protocol=resp3", false);
        assert_eq!(parts.userinfo, Some(":S3cr?t#9/x"));
        assert_eq!(parts.hosts, ["a:1", "b:2"]);
        assert_eq!((parts.path, parts.query), ("0", Some("protocol=resp3")));
        assert_eq!(
            parts.server_url("a:1", "", &[]),
            "redis://:S3cr%3Ft%239%2Fx@a:1/?protocol=resp3"
        );
        let info = parse_info(&parts.server_url("a:1", "", &[])).unwrap();
        assert_eq!(info.redis_settings().password(), Some("S3cr?t#9/x"));
        let info = parse_info(&with_user_info_encoded("redis://:S3cr?t9@h:1")).unwrap();
        assert_eq!(info.redis_settings().password(), Some("S3cr?t9"));
        assert_eq!(with_sentinel_port("s1"), "s1:26379");
        assert_eq!(with_sentinel_port("[::1]"), "[::1]:26379");
        assert_eq!(with_sentinel_port("[::1]:7"), "[::1]:7");
        for (url, tls) in [
            ("rediss://h", true),
            ("VALKEYS://h", true),
            ("rediss+cluster://a:1", true),
            ("rediss+sentinel://s/svc", true),
            ("redis://h", false),
            ("redis+cluster://a:1", false),
            ("redis+sentinel://s/svc", false),
            ("redis+unix:///r.sock", false),
        ] {
            assert_eq!(over_tls(url), tls, "{url}");
        }
    }

    #[test]
    fn bad_cluster_and_sentinel_urls_say_why() {
        let t = Duration::from_millis(100);
        let why = |url: &str| match Deployment::new(url, &[], t, t) {
            Ok(_) => String::new(),
            Err(why) => why,
        };
        assert!(why("redis+cluster://").contains("no seed node"));
        assert!(why("redis+cluster://a:1/2").contains("database other than 0"));
        assert!(why("redis+sentinel://a:1").contains("no service"));
        assert!(why("redis+sentinel://").contains("no sentinel"));
        assert!(why("REDIS+CLUSTER://a:1,b:2").is_empty());
        assert!(why("redis+sentinel://a,b:2/svc/3").is_empty());
    }
}
