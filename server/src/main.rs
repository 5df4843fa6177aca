use clap::Parser;
use server::cli::{Cli, LogFormat};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // kube, reqwest and lettre all build rustls configs from the process's
    // default provider; with two compiled in there is none until one is set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match cli.log_format {
        // The request's span (with its id) is a field of every line.
        LogFormat::Json => logs.json().with_current_span(true).with_span_list(false).init(),
        LogFormat::Text => logs.init(),
    }
    server::cli::run(cli).await
}
