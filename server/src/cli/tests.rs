use super::*;
use crate::provisioner::manifests::Expose;

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

#[test]
fn cluster_flags_choose_route_and_image_cache() {
    let parse = |extra: &[&str]| {
        let mut all = vec!["berth", "worker", "--database-url", "postgres://x"];
        all.extend_from_slice(extra);
        match Cli::try_parse_from(all).expect("parses").command {
            Command::Worker { cluster, .. } => cluster.cluster(),
            _ => panic!("expected worker"),
        }
    };
    let default = parse(&[]);
    assert_eq!((default.expose, default.image_cache.is_none()), (Expose::Ingress, true));
    let openshift = parse(&[
        "--expose",
        "route",
        "--image-cache",
        "--gpu-node-selector",
        "pool=h100",
        "--cache-images",
        "a:1,b:2",
        "--cache-registries",
        "nvcr.io/nvidia,quay.io",
    ]);
    assert_eq!(openshift.expose, Expose::Route);
    assert_eq!(openshift.berth_namespace, "berth");
    let cache = openshift.image_cache.unwrap();
    assert_eq!(cache.images, ["a:1", "b:2"]);
    assert_eq!(cache.registries, ["nvcr.io/nvidia", "quay.io"]);
    assert_eq!(cache.node_selector.get("pool").map(String::as_str), Some("h100"));
    assert!(Cli::try_parse_from(["berth", "worker", "--database-url", "x", "--gpu-node-selector", "novalue"]).is_err());
    assert!(Cli::try_parse_from(["berth", "worker", "--database-url", "x", "--audit-retention-days", "0"]).is_err());
}

fn auth_of(args: &[&str]) -> (SocketAddr, Box<AuthArgs>) {
    let mut all = vec!["berth", "serve", "--database-url", "postgres://x"];
    all.extend_from_slice(args);
    match Cli::try_parse_from(all).expect("parses").command {
        Command::Serve { listen, auth, .. } => (listen, auth),
        _ => panic!("expected serve"),
    }
}

#[test]
fn dev_login_is_refused_off_loopback() {
    let (listen, auth) = auth_of(&["--dev-login", "--listen", "0.0.0.0:3000"]);
    let err = auth.into_config(listen).unwrap_err().to_string();
    assert!(err.contains("not a loopback address"), "{err}");
    let (listen, auth) = auth_of(&["--dev-login", "--listen", "[::1]:3000"]);
    assert!(auth.into_config(listen).unwrap().dev_login);
    for public in ["https://berth.example.org", "http://10.0.0.5:3000", "http://berth.local:3000"] {
        let (listen, auth) = auth_of(&["--dev-login", "--public-url", public]);
        let err = auth.into_config(listen).unwrap_err().to_string();
        assert!(err.contains("not a loopback URL"), "{public}: {err}");
    }
    for public in ["http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000"] {
        let (listen, auth) = auth_of(&["--dev-login", "--public-url", public]);
        assert!(auth.into_config(listen).unwrap().dev_login, "{public}");
    }
    let (listen, auth) = auth_of(&[
        "--dev-login",
        "--oidc-issuer",
        "http://127.0.0.1:4410",
        "--oidc-client-id",
        "berth",
        "--oidc-client-secret",
        "s",
    ]);
    let err = auth.into_config(listen).unwrap_err().to_string();
    assert!(err.contains("single sign-on"), "{err}");
}

#[test]
fn auth_defaults_and_secret_file() {
    let (listen, auth) = auth_of(&[]);
    let config = auth.into_config(listen).unwrap();
    assert_eq!(config.public_url.as_str(), "http://127.0.0.1:3000/");
    assert!(config.oidc.is_none() && !config.dev_login);
    assert_eq!(config.idle_timeout.as_secs(), 8 * 3600);
    assert_eq!(config.absolute_lifetime.as_secs(), 24 * 3600);

    let dir = std::env::temp_dir().join(format!("berth-secret-{}", std::process::id()));
    std::fs::write(&dir, "s3cret\n").unwrap();
    let (listen, auth) = auth_of(&[
        "--oidc-issuer",
        "https://id.example.org",
        "--oidc-client-id",
        "berth",
        "--oidc-client-secret-file",
        dir.to_str().unwrap(),
        "--public-url",
        "https://berth.example.org",
    ]);
    let config = auth.into_config(listen).unwrap();
    std::fs::remove_file(&dir).ok();
    let oidc = config.oidc.clone().unwrap();
    assert_eq!(oidc.client_secret, "s3cret");
    assert!(!format!("{config:?}").contains("s3cret"), "the secret must never be printed");
    assert!(config.secure_cookies());
    let (listen, auth) = auth_of(&["--oidc-issuer", "https://id.example.org", "--oidc-client-id", "berth"]);
    assert!(auth.into_config(listen).is_err(), "an issuer without a secret is refused");
}
