//! A session as the admission-policy tests render it: the interpreter's
//! (admission_policies.rs) and the real API server's (real_cluster_policies.rs).

use server::provisioner::manifests::{KindGrant, Session};

pub const USER: &str = "ada@example.test";

/// A session of `USER` in `tenant`, booking one unit of `kind` (2 time-slice
/// replicas) on nodes with `selector`.
pub fn session(tenant: &str, id: &str, kind: &str, selector: &[(&str, &str)]) -> Session {
    Session {
        booking_id: id.parse().unwrap(),
        pool_id: "861c3a7c-e77b-4766-9d2f-5901933eeed4".parse().unwrap(),
        tenant: tenant.into(),
        user: USER.into(),
        co_owners: vec![],
        quantity: 1,
        interactive: true,
        image: "quay.io/jupyter/pytorch-notebook:cuda12-latest".into(),
        kind: KindGrant {
            kind: kind.into(),
            replicas_per_unit: 2,
            cpu_millis_per_unit: 4000,
            memory_mib_per_unit: 32768,
            storage_gib_per_unit: 50,
            lend_idle: false,
        },
        other_kinds: vec!["nvidia.com/gpu".into()],
        placement: app::model::Placement {
            node_selector: selector.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            tolerations: vec![],
            ..Default::default()
        },
        window: server::provisioner::manifests::Window {
            owner_id: OWNER.parse().unwrap(),
            pool: "lab-h100".into(),
            ..Default::default()
        },
    }
}

/// `USER`'s id in Berth (their home claim is `home-<id>`).
pub const OWNER: &str = "00000000-0000-4000-8000-0000000000a1";
