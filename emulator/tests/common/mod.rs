//! A plain HTTP client for the emulator's tests (not the project's own client,
//! so that the emulator is checked independently).
#![allow(dead_code)]

use roomchat_emulator::{Emulator, EmulatorConfig};
use serde_json::Value;

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
