use clap::Parser;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    // Before anything opens a database: SQLite takes it only before it starts.
    hardneg::store::sqlite_process::tune();
    tracing_subscriber::fmt()
        .with_env_filter(
            // tower-sessions warns of every unknown or malformed session cookie: a
            // line per anonymous request, stale cookies included (disk for a flood).
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,hardneg=info,tower_sessions=error,tower_sessions_core=error".into()),
        )
        .init();
    let cli = hardneg::cli::Cli::parse();
    if !cli.serves() {
        // A report piped into `head` ends quietly when the reader goes, as
        // other command-line tools do, instead of panicking in `println!`.
        // SAFETY: set before any thread of ours writes to a pipe.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    if let Err(e) = hardneg::cli::run(cli).await {
        eprintln!("error: {e:#}");
        std::process::exit(exit_code(&e));
    }
}

/// 2 when the input was at fault (a spec, a name, a file's contents), as
/// for clap's usage errors; 1 for everything else.
fn exit_code(e: &anyhow::Error) -> i32 {
    use hardneg::accounts::AuthError;
    use hardneg::datasets::import::ImportError;
    use hardneg::error::ServiceError;
    let input = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<ServiceError>(),
            Some(ServiceError::Invalid(_) | ServiceError::NotFound(_) | ServiceError::Conflict(_))
        ) || matches!(c.downcast_ref::<ImportError>(), Some(ImportError::Refused(_) | ImportError::Invalid(_)))
            || matches!(
                c.downcast_ref::<AuthError>(),
                Some(AuthError::BadUsername | AuthError::WeakPassword | AuthError::Exists(_))
            )
            || c.is::<hardneg::store::backup::Refused>()
    });
    if input {
        2
    } else {
        1
    }
}
