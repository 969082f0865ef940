//! Which certificate authorities an `https://` client trusts, and what a
//! certificate failure says.
//!
//! Mozilla's roots (bundled) are the default; the operating system's store is
//! a choice ([`TlsRoots::System`]). Roots a user adds — in PEM, from
//! [`ClientBuilder::add_root_certificates_pem`](crate::ClientBuilder::add_root_certificates_pem)
//! or from the file named by `SSL_CERT_FILE` — are trusted beside them (a
//! TLS-inspecting gateway, a private CA).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use once_cell::sync::Lazy;
use ureq::tls::{Certificate, PemItem, RootCerts};
use ureq::unversioned::transport::RustlsConnector;

use crate::error::{Error, ErrorKind, Result};
use crate::transport::fork::{self, ForkLocal};

/// The environment variable naming a PEM file of extra roots, as OpenSSL,
/// curl and requests read it.
pub const ENV_SSL_CERT_FILE: &str = "SSL_CERT_FILE";

/// The roots an `https://` client trusts besides those added to it. Set with
/// [`ClientBuilder::tls_roots`](crate::ClientBuilder::tls_roots).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TlsRoots {
    /// Mozilla's roots, bundled with the library (the default): the same on every machine.
    #[default]
    WebPki,
    /// The operating system's trust store (on Linux the distribution's bundle,
    /// or `SSL_CERT_FILE`/`SSL_CERT_DIR` when set; the keychain on macOS; the
    /// certificate store on Windows), read when the first client with these
    /// settings is built in the process and kept for the next ones.
    System,
}

impl TlsRoots {
    /// `webpki` or `system`.
    pub fn name(self) -> &'static str {
        match self {
            TlsRoots::WebPki => "webpki",
            TlsRoots::System => "system",
        }
    }

    /// The roots called `name`.
    pub fn from_name(name: &str) -> Option<TlsRoots> {
        [TlsRoots::WebPki, TlsRoots::System]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

impl fmt::Display for TlsRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The certificates in `pem` (at least one), or a configuration error saying
/// what is wrong with it (`what` names where it came from).
pub(crate) fn certificates_in(pem: &[u8], what: &str) -> Result<Vec<Certificate<'static>>> {
    let mut found = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        match item {
            Ok(PemItem::Certificate(cert)) => {
                // Parsed as a trust anchor now, so that a broken block is an
                // error here rather than a root silently left out.
                let der = rustls::pki_types::CertificateDer::from(cert.der());
                if let Err(e) = rustls::RootCertStore::empty().add(der) {
                    return Err(Error::configuration(format!(
                        "{what} holds a certificate that cannot be used as a root: {e}"
                    )));
                }
                found.push(cert);
            }
            Ok(_) => {}
            Err(e) => {
                return Err(Error::configuration(format!(
                    "{what} is not valid PEM: {e}"
                )))
            }
        }
    }
    if found.is_empty() {
        return Err(Error::configuration(format!(
            "{what} holds no certificate (expected PEM blocks of \"-----BEGIN CERTIFICATE-----\")"
        )));
    }
    Ok(found)
}

/// The roots a client trusts: `roots` and the `added` certificates, with
/// `SSL_CERT_FILE`'s (read through `env`) when it is set.
pub(crate) fn root_certs(
    roots: TlsRoots,
    added: &[Certificate<'static>],
    env: impl Fn(&str) -> Option<String>,
) -> Result<RootCerts> {
    let mut extra = added.to_vec();
    // The system store reads SSL_CERT_FILE itself (it replaces the store).
    if roots == TlsRoots::WebPki {
        if let Some(path) = env(ENV_SSL_CERT_FILE).filter(|p| !p.trim().is_empty()) {
            let what = format!("the file {path:?} named by {ENV_SSL_CERT_FILE}");
            let pem = std::fs::read(&path)
                .map_err(|e| Error::configuration(format!("{what} cannot be read: {e}")))?;
            extra.extend(certificates_in(&pem, &what)?);
        }
    }
    let base: Vec<Certificate<'static>> = match roots {
        TlsRoots::WebPki if extra.is_empty() => return Ok(RootCerts::WebPki),
        TlsRoots::WebPki => webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .map(|der| Certificate::from_der(der.as_ref()).to_owned())
            .collect(),
        TlsRoots::System => {
            let loaded = rustls_native_certs::load_native_certs();
            if loaded.certs.is_empty() {
                let why = loaded
                    .errors
                    .first()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                return Err(Error::configuration(format!(
                    "the operating system's trust store holds no certificate{why}"
                )));
            }
            loaded
                .certs
                .iter()
                .map(|der| Certificate::from_der(der.as_ref()).to_owned())
                .collect()
        }
    };
    Ok(RootCerts::new_with_certs(
        &base.into_iter().chain(extra).collect::<Vec<_>>(),
    ))
}

/// The TLS of every client in the process that trusts the same roots: the
/// roots, parsed once, and one rustls connector, whose configuration (the
/// root store) is built at its first handshake and whose session cache lets a
/// new client's first connection resume a session an earlier client made.
/// Without it each client would read `SSL_CERT_FILE` and parse a few hundred
/// roots again before its first call.
#[derive(Clone)]
pub(crate) struct SharedTls {
    key: Arc<RootsKey>,
    roots: RootCerts,
    connector: Arc<RustlsConnector>,
    generation: u64,
}

/// What decides a client's roots: the choice, the PEMs added to it, and the
/// environment's file (its path, size and modification time, so that an
/// edited file is read again).
#[derive(PartialEq, Eq)]
struct RootsKey {
    roots: TlsRoots,
    added: Vec<Vec<u8>>,
    env: Vec<Option<String>>,
    cert_file: Option<(u64, Option<SystemTime>)>,
}

/// The process's shared TLS, a few entries (a process rarely has more than
/// one set of roots). Made anew in a forked child: a parent's thread may have
/// held the lock, or a session cache's, when it forked.
static SHARED_TLS: Lazy<ForkLocal<Mutex<Vec<SharedTls>>>> =
    Lazy::new(|| ForkLocal::new(Mutex::new(Vec::new())));

#[cfg(unix)]
static RELEASE_AT_EXIT: std::sync::Once = std::sync::Once::new();

/// Empties the process's shared TLS as it exits (an `atexit` handler): what the entries
/// hold (the session cache's tables, the parsed roots) is freed, so that a program that
/// freed every client it made leaves nothing of the library's behind. Valgrind's defaults
/// count what only a hash table's inner pointer reaches as "possibly lost": a C program
/// that frees all it got would fail them. A client still alive keeps its own TLS (its
/// `Arc`s); a lock held at that moment by another thread is left alone.
#[cfg(unix)]
extern "C" fn release_shared_tls() {
    let _ = std::panic::catch_unwind(|| {
        if let Ok(mut entries) = shared_entries().try_lock() {
            entries.clear();
        }
    });
}

/// At most this many sets of roots are kept; the oldest goes first.
const SHARED_TLS_ENTRIES: usize = 8;

fn shared_entries() -> &'static Mutex<Vec<SharedTls>> {
    SHARED_TLS.get(|| Mutex::new(Vec::new()))
}

impl SharedTls {
    /// The TLS for `roots` with the PEMs `added` (each checked) and the
    /// environment read through `env`: the process's, when a client with the
    /// same settings was built before, else new (and kept).
    pub(crate) fn for_settings(
        roots: TlsRoots,
        added: &[Vec<u8>],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<SharedTls> {
        let cert_file = env(ENV_SSL_CERT_FILE).filter(|p| !p.trim().is_empty());
        let key = RootsKey {
            roots,
            added: added.to_vec(),
            env: vec![cert_file.clone(), env("SSL_CERT_DIR")],
            cert_file: cert_file.as_ref().and_then(|path| {
                let meta = std::fs::metadata(path).ok()?;
                Some((meta.len(), meta.modified().ok()))
            }),
        };
        if let Some(found) = shared_entries()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|t| *t.key == key)
        {
            return Ok(found.clone());
        }
        // Read and parsed outside the lock: other clients' builds go on meanwhile.
        let mut certs = Vec::new();
        for pem in added {
            certs.extend(certificates_in(
                pem,
                "a PEM added with add_root_certificates_pem",
            )?);
        }
        let made = SharedTls {
            key: Arc::new(key),
            roots: root_certs(roots, &certs, env)?,
            connector: Arc::new(RustlsConnector::default()),
            generation: fork::generation(),
        };
        Ok(remember(made))
    }

    /// The roots, for the agent's configuration and a `rediss://` budget.
    pub(crate) fn roots(&self) -> &RootCerts {
        &self.roots
    }

    /// This process's connector for these roots. A forked child makes its own
    /// (with the roots already parsed) and never touches the parent's.
    pub(crate) fn connector(&self) -> Arc<RustlsConnector> {
        if self.generation == fork::generation() {
            return self.connector.clone();
        }
        remember(SharedTls {
            connector: Arc::new(RustlsConnector::default()),
            generation: fork::generation(),
            ..self.clone()
        })
        .connector
    }
}

/// The process's entry for `made`'s roots: one made meanwhile by another
/// client (one connector per set), else `made`, kept (the oldest entry goes
/// when full).
fn remember(made: SharedTls) -> SharedTls {
    #[cfg(unix)]
    RELEASE_AT_EXIT.call_once(|| {
        // SAFETY: registers a function of this library with no argument; glibc runs it
        // at exit, or when this library is unloaded (atexit is per shared object).
        let _ = unsafe { libc::atexit(release_shared_tls) };
    });
    let mut entries = shared_entries().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = entries.iter().find(|t| t.key == made.key) {
        return found.clone();
    }
    if entries.len() == SHARED_TLS_ENTRIES {
        entries.remove(0);
    }
    entries.push(made.clone());
    made
}

/// Every root a client trusts, as DER certificates: what the Redis
/// connection of a `rediss://` budget trusts, so that it trusts what the
/// client trusts.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn trusted_ders(roots: &RootCerts) -> Vec<&[u8]> {
    match roots {
        RootCerts::Specific(certs) => certs.iter().map(|c| c.der()).collect(),
        _ => webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .map(|c| c.as_ref())
            .collect(),
    }
}

/// The TLS failure in `e`, if it is one: a certificate the client rejected,
/// or a handshake that failed. Never retried: the next attempt would meet the
/// same certificate.
pub(crate) fn tls_failure(e: &ureq::Error) -> Option<Error> {
    let rustls_error = match e {
        ureq::Error::Rustls(inner) => Some(inner),
        ureq::Error::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        _ => None,
    }?;
    Some(Error::new(ErrorKind::Tls, describe(rustls_error)))
}

/// A sentence naming why the handshake failed.
fn describe(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    let why = match e {
        rustls::Error::InvalidCertificate(cert) => match cert {
            C::UnknownIssuer => "its issuer is unknown: no trusted root signed it (give the client its CA in PEM, or name a PEM file in SSL_CERT_FILE)".to_owned(),
            C::Expired | C::ExpiredContext { .. } => "it has expired".to_owned(),
            C::NotValidYet | C::NotValidYetContext { .. } => "it is not valid yet".to_owned(),
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "its names do not include the host connected to (a name mismatch)".to_owned()
            }
            C::Revoked => "it has been revoked".to_owned(),
            C::BadSignature => "its signature is bad".to_owned(),
            C::BadEncoding => "it is not a valid certificate".to_owned(),
            other => format!("{other:?}"),
        },
        other => return format!("the TLS handshake failed: {other}"),
    };
    format!("the server's certificate was rejected: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_without_a_certificate_is_a_configuration_error() {
        for pem in [
            "",
            "hello",
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n",
        ] {
            let e = certificates_in(pem.as_bytes(), "the CA PEM").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Configuration, "{e}");
            assert!(e.message().contains("the CA PEM"), "{e}");
        }
    }

    #[test]
    fn roots_are_mozillas_unless_told_otherwise() {
        assert!(matches!(
            root_certs(TlsRoots::WebPki, &[], |_| None).unwrap(),
            RootCerts::WebPki
        ));
        let e = root_certs(TlsRoots::WebPki, &[], |_| {
            Some("/nonexistent/ca.pem".into())
        })
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains("SSL_CERT_FILE"), "{e}");
        assert_eq!(TlsRoots::from_name("system"), Some(TlsRoots::System));
        assert_eq!(TlsRoots::from_name("webpki"), Some(TlsRoots::WebPki));
        assert_eq!(TlsRoots::from_name("native"), None);
    }

    #[test]
    fn each_certificate_failure_is_named() {
        use rustls::CertificateError as C;
        for (error, said) in [
            (C::UnknownIssuer, "issuer is unknown"),
            (C::Expired, "expired"),
            (C::NotValidForName, "name mismatch"),
        ] {
            let text = describe(&rustls::Error::InvalidCertificate(error));
            assert!(text.contains(said), "{text}");
        }
    }
}
