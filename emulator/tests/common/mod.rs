//! A plain HTTP client for the emulator's tests (not the project's own client,
//! so that the emulator is checked independently).
#![allow(dead_code)]

use roomchat_emulator::{Emulator, EmulatorConfig};
use serde_json::Value;

/// Prints a figure (a line of measured numbers the test command shows) to stderr,
/// past the test harness's capture: the test command takes it from the log of its
/// one workspace run instead of running the test again with `--nocapture`.
pub fn figure(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub text: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

pub fn send(agent: &ureq::Agent, method: &str, url: &str, body: Option<&str>) -> Answer {
    let builder = ureq::http::Request::builder().method(method).uri(url);
    let result = match body {
        Some(b) => agent.run(
            builder
                .header("content-type", "application/json")
                .body(b.as_bytes().to_vec())
                .unwrap(),
        ),
        None => agent.run(builder.body(()).unwrap()),
    };
    let mut response = result.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_string()
        .unwrap_or_default();
    Answer {
        status,
        headers,
        text,
    }
}

/// An emulator and helpers bound to it.
pub struct Fixture {
    pub emu: Emulator,
    pub agent: ureq::Agent,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with(EmulatorConfig::default())
    }

    pub fn with(config: EmulatorConfig) -> Fixture {
        Fixture {
            emu: Emulator::start(config).unwrap(),
            agent: agent(),
        }
    }

    /// `path` with `?auth=<key>` (and `extra` query) appended.
    pub fn api(&self, path: &str, extra: &str) -> String {
        let sep = if extra.is_empty() { "" } else { "&" };
        format!(
            "{}{path}?auth={}{sep}{extra}",
            self.emu.base_url(),
            self.emu.private_key()
        )
    }

    pub fn get(&self, path: &str, extra: &str) -> Answer {
        send(&self.agent, "GET", &self.api(path, extra), None)
    }

    pub fn call(&self, method: &str, path: &str, body: &str) -> Answer {
        send(&self.agent, method, &self.api(path, ""), Some(body))
    }

    pub fn admin(&self, method: &str, path: &str, body: Option<&str>) -> Answer {
        send(
            &self.agent,
            method,
            &format!("{}{path}", self.emu.admin_url()),
            body,
        )
    }

    pub fn create_user(&self, body: &str) -> Value {
        let answer = self.call("POST", "/consumer/api/v1/user", body);
        assert_eq!(answer.status, 200, "{}", answer.text);
        answer.json()
    }
}

pub const USERS: &str = "/consumer/api/v2/users";
pub const CREATE: &str = "/consumer/api/v1/user";
pub const DEACTIVATE: &str = "/consumer/api/v2/user/deactivate";

// ---- HTTPS ---------------------------------------------------------------------

pub use tokio_rustls::rustls;

/// A client like [`agent`] that trusts only the CAs in `ca_pem` (and reads no
/// proxy from the environment).
pub fn tls_agent(ca_pem: &str) -> ureq::Agent {
    let roots: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(ca_pem.as_bytes())
        .filter_map(|item| match item.unwrap() {
            ureq::tls::PemItem::Certificate(cert) => Some(cert),
            _ => None,
        })
        .collect();
    assert!(!roots.is_empty(), "no certificate in {ca_pem:?}");
    tls_agent_with_roots(ureq::tls::RootCerts::new_with_certs(&roots))
}

/// A client like [`agent`] with ureq's default roots (Mozilla's): it trusts no test CA.
pub fn public_roots_agent() -> ureq::Agent {
    tls_agent_with_roots(ureq::tls::RootCerts::WebPki)
}

fn tls_agent_with_roots(roots: ureq::tls::RootCerts) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
        .build()
        .into()
}

/// The rustls error under a failed call, if it is one.
pub fn rustls_error(error: &ureq::Error) -> Option<&rustls::Error> {
    match error {
        ureq::Error::Rustls(e) => Some(e),
        ureq::Error::Io(e) => e.get_ref()?.downcast_ref::<rustls::Error>(),
        _ => None,
    }
}

/// The certificate error of a call that must fail on the server's certificate.
pub fn certificate_error(result: Result<Answer, ureq::Error>) -> rustls::CertificateError {
    let error = match result {
        Ok(answer) => panic!("answered {} over an untrusted certificate", answer.status),
        Err(e) => e,
    };
    match rustls_error(&error) {
        Some(rustls::Error::InvalidCertificate(e)) => e.clone(),
        _ => panic!("not a certificate error: {error:?}"),
    }
}

/// [`send`], but the error is returned.
pub fn try_send(agent: &ureq::Agent, method: &str, url: &str) -> Result<Answer, ureq::Error> {
    let mut response = agent.run(
        ureq::http::Request::builder()
            .method(method)
            .uri(url)
            .body(())
            .unwrap(),
    )?;
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string()?;
    Ok(Answer {
        status,
        headers,
        text,
    })
}

/// A certificate chain and key made by the test (not by the emulator), in PEM.
pub struct TestPair {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

/// A CA and a server certificate for `names` signed by it.
pub fn test_pair(names: &[&str]) -> TestPair {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let mut ca_params = CertificateParams::default();
    // A name of its own: a client that trusts another test CA then sees an
    // unknown issuer, not a bad signature from a namesake.
    static NEXT_CA: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT_CA.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ca_params.distinguished_name.push(
        DnType::CommonName,
        format!("a test's own CA {} {n}", std::process::id()),
    );
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign];
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let params = CertificateParams::new(names).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    TestPair {
        ca_pem: ca.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

/// A directory of its own under the temporary directory, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "roomchat-emulator-test-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    /// Writes `text` to `name` in this directory; returns its path.
    pub fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- the bytes as sent --------------------------------------------------------

/// The answer to a GET with `accept_encoding`, as the emulator sent it: read
/// off the socket (or TLS stream, trusting `ca_pem`) by hand, since ureq
/// decodes gzip itself whenever a crate of the build turns its `gzip` feature on.
pub fn get_raw(
    url: &str,
    ca_pem: Option<&str>,
    accept_encoding: Option<&str>,
) -> (Vec<(String, String)>, Vec<u8>) {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::Arc;

    let (scheme, rest) = url.split_once("://").unwrap();
    let (authority, target) = rest.split_at(rest.find('/').unwrap());
    let mut request =
        format!("GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    if let Some(value) = accept_encoding {
        request.push_str(&format!("Accept-Encoding: {value}\r\n"));
    }
    request.push_str("\r\n");
    let tcp = TcpStream::connect(authority).unwrap();
    let mut raw = Vec::new();
    if scheme == "https" {
        let mut roots = rustls::RootCertStore::empty();
        for item in ureq::tls::parse_pem(ca_pem.unwrap().as_bytes()) {
            if let ureq::tls::PemItem::Certificate(cert) = item.unwrap() {
                roots
                    .add(rustls::pki_types::CertificateDer::from(cert.der().to_vec()))
                    .unwrap();
            }
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let host = authority.rsplit_once(':').unwrap().0.to_owned();
        let name = rustls::pki_types::ServerName::try_from(host).unwrap();
        let connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut tls = rustls::StreamOwned::new(connection, tcp);
        tls.write_all(request.as_bytes()).unwrap();
        // The emulator closes without close_notify: what arrived is the answer.
        let _ = tls.read_to_end(&mut raw);
    } else {
        let mut tcp = tcp;
        tcp.write_all(request.as_bytes()).unwrap();
        tcp.read_to_end(&mut raw).unwrap();
    }
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(raw[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    assert!(lines.next().unwrap().starts_with("HTTP/1.1 200"), "{head}");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[head_end + 4..].to_vec();
    if header(&headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body);
    }
    (headers, body)
}

/// A chunked body's bytes.
pub fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = chunked.windows(2).position(|w| w == b"\r\n").unwrap();
        let size_text = std::str::from_utf8(&chunked[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}

/// The value of header `name` (any case), if present.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}
