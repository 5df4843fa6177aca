//! What each command does, one function per command.

use super::discovery::{cluster_client, real_cluster};
use super::signals::{stop_on_signal, stopped, DRAIN};
use super::{AuthArgs, Cli, ClusterArgs, Command, Database, TokenCommand, UserCommand};
use crate::auth::Auth;
use crate::member_role::Confinement;
use crate::provisioner::manifests::{self, Cluster, Session};
use crate::{router, seed, AppState};
use app::backend::{accounts::tokens, accounts::users};
use app::model::ClusterMode;
use sqlx::PgPool;
use std::net::SocketAddr;

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Gate { listen, upstream, origin } => gate(listen, upstream, origin).await,
        Command::Worker { db, public_url, cluster, metrics_listen } => {
            worker(db, public_url, cluster, metrics_listen).await
        }
        Command::Serve {
            db,
            listen,
            site_root,
            db_connections,
            auth,
            cluster,
            no_worker,
            metrics_listen,
            header_read_timeout,
            currency,
        } => {
            let serving =
                Serving { listen, site_root, db_connections, no_worker, metrics_listen, header_read_timeout, currency };
            serve(db, serving, auth, cluster).await
        }
        Command::Migrate { db } => migrate(db).await,
        Command::SeedDemo { db, history, history_until } => seed_demo(db, history, history_until).await,
        Command::MemberRole { db, cluster, role } => {
            let granted = crate::member_role::grant(&connect(&db, 1).await?, &cluster, &role).await?;
            println!("{role} is cluster {cluster}'s worker: it inserts its own rows of {}", granted.inserts.join(", "));
            println!("updates its own rows of {}", granted.updates.join(", "));
            println!("and reads {} tables (none with secrets)", granted.reads.len());
            Ok(())
        }
        Command::Manifests { db, booking_id, cluster } => {
            print!("{}", render_manifests(&connect(&db, 2).await?, booking_id, &cluster.cluster()).await?);
            Ok(())
        }
        Command::User { command: UserCommand::Add { db, email, name, role, tenant } } => {
            let id = users::upsert_user(&connect(&db, 2).await?, &email, &name, role.into(), &tenant).await?;
            println!("user {email} ({id}) is in tenant {tenant}");
            Ok(())
        }
        Command::Token { command: TokenCommand::Create { db, email, expires_in, name, scope } } => {
            create_token(db, &email, (expires_in, scope), &name).await
        }
        Command::Client(command) => crate::client::run(command).await,
    }
}

pub async fn connect(db: &Database, connections: u32) -> anyhow::Result<PgPool> {
    Ok(crate::database::pool_options(connections).connect(&db.database_url).await?)
}

/// The manifests preview of one booking.
pub async fn render_manifests(db: &PgPool, booking_id: uuid::Uuid, cluster: &Cluster) -> anyhow::Result<String> {
    let facts =
        app::backend::sessions::facts::facts(db, booking_id).await.map_err(|e| anyhow::anyhow!(e.public_message()))?;
    Ok(manifests::preview(&Session::of(facts), cluster))
}

async fn gate(listen: SocketAddr, upstream: SocketAddr, origin: url::Url) -> anyhow::Result<()> {
    let token = std::env::var("BERTH_ACCESS_TOKEN").unwrap_or_default();
    anyhow::ensure!(!token.is_empty(), "BERTH_ACCESS_TOKEN (the session's access token) is not set");
    anyhow::ensure!(origin.origin().is_tuple(), "--origin {origin} is not an http(s) origin");
    let origin = origin.origin().ascii_serialization();
    crate::gate::serve(listen, crate::gate::Gate::new(token, upstream, &origin)).await?;
    Ok(())
}

async fn worker(
    db: Database,
    public_url: url::Url,
    cluster: Box<ClusterArgs>,
    metrics_listen: Option<SocketAddr>,
) -> anyhow::Result<()> {
    let pool = connect(&db, 4).await?;
    let confinement = crate::member_role::confinement(&pool).await?;
    match &confinement {
        Confinement::None => crate::database::migrate(&pool).await?,
        // A member's role may not migrate: the hub's portal does.
        Confinement::To(member) => member_may_drive(&pool, member, &cluster).await?,
        Confinement::Detached => anyhow::bail!(
            "this database role was a member cluster's worker, and its cluster has gone or took another role"
        ),
    }
    if let Some(addr) = metrics_listen {
        crate::metrics::serve(addr, pool.clone(), false).await?;
    }
    let client = real_cluster()
        .await
        .map_err(|e| anyhow::anyhow!("no Kubernetes cluster found (kubeconfig or in-cluster): {e}"))?;
    let fleet = cluster.fleet(pool, cluster.reach(client, false), &public_url, confinement != Confinement::None)?;
    fleet.run(stop_on_signal()).await?;
    Ok(())
}

/// A worker signed in as `member`'s database role drives that cluster
/// only, and starts once the database has this binary's migrations.
async fn member_may_drive(db: &PgPool, member: &str, cluster: &ClusterArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        cluster.own_cluster == member && !cluster.hub,
        "this database role is cluster {member}'s worker: run `berth worker --cluster {member}` without --hub"
    );
    while !crate::database::is_ready(db).await {
        tracing::info!("waiting for the database to be migrated to this release (the portal migrates it)");
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    }
    Ok(())
}

/// `serve`'s own flags.
struct Serving {
    listen: SocketAddr,
    site_root: String,
    db_connections: u32,
    no_worker: bool,
    metrics_listen: Option<SocketAddr>,
    header_read_timeout: u64,
    currency: String,
}

async fn serve(db: Database, serving: Serving, auth: Box<AuthArgs>, cluster: Box<ClusterArgs>) -> anyhow::Result<()> {
    let listen = serving.listen;
    let config = auth.into_config(listen)?;
    // The portal under the workspace domain would be a sibling site of
    // every workspace, and its host one the hosts policies keep for sessions.
    if let Err(refusal) = app::rules::cluster_spec::portal_outside(
        &cluster.workspace_domain,
        config.public_url.host_str().unwrap_or_default(),
    ) {
        anyhow::bail!("--public-url and --workspace-domain: {}", refusal.reason);
    }
    let pool = connect(&db, serving.db_connections).await?;
    crate::database::migrate(&pool).await?;
    if config.dev_login {
        tracing::warn!("development login is ON: anyone reaching {listen} can sign in as any user");
    }
    if config.calendar_key.is_none() {
        tracing::warn!("no --calendar-key-file: calendar-feed URLs made now cannot be shown again after a restart (they keep working)");
    }
    let (client, mode) = cluster_client().await;
    if let Some(addr) = serving.metrics_listen {
        crate::metrics::serve(addr, pool.clone(), mode.simulated).await?;
    }
    let reach = cluster.reach(client, mode.simulated);
    let fleet = cluster.fleet(pool.clone(), reach.clone(), &config.public_url, false)?;
    let mode = ClusterMode { kueue: cluster.kueue, ..mode };
    let mut state = AppState::new(pool.clone(), &serving.site_root, Auth::new(config)?).with_cluster(
        cluster.cluster(),
        mode,
        reach,
    );
    state.currency = serving.currency;
    let stop = stop_on_signal();
    let worker = (!serving.no_worker).then(|| tokio::spawn(fleet.run(stop.clone())));
    let listener = tokio::net::TcpListener::bind(listen).await?;
    tracing::info!("serving on http://{listen}");
    let server = crate::web::http_server::serve(
        listener,
        router(state),
        std::time::Duration::from_secs(serving.header_read_timeout),
        stopped(stop.clone()),
    );
    tokio::select! {
        served = server => served?,
        _ = async { stopped(stop.clone()).await; tokio::time::sleep(DRAIN).await } => {
            tracing::warn!("requests still in flight {} s after the stop signal; stopping anyway", DRAIN.as_secs());
        }
    }
    if let Some(worker) = worker {
        match tokio::time::timeout(std::time::Duration::from_secs(5), worker).await {
            Ok(Ok(Err(err))) => tracing::error!(error = %err, "the worker stopped with an error"),
            Ok(_) => {}
            Err(_) => tracing::warn!("the worker did not stop within 5 s"),
        }
    }
    Ok(())
}

async fn migrate(db: Database) -> anyhow::Result<()> {
    crate::database::migrate(&connect(&db, 2).await?).await?;
    println!("database is up to date");
    Ok(())
}

async fn seed_demo(db: Database, history: bool, until: Option<chrono::NaiveDate>) -> anyhow::Result<()> {
    let pool = connect(&db, 2).await?;
    crate::database::migrate(&pool).await?;
    println!("{}", seed::demo(&pool).await?);
    println!("{}", crate::seed_console::console(&pool).await?);
    if history {
        println!("{}", crate::seed_history::history(&pool, until).await?);
    }
    Ok(())
}

async fn create_token(
    db: Database,
    email: &str,
    (expires_in, scope): (chrono::Duration, app::model::TokenScope),
    name: &str,
) -> anyhow::Result<()> {
    let pool = connect(&db, 2).await?;
    let user = users::find_by_email(&pool, email).await?;
    let issued = tokens::issue(&pool, user, name, expires_in, scope).await?;
    eprintln!(
        "token for {email} ({}), expires {}; it is shown only now:",
        scope.says(),
        issued.expires_at.to_rfc3339()
    );
    println!("{}", issued.token);
    Ok(())
}
