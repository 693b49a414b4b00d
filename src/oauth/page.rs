//! The consent page: which client asks, where the code will go, and what it will read. A plain
//! HTML form (no script), every value escaped; served with a CSP that allows no script and no
//! framing, so another site can neither script nor overlay it.
use std::fmt::Write;

/// `Content-Security-Policy` of the page.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https: http:; frame-ancestors 'none'; base-uri 'none'";

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What the page shows.
pub struct Consent<'a> {
    pub client_name: Option<&'a str>,
    pub client_id: &'a str,
    /// The host the code will be sent to.
    pub redirect_host: &'a str,
    pub scope: &'a str,
    /// The request's id, posted back with the user's answer.
    pub request: &'a str,
}

pub fn render(c: &Consent<'_>) -> String {
    let name = c.client_name.unwrap_or("An unnamed application");
    let admin = if c.scope.split_whitespace().any(|s| s == "admin") {
        "<li>and, if you are one of this deployment's administrators, manage it (keys, indexing)</li>"
    } else {
        ""
    };
    let mut html = String::new();
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign in to edgerag</title>\
         <meta name=\"viewport\" content=\"width=device-width\"></head>\
         <body style=\"font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto\">\
         <h1>Sign in to edgerag</h1>\
         <p><strong>{name}</strong> (<code>{id}</code>) asks to:</p>\
         <ul><li>read the indexed repositories your GitHub account may pull</li>{admin}</ul>\
         <p>After you sign in with GitHub, you will be sent back to <strong>{host}</strong>. \
         Continue only if you started this from that application.</p>\
         <form method=\"post\" action=\"/oauth/authorize\">\
         <input type=\"hidden\" name=\"request\" value=\"{req}\">\
         <button type=\"submit\" name=\"decision\" value=\"allow\">Sign in with GitHub</button> \
         <button type=\"submit\" name=\"decision\" value=\"deny\">Cancel</button>\
         </form></body></html>",
        name = escape(name),
        id = escape(c.client_id),
        host = escape(c.redirect_host),
        req = escape(c.request),
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_escaped() {
        let html = render(&Consent {
            client_name: Some("<script>x</script>"),
            client_id: "\"onload=",
            redirect_host: "a&b",
            scope: "read",
            request: "r1",
        });
        assert!(!html.contains("<script>x"));
        assert!(
            html.contains("&lt;script&gt;") && html.contains("&quot;onload=") && html.contains("a&amp;b")
        );
        assert!(html.contains("name=\"request\" value=\"r1\""));
        assert!(!html.contains("administrators"));
    }
}
