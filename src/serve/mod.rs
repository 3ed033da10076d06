//! `streamboost serve`: the SQL functions and the live models of a directory behind Arrow
//! Flight SQL.
//!
//! [`Server::bind`] opens every model of the models directory as a live model of one
//! [`ModelRegistry`] ([`models`]), registers the tables it is given, and listens;
//! [`Server::run`] serves until its shutdown future resolves. One gRPC endpoint, two ways in:
//! * **Flight SQL** (pyarrow, the ADBC drivers, JDBC, BI tools): a statement runs in a
//!   DataFusion session with every streamboost function over the registry (`boost_score`,
//!   `boost_predict`, `boost_prequential`, `boost_models()`), through DataFusion's Flight SQL
//!   service. Statements are queries: DDL, DML, `COPY` and `SET` are refused, files are
//!   reached only through the tables registered at start (no `FROM 'path'`), and Substrait
//!   plans, which can name any file, are refused.
//! * **`DoExchange`** on a live model: the client streams record batches and gets each back
//!   scored as soon as it is, the model learning under its policy ([`exchange`], whose
//!   module doc says what is learnt once, committed when, and what a client sees).
//!
//! **Authentication.** With a token file ([`auth`]), every call but the gRPC health check
//! carries `authorization: Bearer TOKEN`; others are refused with `Unauthenticated`. A
//! server listens on a loopback address unless another is named, and refuses to listen
//! beyond loopback without tokens. TLS from a PEM certificate and key (rustls).
//!
//! **Limits** ([`Limits`]): the largest message a client may send (`OutOfRange` beyond),
//! calls in progress at once (`ResourceExhausted`), the time a call may take, its result
//! stream included (`DeadlineExceeded`; a `DoExchange` stream has no total time, its start
//! has). A query past its time is dropped, and DataFusion stops its work at its operators'
//! next yield.
//!
//! **Shutdown.** When the shutdown future resolves (SIGTERM or SIGINT for the command), the
//! server stops accepting calls, the `DoExchange` streams end after the batch in hand, the
//! calls in progress finish, every live model a stream trained is committed, and
//! [`Server::run`] returns. A SQL query training a live model commits at its end, as it
//! does anywhere. A crash (SIGKILL) loses what was learnt after each model's last commit;
//! a restart resumes from it, and clients resend from the `committed_ts` they last got.
//!
//! **Logs.** A `tracing` event per call (client, call, rows, seconds, outcome) and per
//! exchange stream; commits are counted in `boost_models()` (`commits`, and `clients`: the
//! streams training a model now).

pub mod auth;
pub mod exchange;
pub mod models;
pub mod service;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_flight::flight_service_server::FlightServiceServer;
use datafusion::execution::context::SQLOptions;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_flight_sql_server::service::FlightSqlService;
use tokio::sync::watch;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, ServerTlsConfig};

pub use auth::{Client, Tokens};
pub use exchange::Defaults;
pub use service::Limits;

use crate::runtime::live::CheckpointPolicy;
use crate::sql::{ModelRegistry, register_all, sources};
use crate::{Error, Result};

/// What a server serves, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on (port 0: any free port, [`Server::local_addr`] says which).
    pub listen: SocketAddr,
    /// The models directory ([`models`]).
    pub models: PathBuf,
    /// Tables registered at start, by name: CSV or Parquet files or directories.
    pub tables: Vec<(String, PathBuf)>,
    /// The clients accepted (`None`: every caller, on a loopback address only).
    pub tokens: Option<Tokens>,
    /// A PEM certificate (chain) and its private key: TLS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// What a call may do.
    pub limits: Limits,
    /// When the live models commit (its path is each model's own).
    pub policy: CheckpointPolicy,
    /// What a `DoExchange` falls back on.
    pub defaults: Defaults,
    /// Partitions a query runs on (DataFusion's `target_partitions`).
    pub partitions: usize,
}

/// A server bound to its address, its models open.
pub struct Server {
    options: Options,
    listener: tokio::net::TcpListener,
    registry: ModelRegistry,
    ctx: SessionContext,
    models: Vec<String>,
}

impl Server {
    /// Opens the models and tables of `options` and binds its address. Refuses an address
    /// beyond loopback without tokens, and a models directory that is not one.
    pub async fn bind(options: Options) -> Result<Server> {
        if !options.listen.ip().is_loopback() && options.tokens.is_none() {
            return Err(Error::config(
                "listen",
                format!(
                    "{} is not a loopback address: a server reachable from other machines needs \
                     --token-file (and --tls-cert/--tls-key)",
                    options.listen
                ),
            ));
        }
        if !options.models.is_dir() {
            return Err(Error::config(
                "models",
                format!("`{}` is not a directory", options.models.display()),
            ));
        }
        let config = SessionConfig::new().with_target_partitions(options.partitions.max(1));
        let ctx = SessionContext::new_with_config(config);
        let registry = ModelRegistry::new();
        register_all(&ctx, &registry).map_err(sources::df_error)?;
        for (name, path) in &options.tables {
            sources::register_table(&ctx, name, path).await?;
        }
        let models = models::open(&options.models, &options.policy, &registry, &ctx).await?;
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .map_err(|source| Error::Io {
                path: PathBuf::from(options.listen.to_string()),
                source,
            })?;
        Ok(Server {
            options,
            listener,
            registry,
            ctx,
            models,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The models it serves, by name.
    pub fn models(&self) -> &[String] {
        &self.models
    }

    /// The registry of its models (what its SQL functions read).
    pub fn registry(&self) -> &ModelRegistry {
        &self.registry
    }

    /// Serves until `shutdown` resolves, then ends the streams, lets the calls in progress
    /// finish, and commits every model a stream was training (see the module doc).
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        let Server {
            options,
            listener,
            registry,
            ctx,
            models,
        } = self;
        let (stop, stopping) = watch::channel(false);
        let exchanges = Arc::new(exchange::Exchanges::new(
            registry.clone(),
            options.defaults.clone(),
            stopping,
        ));
        let read_only = SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false)
            .with_allow_statements(false);
        let sql = FlightSqlService::new(ctx.state()).with_sql_options(read_only);
        let service = service::Service::new(sql, exchanges.clone(), options.limits);
        let flight = FlightServiceServer::new(service)
            .max_decoding_message_size(options.limits.max_message_bytes)
            .max_encoding_message_size(usize::MAX);
        let (health, health_service) = tonic_health::server::health_reporter();
        health
            .set_serving::<FlightServiceServer<service::Service>>()
            .await;
        let mut builder = tonic::transport::Server::builder();
        if let Some((cert, key)) = &options.tls {
            let identity = Identity::from_pem(read(cert)?, read(key)?);
            builder = builder
                .tls_config(ServerTlsConfig::new().identity(identity))
                .map_err(|e| Error::config("tls", e.to_string()))?;
        }
        let tokens = options.tokens.clone();
        let check = move |request| match &tokens {
            Some(tokens) => tokens.check(request),
            None => Ok(request),
        };
        let address = listener.local_addr().ok();
        tracing::info!(
            address = ?address,
            models = models.join(","),
            tls = options.tls.is_some(),
            tokens = options.tokens.is_some(),
            "serving"
        );
        let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
        let stopped = async {
            shutdown.await;
            tracing::info!("stopping: the streams end after their batch in hand");
            health
                .set_not_serving::<FlightServiceServer<service::Service>>()
                .await;
            let _ = stop.send(true);
        };
        let served = builder
            .add_service(health_service)
            .add_service(tonic::service::interceptor::InterceptedService::new(
                flight, check,
            ))
            .serve_with_incoming_shutdown(incoming, stopped)
            .await;
        let mut failed = None;
        for (name, result) in exchanges.commit_all().await {
            match result {
                Ok(()) => tracing::info!(model = %name, "committed at shutdown"),
                Err(e) => {
                    tracing::error!(model = %name, error = %e, "commit failed at shutdown");
                    failed.get_or_insert(e);
                }
            }
        }
        served.map_err(|e| Error::config("listen", format!("the server failed: {e}")))?;
        failed.map_or(Ok(()), Err)
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow_flight::encode::FlightDataEncoderBuilder;
    use arrow_flight::error::FlightError;
    use arrow_flight::{FlightClient, FlightDescriptor};
    use futures::{SinkExt, StreamExt};
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

    use super::*;
    use crate::sql::ModelSource;

    /// The first `rows` rows of the bundled car data set, every column text.
    fn car(rows: usize) -> RecordBatch {
        let text = std::fs::read_to_string("data/car.csv").unwrap();
        let mut lines = text.lines();
        let names: Vec<&str> = lines.next().unwrap().split(',').collect();
        let cells: Vec<Vec<&str>> = lines.take(rows).map(|l| l.split(',').collect()).collect();
        let fields: Vec<Field> = names
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, true))
            .collect();
        let columns: Vec<ArrayRef> = (0..names.len())
            .map(|j| Arc::new(StringArray::from_iter_values(cells.iter().map(|r| r[j]))) as _)
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    /// A stream left open when the server stops ends after its batch in hand, and its model
    /// is committed with what it learnt; the health check said SERVING while it served.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_open_at_shutdown_ends_and_its_model_is_committed() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models");
        std::fs::create_dir(&models).unwrap();
        std::fs::write(
            models.join("m.json"),
            r#"{"config": {"algorithm": "oza", "n_learners": 3},
                "classes": ["acc", "good", "unacc", "vgood"], "seed": 1}"#,
        )
        .unwrap();
        let options = Options {
            listen: "127.0.0.1:0".parse().unwrap(),
            models: models.clone(),
            tables: vec![],
            tokens: None,
            tls: None,
            limits: Limits::default(),
            policy: CheckpointPolicy::at_end(&models),
            defaults: Defaults {
                label: "label".into(),
                learn_once_by: None,
            },
            partitions: 1,
        };
        let server = Server::bind(options).await.unwrap();
        assert_eq!(server.models(), ["m"]);
        let (address, registry) = (server.local_addr(), server.registry().clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        let channel = tonic::transport::Channel::from_shared(format!("http://{address}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let request = HealthCheckRequest {
            service: "arrow.flight.protocol.FlightService".into(),
        };
        let health = HealthClient::new(channel.clone()).check(request).await;
        assert_eq!(
            health.unwrap().into_inner().status,
            ServingStatus::Serving as i32
        );

        let (mut batches, input) = futures::channel::mpsc::channel::<Result<_, FlightError>>(4);
        let input = FlightDataEncoderBuilder::new()
            .with_flight_descriptor(Some(FlightDescriptor::new_path(vec!["m".into()])))
            .build(input);
        let mut client = FlightClient::new(channel);
        batches.send(Ok(car(50))).await.unwrap();
        let mut scored = client.do_exchange(input).await.unwrap();
        let first = scored.next().await.unwrap().unwrap();
        assert_eq!(first.num_rows(), 50);
        let predicted = first.column_by_name("predicted_label").unwrap();
        assert_eq!(predicted.as_string::<i32>().iter().flatten().count(), 50);
        let ModelSource::Live(slot) = registry.get("m").unwrap() else {
            panic!("a live model");
        };
        assert_eq!(slot.clients(), 1);
        assert!(!models.join("m.parquet").exists(), "nothing committed yet");

        stop.send(()).unwrap();
        while let Some(Ok(_)) = scored.next().await {}
        running.await.unwrap().unwrap();
        let (_, stream) = crate::checkpoint::load(&models.join("m.parquet")).unwrap();
        assert_eq!(stream.stats.rows_learnt, 50);
        assert_eq!(slot.commits(), 1);
        assert_eq!(slot.clients(), 0);
    }
}
