//! `bazan worker --listen ADDR`: one worker process of a SQL cluster (datafusion-distributed
//! over gRPC, with the bazan codec), serving until Ctrl-C or SIGTERM and printing one line
//! per task to stderr (`docs/sql.md`, "Workers").

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::bail;

use crate::Outcome;

/// Arguments of `bazan worker`.
#[derive(Debug, clap::Args)]
pub(crate) struct WorkerArgs {
    /// The address to listen on. Loopback unless named: another address opens an
    /// unauthenticated protocol to that network.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Threads that run tasks (default: every core).
    #[arg(long)]
    threads: Option<usize>,
}

/// Runs `bazan worker`.
pub(crate) fn run(a: WorkerArgs) -> anyhow::Result<Outcome> {
    let threads = match a.threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let name = format!("bazan worker {}", a.listen);
    if !a.listen.ip().is_loopback() {
        eprintln!(
            "{name}: warning: the worker protocol has no authentication or encryption: anyone \
             who reaches {} can run plans that read every file this process can; listen on a \
             private network only",
            a.listen
        );
    }
    let log: bazan_sql::cluster::WorkerLog =
        Arc::new(move |line: &str| eprintln!("{name}: {line}"));
    bazan_sql::cluster::run_worker(a.listen, threads, log)?;
    Ok(Outcome::Ok)
}
