//! The browser sign-in address of section 4.6, and an iframe around it.

use crate::error::{Error, Result};
use crate::wire::models::check_non_empty;
use crate::wire::{encode_path_segment, encode_query_component};

/// `{chat_url}/<room_id>?accessToken=<token>`, with the room id encoded as one
/// path segment and the token as a query value.
///
/// ```
/// let url = roomchat::sign_in_url("https://chat.example.com", "room 1", "a.b.c").unwrap();
/// assert_eq!(url, "https://chat.example.com/room%201?accessToken=a.b.c");
/// ```
pub fn sign_in_url(chat_url: &str, room_id: &str, access_token: &str) -> Result<String> {
    check_non_empty("room_id", room_id)?;
    check_non_empty("access_token", access_token)?;
    if !(chat_url.starts_with("https://") || chat_url.starts_with("http://")) {
        return Err(Error::configuration(
            "the chat URL must start with https:// or http://",
        ));
    }
    Ok(format!(
        "{}/{}?accessToken={}",
        chat_url.trim_end_matches('/'),
        encode_path_segment(room_id),
        encode_query_component(access_token)
    ))
}

/// An `<iframe>` whose `src` is `url`, with the given width and height (e.g.
/// `"100%"`, `"600"`), every attribute HTML-escaped.
///
/// ```
/// let html = roomchat::iframe_html("https://chat.example.com/r?accessToken=t&x=1", "100%", "600").unwrap();
/// assert_eq!(html, r#"<iframe src="https://chat.example.com/r?accessToken=t&amp;x=1" width="100%" height="600" style="border:0" allow="clipboard-write"></iframe>"#);
/// ```
pub fn iframe_html(url: &str, width: &str, height: &str) -> Result<String> {
    check_non_empty("url", url)?;
    Ok(format!(
        r#"<iframe src="{}" width="{}" height="{}" style="border:0" allow="clipboard-write"></iframe>"#,
        escape_html(url),
        escape_html(width),
        escape_html(height)
    ))
}

/// Escapes `& < > " '` for HTML text and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    // Runs between the five characters are copied whole (all are ASCII, so every
    // index found is a char boundary).
    let mut copied = 0;
    for (at, byte) in text.bytes().enumerate() {
        let entity = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&text[copied..at]);
        out.push_str(entity);
        copied = at + 1;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_room_and_token() {
        let url = sign_in_url("https://c.example/", "../admin?x=1#y", "t&u=\"<v>").unwrap();
        assert_eq!(
            url,
            "https://c.example/..%2Fadmin%3Fx%3D1%23y?accessToken=t%26u%3D%22%3Cv%3E"
        );
        let html = iframe_html(&url, "100\" onload=\"x", "1").unwrap();
        assert!(html.contains(r#"width="100&quot; onload=&quot;x""#));
        assert!(sign_in_url("https://c", "", "t").is_err());
    }
}
