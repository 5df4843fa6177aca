//! What makes a pool definition acceptable, checked before anything is written.

use super::FieldError;
use crate::model::{KindSpec, PoolRules};

const MAX_CAPACITY: i32 = 10_000;

/// The longest booking horizon a pool may have. Every booking therefore ends
/// within this many days of when it was made or last extended.
pub const MAX_HORIZON_DAYS: i32 = 366;

pub fn validate_name(name: &str) -> Result<(), FieldError> {
    let len = name.trim().chars().count();
    if len == 0 || len > 100 {
        return Err(FieldError::new("name", "must be 1 to 100 characters"));
    }
    Ok(())
}

pub fn validate_rules(rules: &PoolRules) -> Result<(), FieldError> {
    let g = rules.granularity_minutes;
    if g <= 0 || 1440 % g != 0 {
        return Err(FieldError::new("granularity_minutes", "must divide a day (1440 minutes) evenly"));
    }
    if rules.max_booking_minutes < g || rules.max_booking_minutes % g != 0 {
        return Err(FieldError::new("max_booking_minutes", "must be a positive multiple of granularity_minutes"));
    }
    if !(1..=MAX_HORIZON_DAYS).contains(&rules.horizon_days) {
        return Err(FieldError::new("horizon_days", format!("must be between 1 and {MAX_HORIZON_DAYS}")));
    }
    if !(0..=7 * 1440).contains(&rules.min_notice_minutes) {
        return Err(FieldError::new("min_notice_minutes", "must be between 0 and 10080"));
    }
    Ok(())
}

pub fn validate_price(price: f64) -> Result<(), FieldError> {
    if !price.is_finite() || price < 0.0 {
        return Err(FieldError::new("price_per_unit_hour", "must be a number of at least 0"));
    }
    Ok(())
}

pub fn validate_images(images: &[String]) -> Result<(), FieldError> {
    for (i, image) in images.iter().enumerate() {
        if image.is_empty() || image.len() > 512 || image.chars().any(char::is_whitespace) {
            return Err(FieldError::new(format!("images[{i}]"), "must be an image reference without spaces"));
        }
    }
    Ok(())
}

/// Whole GPUs (`nvidia.com/gpu`) or one MIG profile (`nvidia.com/mig-<g>g.<mem>gb`).
pub fn is_known_kind(kind: &str) -> bool {
    if kind == "nvidia.com/gpu" {
        return true;
    }
    let Some(profile) = kind.strip_prefix("nvidia.com/mig-") else {
        return false;
    };
    let Some((compute, memory)) = profile.split_once("g.") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    digits(compute) && memory.strip_suffix("gb").is_some_and(digits)
}

pub fn validate_kinds(kinds: &[KindSpec], require_some: bool) -> Result<(), FieldError> {
    if require_some && kinds.is_empty() {
        return Err(FieldError::new("kinds", "a pool needs at least one resource kind"));
    }
    for (i, spec) in kinds.iter().enumerate() {
        let field = |name: &str| format!("kinds[{i}].{name}");
        if !is_known_kind(&spec.kind) {
            return Err(FieldError::new(
                field("kind"),
                "must be nvidia.com/gpu or a MIG profile such as nvidia.com/mig-1g.24gb",
            ));
        }
        if kinds[..i].iter().any(|k| k.kind == spec.kind) {
            return Err(FieldError::new(field("kind"), "is listed twice"));
        }
        if !(0..=MAX_CAPACITY).contains(&spec.capacity) {
            return Err(FieldError::new(field("capacity"), format!("must be between 0 and {MAX_CAPACITY}")));
        }
        if !(1..=64).contains(&spec.replicas_per_unit) {
            return Err(FieldError::new(field("replicas_per_unit"), "must be between 1 and 64"));
        }
        let grants = [
            ("vram_gb_per_unit", spec.vram_gb_per_unit),
            ("cpu_millis_per_unit", spec.cpu_millis_per_unit),
            ("memory_mib_per_unit", spec.memory_mib_per_unit),
            ("storage_gib_per_unit", spec.storage_gib_per_unit),
        ];
        if let Some((name, _)) = grants.iter().find(|(_, v)| *v < 0) {
            return Err(FieldError::new(field(name), "must not be negative"));
        }
    }
    Ok(())
}

/// A label name: 1–63 characters, alphanumeric at both ends, `-_.` inside.
fn is_label_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b))
}

/// A DNS subdomain (the optional prefix of a label key): lower-case labels joined by dots.
fn is_dns_subdomain(prefix: &str) -> bool {
    prefix.len() <= 253
        && prefix.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// A Kubernetes label key: `[prefix/]name`. Keys and values never contain
/// `,` or `=`, which is what lets the namespace carry the selector as
/// `key=value` text that admission policies can compare exactly.
pub fn is_label_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(key),
    }
}

pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_label_name(value)
}

const MAX_PLACEMENT_ENTRIES: usize = 20;

/// The pool's node selector and tolerations, as Kubernetes would accept them.
pub fn validate_placement(
    node_selector: &std::collections::BTreeMap<String, String>,
    tolerations: &[crate::model::Toleration],
) -> Result<(), FieldError> {
    if node_selector.len() > MAX_PLACEMENT_ENTRIES {
        return Err(FieldError::new("node_selector", format!("may hold at most {MAX_PLACEMENT_ENTRIES} labels")));
    }
    for (key, value) in node_selector {
        if !is_label_key(key) {
            return Err(FieldError::new(
                format!("node_selector.{key}"),
                "must be a label key: [prefix/]name, name 1-63 letters, digits, '-', '_' or '.'",
            ));
        }
        if !is_label_value(value) {
            return Err(FieldError::new(
                format!("node_selector.{key}"),
                "the value must be a label value: up to 63 letters, digits, '-', '_' or '.'",
            ));
        }
    }
    if tolerations.len() > MAX_PLACEMENT_ENTRIES {
        return Err(FieldError::new("tolerations", format!("may hold at most {MAX_PLACEMENT_ENTRIES} tolerations")));
    }
    for (i, toleration) in tolerations.iter().enumerate() {
        let field = |name: &str| format!("tolerations[{i}].{name}");
        let key = toleration.key.as_deref().unwrap_or_default();
        let exists = match toleration.operator.as_deref().unwrap_or("Equal") {
            "Exists" => true,
            "Equal" => false,
            _ => return Err(FieldError::new(field("operator"), "must be Equal or Exists")),
        };
        if !key.is_empty() && !is_label_key(key) {
            return Err(FieldError::new(field("key"), "must be a label key"));
        }
        if key.is_empty() && !exists {
            return Err(FieldError::new(field("key"), "is required unless operator is Exists"));
        }
        let value = toleration.value.as_deref().unwrap_or_default();
        if exists && !value.is_empty() {
            return Err(FieldError::new(field("value"), "must be empty when operator is Exists"));
        }
        if !is_label_value(value) {
            return Err(FieldError::new(field("value"), "must be a label value"));
        }
        let effect = toleration.effect.as_deref().unwrap_or_default();
        if !["", "NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect) {
            return Err(FieldError::new(field("effect"), "must be NoSchedule, PreferNoSchedule or NoExecute"));
        }
        if toleration.toleration_seconds.is_some() && effect != "NoExecute" {
            return Err(FieldError::new(field("tolerationSeconds"), "only applies to the NoExecute effect"));
        }
    }
    Ok(())
}
