//! The Flight service: DataFusion's Flight SQL service for statements, [`Exchanges`] for
//! `DoExchange`, and around every call the server's limits and its log line.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_flight::flight_service_server::FlightService;
use arrow_flight::sql::{Any, Command};
use arrow_flight::{
    Action, ActionType, Criteria, Empty, FlightData, FlightDescriptor, FlightInfo,
    HandshakeRequest, HandshakeResponse, PollInfo, PutResult, SchemaResult, Ticket,
};
use datafusion_flight_sql_server::service::FlightSqlService;
use datafusion_flight_sql_server::state::CommandTicket;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use prost::Message;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::{Request, Response, Status, Streaming};

use super::auth::Client;
use super::exchange::Exchanges;

/// What one server allows a call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The largest message a client may send, in bytes (a batch of a DoExchange, a
    /// statement's parameters).
    pub max_message_bytes: usize,
    /// Calls in progress at once, result streams and DoExchange streams included.
    pub max_calls: usize,
    /// The longest a call other than a DoExchange may take, its result stream included.
    pub call_timeout: Duration,
}

impl Default for Limits {
    /// 64 MiB messages, 64 calls at once, 5 minutes a call.
    fn default() -> Self {
        Limits {
            max_message_bytes: 64 << 20,
            max_calls: 64,
            call_timeout: Duration::from_secs(300),
        }
    }
}

/// The streamboost Flight service.
pub struct Service {
    sql: FlightSqlService,
    exchanges: Arc<Exchanges>,
    limits: Limits,
    calls: Arc<Semaphore>,
}

/// A call's answer, a stream of messages.
type Answers<T> = BoxStream<'static, Result<T, Status>>;

impl Service {
    /// Statements through `sql`, exchanges through `exchanges`, under `limits`.
    pub fn new(sql: FlightSqlService, exchanges: Arc<Exchanges>, limits: Limits) -> Self {
        Service {
            sql,
            exchanges,
            limits,
            calls: Arc::new(Semaphore::new(limits.max_calls)),
        }
    }

    /// A place among the calls in progress, or `ResourceExhausted`.
    fn admit(&self, call: &'static str, client: &Client) -> Result<Call, Status> {
        let permit = self.calls.clone().try_acquire_owned().map_err(|_| {
            tracing::warn!(client = &*client.0, call, "refused: too many calls");
            Status::resource_exhausted(format!(
                "{} calls are in progress, the server's limit (--max-calls)",
                self.limits.max_calls
            ))
        })?;
        Ok(Call {
            name: call,
            client: client.clone(),
            started: Instant::now(),
            rows: 0,
            _permit: permit,
            outcome: "ok",
        })
    }

    /// Runs a unary call within the call timeout, logged.
    async fn unary<T>(
        &self, call: &'static str, client: Client,
        answer: impl Future<Output = Result<Response<T>, Status>>,
    ) -> Result<Response<T>, Status> {
        let mut call = self.admit(call, &client)?;
        let answer = within(self.limits.call_timeout, answer).await;
        if answer.is_err() {
            call.outcome = "error";
        }
        answer
    }

    /// Runs a call whose answer is a stream: the stream holds the call's place and ends
    /// with `DeadlineExceeded` at the call timeout (`deadline: false`: no timeout).
    async fn streaming<T: Rows + Send + 'static>(
        &self, call: &'static str, client: Client, deadline: bool,
        answer: impl Future<Output = Result<Response<Answers<T>>, Status>>,
    ) -> Result<Response<Answers<T>>, Status> {
        let mut call = self.admit(call, &client)?;
        let limit = deadline.then_some(self.limits.call_timeout);
        let answer = match limit {
            Some(limit) => within(limit, answer).await,
            None => answer.await,
        };
        let stream = match answer {
            Ok(response) => response.into_inner(),
            Err(e) => {
                call.outcome = "error";
                return Err(e);
            }
        };
        let until = limit.map(|limit| tokio::time::Instant::from_std(call.started + limit));
        let state = (stream, call, until);
        let logged = futures::stream::unfold(state, |(mut stream, mut call, until)| async move {
            let next = match until {
                Some(until) => match tokio::time::timeout_at(until, stream.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        call.outcome = "deadline";
                        let status = past_deadline();
                        return Some((Err(status), (futures::stream::empty().boxed(), call, None)));
                    }
                },
                None => stream.next().await,
            };
            match next {
                Some(Ok(item)) => {
                    call.rows += item.rows();
                    Some((Ok(item), (stream, call, until)))
                }
                Some(Err(e)) => {
                    call.outcome = "error";
                    Some((Err(e), (futures::stream::empty().boxed(), call, None)))
                }
                None => None,
            }
        });
        Ok(Response::new(logged.boxed()))
    }
}

/// A call in progress: its place among the calls, and its log line when it ends.
struct Call {
    name: &'static str,
    client: Client,
    started: Instant,
    rows: u64,
    outcome: &'static str,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Call {
    fn drop(&mut self) {
        tracing::info!(
            client = &*self.client.0,
            call = self.name,
            rows = self.rows,
            seconds = self.started.elapsed().as_secs_f64(),
            outcome = self.outcome,
            "call"
        );
    }
}

/// The rows an answer's item carries (a record batch message's length).
trait Rows {
    fn rows(&self) -> u64 {
        0
    }
}

impl Rows for FlightData {
    fn rows(&self) -> u64 {
        arrow::ipc::root_as_message(&self.data_header)
            .ok()
            .and_then(|m| m.header_as_record_batch())
            .map_or(0, |b| b.length().max(0) as u64)
    }
}

impl Rows for PutResult {}
impl Rows for arrow_flight::Result {}
impl Rows for FlightInfo {}
impl Rows for ActionType {}
impl Rows for HandshakeResponse {}

async fn within<T>(
    limit: Duration, answer: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    tokio::time::timeout(limit, answer)
        .await
        .unwrap_or_else(|_| Err(past_deadline()))
}

fn past_deadline() -> Status {
    Status::deadline_exceeded("the call took longer than the server's limit (--call-timeout)")
}

/// Refuses a Substrait plan: a plan can name any file, where a statement reaches only the
/// registered tables and models.
fn refuse_substrait(command: &Command) -> Result<(), Status> {
    match command {
        Command::CommandStatementSubstraitPlan(_)
        | Command::ActionCreatePreparedSubstraitPlanRequest(_) => Err(Status::unimplemented(
            "Substrait plans are not served: send SQL",
        )),
        _ => Ok(()),
    }
}

/// The Flight SQL command of a descriptor, if it holds one.
fn descriptor_command(descriptor: &FlightDescriptor) -> Option<Command> {
    let any = Any::decode(&*descriptor.cmd).ok()?;
    Command::try_from(any).ok()
}

fn boxed<T: Send + 'static>(
    response: Response<impl Stream<Item = Result<T, Status>> + Send + 'static>,
) -> Response<Answers<T>> {
    Response::new(response.into_inner().boxed())
}

#[tonic::async_trait]
impl FlightService for Service {
    type HandshakeStream = Answers<HandshakeResponse>;
    type ListFlightsStream = Answers<FlightInfo>;
    type DoGetStream = Answers<FlightData>;
    type DoPutStream = Answers<PutResult>;
    type DoExchangeStream = Answers<FlightData>;
    type DoActionStream = Answers<arrow_flight::Result>;
    type ListActionsStream = Answers<ActionType>;

    async fn handshake(
        &self, request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Self::HandshakeStream>, Status> {
        let client = Client::of(&request);
        let answer = async { self.sql.handshake(request).await.map(boxed) };
        self.streaming("handshake", client, true, answer).await
    }

    async fn list_flights(
        &self, request: Request<Criteria>,
    ) -> Result<Response<Self::ListFlightsStream>, Status> {
        let client = Client::of(&request);
        let answer = async { self.sql.list_flights(request).await.map(boxed) };
        self.streaming("list_flights", client, true, answer).await
    }

    async fn get_flight_info(
        &self, request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        if let Some(command) = descriptor_command(request.get_ref()) {
            refuse_substrait(&command)?;
        }
        let client = Client::of(&request);
        self.unary("get_flight_info", client, self.sql.get_flight_info(request))
            .await
    }

    async fn poll_flight_info(
        &self, request: Request<FlightDescriptor>,
    ) -> Result<Response<PollInfo>, Status> {
        if let Some(command) = descriptor_command(request.get_ref()) {
            refuse_substrait(&command)?;
        }
        let client = Client::of(&request);
        self.unary(
            "poll_flight_info",
            client,
            self.sql.poll_flight_info(request),
        )
        .await
    }

    async fn get_schema(
        &self, request: Request<FlightDescriptor>,
    ) -> Result<Response<SchemaResult>, Status> {
        if let Some(command) = descriptor_command(request.get_ref()) {
            refuse_substrait(&command)?;
        }
        let client = Client::of(&request);
        self.unary("get_schema", client, self.sql.get_schema(request))
            .await
    }

    async fn do_get(
        &self, request: Request<Ticket>,
    ) -> Result<Response<Self::DoGetStream>, Status> {
        if let Ok(ticket) = CommandTicket::try_decode(request.get_ref().ticket.clone()) {
            refuse_substrait(&ticket.command)?;
        }
        let client = Client::of(&request);
        let answer = async { self.sql.do_get(request).await.map(boxed) };
        self.streaming("do_get", client, true, answer).await
    }

    async fn do_put(
        &self, request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoPutStream>, Status> {
        let client = Client::of(&request);
        let answer = async { self.sql.do_put(request).await.map(boxed) };
        self.streaming("do_put", client, true, answer).await
    }

    async fn do_exchange(
        &self, request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoExchangeStream>, Status> {
        let client = Client::of(&request);
        let exchanges = self.exchanges.clone();
        let who = client.clone();
        // The stream has no time limit; its start (the descriptor and schema) has.
        let limit = self.limits.call_timeout;
        let answer = async move {
            let stream = within(limit, exchanges.exchange(who, request.into_inner())).await?;
            Ok(Response::new(stream))
        };
        self.streaming("do_exchange", client, false, answer).await
    }

    async fn do_action(
        &self, request: Request<Action>,
    ) -> Result<Response<Self::DoActionStream>, Status> {
        if request.get_ref().r#type == "CreatePreparedSubstraitPlan" {
            return Err(Status::unimplemented(
                "Substrait plans are not served: send SQL",
            ));
        }
        let client = Client::of(&request);
        let answer = async { self.sql.do_action(request).await.map(boxed) };
        self.streaming("do_action", client, true, answer).await
    }

    async fn list_actions(
        &self, request: Request<Empty>,
    ) -> Result<Response<Self::ListActionsStream>, Status> {
        let client = Client::of(&request);
        let answer = async { self.sql.list_actions(request).await.map(boxed) };
        self.streaming("list_actions", client, true, answer).await
    }
}

#[cfg(test)]
mod tests {
    use arrow_flight::sql::{
        CommandStatementQuery, CommandStatementSubstraitPlan, ProstMessageExt,
    };

    use super::*;

    #[test]
    fn substrait_plans_are_refused_and_statements_pass() {
        let plan = Command::CommandStatementSubstraitPlan(CommandStatementSubstraitPlan::default());
        assert_eq!(
            refuse_substrait(&plan).unwrap_err().code(),
            tonic::Code::Unimplemented
        );
        let query = CommandStatementQuery {
            query: "SELECT 1".into(),
            transaction_id: None,
        };
        let descriptor = FlightDescriptor::new_cmd(query.as_any().encode_to_vec());
        let command = descriptor_command(&descriptor).expect("a Flight SQL command");
        assert!(refuse_substrait(&command).is_ok());
        let descriptor = FlightDescriptor::new_cmd(
            CommandStatementSubstraitPlan::default()
                .as_any()
                .encode_to_vec(),
        );
        let command = descriptor_command(&descriptor).expect("a Flight SQL command");
        assert!(refuse_substrait(&command).is_err());
    }
}
