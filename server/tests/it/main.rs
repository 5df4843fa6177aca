//! The server's integration tests: one binary, a module per area (the
//! layout rust-analyzer uses). 71 binaries each linked kube, leptos, sqlx
//! and rustls; one links them once (docs/benchmarks.md, "newcomer": a clean
//! `make test` and `target/` before and after). Tests of one binary share a
//! process: the real API server (`common::kube_stack`) starts once for every
//! suite that asks for it, and the metrics recorder is one per process.

mod common;
mod policy;

mod abusive_clients;
mod admission_batches;
mod admission_policies;
mod api_auth_and_input;
mod api_bookings;
mod api_clusters;
mod api_pools;
mod approvals_and_audit;
mod authz_matrix;
mod blackouts;
mod booked_ahead;
mod booking_change;
mod calendar;
mod calendar_feed;
mod cli_client;
mod cluster_rbac;
mod concurrency;
mod csrf_and_headers;
mod dashboard;
mod database_outage;
mod disable_user;
mod fit;
mod free_then;
mod gate_jupyter;
mod homes;
mod idempotency;
mod idle_reclaim;
mod install_manifests;
mod left_the_tenant;
mod lending;
mod live_pages;
mod logins_and_dev_login;
mod make_run_services;
mod manifests;
mod manifests_preview;
mod mcp;
mod mcp_oauth;
mod member_rows;
mod notifications;
mod oidc_login;
mod open_workspace;
mod open_workspace_hosts;
mod overview;
mod package;
mod prometheus;
mod quota_concurrency;
mod readiness_and_migrations;
mod real_cluster;
mod real_cluster_domain;
mod real_cluster_homes;
mod real_cluster_neighbours;
mod real_cluster_overlays;
mod real_cluster_policies;
mod real_cluster_round3;
mod real_cluster_schedulers;
mod real_clusters;
mod real_kueue;
mod reports;
mod reschedule;
mod seed_and_tokens;
mod series;
mod shared_bookings;
mod simulated_workspace;
mod tenant_quotas;
mod tokenomics;
mod two_replicas;
mod units;
mod usage_sampler;
mod users_from_logins;
mod waitlist;
mod worker;
mod worker_clusters;
mod worker_kubeconfig;
