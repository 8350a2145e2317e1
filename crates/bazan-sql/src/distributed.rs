//! Running lake and TsFile queries on several datafusion-distributed workers.
//!
//! [`configure`] adds what datafusion-distributed needs to run bazan scans on a cluster to a
//! session builder (of the coordinator or of a worker): the [`BazanCodec`], a desired task
//! count for lake scans (one task per partition group, capped by the workers) and a scale-up
//! handler that cuts a [`LakeScanExec`] into per-task scans that together read the same rows.
//! On a real cluster the coordinator adds its `WorkerResolver` and `ChannelResolver` (gRPC,
//! datafusion-distributed's `grpc` feature) and every worker process builds its sessions with
//! [`configure`]; the lake must be at the same path on every machine (a shared filesystem).
//!
//! [`InProcessCluster`] is a cluster of `n` workers in this process, each a separate
//! datafusion-distributed `Worker` with its own sessions. The channel between coordinator and
//! workers crosses the same boundaries as a network would: every task's plan is encoded to
//! protobuf bytes (with the codec) by the coordinator and decoded by the worker, and every
//! record batch a worker returns is encoded to Arrow IPC bytes and decoded again. Tasks and
//! bytes per worker are counted, so a test can check that every worker took part.

use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arrow_array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SessionStateBuilder, TaskContext};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    ChannelResolver, CoordinatorToWorkerMsg, DesiredTaskCountEvent, DesiredTaskCountEventResponse,
    DistributedExt, DistributedLeafExec, ExecuteTaskRequest, GetWorkerInfoRequest,
    GetWorkerInfoResponse, MaybeEncoded, ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
    SessionStateBuilderExt, SetPlanRequest, Worker, WorkerChannel, WorkerQueryContext,
    WorkerResolver, WorkerToCoordinatorMsg,
};
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::codec::BazanCodec;
use crate::exec::LakeScanExec;

/// Tasks for a lake scan: as many as it has blocks to share out (at least one per busy
/// partition); the planner caps them at the worker count.
fn lake_desired_tasks(ev: DesiredTaskCountEvent) -> Option<Result<DesiredTaskCountEventResponse>> {
    let scan = ev.plan.downcast_ref::<LakeScanExec>()?;
    let busy = scan.partitions().iter().filter(|p| !p.is_empty()).count() as u64;
    let tasks = scan.blocks_planned().max(busy).max(1);
    Some(Ok(DesiredTaskCountEventResponse::desired(
        usize::try_from(tasks).unwrap_or(usize::MAX),
    )))
}

/// Cuts a lake scan into `task_count` scans reading disjoint block groups.
fn lake_scale_up(ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = ev.plan.downcast_ref::<LakeScanExec>()?;
    let variants = scan
        .split_for_tasks(ev.task_count)
        .into_iter()
        .map(|s| Arc::new(s) as Arc<dyn ExecutionPlan>);
    Some(
        DistributedLeafExec::try_new(Arc::clone(ev.plan), variants)
            .map(|leaf| ScaleUpLeafNodeEventResponse::new(Arc::new(leaf))),
    )
}

/// Adds the bazan codec and the lake-scan task handlers to a session builder (coordinator
/// or worker).
pub fn configure(builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .with_distributed_user_codec(BazanCodec::new())
        .with_distributed_desired_task_count_handler(lake_desired_tasks)
        .with_distributed_scale_up_leaf_node_handler(lake_scale_up)
}

/// Work done by one in-process worker.
#[derive(Debug, Default)]
pub struct WorkerCounts {
    /// Tasks (plans) the worker received.
    pub tasks: AtomicU64,
    /// Bytes of the encoded plans it received.
    pub plan_bytes: AtomicU64,
    /// Record batches it returned.
    pub batches: AtomicU64,
    /// Bytes of the Arrow IPC encoding of those batches.
    pub batch_bytes: AtomicU64,
}

/// `n` datafusion-distributed workers in this process; see the module documentation.
#[derive(Clone)]
pub struct InProcessCluster {
    workers: Arc<OnceLock<Vec<Worker>>>,
    urls: Vec<url::Url>,
    counts: Arc<Vec<WorkerCounts>>,
}

impl std::fmt::Debug for InProcessCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessCluster")
            .field("urls", &self.urls)
            .field("counts", &self.counts)
            .finish()
    }
}

impl InProcessCluster {
    /// A cluster of `n` workers (at least one).
    pub fn new(n: usize) -> Result<Self> {
        let n = n.max(1);
        let urls = (0..n)
            .map(|i| url::Url::parse(&format!("http://bazan-worker-{i}:0")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let cluster = InProcessCluster {
            workers: Arc::new(OnceLock::new()),
            urls,
            counts: Arc::new((0..n).map(|_| WorkerCounts::default()).collect()),
        };
        let workers = (0..n)
            .map(|_| {
                let resolver = cluster.clone();
                Worker::from_session_builder(move |ctx: WorkerQueryContext| {
                    let resolver = resolver.clone();
                    async move {
                        Ok(configure(ctx.builder)
                            .with_distributed_channel_resolver(resolver)
                            .build())
                    }
                })
            })
            .collect();
        // The cell is new and set once, here.
        let _ = cluster.workers.set(workers);
        Ok(cluster)
    }

    /// What each worker did, in worker order.
    pub fn counts(&self) -> &[WorkerCounts] {
        &self.counts
    }

    /// A coordinator session whose queries run on the workers, with `threads` partitions
    /// per task.
    pub fn session_context(&self, threads: usize) -> SessionContext {
        let config = SessionConfig::new().with_target_partitions(threads.max(1));
        let state = configure(
            SessionStateBuilder::new()
                .with_default_features()
                .with_config(config),
        )
        .with_distributed_worker_resolver(self.clone())
        .with_distributed_channel_resolver(self.clone())
        .with_distributed_planner()
        .build();
        SessionContext::from(state)
    }

    fn index_of(&self, url: &url::Url) -> Result<usize> {
        self.urls
            .iter()
            .position(|u| u == url)
            .ok_or_else(|| DataFusionError::Internal(format!("no in-process worker at {url}")))
    }
}

impl WorkerResolver for InProcessCluster {
    fn get_urls(&self) -> Result<Vec<url::Url>, DataFusionError> {
        Ok(self.urls.clone())
    }
}

#[async_trait]
impl ChannelResolver for InProcessCluster {
    async fn get_worker_client_for_url(
        &self,
        url: &url::Url,
    ) -> Result<Box<dyn WorkerChannel>, DataFusionError> {
        let i = self.index_of(url)?;
        let worker = self
            .workers
            .get()
            .and_then(|w| w.get(i))
            .cloned()
            .ok_or_else(|| DataFusionError::Internal("in-process workers not started".into()))?;
        Ok(Box::new(EncodingChannel {
            worker,
            counts: Arc::clone(&self.counts),
            index: i,
        }))
    }
}

/// A channel to one in-process worker that serializes what a network would.
struct EncodingChannel {
    worker: Worker,
    counts: Arc<Vec<WorkerCounts>>,
    index: usize,
}

impl EncodingChannel {
    fn counts(&self) -> &WorkerCounts {
        &self.counts[self.index]
    }
}

/// A batch through Arrow IPC bytes and back; returns the decoded batch and the byte count.
fn ipc_round_trip(batch: &RecordBatch) -> Result<(RecordBatch, usize)> {
    let mut bytes = Vec::new();
    {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &batch.schema())?;
        w.write(batch)?;
        w.finish()?;
    }
    let n = bytes.len();
    let mut r = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None)?;
    let out = r
        .next()
        .transpose()?
        .ok_or_else(|| DataFusionError::Internal("empty IPC stream".into()))?;
    Ok((out, n))
}

#[async_trait]
impl WorkerChannel for EncodingChannel {
    async fn coordinator_channel(
        &mut self,
        headers: http::HeaderMap,
        mut set_plan_request: SetPlanRequest,
        c2w_stream: BoxStream<'static, CoordinatorToWorkerMsg>,
        _metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<WorkerToCoordinatorMsg>>> {
        let plan = std::mem::replace(
            &mut set_plan_request.plan,
            MaybeEncoded::Encoded(Vec::new()),
        );
        let bytes = plan.encode(task_ctx)?;
        self.counts().tasks.fetch_add(1, Ordering::Relaxed);
        self.counts()
            .plan_bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        set_plan_request.plan = MaybeEncoded::Encoded(bytes);
        self.worker
            .coordinator_channel(headers, set_plan_request, c2w_stream.map(Ok).boxed())
            .await
    }

    async fn execute_task(
        &mut self,
        _headers: http::HeaderMap,
        request: ExecuteTaskRequest,
        _metrics: ExecutionPlanMetricsSet,
        _task_ctx: &Arc<TaskContext>,
    ) -> Result<Vec<BoxStream<'static, Result<RecordBatch>>>> {
        let (streams, _) = self.worker.execute_task(request).await?;
        let counts = Arc::clone(&self.counts);
        let index = self.index;
        Ok(streams
            .into_iter()
            .map(|s| {
                let counts = Arc::clone(&counts);
                s.map(move |b| {
                    let (b, n) = ipc_round_trip(&b?)?;
                    counts[index].batches.fetch_add(1, Ordering::Relaxed);
                    counts[index]
                        .batch_bytes
                        .fetch_add(n as u64, Ordering::Relaxed);
                    Ok(b)
                })
                .boxed()
            })
            .collect())
    }

    async fn get_worker_info(
        &mut self,
        _request: GetWorkerInfoRequest,
    ) -> Result<GetWorkerInfoResponse> {
        Ok(GetWorkerInfoResponse {
            version: self.worker.version().to_string(),
        })
    }
}
