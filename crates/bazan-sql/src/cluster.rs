//! SQL on worker processes: datafusion-distributed over its gRPC transport (feature `grpc`).
//!
//! - [`run_worker`] serves one worker (`bazan worker --listen ADDR`): sessions built with
//!   [`crate::distributed::configure`] (the bazan codec and the lake-scan task handlers), one
//!   log line per task it runs, until Ctrl-C or SIGTERM.
//! - [`Cluster`] is the coordinator's view of a list of workers: before every query it asks
//!   each worker for its version ([`PROTOCOL_VERSION`]; any other version refuses the query),
//!   leaves out the workers that do not answer (a note says which), and routes task `i` of
//!   every stage to live worker `i mod n`, which `EXPLAIN` prints.
//!
//! Every channel, coordinator to worker and worker to worker, sends an HTTP/2 ping every
//! [`KEEPALIVE`] and drops a connection that does not answer one within [`KEEPALIVE`]: a
//! killed worker fails its query at once (its connections close), a worker that stops
//! answering fails it within [`FAILURE_BOUND`]. Every error that crosses a channel names the
//! worker at its other end. The protocol has no authentication: run workers on a private
//! network only.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use arrow_array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::execution::{SessionStateBuilder, TaskContext};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::grpc::{BoxCloneSyncChannel, create_worker_client};
use datafusion_distributed::{
    ChannelResolver, CoordinatorToWorkerMsg, DistributedExt, DistributedTaskContext,
    ExecuteTaskRequest, GetWorkerInfoRequest, GetWorkerInfoResponse, NetworkBoundaryExt,
    RouteTasksEvent, RouteTasksEventResponse, SessionStateBuilderExt, SetPlanRequest, Worker,
    WorkerChannel, WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse, WorkerQueryContext,
    WorkerResolver, WorkerToCoordinatorMsg,
};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use url::Url;

use crate::distributed::configure;
use crate::error::{Error, Result};
use crate::exec::LakeScanExec;
use crate::tsfile::TsFileScanExec;

/// What a worker and a coordinator must agree on: this crate's version (its codec and scan
/// nodes) and the engines' major versions. A coordinator refuses workers that report another.
pub const PROTOCOL_VERSION: &str = concat!(
    "bazan-sql ",
    env!("CARGO_PKG_VERSION"),
    " (datafusion 55, datafusion-distributed 4)"
);

/// Interval of the HTTP/2 pings on every channel, and how long a ping may go unanswered.
pub const KEEPALIVE: Duration = Duration::from_secs(5);

/// How long a connection attempt to a worker may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The longest a query waits on a worker that stopped answering before it fails naming it:
/// one ping interval plus one ping timeout.
pub const FAILURE_BOUND: Duration = Duration::from_secs(10);

/// How long the version question before a query waits for each worker.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a stopping worker lets running tasks finish before it exits.
const DRAIN: Duration = Duration::from_secs(5);

/// A worker address as typed: `http://host:port`, or `host:port` (taken as `http://`).
pub fn parse_worker_url(text: &str) -> Result<Url> {
    let full = if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}")
    };
    let url =
        Url::parse(&full).map_err(|e| Error::Query(format!("worker address {text:?}: {e}")))?;
    if url.scheme() != "http" || url.host().is_none() || url.port_or_known_default().is_none() {
        return Err(Error::Query(format!(
            "worker address {text:?}: expected http://HOST:PORT or HOST:PORT"
        )));
    }
    Ok(url)
}

/// gRPC channels by worker URL, with the keep-alive settings above; a worker whose
/// connection dropped is connected again on the next request (a restarted worker is used
/// again).
#[derive(Clone, Default)]
struct Channels {
    cache: Arc<Mutex<HashMap<Url, BoxCloneSyncChannel>>>,
}

impl Channels {
    fn channel(&self, url: &Url) -> DfResult<BoxCloneSyncChannel> {
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| DataFusionError::Internal("worker channel cache poisoned".into()))?;
        if let Some(c) = cache.get(url) {
            return Ok(c.clone());
        }
        let endpoint = tonic::transport::Channel::from_shared(url.to_string())
            .map_err(|e| DataFusionError::Execution(format!("worker {url}: bad address: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(KEEPALIVE)
            .keep_alive_timeout(KEEPALIVE)
            .keep_alive_while_idle(true);
        let channel = BoxCloneSyncChannel::new(endpoint.connect_lazy());
        cache.insert(url.clone(), channel.clone());
        Ok(channel)
    }
}

#[async_trait]
impl ChannelResolver for Channels {
    async fn get_worker_client_for_url(&self, url: &Url) -> DfResult<Box<dyn WorkerChannel>> {
        Ok(Box::new(Named {
            url: url.clone(),
            inner: create_worker_client(self.channel(url)?),
        }))
    }
}

/// A worker channel whose errors name the worker.
struct Named {
    url: Url,
    inner: Box<dyn WorkerChannel>,
}

/// `e` as an error naming the worker at `url` (once: an error that already names it, having
/// crossed another channel, is kept).
fn at_worker(url: &Url, e: DataFusionError) -> DataFusionError {
    let text = e.strip_backtrace();
    let name = worker_name(url);
    if text.contains(&name) {
        return e;
    }
    DataFusionError::Execution(format!("{name}: {text}"))
}

/// How errors and notes name a worker.
fn worker_name(url: &Url) -> String {
    format!("worker {}", url.as_str().trim_end_matches('/'))
}

#[async_trait]
impl WorkerChannel for Named {
    async fn coordinator_channel(
        &mut self,
        headers: http::HeaderMap,
        set_plan_request: SetPlanRequest,
        c2w_stream: BoxStream<'static, CoordinatorToWorkerMsg>,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> DfResult<BoxStream<'static, DfResult<WorkerToCoordinatorMsg>>> {
        let url = self.url.clone();
        let stream = self
            .inner
            .coordinator_channel(headers, set_plan_request, c2w_stream, metrics, task_ctx)
            .await
            .map_err(|e| at_worker(&url, e))?;
        Ok(stream.map_err(move |e| at_worker(&url, e)).boxed())
    }

    async fn execute_task(
        &mut self,
        headers: http::HeaderMap,
        request: ExecuteTaskRequest,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> DfResult<Vec<BoxStream<'static, DfResult<RecordBatch>>>> {
        let url = self.url.clone();
        let streams = self
            .inner
            .execute_task(headers, request, metrics, task_ctx)
            .await
            .map_err(|e| at_worker(&url, e))?;
        Ok(streams
            .into_iter()
            .map(|s| {
                let url = url.clone();
                s.map_err(move |e| at_worker(&url, e)).boxed()
            })
            .collect())
    }

    async fn get_worker_info(
        &mut self,
        request: GetWorkerInfoRequest,
    ) -> DfResult<GetWorkerInfoResponse> {
        self.inner
            .get_worker_info(request)
            .await
            .map_err(|e| at_worker(&self.url, e))
    }
}

/// The workers a coordinator uses, as the version question before a query left them.
#[derive(Clone, Default)]
struct Live(Arc<RwLock<Vec<Url>>>);

impl Live {
    fn get(&self) -> Vec<Url> {
        self.0.read().map(|l| l.clone()).unwrap_or_default()
    }
}

impl WorkerResolver for Live {
    fn get_urls(&self) -> DfResult<Vec<Url>> {
        Ok(self.get())
    }
}

/// Task `i` of a stage on live worker `i mod n` (what `EXPLAIN` prints).
fn route(live: &Live, ev: RouteTasksEvent) -> Option<DfResult<RouteTasksEventResponse>> {
    let urls = live.get();
    if urls.is_empty() {
        return Some(Err(DataFusionError::Execution(
            "no worker is available".into(),
        )));
    }
    let routed = (0..ev.task_count)
        .map(|i| urls[i % urls.len()].clone())
        .collect();
    Some(Ok(RouteTasksEventResponse::new(routed)))
}

/// A coordinator over worker processes; see the module documentation.
#[derive(Clone)]
pub struct Cluster {
    urls: Vec<Url>,
    live: Live,
    channels: Channels,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("urls", &self.urls)
            .field("live", &self.live.get())
            .finish()
    }
}

impl Cluster {
    /// A cluster of the workers at `urls` (`http://HOST:PORT` or `HOST:PORT`, at least one).
    pub fn new<S: AsRef<str>>(urls: &[S]) -> Result<Self> {
        let urls = urls
            .iter()
            .map(|u| parse_worker_url(u.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        if urls.is_empty() {
            return Err(Error::Query("a cluster needs at least one worker".into()));
        }
        Ok(Cluster {
            live: Live(Arc::new(RwLock::new(urls.clone()))),
            urls,
            channels: Channels::default(),
        })
    }

    /// The workers, as given.
    pub fn urls(&self) -> &[Url] {
        &self.urls
    }

    /// The workers that answered the last version question.
    pub fn live(&self) -> Vec<Url> {
        self.live.get()
    }

    /// A coordinator context whose queries run on the workers, `threads` partitions per task.
    pub fn session_context(&self, threads: usize) -> SessionContext {
        let config = SessionConfig::new()
            .with_target_partitions(threads.max(1))
            .with_information_schema(true);
        let live = self.live.clone();
        let state = configure(
            SessionStateBuilder::new()
                .with_default_features()
                .with_config(config),
        )
        .with_distributed_worker_resolver(self.live.clone())
        .with_distributed_channel_resolver(self.channels.clone())
        .with_distributed_route_tasks_handler(move |ev: RouteTasksEvent| route(&live, ev))
        .with_distributed_planner()
        .build();
        SessionContext::from(state)
    }

    /// Asks every worker for its version (all at once, [`PROBE_TIMEOUT`] each) and keeps those
    /// that answer for the next query. A worker of another version refuses the query; a
    /// worker that does not answer is left out, with a note naming it; no worker answering
    /// is an error naming them all.
    pub async fn refresh(&self) -> Result<Vec<String>> {
        let probes = self.urls.iter().map(|url| {
            let channels = self.channels.clone();
            let url = url.clone();
            async move {
                let asked = async {
                    let mut client = channels.get_worker_client_for_url(&url).await?;
                    client.get_worker_info(GetWorkerInfoRequest {}).await
                };
                let answer = match tokio::time::timeout(PROBE_TIMEOUT, asked).await {
                    Ok(Ok(info)) => Ok(info.version),
                    Ok(Err(e)) => Err(e.strip_backtrace()),
                    Err(_) => Err(format!(
                        "{}: no answer within {} s",
                        worker_name(&url),
                        PROBE_TIMEOUT.as_secs()
                    )),
                };
                (url, answer)
            }
        });
        let answers = futures::future::join_all(probes).await;
        let mut live = Vec::new();
        let mut notes = Vec::new();
        for (url, answer) in answers {
            match answer {
                Ok(v) if v == PROTOCOL_VERSION => live.push(url),
                Ok(v) => {
                    return Err(Error::Execution(format!(
                        "{} runs {}, this coordinator runs {PROTOCOL_VERSION}: \
                         start the workers from the same bazan release",
                        worker_name(&url),
                        if v.is_empty() {
                            "a worker that is not bazan's".to_string()
                        } else {
                            v
                        }
                    )));
                }
                Err(e) => notes.push(format!("left out (unreachable): {e}")),
            }
        }
        if live.is_empty() {
            return Err(Error::Execution(format!(
                "no worker answered: {}",
                notes.join("; ")
            )));
        }
        if let Ok(mut l) = self.live.0.write() {
            *l = live;
        }
        Ok(notes)
    }

    /// Which live worker runs which task of every stage of a distributed plan, one line per
    /// stage, in the order of the plan.
    pub fn routing(&self, plan: &Arc<dyn ExecutionPlan>) -> String {
        let urls = self.live.get();
        let mut lines = Vec::new();
        let mut stack = vec![Arc::clone(plan)];
        while let Some(node) = stack.pop() {
            if let Some(boundary) = node.as_network_boundary() {
                let stage = boundary.input_stage();
                let tasks: Vec<String> = (0..stage.task_count())
                    .map(|i| match urls.get(i % urls.len().max(1)) {
                        Some(u) => format!("task {i} -> {}", u.as_str().trim_end_matches('/')),
                        None => format!("task {i} -> (no worker)"),
                    })
                    .collect();
                lines.push((stage.num(), tasks.join(", ")));
                if let Some(p) = stage.local_plan() {
                    stack.push(Arc::clone(p));
                }
                continue;
            }
            stack.extend(node.children().into_iter().cloned());
        }
        lines.sort_by_key(|(n, _)| *n);
        lines.dedup_by_key(|(n, _)| *n);
        lines
            .into_iter()
            .map(|(n, t)| format!("Stage {n}: {t}\n"))
            .collect()
    }
}

/// What a worker prints: one line per event.
pub type WorkerLog = Arc<dyn Fn(&str) + Send + Sync>;

/// One line naming a task the worker was given: its index, its stage's head operator and
/// what its scans read.
fn task_line(ev: &WorkerPlanRewriteEvent) -> String {
    let (i, n) = ev
        .session_config
        .get_extension::<DistributedTaskContext>()
        .map_or((0, 1), |t| (t.task_index, t.task_count));
    let mut scans = Vec::new();
    let mut stack = vec![Arc::clone(&ev.plan)];
    while let Some(node) = stack.pop() {
        if let Some(s) = node.downcast_ref::<LakeScanExec>() {
            scans.push(format!(
                "lake {} rows={} blocks={}",
                s.lake().root().display(),
                s.rows_planned(),
                s.blocks_planned()
            ));
        } else if let Some(s) = node.downcast_ref::<TsFileScanExec>() {
            scans.push(format!("tsfile {}", s.path().display()));
        }
        if node.is_network_boundary() {
            continue;
        }
        stack.extend(node.children().into_iter().cloned());
    }
    let scans = if scans.is_empty() {
        String::new()
    } else {
        format!(": {}", scans.join(", "))
    };
    format!("task {}/{n} {}{scans}", i + 1, ev.plan.name())
}

/// Serves a worker on `listen` until Ctrl-C or SIGTERM (this call blocks), with `threads`
/// runtime threads. `log` gets the listening address first, then one line per task, then
/// a line when the worker stops. Running tasks get [`DRAIN`] to finish.
pub fn run_worker(listen: SocketAddr, threads: usize, log: WorkerLog) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("bazan-worker")
        .enable_all()
        .build()
        .map_err(|e| Error::Other(format!("cannot start the worker runtime: {e}")))?;
    runtime.block_on(serve(listen, log))
}

async fn serve(listen: SocketAddr, log: WorkerLog) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| Error::Other(format!("cannot listen on {listen}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Error::Other(format!("listening on {listen}: {e}")))?;
    let channels = Channels::default();
    let task_log = Arc::clone(&log);
    let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let channels = channels.clone();
        let task_log = Arc::clone(&task_log);
        async move {
            Ok(configure(ctx.builder)
                .with_distributed_channel_resolver(channels)
                .with_distributed_worker_plan_rewrite_handler(move |ev: WorkerPlanRewriteEvent| {
                    task_log(&task_line(&ev));
                    Ok(WorkerPlanRewriteEventResponse::new(ev.plan))
                })
                .build())
        }
    })
    .with_version(PROTOCOL_VERSION);
    log(&format!("listening on http://{local} ({PROTOCOL_VERSION})"));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stopping = async move {
        let _ = stop_rx.await;
    };
    let server = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(KEEPALIVE))
        .http2_keepalive_timeout(Some(KEEPALIVE))
        .add_service(worker.into_worker_server())
        .serve_with_incoming_shutdown(
            tonic::transport::server::TcpIncoming::from(listener),
            stopping,
        );
    tokio::pin!(server);
    let signal = tokio::select! {
        done = &mut server => {
            return done.map_err(|e| Error::Other(format!("worker on {local}: {e}")));
        }
        s = stop_signal() => s,
    };
    log(&format!("{signal}: stopping"));
    let _ = stop_tx.send(());
    // Running tasks get a moment to finish; the process ends after that in any case.
    let _ = tokio::time::timeout(DRAIN, &mut server).await;
    log("stopped");
    Ok(())
}

/// Waits for Ctrl-C or (on Unix) SIGTERM; returns which.
async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
        if let Ok(mut term) = term {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => "interrupted",
                _ = term.recv() => "terminated",
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    "interrupted"
}
