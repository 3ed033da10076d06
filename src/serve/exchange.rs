//! Scoring streams over Flight: `DoExchange` on a live model.
//!
//! A client opens a `DoExchange` whose descriptor names the model: a path of one element
//! (`FlightDescriptor.for_path("m")`), or a command holding JSON ([`Target`])
//! `{"model": "m", "label": "y", "key": "user", "learn_once_by": "id", "pass": ["sent_at"],
//! "producer": "sensor-7"}`, each but `model` optional: the label defaults to the model's own,
//! or the server's `--label` for a model never committed; `learn_once_by` to the server's
//! `--learn-once-by`; no key; `pass` names columns carried to the output that are not
//! features. It then streams record batches; each comes back as soon as it is scored, with
//! the prediction columns appended, as `boost_score` appends them. Each scored batch's
//! `app_metadata` is JSON, its acknowledgement: `{"batch": i, "rows": n, "sequence": q,
//! "committed_sequence": s, "commits": c, "committed_ts": t, "committed_id": p}`: the batch
//! is the stream's `i`-th, and the model's `q`-th since its streams began (the order it
//! learnt them, over all its streams); the last commit holds every batch up to the `s`-th,
//! the rows up to the largest `learn_once_by` value `t` (one ordering for every stream;
//! `null` before the first commit, or for a keyed model), and this producer's rows up to its
//! value `p`; `c` commits were written by this server.
//!
//! Streaming semantics:
//! * **One trainer, many clients.** The first stream on a model claims its training (as a
//!   `boost_score` query does: a query training it meanwhile is refused, and this stream is
//!   refused while a query trains it) and binds its columns; later streams on the same model
//!   join it, and must send the same columns and name the same label, key, ordering column
//!   and passed columns, all with a producer or none (else they are refused with
//!   `FailedPrecondition`). Batches of all the streams are learnt one at a time, in the order
//!   they arrive: each takes the model's lock, a FIFO queue, for the time of its scoring. A
//!   stream's own batches stay in its order.
//! * **Commits** follow the model's policy (every N rows, every S seconds: the server's
//!   `--checkpoint-every` and `--checkpoint-interval`), between batches, and when the last
//!   stream on the model ends; the model is then released (a query may train it again).
//!   While a commit is written, the batch that made it due and every batch queued behind it
//!   wait for it: a client sees one slower batch. The commit is also what `boost_predict`
//!   scores with from then on, and what `boost_models()` shows.
//! * **Exactly once.** A crash loses what was learnt after the last commit. A *producer*
//!   (a stream naming itself, its rows numbered by `learn_once_by`, ascending) has its rows
//!   learnt once whatever the other producers send: the model records each producer's
//!   largest value learnt and commits it with itself, and a producer's rows at or before it
//!   are scored without their labels, not learnt again. After a crash, or a lost connection,
//!   a producer resends from the `committed_id` it last got (or from anything earlier):
//!   every row is learnt once. Without a producer, `learn_once_by` is one ordering for all
//!   the streams (as in a query: rows at or before the largest value learnt by any stream
//!   are not learnt), which only one stream at a time can keep; without `learn_once_by`, a
//!   client resends the batches whose `sequence` is above the last `committed_sequence` it
//!   got.
//! * **Labels that come later.** A stream naming `delayed` (its id and time columns) sends
//!   rows whose label is null: each is scored and waits for its label in the model's
//!   pending store, committed with the model. A `labels` stream on the same model sends the
//!   labels (id, label, time) and gets each one's outcome back; it joins the session of the
//!   rows' streams (refused with `FailedPrecondition` while none is open). Rows and labels are
//!   learnt in the order they arrive: a client that sends each label before the rows after
//!   its time has them learnt in time order, as `boost_score_delayed` does.
//! * **Cancel.** A client that disconnects ends its stream after the batch being scored, if
//!   any: a batch is learnt whole or not at all, and the model stays consistent for the
//!   others. A batch refused (a column missing, a value of the wrong type) ends its stream
//!   with `InvalidArgument` and leaves the model as it was.
//! * **Shutdown.** When the server stops, each stream ends after its batch in hand, and the
//!   last stream on each model commits it.

use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use arrow_flight::decode::{DecodedPayload, FlightDataDecoder};
use arrow_flight::error::FlightError;
use arrow_flight::flight_descriptor::DescriptorType;
use arrow_flight::utils::batches_to_flight_data;
use arrow_flight::{FlightData, FlightDescriptor};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use serde::Deserialize;
use tokio::sync::{Mutex, OwnedMutexGuard, mpsc, watch};
use tonic::{Status, Streaming};

use super::auth::Client;
use super::models::is_model_name;
use crate::runtime::delay::DelayColumns;
use crate::runtime::{BatchOperator, outcome_schema};
use crate::sql::live::{LiveQuery, LiveSlot};
use crate::sql::{ModelRegistry, ModelSource};

/// What a stream trains: its descriptor, read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The model's name.
    pub model: String,
    /// The label column.
    #[serde(default)]
    pub label: Option<String>,
    /// One model per value of this column.
    #[serde(default)]
    pub key: Option<String>,
    /// Learn each row once by this ordering column.
    #[serde(default)]
    pub learn_once_by: Option<String>,
    /// Columns passed through to the scored batches, not features (row ids, times).
    #[serde(default)]
    pub pass: Vec<String>,
    /// The stream's producer: with `learn_once_by`, its rows are learnt once by its own
    /// ordering values, whatever the other producers' ([`Session::producers`]).
    #[serde(default)]
    pub producer: Option<String>,
    /// Labels that come after their rows: the id and time columns that tie a label to its
    /// row (in the rows and in the labels; not features). A row whose label is null waits
    /// for it.
    #[serde(default)]
    pub delayed: Option<DelayColumns>,
    /// This stream sends labels (the id, label and time columns) for the rows of the
    /// model's streams, which name `delayed`; each comes back as its outcome.
    #[serde(default)]
    pub labels: bool,
}

impl Target {
    /// The target a descriptor names.
    pub fn of(descriptor: &FlightDescriptor) -> Result<Target, Status> {
        let target = match descriptor.r#type() {
            DescriptorType::Path => match descriptor.path.as_slice() {
                [model] => Target {
                    model: model.clone(),
                    label: None,
                    key: None,
                    learn_once_by: None,
                    pass: vec![],
                    producer: None,
                    delayed: None,
                    labels: false,
                },
                _ => {
                    return Err(Status::invalid_argument(
                        "a DoExchange path is one element: the model's name",
                    ));
                }
            },
            DescriptorType::Cmd => serde_json::from_slice(&descriptor.cmd).map_err(|e| {
                Status::invalid_argument(format!(
                    "a DoExchange command is JSON {{\"model\": …, \"label\": …, \"key\": …, \
                     \"learn_once_by\": …, \"pass\": […], \"producer\": …, \"delayed\": {{\"id\": …, \
                     \"time\": …}}, \"labels\": false}}: {e}"
                ))
            })?,
            DescriptorType::Unknown => {
                return Err(Status::invalid_argument("a DoExchange names its model"));
            }
        };
        if !is_model_name(&target.model) {
            return Err(Status::invalid_argument(format!(
                "`{}` is not a model name (ASCII letters, digits, `_` and `-`): a request names \
                 a model of the server's directory, never a path",
                target.model
            )));
        }
        if target.labels && (target.producer.is_some() || target.key.is_some()) {
            return Err(Status::invalid_argument(
                "a labels stream names its model (and label): the rest is its rows' streams'",
            ));
        }
        if target.producer.is_some() && target.learn_once_by.is_none() {
            return Err(Status::invalid_argument(
                "a producer names the ordering column its rows are learnt once by \
                 (`learn_once_by`)",
            ));
        }
        Ok(target)
    }

    /// What every stream of one session shares: all but the producer's name.
    fn binding(&self) -> Target {
        Target {
            producer: self.producer.as_ref().map(|_| String::new()),
            ..self.clone()
        }
    }

    /// The columns that are not features.
    fn not_features(&self) -> Vec<&str> {
        let named = [self.learn_once_by.as_deref(), self.key.as_deref()];
        let delayed = self
            .delayed
            .iter()
            .flat_map(|d| [d.id.as_str(), d.time.as_str()]);
        named
            .into_iter()
            .flatten()
            .chain(delayed)
            .chain(self.pass.iter().map(String::as_str))
            .collect()
    }
}

/// What every stream falls back on where its descriptor is silent.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// The label column of a model never committed.
    pub label: String,
    /// The ordering column rows are learnt once by.
    pub learn_once_by: Option<String>,
}

/// The streams training one live model, and their one trainer.
struct Session {
    query: LiveQuery,
    /// The columns the first stream bound.
    input: SchemaRef,
    target: Target,
    streams: usize,
    committed_ts: Option<i64>,
    /// Rows taken since the last commit: at its end, a session commits only if any.
    uncommitted: u64,
    /// Batches taken since the session started, of all its streams: each batch's place in
    /// the order the model learnt them.
    sequence: u64,
    /// The sequence number of the last batch the last commit holds (0: none yet).
    committed_sequence: u64,
    /// Each producer's largest ordering value learnt: its rows at or before it are scored,
    /// not learnt. Committed with the model ([`crate::runtime::Position::producers`]), so that a producer
    /// that resends after a crash has each row learnt once.
    producers: BTreeMap<String, i64>,
    /// The producers' values the last commit holds.
    committed_producers: BTreeMap<String, i64>,
}

/// Where a scored batch stands: what its acknowledgement says.
struct Placed {
    sequence: u64,
    committed_sequence: u64,
    committed_ts: Option<i64>,
    /// The producer's largest value the last commit holds.
    committed_id: Option<i64>,
}

/// One live model's sessions: `None` while no stream trains it.
type Trainer = Arc<Mutex<Option<Session>>>;

/// Every model's trainer.
pub struct Exchanges {
    registry: ModelRegistry,
    defaults: Defaults,
    trainers: std::sync::Mutex<HashMap<String, Trainer>>,
    stopping: watch::Receiver<bool>,
}

impl Exchanges {
    /// The exchanges over `registry`'s live models; their streams end when `stopping` turns
    /// true.
    pub fn new(
        registry: ModelRegistry, defaults: Defaults, stopping: watch::Receiver<bool>,
    ) -> Self {
        Exchanges {
            registry,
            defaults,
            trainers: Default::default(),
            stopping,
        }
    }

    fn trainer(&self, model: &str) -> Trainer {
        let mut trainers = self.trainers.lock().unwrap_or_else(|e| e.into_inner());
        trainers.entry(model.to_string()).or_default().clone()
    }

    /// Serves one `DoExchange`: scores and learns the batches of `input` on the model its
    /// first message names, the scored batches streamed back.
    pub async fn exchange(
        self: &Arc<Self>, client: Client, mut input: Streaming<FlightData>,
    ) -> Result<BoxStream<'static, Result<FlightData, Status>>, Status> {
        let first = input
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("an empty DoExchange"))?;
        let descriptor = first.flight_descriptor.clone().ok_or_else(|| {
            Status::invalid_argument("a DoExchange's first message names its model")
        })?;
        let mut target = Target::of(&descriptor)?;
        let slot = match self.registry.get(&target.model) {
            Ok(ModelSource::Live(slot)) => slot,
            Ok(_) => {
                return Err(Status::failed_precondition(format!(
                    "model `{}` is not a live model: a DoExchange trains live models only",
                    target.model
                )));
            }
            Err(e) => return Err(Status::not_found(e.to_string())),
        };
        if target.learn_once_by.is_none() {
            target.learn_once_by = self.defaults.learn_once_by.clone();
        }
        if target.label.is_none() {
            target.label = Some(slot.committed().map_or_else(
                || self.defaults.label.clone(),
                |state| state.1.label.clone(),
            ));
        }
        // A message without an IPC header carries only metadata (the descriptor, a
        // client's `app_metadata`, the end of its writes): nothing to decode.
        let messages = futures::stream::once(async { Ok(first) })
            .chain(input)
            .try_filter(|message| std::future::ready(!message.data_header.is_empty()));
        let mut batches =
            FlightDataDecoder::new(messages.map_err(|e| FlightError::Tonic(Box::new(e))));
        let schema = loop {
            match batches.try_next().await.map_err(incoming)? {
                Some(message) => match message.payload {
                    DecodedPayload::Schema(schema) => break schema,
                    DecodedPayload::None => continue,
                    DecodedPayload::RecordBatch(_) => {
                        return Err(Status::invalid_argument("a batch before its schema"));
                    }
                },
                None => return Err(Status::invalid_argument("a DoExchange without a schema")),
            }
        };
        let trainer = self.trainer(&target.model);
        let output = wire_schema(&*join(&trainer, &slot, &target, schema.clone(), &client).await?);
        let started = Instant::now();
        let schema_message = batches_to_flight_data(&output, vec![]).map_err(internal)?;
        let (sender, receiver) = mpsc::channel(2);
        let this = self.clone();
        tokio::spawn(async move {
            let scored = this
                .stream(&trainer, &slot, &target, batches, &output, &sender)
                .await;
            let end = leave(&trainer).await;
            let rows = *scored.as_ref().unwrap_or(&0);
            if let Err(e) = scored.and(end) {
                let _ = sender.send(Err(e)).await;
            }
            tracing::info!(
                client = &*client.0,
                model = %target.model,
                rows,
                seconds = started.elapsed().as_secs_f64(),
                "exchange ended"
            );
        });
        let head = futures::stream::iter(schema_message.into_iter().map(Ok));
        let tail = futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|message| (message, receiver))
        });
        Ok(head.chain(tail).boxed())
    }

    /// Scores the batches of one stream in turn, each under the model's lock; returns the
    /// rows scored.
    async fn stream(
        &self, trainer: &Trainer, slot: &Arc<LiveSlot>, target: &Target,
        mut batches: FlightDataDecoder, output: &SchemaRef,
        sender: &mpsc::Sender<Result<FlightData, Status>>,
    ) -> Result<u64, Status> {
        let (mut count, mut rows) = (0u64, 0u64);
        let mut stopping = self.stopping.clone();
        loop {
            if *stopping.borrow() {
                break;
            }
            let next = tokio::select! {
                next = batches.try_next() => next.map_err(incoming)?,
                _ = stopping.changed() => break,
            };
            let batch = match next {
                None => break,
                Some(message) => match message.payload {
                    DecodedPayload::RecordBatch(batch) => batch,
                    DecodedPayload::None => continue,
                    DecodedPayload::Schema(_) => {
                        return Err(Status::invalid_argument(
                            "a second schema: a stream keeps its columns (open another)",
                        ));
                    }
                },
            };
            let n = batch.num_rows() as u64;
            let guard = trainer.clone().lock_owned().await;
            let target = target.clone();
            let (guard, scored) = tokio::task::spawn_blocking(move || {
                let mut guard = guard;
                let scoring = AssertUnwindSafe(|| score(&mut guard, &target, &batch));
                let scored = std::panic::catch_unwind(scoring).unwrap_or_else(|_| {
                    // A model that panicked mid-batch may be torn: the session ends, and
                    // the next stream starts from the last commit.
                    *guard = None;
                    Err(Status::internal(
                        "scoring panicked: the model goes back to its last commit",
                    ))
                });
                (guard, scored)
            })
            .await
            .map_err(|e| Status::internal(format!("the scoring task failed: {e}")))?;
            let (scored, placed) = scored?;
            drop(guard);
            let ack = serde_json::json!({
                "batch": count,
                "rows": n,
                "sequence": placed.sequence,
                "committed_sequence": placed.committed_sequence,
                "commits": slot.commits(),
                "committed_ts": placed.committed_ts,
                "committed_id": placed.committed_id,
            });
            let mut messages = batches_to_flight_data(output, vec![hydrated(&scored, output)?])
                .map_err(internal)?;
            messages.remove(0);
            if let Some(last) = messages.last_mut() {
                last.app_metadata = ack.to_string().into_bytes().into();
            }
            for message in messages {
                if sender.send(Ok(message)).await.is_err() {
                    // The client left: the batch was learnt, its answer is dropped.
                    return Ok(rows + n);
                }
            }
            count += 1;
            rows += n;
        }
        Ok(rows)
    }

    /// Commits every model a stream trains now (what a shutdown does after the streams end,
    /// should one still be open).
    pub async fn commit_all(&self) -> Vec<(String, crate::Result<()>)> {
        let trainers: Vec<(String, Trainer)> = {
            let trainers = self.trainers.lock().unwrap_or_else(|e| e.into_inner());
            trainers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let mut results = Vec::new();
        for (name, trainer) in trainers {
            let mut session = trainer.lock_owned().await;
            if session.is_some() {
                let result = tokio::task::spawn_blocking(move || {
                    let result = session.as_mut().map_or(Ok(()), commit_rest);
                    drop(session);
                    result
                })
                .await
                .unwrap_or_else(|e| Err(crate::Error::config("commit", e.to_string())));
                results.push((name, result));
            }
        }
        results
    }
}

/// Joins (or starts) the session training `slot`: the output schema of its scored batches.
async fn join(
    trainer: &Trainer, slot: &Arc<LiveSlot>, target: &Target, input: SchemaRef, client: &Client,
) -> Result<SchemaRef, Status> {
    let mut session = trainer.clone().lock_owned().await;
    if target.labels {
        let Some(running) = session.as_mut().filter(|s| s.target.delayed.is_some()) else {
            return Err(Status::failed_precondition(format!(
                "no stream of live model `{}` waits for labels: labels join the streams of its \
                 rows, which name `delayed` (open one first)",
                target.model
            )));
        };
        let label = running.target.label.as_deref().unwrap_or("label");
        if target.label.as_deref().is_some_and(|l| l != label) {
            return Err(Status::failed_precondition(format!(
                "live model `{}` learns label `{label}`",
                target.model
            )));
        }
        let predicted = running.query.schema();
        let label_type = predicted
            .field_with_name(&format!("predicted_{label}"))
            .map_or(DataType::Utf8, |f| f.data_type().clone());
        running.streams += 1;
        return Ok(outcome_schema(&input, label, &label_type));
    }
    if let Some(running) = session.as_mut() {
        if running.target.binding() != target.binding() || running.input.fields() != input.fields()
        {
            return Err(Status::failed_precondition(format!(
                "live model `{}` is trained by {} stream(s) over other columns or options \
                 ({}; label {:?}, key {:?}, learn_once_by {:?}, pass {:?}, producers {}): send \
                 the same, or wait for them to end",
                target.model,
                running.streams,
                columns(&running.input),
                running.target.label,
                running.target.key,
                running.target.learn_once_by,
                running.target.pass,
                if running.target.producer.is_some() {
                    "named"
                } else {
                    "none"
                },
            )));
        }
        running.streams += 1;
        return Ok(running.query.schema());
    }
    let training = slot
        .claim()
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
    let (slot, target, client) = (slot.clone(), target.clone(), client.clone());
    tokio::task::spawn_blocking(move || {
        let label = target.label.as_deref().unwrap_or("label");
        let not_features = target.not_features();
        // Named producers are learnt once by their own values (`score`); else by the
        // model's one ordering value, as a query learns.
        let once = match target.producer {
            Some(_) => None,
            None => target.learn_once_by.as_deref(),
        };
        let origin = format!("flight client {} on model {}", client.0, target.model);
        let query = slot
            .train(
                training,
                input.clone(),
                label,
                &not_features,
                once,
                target.key.as_deref(),
                target.delayed.clone(),
                slot.policy().clone(),
                &origin,
            )
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let output = query.schema();
        let position = query.position().unwrap_or_default();
        let committed_ts = position.ts;
        let producers = position.producers;
        *session = Some(Session {
            query,
            input,
            target,
            streams: 1,
            committed_ts,
            uncommitted: 0,
            sequence: 0,
            committed_sequence: 0,
            committed_producers: producers.clone(),
            producers,
        });
        Ok(output)
    })
    .await
    .map_err(|e| Status::internal(format!("the starting task failed: {e}")))?
}

/// Scores `batch` of `target`'s stream in the session: the scored batch and where it
/// stands. A named producer's rows at or before its largest value learnt are scored without
/// their labels (not learnt), and keep them in the scored batch.
fn score(
    session: &mut OwnedMutexGuard<Option<Session>>, target: &Target, batch: &RecordBatch,
) -> Result<(RecordBatch, Placed), Status> {
    let session = session
        .as_mut()
        .ok_or_else(|| Status::internal("a stream outlived its session"))?;
    if target.labels {
        let outcomes = (session.query)
            .labels(batch)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        return Ok((outcomes, count_batch(session, batch.num_rows())?));
    }
    if session.input.fields() != batch.schema().fields() {
        return Err(Status::invalid_argument(
            "a batch whose columns are not its stream's schema",
        ));
    }
    let label = target.label.as_deref().unwrap_or("label");
    let once = match (&target.producer, &target.learn_once_by) {
        (Some(producer), Some(column)) => {
            let learnt = session.producers.get(producer).copied();
            Some((producer, unlearnt(batch, label, column, learnt)?))
        }
        _ => None,
    };
    let unlabelled = once.as_ref().map_or(batch, |(_, (batch, _, _))| batch);
    let mut scored = session
        .query
        .take(unlabelled)
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    if let Some((producer, (_, labels, largest))) = once {
        if let Some((index, labels)) = labels {
            let mut columns = scored.columns().to_vec();
            columns[index] = labels;
            scored = RecordBatch::try_new(scored.schema(), columns).map_err(internal)?;
        }
        if let Some(largest) = largest {
            let known = session.producers.entry(producer.clone()).or_insert(largest);
            *known = largest.max(*known);
        }
    }
    let mut placed = count_batch(session, batch.num_rows())?;
    placed.committed_id =
        (target.producer.as_ref()).and_then(|p| session.committed_producers.get(p).copied());
    Ok((scored, placed))
}

/// Counts a batch of `rows` taken by the session, commits if the policy asks: where the
/// batch stands.
fn count_batch(session: &mut Session, rows: usize) -> Result<Placed, Status> {
    session.uncommitted += rows as u64;
    session.sequence += 1;
    if session.query.due() {
        commit(session).map_err(|e| Status::internal(format!("the commit failed: {e}")))?;
    }
    Ok(Placed {
        sequence: session.sequence,
        committed_sequence: session.committed_sequence,
        committed_ts: session.committed_ts,
        committed_id: None,
    })
}

/// A producer's `batch` with the labels of its rows at or before `learnt` (by `column`)
/// taken out; the label column's index and labels to put back in the scored batch, if any
/// were taken out; and the batch's largest value.
#[allow(clippy::type_complexity)]
fn unlearnt(
    batch: &RecordBatch, label: &str, column: &str, learnt: Option<i64>,
) -> Result<(RecordBatch, Option<(usize, ArrayRef)>, Option<i64>), Status> {
    let values = batch.column_by_name(column).ok_or_else(|| {
        Status::invalid_argument(format!("no `{column}` column to learn once by"))
    })?;
    let values = cast(values, &DataType::Int64).map_err(status)?;
    let values = values.as_primitive::<Int64Type>();
    if values.null_count() > 0 {
        return Err(Status::invalid_argument(format!(
            "`{column}` has nulls: each row of a producer needs its value"
        )));
    }
    let largest = arrow::compute::max(values);
    let Some(learnt) = learnt else {
        return Ok((batch.clone(), None, largest));
    };
    let before: BooleanArray = values.iter().map(|v| v.map(|v| v <= learnt)).collect();
    if before.true_count() == 0 {
        return Ok((batch.clone(), None, largest));
    }
    let index = batch.schema().index_of(label).map_err(|_| {
        Status::invalid_argument(format!(
            "no `{label}` label column: a producer's rows are learnt once through it"
        ))
    })?;
    let labels = batch.column(index).clone();
    let mut columns = batch.columns().to_vec();
    columns[index] = arrow::compute::nullif(&labels, &before).map_err(status)?;
    let taken = RecordBatch::try_new(batch.schema(), columns).map_err(status)?;
    Ok((taken, Some((index, labels)), largest))
}

/// Commits what a session took since its last commit, if anything.
fn commit_rest(session: &mut Session) -> crate::Result<()> {
    match session.uncommitted {
        0 => Ok(()),
        _ => commit(session),
    }
}

/// Commits the model: the commit holds the session's batches so far, and every producer's
/// values.
fn commit(session: &mut Session) -> crate::Result<()> {
    let started = Instant::now();
    let mut position = session.query.position().unwrap_or_default();
    position.producers = session.producers.clone();
    session.query.commit_at(Some(position))?;
    session.committed_sequence = session.sequence;
    session.committed_ts = session.query.position().and_then(|p| p.ts);
    session.committed_producers = session.producers.clone();
    tracing::info!(
        model = %session.target.model,
        rows = session.uncommitted,
        sequence = session.sequence,
        seconds = started.elapsed().as_secs_f64(),
        "commit"
    );
    session.uncommitted = 0;
    Ok(())
}

/// A stream leaves its session: the last one commits the model and releases it.
async fn leave(trainer: &Trainer) -> Result<(), Status> {
    let mut session = trainer.clone().lock_owned().await;
    let Some(running) = session.as_mut() else {
        return Ok(());
    };
    running.streams -= 1;
    if running.streams > 0 {
        return Ok(());
    }
    tokio::task::spawn_blocking(move || {
        let committed = session.as_mut().map_or(Ok(()), commit_rest);
        // The session ends even when its commit failed: the claim is released, and the next
        // stream starts from the last commit that is in place.
        *session = None;
        committed.map_err(|e| Status::internal(format!("the commit failed: {e}")))
    })
    .await
    .map_err(|e| Status::internal(format!("the commit task failed: {e}")))?
}

/// `batch` with its dictionary columns as their values: each scored batch goes out as an IPC
/// message of its own, with no dictionary state between them.
fn hydrated(batch: &RecordBatch, output: &SchemaRef) -> Result<RecordBatch, Status> {
    if batch.schema().fields() == output.fields() {
        return Ok(batch.clone());
    }
    let columns = batch
        .columns()
        .iter()
        .zip(output.fields())
        .map(|(column, field)| cast(column, field.data_type()))
        .collect::<Result<Vec<ArrayRef>, _>>()
        .map_err(internal)?;
    RecordBatch::try_new(output.clone(), columns).map_err(internal)
}

/// The schema of the scored batches on the wire: the operator's, dictionaries as values.
pub fn wire_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Dictionary(_, values) => {
                f.as_ref().clone().with_data_type((**values).clone())
            }
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn columns(schema: &Schema) -> String {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    names.join(", ")
}

/// A fault of the client's data.
fn status(e: impl std::fmt::Display) -> Status {
    Status::invalid_argument(e.to_string())
}

/// A fault of the server's own making of an answer.
fn internal(e: impl std::fmt::Display) -> Status {
    Status::internal(e.to_string())
}

/// A failure of the incoming stream: gRPC's own status where it has one (a message over the
/// size limit is `OutOfRange`), else the input's fault.
fn incoming(e: FlightError) -> Status {
    match e {
        FlightError::Tonic(status) => *status,
        e => Status::invalid_argument(e.to_string()),
    }
}
