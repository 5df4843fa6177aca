//! What the worker applies for one booking's window: a namespace of its own
//! with quota, defaults, access, network isolation, proxy settings, storage
//! and the workspace. Every builder is a pure function of the `Session` (what
//! was booked, by whom) and the `Cluster` (how this cluster is set up), so
//! the same objects come out every time and a converged pass can compare.

mod access;
pub mod ahead;
mod cache;
pub mod kueue;
mod namespace;
mod network;
mod objects;
mod quota;
pub mod window;
mod workspace;

pub use access::{
    access_secret, quota_reader_binding, quota_reader_role, session_user_binding, ACCESS_SECRET, RETIRED_BINDING,
    SESSION_USER_ROLE,
};
pub use cache::{cacheable, image_cache_daemon_set, IMAGE_CACHE};
pub use namespace::{
    backfill_namespace, namespace, toleration, GPU_KIND_ANNOTATION, HOST_ANNOTATION, NODE_SELECTOR_ANNOTATION,
    PRIORITY_CLASS_ANNOTATION, RUNTIME_CLASS_ANNOTATION, TOLERATION_ANNOTATION,
};
pub use network::{network_policies, proxy_config_map, PUBLISHED_PORT};
pub use objects::{all, preview, SessionObjects};
pub use quota::{limit_range, resource_quota};
pub use window::{session_config, KeptUntil, Volume, Window};
pub use workspace::{deployment, host, ingress, persistent_volume_claims, route, service, HOLDERS_ANNOTATION};

use std::collections::BTreeMap;
use uuid::Uuid;

/// The field manager of every server-side apply.
pub const FIELD_MANAGER: &str = "berth";
/// Label marking everything Berth manages.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "berth");
pub const BOOKING_LABEL: &str = "berth.io/booking";

/// The label selector of everything Berth manages.
pub fn managed_selector() -> String {
    format!("{}={}", MANAGED_BY.0, MANAGED_BY.1)
}

/// Whether an object carries Berth's managed-by label.
pub fn is_managed(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> bool {
    meta.labels.as_ref().and_then(|l| l.get(MANAGED_BY.0)).is_some_and(|v| v == MANAGED_BY.1)
}
pub const TENANT_LABEL: &str = "berth.io/tenant";
/// Whether a namespace is Berth's for `booking` (any booking when `None`):
/// label *and* annotation, never the name alone. Returns the booking.
pub fn owned_by(ns: &k8s_openapi::api::core::v1::Namespace, booking: Option<Uuid>) -> Option<Uuid> {
    let meta = &ns.metadata;
    let managed = is_managed(meta);
    let id = meta.annotations.as_ref().and_then(|a| a.get(BOOKING_ANNOTATION)).and_then(|v| v.parse::<Uuid>().ok())?;
    (managed && booking.is_none_or(|b| b == id)).then_some(id)
}

/// Annotation in which the worker stamps a digest of each object it
/// applies, as it built it: a repair pass compares digests, so it reads
/// the cluster's objects as metadata only (`snapshot`), and a changed
/// template (a new version, a co-owner) shows as a new digest. Only the
/// worker may write it (policy berth-session-labels), and only the worker
/// may change an object that carries it (berth-session-objects).
pub const APPLIED_ANNOTATION: &str = "berth.io/applied";

/// The digest of `object` as built (without its own stamp): 16 hex digits
/// of its SHA-256.
pub fn digest(object: &serde_json::Value) -> String {
    use sha2::{Digest, Sha256};
    let bytes = serde_json::to_vec(object).unwrap_or_default();
    Sha256::digest(bytes).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Annotation with the booking's id: a namespace is only ever Berth's when
/// label *and* annotation say so, never by its name alone.
pub const BOOKING_ANNOTATION: &str = "berth.io/booking-id";

/// One resource kind of the booked pool, with its per-unit grants.
#[derive(Clone, Debug, PartialEq)]
pub struct KindGrant {
    pub kind: String,
    pub replicas_per_unit: i32,
    pub cpu_millis_per_unit: i32,
    pub memory_mib_per_unit: i32,
    pub storage_gib_per_unit: i32,
    /// The session lends its idle units to the pool's backfill queue (`--kueue`).
    pub lend_idle: bool,
}

/// What was booked, by whom: everything the builders read of a booking.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub booking_id: Uuid,
    /// The booked pool (its Kueue cohort and flavor are named after it).
    pub pool_id: Uuid,
    pub tenant: String,
    /// The owner's identity as the cluster knows it (the OIDC username
    /// claim); empty when they have none or may no longer use the session.
    pub user: String,
    /// Users the owner shares the booking with, bound to the same role.
    pub co_owners: Vec<String>,
    pub quantity: i32,
    pub interactive: bool,
    pub image: String,
    /// The booked kind.
    pub kind: KindGrant,
    /// Every other GPU kind any pool offers: hard-set to zero in the quota.
    pub other_kinds: Vec<String>,
    /// The pool's node selector and tolerations, on every pod of the session.
    pub placement: app::model::Placement,
    /// The window's end and the owner's home (see `window`).
    pub window: Window,
}

/// The session's holders, in the order `HOLDERS_ANNOTATION` lists them.
/// Here, beside `Session`: the workspace (its annotation) and the access
/// objects (a binding each) both read it.
pub fn holders(session: &Session) -> Vec<String> {
    let mut holders: Vec<String> =
        std::iter::once(&session.user).chain(&session.co_owners).filter(|h| !h.is_empty()).cloned().collect();
    holders.sort();
    holders.dedup();
    holders
}

/// How this cluster is set up (from the worker's configuration).
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// The namespace of the ingress controller, the only one let in.
    pub ingress_namespace: String,
    /// Host suffix of workspace URLs: `<namespace>.<domain>`.
    pub domain: String,
    pub ingress_class: Option<String>,
    pub storage_class: Option<String>,
    /// Outbound proxy, if the cluster needs one.
    pub proxy: Option<Proxy>,
    /// Size of the model cache of sessions started before caches were kept
    /// (their claim cannot change), GiB; the others take their tenant's.
    pub model_cache_gib: i32,
    /// How workspaces are reached from outside.
    pub expose: Expose,
    /// The image pre-pull DaemonSet, when enabled.
    pub image_cache: Option<ImageCache>,
    /// Berth's own namespace, where the image cache lives.
    pub berth_namespace: String,
    /// Extended resources no session gets unless it booked them, besides
    /// every pool's kinds (`--deny-resources`).
    pub deny_resources: Vec<String>,
    /// Berth's own image, run in each workspace's pod as `berth gate`.
    pub gate_image: String,
    /// Each session also gets Kueue quota: a ClusterQueue of its own and
    /// the LocalQueue `session` (`--kueue`).
    pub kueue: bool,
    /// Room held for booked units ahead of their window (`--scale-ahead`).
    pub scale_ahead: Option<ahead::ScaleAhead>,
}

/// `--gate-image` by default: the image `make package` stages (Containerfile).
pub const DEFAULT_GATE_IMAGE: &str = concat!("berth:", env!("CARGO_PKG_VERSION"));

/// `--deny-resources` by default: whole, AMD and shared (time-sliced) GPUs.
pub const DEFAULT_DENY_RESOURCES: [&str; 3] = ["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/gpu.shared"];

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Expose {
    /// A Kubernetes Ingress (any ingress controller).
    #[default]
    Ingress,
    /// An OpenShift Route.
    Route,
}

/// A DaemonSet in Berth's own namespace pre-pulling images onto GPU nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageCache {
    /// Images to pull besides every pool's workspace images (inference
    /// engines such as vLLM, Ollama, TGI, Triton).
    pub images: Vec<String>,
    /// Registries (or registry paths, `nvcr.io/nvidia`) whose images may be
    /// pulled, by digest only (see `cache::cacheable`). From the worker's
    /// own configuration: the pools' images come from the database, which
    /// a Berth admin or a compromised portal writes.
    pub registries: Vec<String>,
    /// Which nodes are the pools' nodes.
    pub node_selector: BTreeMap<String, String>,
    pub pause_image: String,
}

impl Default for Cluster {
    /// The `berth serve` defaults (see `ClusterArgs`).
    fn default() -> Self {
        Cluster {
            ingress_namespace: "ingress-nginx".into(),
            domain: "berth.local".into(),
            ingress_class: None,
            storage_class: None,
            proxy: None,
            model_cache_gib: 200,
            expose: Expose::Ingress,
            image_cache: None,
            berth_namespace: "berth".into(),
            deny_resources: DEFAULT_DENY_RESOURCES.map(String::from).to_vec(),
            gate_image: DEFAULT_GATE_IMAGE.into(),
            kueue: false,
            scale_ahead: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Proxy {
    pub http: String,
    pub https: String,
    pub no_proxy: String,
    /// Where the proxy listens, for the egress policy.
    pub cidr: String,
    pub port: i32,
}

/// `berth-<tenant>-<first 8 hex of the booking id>`, at most 63 characters.
pub fn namespace_name(tenant: &str, booking_id: Uuid) -> String {
    let id = booking_id.simple().to_string();
    let tenant: String = tenant.chars().take(40).collect();
    format!("berth-{tenant}-{}", &id[..8])
}

impl Session {
    /// The session's namespace, named after its chain's first booking: a
    /// booking that continues the session before it keeps its namespace.
    pub fn namespace(&self) -> String {
        namespace_name(&self.tenant, self.session_id())
    }

    /// The chain's first booking (this booking unless it continues another's session).
    pub fn session_id(&self) -> Uuid {
        self.window.continues.map(|(session, _)| session).unwrap_or(self.booking_id)
    }

    /// Labels on every object of the session.
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (MANAGED_BY.0.to_string(), MANAGED_BY.1.to_string()),
            (BOOKING_LABEL.to_string(), self.booking_id.to_string()),
            (TENANT_LABEL.to_string(), self.tenant.clone()),
        ])
    }

    /// Units × time-slice replicas: what the device plugin schedules.
    pub fn schedulable_units(&self) -> i32 {
        self.quantity * self.kind.replicas_per_unit
    }
}

impl Session {
    /// The session of a booking as the database describes it.
    pub fn of(facts: app::backend::sessions::facts::BookingFacts) -> Self {
        Session {
            booking_id: facts.booking_id,
            pool_id: facts.pool_id,
            tenant: facts.tenant,
            user: facts.owner.unwrap_or_default(),
            co_owners: facts.co_owners,
            quantity: facts.quantity,
            interactive: facts.mode == app::model::Mode::Interactive,
            image: facts.image,
            kind: KindGrant {
                kind: facts.kind.kind,
                replicas_per_unit: facts.kind.replicas_per_unit,
                cpu_millis_per_unit: facts.kind.cpu_millis_per_unit,
                memory_mib_per_unit: facts.kind.memory_mib_per_unit,
                storage_gib_per_unit: facts.kind.storage_gib_per_unit,
                lend_idle: facts.kind.lend_idle,
            },
            other_kinds: facts.other_kinds,
            placement: facts.placement,
            window: Window {
                owner_id: facts.window.owner_id,
                pool: facts.window.pool,
                ends_at: facts.window.ends_at,
                home: Volume::New { gib: facts.window.home_gib },
                cache: match facts.window.cache_kept {
                    true => Volume::New { gib: facts.window.cache_gib },
                    false => Volume::PerSession { gib: facts.window.cache_gib },
                },
                kept_until: facts.window.kept_until,
                ending_soon: window::ending_soon(facts.window.ends_at, chrono::Utc::now()),
                continues: facts.window.continues,
            },
        }
    }
}

/// CPU in the API server's canonical form ("8", "500m"), so that what the
/// worker sends equals what it reads back and a converged pass writes nothing.
pub fn cpu(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

/// Memory in canonical binary form ("64Gi", "1536Mi").
pub fn memory(mib: i64) -> String {
    if mib % 1024 == 0 {
        format!("{}Gi", mib / 1024)
    } else {
        format!("{mib}Mi")
    }
}

impl Cluster {
    /// Where a session's workspace is reached.
    pub fn workspace_url(&self, session: &Session) -> String {
        format!("https://{}/", host(session, self))
    }
}

/// Metadata of a namespaced object of the session.
fn meta(session: &Session, name: &str) -> serde_json::Value {
    serde_json::json!({ "name": name, "namespace": session.namespace(), "labels": session.labels() })
}

/// Builds a typed object from JSON; the builders' JSON is fixed by tests, so
/// a failure here is a programming error caught by them.
fn typed<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("builders produce objects of their type")
}
