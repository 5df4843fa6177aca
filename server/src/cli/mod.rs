//! The `berth` command line: the clap schema of every command. Every flag
//! has an environment fallback so the same binary runs from a shell, a
//! script or a container. What each command does is in `commands`; the
//! settings that need checking or assembling are `AuthArgs` and
//! `ClusterArgs`; finding the cluster and stopping on signals have their
//! own files.

mod auth_args;
mod cluster_args;
mod commands;
mod discovery;
mod signals;
#[cfg(test)]
mod tests;

pub use auth_args::AuthArgs;
pub use cluster_args::ClusterArgs;
pub use commands::{connect, render_manifests, run};

use app::model::{Role, TokenScope};
use chrono::Duration;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;

#[derive(Parser)]
#[command(name = "berth", version, about = "Self-service GPU booking for Kubernetes and OpenShift")]
pub struct Cli {
    /// Log lines as text for people, or as JSON (one object per line, with
    /// the request id) for a log pipeline.
    #[arg(long, global = true, env = "BERTH_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Args, Clone)]
pub struct Database {
    /// PostgreSQL connection URL.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
}

#[derive(Subcommand)]
pub enum Command {
    /// Migrate the database, then serve the portal and the API.
    Serve {
        #[command(flatten)]
        db: Database,
        /// Address to listen on.
        #[arg(long, env = "BERTH_LISTEN", default_value = "127.0.0.1:3000")]
        listen: SocketAddr,
        /// Folder with the built site (`pkg/berth.js`, `.wasm`, `.css`).
        #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
        site_root: String,
        /// Database connections kept open.
        #[arg(long, env = "BERTH_DB_CONNECTIONS", default_value_t = 32)]
        db_connections: u32,
        #[command(flatten)]
        auth: Box<AuthArgs>,
        #[command(flatten)]
        cluster: Box<ClusterArgs>,
        /// Serve the portal only; another process runs `berth worker`.
        #[arg(long, env = "BERTH_NO_WORKER")]
        no_worker: bool,
        /// Serve Prometheus metrics at http://<address>/metrics (a port of its own).
        #[arg(long, env = "BERTH_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
        /// Seconds a client has to send a request's head (then it is disconnected).
        #[arg(long, env = "BERTH_HEADER_READ_TIMEOUT", default_value_t = 10)]
        header_read_timeout: u64,
        /// ISO 4217 code of the currency pool prices and cost models are in
        /// (showback and tokenomics name it; nothing is converted).
        #[arg(long, env = "BERTH_CURRENCY", default_value = "USD", value_parser = parse_currency)]
        currency: String,
    },
    /// Run the provisioning worker alone (needs a kubeconfig or in-cluster config).
    Worker {
        #[command(flatten)]
        db: Database,
        /// The portal's address as people reach it (links in notifications).
        #[arg(long, env = "BERTH_PUBLIC_URL", default_value = "http://127.0.0.1:3000")]
        public_url: url::Url,
        #[command(flatten)]
        cluster: Box<ClusterArgs>,
        /// Serve Prometheus metrics at http://<address>/metrics.
        #[arg(long, env = "BERTH_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
    },
    /// Apply pending database migrations.
    Migrate {
        #[command(flatten)]
        db: Database,
    },
    /// Let a member cluster's worker sign in as PostgreSQL role ROLE (made
    /// beforehand, LOGIN): it may then write that cluster's rows only. Run as
    /// the tables' owner; the worker signed in as ROLE drives CLUSTER alone.
    MemberRole {
        #[command(flatten)]
        db: Database,
        /// The cluster (access in-cluster) whose worker signs in as ROLE.
        #[arg(long)]
        cluster: String,
        #[arg(long)]
        role: String,
    },
    /// Create the demo pool (modelled on the reference lab) if it is missing.
    SeedDemo {
        #[command(flatten)]
        db: Database,
        /// Also a month of past bookings with simulated measured use (once),
        /// so the reports have figures: `make run` asks for it.
        #[arg(long)]
        history: bool,
        /// The history ends the day before this date (YYYY-MM-DD; default
        /// today): the browser tests fix it, so their screenshots agree.
        #[arg(long, value_name = "DATE", requires = "history")]
        history_until: Option<chrono::NaiveDate>,
    },
    /// Print the objects the worker applies for a booking (multi-document YAML).
    Manifests {
        #[command(flatten)]
        db: Database,
        booking_id: uuid::Uuid,
        #[command(flatten)]
        cluster: Box<ClusterArgs>,
    },
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// In a workspace's pod: the auth step in front of it (one-time codes
    /// from "Open workspace" for a cookie); the token from BERTH_ACCESS_TOKEN.
    Gate {
        #[arg(long, env = "BERTH_GATE_LISTEN", default_value = "0.0.0.0:8888")]
        listen: SocketAddr,
        /// The workspace itself, in the same pod.
        #[arg(long, env = "BERTH_GATE_UPSTREAM", default_value = "127.0.0.1:8889")]
        upstream: SocketAddr,
        /// The workspace's own origin (`https://<host>`): state-changing
        /// requests and upgrades from any other origin are refused.
        #[arg(long, env = "BERTH_GATE_ORIGIN")]
        origin: url::Url,
    },
    #[command(flatten)]
    Client(crate::client::Command),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum RoleArg {
    User,
    Admin,
    Manager,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::User => Role::User,
            RoleArg::Admin => Role::Admin,
            RoleArg::Manager => Role::Manager,
        }
    }
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user (or update name and role), and add them to a tenant.
    Add {
        #[command(flatten)]
        db: Database,
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        #[arg(long, value_enum, default_value = "user")]
        role: RoleArg,
        /// Tenant slug; created when it does not exist.
        #[arg(long)]
        tenant: String,
    },
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create an API token and print it once; only its hash is stored.
    Create {
        #[command(flatten)]
        db: Database,
        #[arg(long)]
        email: String,
        /// Lifetime such as 30d, 12h or 90m.
        #[arg(long, default_value = "30d", value_parser = parse_lifetime)]
        expires_in: Duration,
        #[arg(long, default_value = "cli")]
        name: String,
        /// What it may do: read; book (read, book, extend); full (all its person may).
        #[arg(long, default_value = "full", value_parser = parse_scope)]
        scope: TokenScope,
    },
}

fn parse_scope(text: &str) -> Result<TokenScope, String> {
    TokenScope::parse(text).ok_or_else(|| format!("`{text}` is not read, book or full"))
}

/// Parses `<number><d|h|m>` into a positive duration.
pub fn parse_lifetime(text: &str) -> Result<Duration, String> {
    let (digits, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = digits.parse().map_err(|_| format!("`{text}` is not like 30d, 12h or 90m"))?;
    if n <= 0 || n > 3660 {
        return Err("the number must be between 1 and 3660".into());
    }
    match unit {
        "d" => Ok(Duration::days(n)),
        "h" => Ok(Duration::hours(n)),
        "m" => Ok(Duration::minutes(n)),
        _ => Err(format!("`{text}` needs a unit: d, h or m")),
    }
}

fn parse_currency(text: &str) -> Result<String, String> {
    app::model::currency_code(text).map_err(|e| e.reason)
}
