//! Which requests a token's scope lets through. One rule for every way a
//! token is used: the identity layer asks it of each request, and the MCP
//! tools, which are REST requests made for the assistant, are asked the
//! same question about the request each makes.

use crate::model::TokenScope;

/// Whether a token of `scope` may make this request (`path` from the site's
/// root, as `/api/v1/bookings`).
pub fn allows(scope: TokenScope, method: &str, path: &str) -> bool {
    match scope {
        TokenScope::Full => true,
        TokenScope::Read => reads(method, path),
        TokenScope::Book => reads(method, path) || (method == "POST" && books(path)),
    }
}

/// A request that changes nothing: every GET but those that hand out a
/// standing way in, which a token that learned it would keep after its
/// revocation: opening a workspace (its gate's session), and the calendar
/// feed's secret link (made on first asking, and an admin's names every
/// pool's).
fn reads(method: &str, path: &str) -> bool {
    matches!(method, "GET" | "HEAD")
        && !matches!(segments(path).as_slice(), ["bookings", _, "open"] | ["api", "v1", "me", "calendar-feed"])
}

/// A request that books or extends: what a `book` token adds to reading.
fn books(path: &str) -> bool {
    matches!(
        segments(path).as_slice(),
        ["api", "v1", "bookings"]
            | ["api", "v1", "bookings", _, "extend"]
            | ["api", "v1", "series"]
            | ["api", "v1", "series", "preview"]
    )
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|segment| !segment.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::allows;
    use crate::model::TokenScope::{Book, Full, Read};

    #[test]
    fn read_reads_and_book_adds_booking_and_extending_only() {
        let id = "/api/v1/bookings/6f1c2b9e-0000-4000-8000-000000000000";
        for (method, path, read, book) in [
            ("GET", "/api/v1/pools", true, true),
            ("GET", id, true, true),
            ("POST", "/api/v1/bookings", false, true),
            ("POST", "/api/v1/bookings/", false, true),
            ("POST", &format!("{id}/extend"), false, true),
            ("POST", "/api/v1/series", false, true),
            ("POST", &format!("{id}/cancel"), false, false),
            ("POST", &format!("{id}/end"), false, false),
            ("POST", &format!("{id}/move"), false, false),
            ("DELETE", "/api/v1/webhooks/x", false, false),
            ("PATCH", "/api/v1/pools/x", false, false),
            ("POST", "/api/v1/pools", false, false),
            ("POST", "/rpc/cancel_booking", false, false),
            // Opening a workspace and the calendar feed's link hand out a way in: not reads.
            ("GET", "/bookings/6f1c/open", false, false),
            ("GET", "/api/v1/me/calendar-feed", false, false),
            ("HEAD", "/api/v1/me/calendar-feed/", false, false),
            ("POST", "/api/v1/me/calendar-feed", false, false),
            ("POST", "/api/v1/me/webhooks", false, false),
            ("GET", "/api/v1/me/notifications", true, true),
        ] {
            assert_eq!(allows(Read, method, path), read, "read {method} {path}");
            assert_eq!(allows(Book, method, path), book, "book {method} {path}");
            assert!(allows(Full, method, path), "full {method} {path}");
        }
    }
}
