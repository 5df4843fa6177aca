//! The `berth` command line. Every flag has an environment fallback so the
//! same binary runs from a shell, a script or a container.

use crate::{router, seed, AppState};
use app::backend::{tokens, users, MIGRATOR};
use app::model::Role;
use chrono::Duration;
use clap::{Args, Parser, Subcommand, ValueEnum};
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use std::net::SocketAddr;

#[derive(Parser)]
#[command(name = "berth", version, about = "Self-service GPU booking for Kubernetes and OpenShift")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
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
    },
    /// Apply pending database migrations.
    Migrate {
        #[command(flatten)]
        db: Database,
    },
    /// Create the demo pool (modelled on the reference lab) if it is missing.
    SeedDemo {
        #[command(flatten)]
        db: Database,
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
    },
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

pub async fn connect(db: &Database, connections: u32) -> anyhow::Result<PgPool> {
    Ok(PgPoolOptions::new().max_connections(connections).connect(&db.database_url).await?)
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve { db, listen, site_root, db_connections } => {
            let pool = connect(&db, db_connections).await?;
            MIGRATOR.run(&pool).await?;
            let app = router(AppState::new(pool, &site_root));
            let listener = tokio::net::TcpListener::bind(listen).await?;
            tracing::info!("serving on http://{listen}");
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await?;
        }
        Command::Migrate { db } => {
            MIGRATOR.run(&connect(&db, 2).await?).await?;
            println!("database is up to date");
        }
        Command::SeedDemo { db } => {
            let pool = connect(&db, 2).await?;
            MIGRATOR.run(&pool).await?;
            println!("{}", seed::demo(&pool).await?);
        }
        Command::User { command: UserCommand::Add { db, email, name, role, tenant } } => {
            let id = users::upsert_user(&connect(&db, 2).await?, &email, &name, role.into(), &tenant).await?;
            println!("user {email} ({id}) is in tenant {tenant}");
        }
        Command::Token { command: TokenCommand::Create { db, email, expires_in, name } } => {
            let pool = connect(&db, 2).await?;
            let user = users::find_by_email(&pool, &email).await?;
            let issued = tokens::issue(&pool, user, &name, expires_in).await?;
            eprintln!("token for {email}, expires {}; it is shown only now:", issued.expires_at.to_rfc3339());
            println!("{}", issued.token);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_take_days_hours_or_minutes() {
        assert_eq!(parse_lifetime("30d"), Ok(Duration::days(30)));
        assert_eq!(parse_lifetime("12h"), Ok(Duration::hours(12)));
        assert_eq!(parse_lifetime("90m"), Ok(Duration::minutes(90)));
        for bad in ["", "d", "30", "30s", "-1d", "0h", "1.5d", "99999d"] {
            assert!(parse_lifetime(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_command_parses_with_its_documented_flags() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "berth",
            "user",
            "add",
            "--database-url",
            "postgres://x",
            "--email",
            "a@b.c",
            "--name",
            "A",
            "--role",
            "manager",
            "--tenant",
            "t",
        ]);
        assert!(cli.is_ok());
        let serve = Cli::try_parse_from(["berth", "serve", "--database-url", "postgres://x"]).unwrap();
        match serve.command {
            Command::Serve { listen, .. } => assert_eq!(listen.to_string(), "127.0.0.1:3000"),
            _ => panic!("expected serve"),
        }
    }
}
