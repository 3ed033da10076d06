//! A Ballista cluster whose scheduler and executors know streamboost's plan nodes and SQL
//! functions: the scheduler and executor roles of one program. Queries come from
//! `streamboost sql --ballista df://HOST:PORT …` (or from a program, through
//! `streamboost::sql::distributed::remote`).
//!
//! ```sh
//! cargo build --release --features ballista --example ballista_cluster --bin streamboost
//! B=target/release/examples/ballista_cluster
//! $B scheduler --port 50050 &
//! $B executor --scheduler-port 50050 --port 50051 --grpc-port 50052 &
//! $B executor --scheduler-port 50050 --port 50053 --grpc-port 50054 &
//! target/release/streamboost sql --ballista df://localhost:50050 \
//!   --table events=log.parquet --model m=model.json \
//!   "SELECT * FROM boost_score('m', (SELECT * FROM events), 'label', 'ts', 'key')"
//! ```
//!
//! On real machines: one scheduler, executors started with `--scheduler-host` naming it and
//! `--external-host` naming themselves, every table and checkpoint at the same path on every
//! machine (shared storage). `scripts/ballista_localhost.sh` runs all of it on this machine
//! and compares the cluster's predictions with one machine's.

use std::path::Path;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use clap::{Parser, Subcommand};
use datafusion::prelude::SessionConfig;
use streamboost::sql::ModelRegistry;
use streamboost::sql::distributed::{self, BoostLogicalCodec, BoostPhysicalCodec};

#[derive(Parser)]
#[command(about = "A Ballista scheduler or executor that runs streamboost's SQL")]
struct Args {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// Plans queries (`boost_score` included) and hands their tasks to the executors.
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0")]
        bind: String,
        /// Port to listen on.
        #[arg(long, default_value_t = 50050)]
        port: u16,
    },
    /// Runs tasks.
    Executor {
        /// The scheduler's host.
        #[arg(long, default_value = "localhost")]
        scheduler_host: String,
        /// The scheduler's port.
        #[arg(long, default_value_t = 50050)]
        scheduler_port: u16,
        /// The host other executors fetch this one's shuffle output from.
        #[arg(long)]
        external_host: Option<String>,
        /// Arrow Flight port (shuffle data).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// gRPC port (tasks).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once.
        #[arg(long, default_value_t = 2)]
        slots: usize,
        /// Where shuffle files go.
        #[arg(long)]
        work_dir: Option<String>,
        /// A checkpoint `boost_predict` reads by name (repeatable): `NAME=PATH`.
        #[arg(long = "model", value_name = "NAME=PATH")]
        models: Vec<String>,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match Args::parse().role {
        Role::Scheduler { bind, port } => {
            // The scheduler decodes and plans; `boost_score` nodes carry their own model.
            let registry = ModelRegistry::new();
            let config = SchedulerConfig {
                bind_host: bind.clone(),
                bind_port: port,
                override_logical_codec: Some(Arc::new(BoostLogicalCodec::default())),
                override_physical_codec: Some(Arc::new(BoostPhysicalCodec::default())),
                override_session_builder: Some(Arc::new(move |config| {
                    distributed::session_state(config, &registry)
                })),
                ..Default::default()
            };
            let cluster = BallistaCluster::new_from_config(&config).await?;
            let address = format!("{bind}:{port}").parse()?;
            start_server(cluster, address, Arc::new(config)).await?;
        }
        Role::Executor {
            scheduler_host,
            scheduler_port,
            external_host,
            port,
            grpc_port,
            slots,
            work_dir,
            models,
        } => {
            let registry = ModelRegistry::new();
            for arg in &models {
                let (name, path) = arg
                    .split_once('=')
                    .ok_or_else(|| format!("--model {arg}: expected NAME=PATH"))?;
                registry.load_checkpoint(name, Path::new(path))?;
            }
            let state = distributed::session_state(SessionConfig::new_with_ballista(), &registry)?;
            let config = ExecutorProcessConfig {
                bind_host: "0.0.0.0".into(),
                external_host,
                port,
                grpc_port,
                scheduler_host,
                scheduler_port,
                vcores: slots,
                work_dir,
                override_logical_codec: Some(Arc::new(BoostLogicalCodec::default())),
                override_physical_codec: Some(Arc::new(BoostPhysicalCodec::default())),
                override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
                ..Default::default()
            };
            start_executor_process(Arc::new(config)).await?;
        }
    }
    Ok(())
}
