//! The provisioning worker. So far: the objects it will apply for a booking,
//! each built by a pure function (`manifests`), so what isolates a session
//! can be read, tested and validated before anything talks to a cluster.

pub mod manifests;
