//! Where the commands find the portal and their token: `BERTH_URL` and
//! `BERTH_TOKEN`, else `~/.config/berth/config.toml` (written by `berth
//! login`, readable by its owner only: it holds a bearer token).

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Config {
    pub url: Option<String>,
    pub token: Option<String>,
}

pub fn path() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?).join(".config"),
    };
    Ok(base.join("berth").join("config.toml"))
}

fn read_file() -> anyhow::Result<Config> {
    let path = path()?;
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("{} is not a Berth config", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The portal's URL and token; the environment wins over the file.
pub fn load() -> anyhow::Result<(String, String)> {
    let file = read_file()?;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let url = env("BERTH_URL").or(file.url).context("no portal URL: run `berth login --url URL` or set BERTH_URL")?;
    let token = env("BERTH_TOKEN").or(file.token).context("no API token: run `berth login` or set BERTH_TOKEN")?;
    Ok((url.trim_end_matches('/').to_string(), token))
}

/// Writes the file with mode 0600 (its folder 0700), replacing it whole.
pub fn save(config: &Config) -> anyhow::Result<PathBuf> {
    let path = path()?;
    let dir = path.parent().context("the config path has a folder")?;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let partial = dir.join(".config.toml.partial");
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&partial)?;
    file.write_all(toml::to_string(config)?.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}
