//! `berth` user commands: the REST API from a shell (never the database).
//! Human tables by default, `--json` for scripts (the API's own JSON); a
//! refusal prints its reason (and the next free window) and exits 1. The
//! schema is here; what each command does is in `commands`.

mod commands;
mod config;
mod http;
mod mcp;
mod print;
mod when;

use clap::Subcommand;
use http::Api;
use uuid::Uuid;

#[derive(Subcommand)]
pub enum Command {
    /// Serve the portal's MCP tools over stdio, for a desktop AI assistant,
    /// with the saved login's token (docs/assistants.md).
    Mcp,
    /// Save the portal's URL and an API token (asked on stdin; make one on the
    /// portal's Tokens page) in ~/.config/berth/config.toml, mode 0600.
    Login {
        #[arg(long)]
        url: url::Url,
    },
    /// The pools you may book, with their kinds and units.
    Pools {
        #[arg(long)]
        json: bool,
    },
    /// Free units of a pool's kind over the next days, one line per change.
    Free(FreeArgs),
    /// Book a window.
    Book(BookArgs),
    /// Your upcoming and live bookings (--all: every one you may see, past too).
    Ls {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// One booking.
    Show {
        id: Uuid,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Move a booking's end later.
    Extend {
        id: Uuid,
        #[arg(long)]
        to: String,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// End a live booking now (its GPUs return to the pool).
    End {
        id: Uuid,
        #[arg(long)]
        json: bool,
    },
    /// Cancel a booking that has not started.
    Cancel {
        id: Uuid,
        #[arg(long)]
        json: bool,
    },
    /// Print the ready workspace's URL (--browser opens it).
    Open {
        id: Uuid,
        #[arg(long)]
        browser: bool,
    },
    /// Print your calendar feed's address (subscribe to it in a calendar app).
    Ics,
    /// Which kind holds a model: the memory the run needs, with its
    /// arithmetic, and each kind you may book, the smallest that holds it first.
    Fit(FitArgs),
}

/// Which kind holds a model (`GET /api/v1/fit`).
#[derive(clap::Args)]
pub struct FitArgs {
    /// A catalogue model, e.g. llama-3.1-8b, qwen2.5-72b, mixtral-8x7b.
    #[arg(long)]
    pub model: Option<String>,
    /// Or a custom model: billions of parameters…
    #[arg(long)]
    pub params_b: Option<f64>,
    /// …and, for inference, its layers, KV heads and head dimension (config.json).
    #[arg(long)]
    pub layers: Option<u32>,
    #[arg(long)]
    pub kv_heads: Option<u32>,
    #[arg(long)]
    pub head_dim: Option<u32>,
    /// bf16, fp8, int8 or int4.
    #[arg(long, default_value = "bf16")]
    pub precision: String,
    /// inference, lora or full.
    #[arg(long, default_value = "inference")]
    pub workload: String,
    /// Tokens per sequence.
    #[arg(long, default_value_t = 8192)]
    pub context: u32,
    /// Sequences at once.
    #[arg(long, default_value_t = 1)]
    pub sequences: u32,
    #[arg(long)]
    pub json: bool,
}

/// Free units of a pool's kind over the next days, one line per change.
#[derive(clap::Args)]
pub struct FreeArgs {
    /// Pool name or id.
    pub pool: String,
    /// Kind, e.g. gpu or mig-1g.24gb (needed when the pool has several).
    #[arg(long)]
    pub kind: Option<String>,
    /// From when ("2026-12-01 09:00", a date, or now).
    #[arg(long, default_value = "now")]
    pub from: String,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=62))]
    pub days: u16,
    /// IANA zone for the times typed and shown (default: this computer's).
    #[arg(long)]
    pub tz: Option<String>,
    #[arg(long)]
    pub json: bool,
}

/// Book a window.
#[derive(clap::Args)]
pub struct BookArgs {
    /// Pool name or id.
    pub pool: String,
    /// Kind, e.g. gpu or mig-1g.24gb.
    #[arg(long)]
    pub kind: String,
    #[arg(long, default_value_t = 1)]
    pub units: i32,
    /// Start ("2026-12-01 09:00" in your zone, a date, or now).
    #[arg(long)]
    pub from: String,
    /// Length, e.g. 3h, 90m or 1h30m.
    #[arg(long = "for", value_parser = when::duration)]
    pub length: chrono::Duration,
    /// interactive (a workspace) or inference (a serving endpoint).
    #[arg(long, default_value = "interactive")]
    pub mode: String,
    /// Wait for exactly this window when it is full.
    #[arg(long)]
    pub waitlist: bool,
    #[arg(long)]
    pub tz: Option<String>,
    #[arg(long)]
    pub json: bool,
}

/// Runs a user command; a failure is one line on stderr and exit code 1.
pub async fn run(command: Command) -> anyhow::Result<()> {
    match dispatch(command).await {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("berth: {err:#}");
            std::process::exit(1)
        }
    }
}

/// Each command as its own function; each returns the exit code.
async fn dispatch(command: Command) -> anyhow::Result<i32> {
    if let Command::Login { url } = &command {
        return commands::login(url).await;
    }
    if let Command::Mcp = command {
        return mcp::run().await.map(|()| 0);
    }
    let (base, token) = config::load()?;
    let api = Api::new(base, token)?;
    match command {
        Command::Login { .. } | Command::Mcp => unreachable!("handled above"),
        Command::Pools { json } => commands::pools(&api, json).await,
        Command::Free(args) => commands::free(&api, args).await,
        Command::Book(args) => commands::book(&api, args).await,
        Command::Ls { all, tz, json } => commands::ls(&api, all, tz.as_deref(), json).await,
        Command::Show { id, tz, json } => commands::show(&api, id, tz.as_deref(), json).await,
        Command::Extend { id, to, tz, json } => commands::extend(&api, id, &to, tz.as_deref(), json).await,
        Command::End { id, json } => commands::end(&api, id, json).await,
        Command::Cancel { id, json } => commands::cancel(&api, id, json).await,
        Command::Open { id, browser } => commands::open(&api, id, browser).await,
        Command::Ics => commands::ics(&api).await,
        Command::Fit(args) => commands::fit(&api, args).await,
    }
}
