//! HS256 JSON Web Tokens: the `accessToken` of a created user.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// What an access token says about its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenClaims {
    /// The user's id (`userId`).
    pub user_id: String,
    /// The user's display name.
    pub username: String,
    /// Whether the user was created as a moderator.
    pub is_moderator: bool,
    /// The room a moderator is limited to, if any.
    pub chat_room: Option<String>,
    /// `iat`: when the token was issued, in seconds since the Unix epoch.
    pub issued_at: u64,
}

/// Signs `claims` with `secret` as an HS256 JWT.
pub fn sign(secret: &[u8], claims: &TokenClaims) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let mut payload = json!({
        "sub": claims.user_id,
        "userId": claims.user_id,
        "username": claims.username,
        "isModerator": claims.is_moderator,
        "iat": claims.issued_at,
    });
    if let Some(room) = &claims.chat_room {
        payload["chatRoom"] = json!(room);
    }
    let payload = URL_SAFE_NO_PAD.encode(payload.to_string());
    let signing_input = format!("{header}.{payload}");
    let signature = URL_SAFE_NO_PAD.encode(mac(secret, &signing_input).finalize().into_bytes());
    format!("{signing_input}.{signature}")
}

/// Checks the signature of `token` and returns its claims, or why it is not valid.
pub fn verify(secret: &[u8], token: &str) -> Result<TokenClaims, &'static str> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the token is not a JWT");
    };
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| "the token's signature is not base64url")?;
    mac(secret, &format!("{header}.{payload}"))
        .verify_slice(&signature)
        .map_err(|_| "the token's signature does not match")?;
    let header: Value = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("the token's header is not JSON")?;
    if header["alg"] != "HS256" {
        return Err("the token's algorithm is not HS256");
    }
    let payload: Value = URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("the token's claims are not JSON")?;
    let text = |key: &str| payload[key].as_str().map(str::to_owned);
    Ok(TokenClaims {
        user_id: text("userId").ok_or("the token has no userId")?,
        username: text("username").ok_or("the token has no username")?,
        is_moderator: payload["isModerator"].as_bool().unwrap_or(false),
        chat_room: text("chatRoom"),
        issued_at: payload["iat"].as_u64().unwrap_or(0),
    })
}

fn mac(secret: &[u8], input: &str) -> HmacSha256 {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC accepts any key length");
    mac.update(input.as_bytes());
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tamper() {
        let claims = TokenClaims {
            user_id: "abc".into(),
            username: "jon".into(),
            is_moderator: true,
            chat_room: Some("room1".into()),
            issued_at: 1,
        };
        let token = sign(b"secret", &claims);
        assert_eq!(verify(b"secret", &token), Ok(claims));
        assert!(verify(b"other", &token).is_err());
        let mut tampered = token.clone();
        tampered.insert(token.find('.').unwrap() + 2, 'x');
        assert!(verify(b"secret", &tampered).is_err());
        assert!(verify(b"secret", "not-a-token").is_err());
        assert!(verify(b"secret", "a.b.c.d").is_err());
    }
}
