// `sqlx::migrate!` embeds migrations/ at compile time; without this, cargo
// would not rebuild when only a migration changes (the sqlx docs' advice).
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
