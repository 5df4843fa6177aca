//! What makes a cluster definition acceptable, checked before anything is
//! written (the table's constraints say the same, as a last line).

use super::FieldError;
use crate::model::{ClusterAccess, ClusterSpec};

/// Longest cluster name: it appears in metric labels and worker leases, and
/// `--cluster NAME` is typed by hand.
pub const MAX_NAME: usize = 40;

/// A DNS label of at most 40 characters, like a pool's namespace-safe names.
pub fn validate_name(name: &str) -> Result<(), FieldError> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= MAX_NAME
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if ok {
        Ok(())
    } else {
        Err(FieldError::new(
            "name",
            "must be 1 to 40 lowercase letters, digits or '-', starting and ending with a letter or digit",
        ))
    }
}

/// The portal's own host may not be *under* a workspace domain (the domain
/// itself is fine): every host under it is a session's, guarded for the
/// sessions alone, and the portal's cookies and pages would be a sibling
/// site of every workspace.
pub fn portal_outside(domain: &str, portal_host: &str) -> Result<(), FieldError> {
    let (domain, host) = (domain.trim_end_matches('.').to_ascii_lowercase(), portal_host.to_ascii_lowercase());
    if host.ends_with(&format!(".{domain}")) {
        return Err(FieldError::new(
            "workspace_domain",
            format!("the portal's own host {host} is under {domain}: choose a domain the portal is not in"),
        ));
    }
    Ok(())
}

/// Everything but the name (which only a create sets).
pub fn validate(spec: &ClusterSpec) -> Result<(), FieldError> {
    match (spec.access, spec.kubeconfig_secret.as_deref()) {
        (ClusterAccess::Kubeconfig, None | Some("")) => {
            return Err(FieldError::new("kubeconfig_secret", "is required for kubeconfig access"))
        }
        (ClusterAccess::Kubeconfig, Some(secret)) if !super::pool_spec::is_dns_subdomain(secret) => {
            return Err(FieldError::new(
                "kubeconfig_secret",
                "must be a Secret name: lowercase letters, digits, '-' and '.', at most 253 characters",
            ))
        }
        (ClusterAccess::InCluster | ClusterAccess::Simulated, Some(_)) => {
            return Err(FieldError::new("kubeconfig_secret", "is only for kubeconfig access"))
        }
        _ => {}
    }
    if let Some(domain) = &spec.workspace_domain {
        if !domain.contains('.') || !super::pool_spec::is_dns_subdomain(domain) {
            return Err(FieldError::new(
                "workspace_domain",
                "must be a DNS name such as gpu.example.com (lowercase, with at least one dot)",
            ));
        }
    }
    if let Some(expose) = &spec.expose {
        if !matches!(expose.as_str(), "ingress" | "route") {
            return Err(FieldError::new("expose", "must be ingress or route"));
        }
    }
    if let Some(mode) = &spec.scale_ahead_mode {
        if !matches!(mode.as_str(), "capacity-buffer" | "placeholder") {
            return Err(FieldError::new("scale_ahead_mode", "must be capacity-buffer or placeholder"));
        }
    }
    if let Some(minutes) = spec.scale_ahead_minutes {
        if !(1..=1440).contains(&minutes) {
            return Err(FieldError::new("scale_ahead_minutes", "must be between 1 and 1440 (a day)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(access: ClusterAccess, secret: Option<&str>) -> ClusterSpec {
        ClusterSpec { kubeconfig_secret: secret.map(str::to_string), ..ClusterSpec::reached("x", access) }
    }

    #[test]
    fn names_are_short_dns_labels() {
        for good in ["default", "aws-east-1", "lab2", "a"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Lab", "-lab", "lab-", "lab_2", "lab.two", &"a".repeat(41)] {
            assert_eq!(validate_name(bad).unwrap_err().field, "name", "{bad}");
        }
    }

    #[test]
    fn a_kubeconfig_names_its_secret_and_nothing_else_does() {
        assert!(validate(&spec(ClusterAccess::Kubeconfig, Some("aws-kubeconfig"))).is_ok());
        assert!(validate(&spec(ClusterAccess::InCluster, None)).is_ok());
        assert!(validate(&spec(ClusterAccess::Simulated, None)).is_ok());
        for bad in [
            spec(ClusterAccess::Kubeconfig, None),
            spec(ClusterAccess::Kubeconfig, Some("")),
            spec(ClusterAccess::Kubeconfig, Some("Not/A/Name")),
            spec(ClusterAccess::InCluster, Some("aws-kubeconfig")),
        ] {
            assert_eq!(validate(&bad).unwrap_err().field, "kubeconfig_secret");
        }
    }

    #[test]
    fn switches_are_checked_by_name() {
        let with = |f: fn(&mut ClusterSpec)| {
            let mut s = spec(ClusterAccess::InCluster, None);
            f(&mut s);
            validate(&s).err().map(|e| e.field)
        };
        assert_eq!(with(|s| s.workspace_domain = Some("gpu.example.com".into())), None);
        assert!(super::portal_outside("example.org", "berth.example.org").is_err(), "the portal under the domain");
        assert!(super::portal_outside("Example.org.", "BERTH.example.org").is_err());
        for (domain, host) in [("berth.example.org", "berth.example.org"), ("gpu.example.org", "berth.example.org")] {
            assert_eq!(super::portal_outside(domain, host), Ok(()), "{domain} / {host}");
        }
        assert_eq!(with(|s| s.workspace_domain = Some("localhost".into())).as_deref(), Some("workspace_domain"));
        assert_eq!(with(|s| s.workspace_domain = Some("GPU.example.com".into())).as_deref(), Some("workspace_domain"));
        assert_eq!(with(|s| s.expose = Some("route".into())), None);
        assert_eq!(with(|s| s.expose = Some("nodeport".into())).as_deref(), Some("expose"));
        assert_eq!(with(|s| s.scale_ahead_mode = Some("placeholder".into())), None);
        assert_eq!(with(|s| s.scale_ahead_mode = Some("eager".into())).as_deref(), Some("scale_ahead_mode"));
        assert_eq!(with(|s| s.scale_ahead_minutes = Some(30)), None);
        assert_eq!(with(|s| s.scale_ahead_minutes = Some(0)).as_deref(), Some("scale_ahead_minutes"));
        assert_eq!(with(|s| s.scale_ahead_minutes = Some(1441)).as_deref(), Some("scale_ahead_minutes"));
    }
}
