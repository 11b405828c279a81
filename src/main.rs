use clap::Parser;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn,hardneg=info".into()),
        )
        .init();
    let cli = hardneg::cli::Cli::parse();
    if let Err(e) = hardneg::cli::run(cli).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
