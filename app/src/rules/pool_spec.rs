//! What makes a pool definition acceptable, checked before anything is written.

use super::FieldError;
use crate::model::{mig_profile, KindSpec, PoolRules};

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
        return Err(FieldError::new(
            "max_booking_minutes",
            format!("must be a positive multiple of the slot granularity ({g} minutes)"),
        ));
    }
    if !(1..=MAX_HORIZON_DAYS).contains(&rules.horizon_days) {
        return Err(FieldError::new("horizon_days", format!("must be between 1 and {MAX_HORIZON_DAYS} days")));
    }
    if !(0..=7 * 1440).contains(&rules.min_notice_minutes) {
        return Err(FieldError::new("min_notice_minutes", "must be between 0 and 10080 minutes (7 days)"));
    }
    Ok(())
}

/// What a click on the calendar books: a whole number of slots, at most
/// the longest booking.
pub fn validate_default_booking(minutes: i32, rules: &PoolRules) -> Result<(), FieldError> {
    let g = rules.granularity_minutes.max(1);
    if minutes < g || minutes % g != 0 || minutes > rules.max_booking_minutes {
        return Err(FieldError::new(
            "default_booking_minutes",
            format!(
                "must be a multiple of the pool's {g}-minute slots, at most its longest booking ({} minutes)",
                rules.max_booking_minutes
            ),
        ));
    }
    Ok(())
}

/// An hour where the pool's slots and longest booking allow it, else one slot.
pub fn default_booking(rules: &PoolRules) -> i32 {
    let hour = crate::model::default_booking_minutes();
    if validate_default_booking(hour, rules).is_ok() {
        hour
    } else {
        rules.granularity_minutes
    }
}

/// A price (the pool's per GPU-hour, or a kind's per unit-hour) named by `field`.
pub fn validate_price(field: &str, price: f64) -> Result<(), FieldError> {
    if !price.is_finite() || price < 0.0 {
        return Err(FieldError::new(field, "must be a number of at least 0"));
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

/// MIG puts at most seven instances on one GPU.
pub const MAX_SLICES_PER_GPU: i32 = 7;

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
        match (spec.slices_per_gpu, mig_profile(&spec.kind)) {
            (Some(slices), None) if slices != 1 => {
                return Err(FieldError::new(field("slices_per_gpu"), "must be 1 for whole GPUs"));
            }
            (Some(slices), _) if !(1..=MAX_SLICES_PER_GPU).contains(&slices) => {
                return Err(FieldError::new(
                    field("slices_per_gpu"),
                    format!("must be between 1 and {MAX_SLICES_PER_GPU} (MIG instances on one GPU)"),
                ));
            }
            _ => {}
        }
        if let Some(price) = spec.price_per_unit_hour {
            validate_price(&field("price_per_unit_hour"), price)?;
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

/// The longest lead time a pool may hold room ahead of a window: a day.
pub const MAX_SCALE_AHEAD_MINUTES: i32 = 1440;

/// A pool's scheduling options (see `model::Scheduling`): the backfill
/// namespace is a DNS label and not a session namespace (`berth-…`, which
/// the worker deletes with its booking), and a lending kind needs one.
pub fn validate_scheduling(scheduling: &crate::model::Scheduling, lending: bool) -> Result<(), FieldError> {
    if let Some(namespace) = &scheduling.backfill_namespace {
        // A DNS label: a subdomain of one part.
        if namespace.contains('.') || !is_dns_subdomain(namespace) {
            return Err(FieldError::new(
                "backfill_namespace",
                "must be a namespace name: lower-case letters, digits and '-', at most 63",
            ));
        }
        if namespace.starts_with("berth-") || namespace == "berth" {
            return Err(FieldError::new("backfill_namespace", "must not be Berth's own or a session's namespace"));
        }
        // Berth binds its guard rails to the backfill namespace: never to the
        // cluster's own namespaces or the one everything lands in by default.
        let system = namespace.starts_with("kube-") || namespace.starts_with("openshift") || namespace == "default";
        if system {
            return Err(FieldError::new(
                "backfill_namespace",
                "must be a namespace of its own, not default, kube-… or openshift…: Berth's guard rails bind every pod in it",
            ));
        }
    }
    if lending && scheduling.backfill_namespace.is_none() {
        return Err(FieldError::new("backfill_namespace", "is needed when a kind lends its idle units"));
    }
    if let Some(minutes) = scheduling.scale_ahead_minutes {
        if !(0..=MAX_SCALE_AHEAD_MINUTES).contains(&minutes) {
            return Err(FieldError::new(
                "scale_ahead_minutes",
                format!("must be between 0 and {MAX_SCALE_AHEAD_MINUTES} (empty: the site's)"),
            ));
        }
    }
    Ok(())
}

/// The workspace's grace period when the window ends: 0–30 s (no session
/// pod may ask for more: policy berth-session-devices).
pub fn validate_end_grace(seconds: i32) -> Result<(), FieldError> {
    match (0..=crate::model::MAX_END_GRACE_SECONDS).contains(&seconds) {
        true => Ok(()),
        false => Err(FieldError::new("end_grace_seconds", "must be between 0 and 30 seconds")),
    }
}

/// The storage class of a team's shared model cache: an object name.
pub fn validate_team_cache_class(class: Option<&str>) -> Result<(), FieldError> {
    match class {
        Some(name) if !is_dns_subdomain(name) => Err(FieldError::new(
            "team_cache_class",
            "must be the name of a storage class in the cluster: lower-case letters, digits, '-' and '.'",
        )),
        _ => Ok(()),
    }
}

/// The pool's priority and runtime classes: object names (DNS subdomains).
/// The `system-` priority classes are the cluster's own components'
/// (system-node-critical preempts anything on the node): never a pool's.
pub fn validate_pod_classes(priority_class: Option<&str>, runtime_class: Option<&str>) -> Result<(), FieldError> {
    for (field, name) in [("priority_class", priority_class), ("runtime_class", runtime_class)] {
        let Some(name) = name else { continue };
        if !is_dns_subdomain(name) {
            return Err(FieldError::new(
                field,
                "must be the name of a class in the cluster: lower-case letters, digits, '-' and '.'",
            ));
        }
    }
    if priority_class.is_some_and(|name| name.starts_with("system-")) {
        return Err(FieldError::new(
            "priority_class",
            "system- classes are for the cluster's own components (they preempt everything on the node)",
        ));
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
pub(crate) fn is_dns_subdomain(prefix: &str) -> bool {
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
    // An empty selector matches every node, control-plane nodes and other
    // pools' GPU nodes included.
    if node_selector.is_empty() {
        return Err(FieldError::new(
            "node_selector",
            "must name at least one node label (key=value) of the pool's nodes",
        ));
    }
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
                "must have a label value: up to 63 letters, digits, '-', '_' or '.'",
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

/// The node selector of a pool whose admin named none:
/// `berth.io/pool=<the pool's name as a label value>`, so its sessions wait
/// for nodes labelled for it rather than landing on any node.
pub fn default_node_selector(pool_name: &str) -> std::collections::BTreeMap<String, String> {
    let mut value = String::new();
    for c in pool_name.trim().chars().map(|c| c.to_ascii_lowercase()) {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            value.push(c);
        } else if !value.ends_with('-') {
            value.push('-');
        }
    }
    let value: String = value.trim_matches('-').chars().take(63).collect();
    let value = value.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let value = if value.is_empty() { "pool" } else { value };
    [("berth.io/pool".to_string(), value.to_string())].into()
}

/// Refuses a selector that contains, or is contained in, another pool's
/// (`others`: name and selector): every node of the narrower one is also
/// the wider one's, so the wider pool's sessions could land on the
/// narrower pool's GPU nodes, tolerations and all.
pub fn validate_separate(
    node_selector: &std::collections::BTreeMap<String, String>,
    others: &[(String, std::collections::BTreeMap<String, String>)],
) -> Result<(), FieldError> {
    let within = |a: &std::collections::BTreeMap<String, String>, b: &std::collections::BTreeMap<String, String>| {
        a.iter().all(|(key, value)| b.get(key) == Some(value))
    };
    match others.iter().find(|(_, other)| within(other, node_selector) || within(node_selector, other)) {
        None => Ok(()),
        Some((name, other)) => {
            let labels: Vec<String> = other.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Err(FieldError::new(
                "node_selector",
                format!(
                    "overlaps pool {name}'s ({}): one selector contains the other, so one pool's sessions could \
                     run on the other's nodes; add a label that tells them apart",
                    labels.join(", ")
                ),
            ))
        }
    }
}

#[cfg(test)]
mod placement_tests;
