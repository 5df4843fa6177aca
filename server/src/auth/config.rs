//! How the portal authenticates: its public URL, the OpenID provider, the
//! development login, session lifetimes, and how groups become roles and
//! tenants. Built from the `serve` command's flags.

use app::model::Role;
use std::time::Duration;
use url::Url;

#[derive(Clone)]
pub struct OidcSettings {
    pub issuer: String,
    pub client_id: String,
    /// Never logged; `Debug` prints it redacted.
    pub client_secret: String,
    pub scopes: Vec<String>,
    pub groups_claim: String,
    /// How the cluster names this user (kube-apiserver's
    /// `--oidc-username-claim` and `--oidc-username-prefix`, which these
    /// must equal): session RoleBindings bind that name.
    pub cluster_username: ClusterUsername,
}

/// The claim the cluster takes a user's name from, and its prefix.
#[derive(Clone, Debug)]
pub struct ClusterUsername {
    pub claim: String,
    pub prefix: String,
}

impl ClusterUsername {
    /// The user's name on the cluster, from the verified ID token's claims
    /// (`payload`: its JSON). Like kube-apiserver, an `email` claim counts
    /// only when `email_verified` is true; a missing claim gives none.
    pub fn of(&self, payload: &serde_json::Value) -> Option<String> {
        let value = payload.get(&self.claim)?.as_str().filter(|v| !v.is_empty())?;
        if self.claim == "email" && payload.get("email_verified").and_then(|v| v.as_bool()) != Some(true) {
            return None;
        }
        Some(format!("{}{value}", self.prefix))
    }
}

impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("scopes", &self.scopes)
            .field("groups_claim", &self.groups_claim)
            .field("cluster_username", &self.cluster_username)
            .finish()
    }
}

#[derive(Clone, Debug)]
pub struct GroupMapping {
    pub admin_groups: Vec<String>,
    pub manager_groups: Vec<String>,
    /// A group `<prefix><slug>` makes the user a member of tenant `<slug>`.
    pub tenant_prefix: String,
}

impl Default for GroupMapping {
    fn default() -> Self {
        Self {
            admin_groups: vec!["berth-admins".into()],
            manager_groups: vec!["berth-managers".into()],
            tenant_prefix: "berth-team-".into(),
        }
    }
}

/// Tenant slugs are lowercase letters, digits and inner dashes, ≤ 40 characters
/// (the database's `tenant_slug_format`); other group names are ignored.
fn is_slug(text: &str) -> bool {
    let ok_chars = text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    ok_chars && (1..=40).contains(&text.len()) && !text.starts_with('-') && !text.ends_with('-')
}

impl GroupMapping {
    /// The role (admin beats manager beats user) and the tenants the groups grant.
    pub fn map(&self, groups: &[String]) -> (Role, Vec<String>) {
        let has_any = |wanted: &[String]| groups.iter().any(|g| wanted.contains(g));
        let role = if has_any(&self.admin_groups) {
            Role::Admin
        } else if has_any(&self.manager_groups) {
            Role::Manager
        } else {
            Role::User
        };
        let mut tenants: Vec<String> = groups
            .iter()
            .filter_map(|g| g.strip_prefix(&self.tenant_prefix))
            .map(|slug| slug.to_ascii_lowercase())
            .filter(|slug| is_slug(slug))
            .collect();
        tenants.sort();
        tenants.dedup();
        (role, tenants)
    }
}

#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// The portal's external URL; origin checks and the redirect URL use it.
    pub public_url: Url,
    pub oidc: Option<OidcSettings>,
    /// The labelled development login (loopback only).
    pub dev_login: bool,
    pub groups: GroupMapping,
    pub idle_timeout: Duration,
    pub absolute_lifetime: Duration,
    /// The key calendar-feed URLs are derived from; `None`: one per process.
    pub calendar_key: Option<SecretKey>,
    pub rate_limits: super::rate_limit::RateLimits,
}

/// Key bytes that never reach a log line.
#[derive(Clone)]
pub struct SecretKey(pub Vec<u8>);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl AuthConfig {
    /// A configuration for tests and the benchmark: no provider, no dev login.
    pub fn local(public_url: Url) -> Self {
        Self {
            public_url,
            oidc: None,
            dev_login: false,
            groups: GroupMapping::default(),
            idle_timeout: Duration::from_secs(8 * 3600),
            absolute_lifetime: Duration::from_secs(24 * 3600),
            calendar_key: None,
            rate_limits: Default::default(),
        }
    }

    /// `scheme://host[:port]` exactly as browsers send it in `Origin`.
    pub fn origin(&self) -> String {
        self.public_url.origin().ascii_serialization()
    }

    pub fn secure_cookies(&self) -> bool {
        self.public_url.scheme() == "https"
    }

    /// Behind TLS the session cookie takes the `__Host-` prefix: browsers
    /// then accept it only if Secure, for path `/` and without a Domain, so
    /// no sibling host (a workspace under the same domain) can set or shadow it.
    pub fn login_cookie_name(&self) -> &'static str {
        if self.secure_cookies() {
            "__Host-berth_session"
        } else {
            "berth_session"
        }
    }

    /// `<public url>/auth/callback`, the one redirect URL registered at the provider.
    pub fn redirect_url(&self) -> Url {
        self.public_url.join("auth/callback").expect("a base URL joins a relative path")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn groups_map_to_the_highest_role_and_to_valid_tenant_slugs() {
        let mapping = GroupMapping::default();
        assert_eq!(mapping.map(&groups(&[])), (Role::User, vec![]));
        assert_eq!(mapping.map(&groups(&["berth-team-a", "other"])), (Role::User, groups(&["a"])));
        assert_eq!(
            mapping.map(&groups(&["berth-managers", "berth-team-b", "berth-team-a", "berth-team-a"])),
            (Role::Manager, groups(&["a", "b"]))
        );
        assert_eq!(mapping.map(&groups(&["berth-managers", "berth-admins"])).0, Role::Admin);
        // Not slugs: empty, leading dash, spaces, too long; upper case is folded.
        let odd = ["berth-team-", "berth-team--x", "berth-team-a b", "berth-team-Ops"];
        let long = format!("berth-team-{}", "x".repeat(41));
        let mut all = groups(&odd);
        all.push(long);
        assert_eq!(mapping.map(&all).1, groups(&["ops"]));
    }

    #[test]
    fn origin_and_redirect_follow_the_public_url() {
        let config = AuthConfig::local(Url::parse("https://berth.example.org/").unwrap());
        assert_eq!(config.origin(), "https://berth.example.org");
        assert!(config.secure_cookies());
        assert_eq!(config.redirect_url().as_str(), "https://berth.example.org/auth/callback");
        let local = AuthConfig::local(Url::parse("http://127.0.0.1:3000").unwrap());
        assert_eq!(local.origin(), "http://127.0.0.1:3000");
        assert!(!local.secure_cookies());
    }
}
