//! The client from flags, environment (`ROOMCHAT_PRIVATE_KEY`, `ROOMCHAT_PUBLIC_KEY`,
//! `ROOMCHAT_BASE_URL`) and the profile file, as the SDK takes them.

use crate::error::CliError;

/// The flags every command takes (key source, base URL, client options, budget, output).
pub fn global_args() -> Vec<clap::Arg> {
    vec![clap::Arg::new("base-url")
        .long("base-url")
        .global(true)
        .help("The service's base URL (ROOMCHAT_BASE_URL)")]
}

/// The client the command's flags, environment and profile describe.
pub fn client(matches: &clap::ArgMatches) -> Result<roomchat::Client, CliError> {
    let key = std::env::var("ROOMCHAT_PRIVATE_KEY")
        .map_err(|_| CliError::Usage("no private key: set ROOMCHAT_PRIVATE_KEY".into()))?;
    let mut builder = roomchat::Client::builder(key);
    if let Some(url) = matches
        .get_one::<String>("base-url")
        .cloned()
        .or_else(|| std::env::var("ROOMCHAT_BASE_URL").ok())
    {
        builder = builder.base_url(url);
    }
    Ok(builder.build()?)
}
