//! HTTPS: the certificates the emulator serves, and what its handshakes did.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The names of [`EmulatorTls::generated`]'s server certificate: the loopback
/// host under each name a client may use for it.
pub const TLS_DEFAULT_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How the emulator serves HTTPS (see [`crate::EmulatorConfig::tls`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmulatorTls {
    /// A CA made at start (its key never leaves the process) and a server
    /// certificate signed by it; clients trust it through [`crate::Emulator::ca_pem`]
    /// or [`crate::Emulator::ca_file`].
    Generated {
        /// The server certificate's subject alternative names: IP addresses
        /// (`127.0.0.1`, `::1`) become IP names, anything else a DNS name.
        /// Must not be empty. [`EmulatorTls::generated`] gives [`TLS_DEFAULT_NAMES`].
        names: Vec<String>,
        /// Serve a server certificate that expired yesterday (the CA stays
        /// valid), for tests of a client's certificate checks.
        expired: bool,
    },
    /// Serve a given certificate chain and private key (PEM files, read at start).
    Files {
        /// The server certificate first, then any intermediates.
        cert_pem_path: PathBuf,
        /// The private key (PKCS#8, PKCS#1 or SEC1).
        key_pem_path: PathBuf,
        /// The CA that signed the chain, if the caller wants
        /// [`crate::Emulator::ca_pem`] and [`crate::Emulator::ca_file`] to give it
        /// back (read at start and checked to hold a certificate; never removed).
        ca_pem_path: Option<PathBuf>,
    },
}

impl EmulatorTls {
    /// A generated CA and a valid server certificate for [`TLS_DEFAULT_NAMES`].
    pub fn generated() -> EmulatorTls {
        EmulatorTls::Generated {
            names: TLS_DEFAULT_NAMES.iter().map(|n| n.to_string()).collect(),
            expired: false,
        }
    }
}

impl Default for EmulatorTls {
    /// [`EmulatorTls::generated`].
    fn default() -> Self {
        EmulatorTls::generated()
    }
}

/// The counts of connections and TLS handshakes since start (or the last reset),
/// from [`crate::Emulator::connection_stats`] and `GET /_emulator/connections`.
///
/// A client that retries after a failed handshake opens a new connection and
/// fails again, and no request reaches the journal: these counts are how a
/// test sees how many times it tried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// TCP connections accepted (plain or TLS, admin requests' included).
    pub accepted: u64,
    /// TLS handshakes completed.
    pub tls_handshakes: u64,
    /// Of those, the ones that resumed an earlier session (no certificate sent).
    pub tls_resumed: u64,
    /// TLS handshakes that failed: the client rejected the certificate (its
    /// alert is in `tls_last_failure`), spoke something else, hung up, or did
    /// not finish within `read_timeout`.
    pub tls_failed: u64,
    /// Why the latest failed handshake failed, e.g.
    /// `received fatal alert: UnknownCA`, `received fatal alert: CertificateExpired`,
    /// `received fatal alert: BadCertificate`.
    pub tls_last_failure: Option<String>,
}

/// The live counters behind [`ConnectionStats`]: atomics, so that counting a
/// connection takes no lock.
#[derive(Default)]
pub(crate) struct ConnectionCounters {
    accepted: AtomicU64,
    tls_handshakes: AtomicU64,
    tls_resumed: AtomicU64,
    tls_failed: AtomicU64,
    tls_last_failure: Mutex<Option<String>>,
}

impl ConnectionCounters {
    pub(crate) fn accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn handshake_done(&self, resumed: bool) {
        self.tls_handshakes.fetch_add(1, Ordering::Relaxed);
        if resumed {
            self.tls_resumed.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn handshake_failed(&self, why: String) {
        *self.last_failure() = Some(why);
        self.tls_failed.fetch_add(1, Ordering::Relaxed);
    }

    fn last_failure(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.tls_last_failure
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn snapshot(&self) -> ConnectionStats {
        ConnectionStats {
            accepted: self.accepted.load(Ordering::Relaxed),
            tls_handshakes: self.tls_handshakes.load(Ordering::Relaxed),
            tls_resumed: self.tls_resumed.load(Ordering::Relaxed),
            tls_failed: self.tls_failed.load(Ordering::Relaxed),
            tls_last_failure: self.last_failure().clone(),
        }
    }

    pub(crate) fn reset(&self) {
        self.accepted.store(0, Ordering::Relaxed);
        self.tls_handshakes.store(0, Ordering::Relaxed);
        self.tls_resumed.store(0, Ordering::Relaxed);
        self.tls_failed.store(0, Ordering::Relaxed);
        *self.last_failure() = None;
    }
}

/// What [`prepare`] made of an [`EmulatorTls`].
pub(crate) struct Prepared {
    pub(crate) acceptor: tokio_rustls::TlsAcceptor,
    /// The CA's PEM, when known.
    pub(crate) ca_pem: Option<String>,
    /// Where the CA's PEM is: a file of ours (generated) or the caller's.
    pub(crate) ca_file: Option<CaFile>,
}

/// The CA's PEM file; removed on drop when the emulator wrote it.
pub(crate) struct CaFile {
    pub(crate) path: PathBuf,
    owned: bool,
}

impl Drop for CaFile {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Makes or reads the certificates and the acceptor that serves them.
pub(crate) fn prepare(tls: &EmulatorTls) -> io::Result<Prepared> {
    let (chain, key, ca_pem, ca_file) = match tls {
        EmulatorTls::Generated { names, expired } => {
            let made = generate(names, *expired)?;
            let file = write_ca_file(&made.ca_pem)?;
            (made.chain, made.key, Some(made.ca_pem), Some(file))
        }
        EmulatorTls::Files {
            cert_pem_path,
            key_pem_path,
            ca_pem_path,
        } => {
            let chain = read_certificates(cert_pem_path)?;
            let key = PrivateKeyDer::from_pem_file(key_pem_path).map_err(|e| {
                // The error names the file and what is wrong, never the key's bytes.
                invalid(format!(
                    "no private key read from {}: {e}",
                    key_pem_path.display()
                ))
            })?;
            let (ca_pem, ca_file) = match ca_pem_path {
                None => (None, None),
                Some(path) => {
                    read_certificates(path)?;
                    let pem = std::fs::read_to_string(path)?;
                    let file = CaFile {
                        path: path.clone(),
                        owned: false,
                    };
                    (Some(pem), Some(file))
                }
            };
            (chain, key, ca_pem, ca_file)
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| invalid(format!("the TLS certificate and key cannot be served: {e}")))?;
    // Only HTTP/1.1 is spoken; saying so lets a client that offers h2 fall back at once.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // rustls's defaults keep sessions (TLS 1.2 ids, TLS 1.3 tickets) for resumption.
    Ok(Prepared {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        ca_pem,
        ca_file,
    })
}

fn read_certificates(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            invalid(format!(
                "cannot read certificates from {}: {e}",
                path.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(invalid(format!("no certificate in {}", path.display())));
    }
    Ok(chain)
}

struct Generated {
    ca_pem: String,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

fn generate(names: &[String], expired: bool) -> io::Result<Generated> {
    if names.is_empty() {
        return Err(invalid(
            "a generated TLS certificate needs at least one name".into(),
        ));
    }
    let cert_error = |e: rcgen::Error| invalid(format!("cannot make the TLS certificates: {e}"));
    let now = time::OffsetDateTime::now_utc();
    let day = time::Duration::days(1);

    let mut ca_params = CertificateParams::default();
    // A name of its own per start: a client that trusts another emulator's CA
    // then sees an unknown issuer, not a bad signature from a namesake.
    ca_params.distinguished_name.push(
        DnType::CommonName,
        format!("roomchat-emulator test CA {}", random_hex()?),
    );
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    // A day of slack either side of now for clocks that differ.
    ca_params.not_before = now - day;
    ca_params.not_after = now + 3650 * day;
    let ca_key = KeyPair::generate().map_err(cert_error)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(cert_error)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::new(names.to_vec()).map_err(cert_error)?;
    params
        .distinguished_name
        .push(DnType::CommonName, names[0].as_str());
    // OpenSSL's strict checks (Python 3.13's default) want the authority key id,
    // and the usages spelled out.
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    if expired {
        params.not_before = now - 30 * day;
        params.not_after = now - day;
    } else {
        params.not_before = now - day;
        params.not_after = now + 365 * day;
    }
    let key = KeyPair::generate().map_err(cert_error)?;
    let cert = params.signed_by(&key, &issuer).map_err(cert_error)?;
    Ok(Generated {
        ca_pem: ca_cert.pem(),
        chain: vec![cert.der().clone()],
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    })
}

/// 16 random hex digits.
fn random_hex() -> io::Result<String> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(random.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes the CA's PEM to a new file in the temporary directory, under a name no
/// other emulator picks.
fn write_ca_file(pem: &str) -> io::Result<CaFile> {
    use std::io::Write;
    let tag = random_hex()?;
    let path = std::env::temp_dir().join(format!(
        "roomchat-emulator-ca-{}-{tag}.pem",
        std::process::id()
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    let ca_file = CaFile { path, owned: true };
    file.write_all(pem.as_bytes())?;
    file.sync_all()?;
    Ok(ca_file)
}
