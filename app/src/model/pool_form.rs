//! A pool as the admin's form carries it: every field as typed text, so a
//! mistyped number becomes a refusal naming the field instead of a failed
//! request. Lists are one entry per line: images, `key=value` node labels,
//! and tolerations in taint syntax (`key=value:NoSchedule`, `key:NoSchedule`,
//! or `key` alone to tolerate every effect of that key).

use super::FieldError;
use super::{KindSpec, NewPool, Pool, PoolPatch, Toleration};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KindForm {
    pub kind: String,
    pub capacity: String,
    pub replicas_per_unit: String,
    pub vram_gb_per_unit: String,
    pub cpu_millis_per_unit: String,
    pub memory_mib_per_unit: String,
    pub storage_gib_per_unit: String,
    /// Empty: the MIG profile's default.
    pub slices_per_gpu: String,
    /// Empty: the kind's share of the pool's price per GPU-hour.
    pub price_per_unit_hour: String,
    /// A checkbox: present ("on") when ticked.
    pub lend_idle: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolForm {
    pub name: String,
    pub description: String,
    pub gpu_model: String,
    pub time_zone: String,
    /// A checkbox: present ("on") when ticked.
    pub requires_approval: Option<String>,
    pub granularity_minutes: String,
    pub max_booking_minutes: String,
    pub horizon_days: String,
    pub min_notice_minutes: String,
    /// Empty: an hour (or one slot where an hour does not fit).
    pub default_booking_minutes: String,
    pub price_per_gpu_hour: String,
    pub images: String,
    /// Tenant slugs separated by commas or spaces; empty = every tenant.
    pub tenants: String,
    pub node_selector: String,
    pub tolerations: String,
    /// Empty: session pods name no priority class.
    pub priority_class: String,
    /// Empty: no runtime class.
    pub runtime_class: String,
    /// Empty: 30 s.
    pub end_grace_seconds: String,
    /// Empty: each person's own model cache.
    #[serde(default)]
    pub team_cache_class: String,
    pub kinds: Vec<KindForm>,
    /// Empty: no backfill queue.
    pub backfill_namespace: String,
    /// Empty: the site's `--scale-ahead`.
    pub scale_ahead_minutes: String,
    /// The cluster's name; empty: the only cluster (new pools) or where it is.
    pub cluster: String,
}

fn number<T: std::str::FromStr>(field: &str, text: &str) -> Result<T, FieldError> {
    text.trim().parse().map_err(|_| FieldError::new(field, "must be a number"))
}

fn optional<T: std::str::FromStr>(field: &str, text: &str) -> Result<Option<T>, FieldError> {
    if text.trim().is_empty() {
        Ok(None)
    } else {
        number(field, text).map(Some)
    }
}

/// A refusal of one entry of the form's lists ("images[1]",
/// "node_selector.gpu", "tolerations[0].key": the request's names) as one
/// of the text area the entry was typed in, naming the entry: the form
/// says it beside that area.
pub fn refusal_on_form(refused: FieldError) -> FieldError {
    let (head, part) = refused.field.split_once('.').unwrap_or((&refused.field, ""));
    let reason = &refused.reason;
    match (super::list_entry(head), head) {
        (Some(("images", n)), _) => FieldError::new("images", format!("image {n} {reason}")),
        (Some(("tolerations", n)), _) => FieldError::new("tolerations", format!("toleration {n}'s {part} {reason}")),
        (None, "node_selector") if !part.is_empty() => FieldError::new("node_selector", format!("{part} {reason}")),
        _ => refused,
    }
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

/// `key=value:Effect`, `key:Effect`, `key=value` or `key`.
fn toleration(line: &str) -> Toleration {
    let (left, effect) = match line.rsplit_once(':') {
        Some((left, effect)) => (left, Some(effect.trim().to_string())),
        None => (line, None),
    };
    let (key, value) = match left.split_once('=') {
        Some((key, value)) => (key.trim(), Some(value.trim().to_string())),
        None => (left.trim(), None),
    };
    Toleration {
        key: Some(key.to_string()),
        operator: Some(if value.is_some() { "Equal" } else { "Exists" }.into()),
        value,
        effect,
        toleration_seconds: None,
    }
}

fn toleration_line(t: &Toleration) -> String {
    let mut line = t.key.clone().unwrap_or_default();
    if let Some(value) = &t.value {
        line = format!("{line}={value}");
    }
    if let Some(effect) = &t.effect {
        line = format!("{line}:{effect}");
    }
    line
}

impl KindForm {
    /// What one unit of the row's kind grants, as typed so far (a missing
    /// capacity does not matter here); `None` for a row without a kind.
    pub fn per_unit(&self, index: usize) -> Option<Result<KindSpec, FieldError>> {
        if self.kind.trim().is_empty() {
            return None;
        }
        let capacity = if self.capacity.trim().is_empty() { "0".into() } else { self.capacity.clone() };
        Some(KindForm { capacity, ..self.clone() }.spec(index))
    }

    fn is_blank(&self) -> bool {
        self.kind.trim().is_empty() && self.capacity.trim().is_empty()
    }

    fn spec(&self, index: usize) -> Result<KindSpec, FieldError> {
        let field = |name: &str| format!("kinds[{index}].{name}");
        let or = |text: &str, default: i32, name: &str| -> Result<i32, FieldError> {
            Ok(optional(&field(name), text)?.unwrap_or(default))
        };
        Ok(KindSpec {
            kind: self.kind.trim().to_string(),
            capacity: number(&field("capacity"), &self.capacity)?,
            replicas_per_unit: or(&self.replicas_per_unit, 1, "replicas_per_unit")?,
            vram_gb_per_unit: or(&self.vram_gb_per_unit, 0, "vram_gb_per_unit")?,
            cpu_millis_per_unit: or(&self.cpu_millis_per_unit, 4000, "cpu_millis_per_unit")?,
            memory_mib_per_unit: or(&self.memory_mib_per_unit, 32 * 1024, "memory_mib_per_unit")?,
            storage_gib_per_unit: or(&self.storage_gib_per_unit, 100, "storage_gib_per_unit")?,
            slices_per_gpu: optional(&field("slices_per_gpu"), &self.slices_per_gpu)?,
            price_per_unit_hour: optional(&field("price_per_unit_hour"), &self.price_per_unit_hour)?,
            lend_idle: self.lend_idle.is_some(),
        })
    }
}

impl PoolForm {
    fn kinds(&self) -> Result<Vec<KindSpec>, FieldError> {
        self.kinds.iter().enumerate().filter(|(_, k)| !k.is_blank()).map(|(i, k)| k.spec(i)).collect()
    }

    fn node_selector(&self) -> Result<BTreeMap<String, String>, FieldError> {
        lines(&self.node_selector)
            .map(|line| {
                line.split_once('=')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| FieldError::new("node_selector", format!("{line} must be written key=value")))
            })
            .collect()
    }

    fn list(text: &str) -> Vec<String> {
        lines(text).map(str::to_string).collect()
    }

    fn tenant_slugs(&self) -> Vec<String> {
        self.tenants.split([',', ' ', '\n']).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
    }

    /// The form as a new pool; the services check the values themselves.
    pub fn to_new(&self) -> Result<NewPool, FieldError> {
        Ok(NewPool {
            name: self.name.trim().to_string(),
            description: self.description.trim().to_string(),
            gpu_model: self.gpu_model.trim().to_string(),
            requires_approval: self.requires_approval.is_some(),
            granularity_minutes: optional("granularity_minutes", &self.granularity_minutes)?,
            max_booking_minutes: optional("max_booking_minutes", &self.max_booking_minutes)?,
            horizon_days: optional("horizon_days", &self.horizon_days)?,
            min_notice_minutes: optional("min_notice_minutes", &self.min_notice_minutes)?,
            default_booking_minutes: optional("default_booking_minutes", &self.default_booking_minutes)?,
            price_per_gpu_hour: optional("price_per_gpu_hour", &self.price_per_gpu_hour)?.unwrap_or(0.0),
            images: Self::list(&self.images),
            tenants: self.tenant_slugs(),
            kinds: self.kinds()?,
            node_selector: self.node_selector()?,
            tolerations: lines(&self.tolerations).map(toleration).collect(),
            priority_class: Some(self.priority_class.trim().to_string()).filter(|c| !c.is_empty()),
            runtime_class: Some(self.runtime_class.trim().to_string()).filter(|c| !c.is_empty()),
            end_grace_seconds: optional("end_grace_seconds", &self.end_grace_seconds)?,
            team_cache_class: Some(self.team_cache_class.trim().to_string()).filter(|c| !c.is_empty()),
            time_zone: match self.time_zone.trim() {
                "" => "UTC".into(),
                zone => zone.to_string(),
            },
            backfill_namespace: Some(self.backfill_namespace.trim().to_string()).filter(|n| !n.is_empty()),
            scale_ahead_minutes: optional("scale_ahead_minutes", &self.scale_ahead_minutes)?,
            cluster: Some(self.cluster.trim().to_string()).filter(|c| !c.is_empty()),
        })
    }

    /// The form as a patch that sets every field (kinds are added or updated;
    /// a kind is never removed, its bookings keep it).
    pub fn to_patch(&self) -> Result<PoolPatch, FieldError> {
        let new = self.to_new()?;
        Ok(PoolPatch {
            name: Some(new.name),
            description: Some(new.description),
            gpu_model: Some(new.gpu_model),
            requires_approval: Some(new.requires_approval),
            granularity_minutes: new.granularity_minutes,
            max_booking_minutes: new.max_booking_minutes,
            horizon_days: new.horizon_days,
            min_notice_minutes: new.min_notice_minutes,
            default_booking_minutes: new.default_booking_minutes,
            price_per_gpu_hour: Some(new.price_per_gpu_hour),
            images: Some(new.images),
            tenants: Some(new.tenants),
            kinds: Some(new.kinds),
            node_selector: Some(new.node_selector),
            tolerations: Some(new.tolerations),
            priority_class: Some(new.priority_class.unwrap_or_default()),
            runtime_class: Some(new.runtime_class.unwrap_or_default()),
            end_grace_seconds: Some(new.end_grace_seconds.unwrap_or(crate::model::MAX_END_GRACE_SECONDS)),
            team_cache_class: Some(new.team_cache_class.unwrap_or_default()),
            time_zone: Some(new.time_zone),
            retired: None,
            // Emptied fields remove the pool's own setting.
            backfill_namespace: Some(new.backfill_namespace.unwrap_or_default()),
            scale_ahead_minutes: Some(new.scale_ahead_minutes.unwrap_or(-1)),
            // Empty leaves the pool where it is.
            cluster: new.cluster,
        })
    }

    /// A saved pool as the form shows it.
    pub fn of(pool: &Pool) -> PoolForm {
        PoolForm {
            name: pool.name.clone(),
            description: pool.description.clone(),
            gpu_model: pool.gpu_model.clone(),
            time_zone: pool.time_zone.clone(),
            requires_approval: pool.requires_approval.then(|| "on".into()),
            granularity_minutes: pool.rules.granularity_minutes.to_string(),
            max_booking_minutes: pool.rules.max_booking_minutes.to_string(),
            horizon_days: pool.rules.horizon_days.to_string(),
            min_notice_minutes: pool.rules.min_notice_minutes.to_string(),
            default_booking_minutes: pool.default_booking_minutes.to_string(),
            price_per_gpu_hour: pool.price_per_gpu_hour.to_string(),
            images: pool.images.join("\n"),
            tenants: pool.tenants.join(", "),
            node_selector: pool
                .placement
                .node_selector
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\n"),
            tolerations: pool.placement.tolerations.iter().map(toleration_line).collect::<Vec<_>>().join("\n"),
            priority_class: pool.placement.priority_class.clone().unwrap_or_default(),
            runtime_class: pool.placement.runtime_class.clone().unwrap_or_default(),
            end_grace_seconds: pool.placement.end_grace_seconds.to_string(),
            team_cache_class: pool.placement.team_cache_class.clone().unwrap_or_default(),
            kinds: pool
                .kinds
                .iter()
                .map(|k| KindForm {
                    kind: k.kind.clone(),
                    capacity: k.capacity.to_string(),
                    replicas_per_unit: k.replicas_per_unit.to_string(),
                    vram_gb_per_unit: k.vram_gb_per_unit.to_string(),
                    cpu_millis_per_unit: k.cpu_millis_per_unit.to_string(),
                    memory_mib_per_unit: k.memory_mib_per_unit.to_string(),
                    storage_gib_per_unit: k.storage_gib_per_unit.to_string(),
                    slices_per_gpu: k.slices_per_gpu.to_string(),
                    price_per_unit_hour: k.price_per_unit_hour.map(|p| p.to_string()).unwrap_or_default(),
                    lend_idle: k.lend_idle.then(|| "on".into()),
                })
                .collect(),
            backfill_namespace: pool.scheduling.backfill_namespace.clone().unwrap_or_default(),
            scale_ahead_minutes: pool.scheduling.scale_ahead_minutes.map(|m| m.to_string()).unwrap_or_default(),
            cluster: pool.cluster.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_entrys_refusal_names_its_text_area_and_entry() {
        let on_form = |field: &str, reason: &str| {
            let e = refusal_on_form(FieldError::new(field, reason));
            (e.field, e.reason)
        };
        assert_eq!(on_form("images[1]", "must be x"), ("images".into(), "image 2 must be x".into()));
        assert_eq!(
            on_form("tolerations[0].key", "must be y"),
            ("tolerations".into(), "toleration 1's key must be y".into())
        );
        assert_eq!(on_form("node_selector.gpu", "must be z"), ("node_selector".into(), "gpu must be z".into()));
        let dotted = on_form("node_selector.nvidia.com/gpu.present", "must be v");
        assert_eq!(dotted, ("node_selector".into(), "nvidia.com/gpu.present must be v".into()));
        assert_eq!(on_form("horizon_days", "must be w"), ("horizon_days".into(), "must be w".into()));
    }

    #[test]
    fn tolerations_read_and_print_in_taint_syntax() {
        for line in ["nvidia.com/gpu:NoSchedule", "dedicated=ml:NoExecute", "gpu", "zone=a"] {
            assert_eq!(toleration_line(&toleration(line)), line);
        }
        let t = toleration("nvidia.com/gpu:NoSchedule");
        assert_eq!((t.operator.as_deref(), t.value), (Some("Exists"), None));
    }

    #[test]
    fn the_per_unit_preview_reads_a_row_as_typed() {
        let row = KindForm { kind: "nvidia.com/gpu".into(), cpu_millis_per_unit: "8000".into(), ..KindForm::default() };
        let spec = row.per_unit(0).unwrap().unwrap();
        assert_eq!((spec.cpu_millis_per_unit, spec.memory_mib_per_unit, spec.replicas_per_unit), (8000, 32 * 1024, 1));
        assert!(KindForm::default().per_unit(1).is_none(), "a row without a kind previews nothing");
        let bad = KindForm { kind: "nvidia.com/gpu".into(), vram_gb_per_unit: "lots".into(), ..KindForm::default() };
        assert_eq!(bad.per_unit(2).unwrap().unwrap_err().field, "kinds[2].vram_gb_per_unit");
    }

    #[test]
    fn blank_kind_rows_are_ignored_and_bad_numbers_name_their_field() {
        let mut form = PoolForm { name: "p".into(), ..PoolForm::default() };
        form.kinds = vec![
            KindForm { kind: "nvidia.com/gpu".into(), capacity: "2".into(), ..KindForm::default() },
            KindForm::default(),
        ];
        let new = form.to_new().unwrap();
        assert_eq!((new.kinds.len(), new.kinds[0].replicas_per_unit, new.time_zone.as_str()), (1, 1, "UTC"));
        form.kinds[1] =
            KindForm { kind: "nvidia.com/mig-1g.24gb".into(), capacity: "four".into(), ..KindForm::default() };
        assert_eq!(form.to_new().unwrap_err().field, "kinds[1].capacity");
        form.kinds.truncate(1);
        form.node_selector = "no-equals-sign".into();
        let refused = form.to_new().unwrap_err();
        assert_eq!(
            (refused.field.as_str(), refused.reason.as_str()),
            ("node_selector", "no-equals-sign must be written key=value")
        );
    }
}
