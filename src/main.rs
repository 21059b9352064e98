//! The `canon` command: `serve`, `keys`, `users`, `migrate`, `graphql-schema`.

use canon::app::{shutdown_signal, App};
use canon::config::{self, Config};
use canon::jobs::Handlers;
use canon::store::records::keys::Environment;
use canon::store::records::Records;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "canon", version, about = "Turns documents into a curated knowledge graph")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the HTTP server and job workers (configuration: flags, CANON_* variables, canon.toml).
    Serve(Box<Config>),
    /// Manage API keys.
    Keys {
        #[command(flatten)]
        records: RecordsArgs,
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Manage dashboard users.
    Users {
        #[command(flatten)]
        records: RecordsArgs,
        /// Secret signing dashboard tokens (as `canon serve` uses).
        #[arg(long, env = "CANON_JWT_SECRET", hide_env_values = true)]
        jwt_secret: Option<String>,
        #[command(subcommand)]
        command: UsersCommand,
    },
    /// Apply pending record-store migrations and exit.
    Migrate {
        #[command(flatten)]
        records: RecordsArgs,
    },
    /// Print the GraphQL SDL generated from the code (committed as graphql/schema.graphql).
    GraphqlSchema,
}

/// Where the record store is (the same settings `serve` reads).
#[derive(clap::Args)]
struct RecordsArgs {
    #[arg(long, env = "CANON_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    #[arg(long, env = "CANON_DATABASE_URL")]
    database_url: Option<String>,
}

impl RecordsArgs {
    async fn connect(&self) -> anyhow::Result<Records> {
        let url = match &self.database_url {
            Some(url) => url.clone(),
            None => canon::data_dir::prepare_sqlite(&self.data_dir)?,
        };
        let records = Records::connect(&url).await?;
        records.migrate().await?;
        Ok(records)
    }
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create an API key (and the account if needed); prints the key alone, once.
    Create {
        #[arg(long)]
        account: String,
        #[arg(long, value_parser = ["production", "sandbox"])]
        environment: String,
        #[arg(long, default_value = "default")]
        name: String,
    },
    /// List an account's keys (never their secrets).
    List {
        #[arg(long)]
        account: String,
    },
    /// Revoke a key by its ID (key_…). A running canon trusts a key it checked for up to one
    /// second without reading the store, so the key stops working within 1 second in every
    /// server sharing the record store.
    Revoke { id: String },
}

#[derive(Subcommand)]
enum UsersCommand {
    /// Create a dashboard user (and the account if needed); prints a dashboard token for
    /// local use (valid 30 days), alone on one line.
    Create {
        #[arg(long)]
        account: String,
        #[arg(long, value_parser = ["production", "sandbox"])]
        environment: String,
        #[arg(long)]
        email: String,
        #[arg(long, value_parser = ["admin", "operator"])]
        role: String,
    },
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    if let Err(err) = config::load_file_into_env() {
        eprintln!("canon: {err:#}");
        return std::process::ExitCode::FAILURE;
    }
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("canon: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(config) => serve(*config).await,
        Command::Migrate { records } => {
            records.connect().await?;
            println!("migrations applied");
            Ok(())
        }
        Command::GraphqlSchema => {
            print!("{}", canon::graphql::sdl());
            Ok(())
        }
        Command::Keys { records, command } => keys(records.connect().await?, command).await,
        Command::Users { records, jwt_secret, command } => {
            let secret = canon::tokens::secret(jwt_secret.as_deref(), &records.data_dir)?;
            users(records.connect().await?, &secret, command).await
        }
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    init_logging(&config.log_format);
    let app = App::spawn(&config, Handlers::default()).await?;
    shutdown_signal().await;
    tracing::info!("shutting down: finishing in-flight requests and jobs");
    app.stop().await;
    Ok(())
}

async fn keys(records: Records, command: KeysCommand) -> anyhow::Result<()> {
    match command {
        KeysCommand::Create { account, environment, name } => {
            let environment = Environment::parse(&environment)
                .ok_or_else(|| anyhow::anyhow!("environment must be production or sandbox"))?;
            let account = records.ensure_account(&account).await?;
            let (_, plaintext) = records.create_key(&account.id, environment, &name).await?;
            println!("{plaintext}");
        }
        KeysCommand::List { account } => {
            let account = records
                .find_account(&account)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no account named {account}"))?;
            for key in records.list_keys(&account.id).await? {
                let state = if key.revoked_at.is_some() { "revoked" } else { "active" };
                println!("{}\t{}\t{}\t{}", key.id, key.environment.as_str(), key.name, state);
            }
        }
        KeysCommand::Revoke { id } => {
            if !records.revoke_key(&id).await? {
                anyhow::bail!("no active key with ID {id}");
            }
            println!(
                "revoked {id}; running servers refuse it within {} s (they trust a checked key that long)",
                canon::keys::TRUST_FOR.as_secs()
            );
        }
    }
    records.close().await;
    Ok(())
}

async fn users(records: Records, secret: &[u8], command: UsersCommand) -> anyhow::Result<()> {
    match command {
        UsersCommand::Create { account, environment, email, role } => {
            let environment = Environment::parse(&environment)
                .ok_or_else(|| anyhow::anyhow!("environment must be production or sandbox"))?;
            let account = records.ensure_account(&account).await?;
            let user = records.create_user(&account.id, environment, &email, &role).await?;
            let claims = canon::tokens::Claims {
                sub: user.id,
                email: user.email,
                role: user.role,
                account: account.id,
                environment: environment.as_str().into(),
                exp: chrono::Utc::now().timestamp() + 30 * 24 * 3600,
            };
            println!("{}", canon::tokens::sign(&claims, secret));
        }
    }
    records.close().await;
    Ok(())
}

fn init_logging(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CANON_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if format == "text" {
        builder.init();
    } else {
        builder.json().flatten_event(true).with_current_span(true).init();
    }
}
