//! `BazanCodec`: a datafusion-proto [`PhysicalExtensionCodec`] for [`LakeScanExec`] and
//! [`TsFileScanExec`], so that plans holding them serialize to bytes and run elsewhere (a
//! datafusion-distributed worker, a Ballista executor) that sees the same files at the same
//! paths (a shared filesystem).
//!
//! A lake scan travels as the lake's root, its columns and its parts (file index and local
//! row range), plus each read file's path, size and mtime from the coordinator's map: the
//! decoding side loads the map at that root (once per codec) and refuses a map whose entries
//! differ, so a worker never reads other rows than the coordinator planned. A TsFile scan
//! travels as its path, table, columns, time range and tag filters.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use serde::{Deserialize, Serialize};

use crate::exec::LakeScanExec;
use crate::parts::Part;
use crate::table::LakeTable;
use crate::tsfile::{TsFileScanExec, TsFileTable};

/// The codec of both scans; see the module documentation. Loaded lakes are cached by root.
#[derive(Debug, Default)]
pub struct BazanCodec {
    tables: Mutex<HashMap<PathBuf, Arc<LakeTable>>>,
}

impl BazanCodec {
    /// A codec with an empty cache.
    pub fn new() -> Self {
        BazanCodec::default()
    }

    fn table(&self, root: &PathBuf) -> Result<Arc<LakeTable>> {
        let mut cache = self
            .tables
            .lock()
            .map_err(|_| DataFusionError::Internal("BazanCodec cache poisoned".into()))?;
        if let Some(t) = cache.get(root) {
            return Ok(Arc::clone(t));
        }
        let t = Arc::new(LakeTable::open(root)?);
        cache.insert(root.clone(), Arc::clone(&t));
        Ok(t)
    }
}

/// What a serialized scan holds.
#[derive(Debug, Serialize, Deserialize)]
enum Node {
    Lake(LakeNode),
    TsFile(TsFileNode),
}

#[derive(Debug, Serialize, Deserialize)]
struct LakeNode {
    root: PathBuf,
    columns: Vec<String>,
    /// The parts of each partition.
    partitions: Vec<Vec<Part>>,
    /// `(file, path, size, mtime_ms)` of every file the parts read, as the coordinator's
    /// map has them.
    files: Vec<(usize, String, u64, i64)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct TsFileNode {
    path: PathBuf,
    table: String,
    columns: Vec<String>,
    start: i64,
    end: i64,
    tags: Vec<(String, String)>,
}

fn codec_err(m: impl Into<String>) -> DataFusionError {
    DataFusionError::Internal(format!("BazanCodec: {}", m.into()))
}

impl PhysicalExtensionCodec for BazanCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return Err(codec_err("a scan has no inputs"));
        }
        let node: Node =
            serde_json::from_slice(buf).map_err(|e| codec_err(format!("bad scan node: {e}")))?;
        match node {
            Node::Lake(n) => {
                let table = self.table(&n.root)?;
                let map = table.lake().map();
                for (i, path, size, mtime) in &n.files {
                    if *i >= map.total_files() {
                        return Err(codec_err(format!(
                            "the map at {} has no entry {i} ({path}): it differs from the planner's",
                            n.root.display()
                        )));
                    }
                    let e = map.entry(*i);
                    if e.path != path || e.size_bytes != *size || e.mtime_ms != *mtime {
                        return Err(codec_err(format!(
                            "the map at {} differs from the planner's for {path}",
                            n.root.display()
                        )));
                    }
                }
                let exec = table.exec(&n.columns, n.partitions)?;
                Ok(Arc::new(exec))
            }
            Node::TsFile(n) => {
                let table = TsFileTable::open(&n.path, &n.table)?;
                let exec = TsFileScanExec::new(
                    n.path,
                    n.table,
                    &datafusion::catalog::TableProvider::schema(&table),
                    n.columns,
                    bazan::tsfile::TimeRange {
                        start: n.start,
                        end: n.end,
                    },
                    n.tags,
                )?;
                Ok(Arc::new(exec))
            }
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let encoded = if let Some(scan) = node.downcast_ref::<LakeScanExec>() {
            let partitions = scan.partitions().to_vec();
            let map = scan.lake().map();
            let mut files: Vec<usize> = partitions.iter().flatten().map(|p| p.file).collect();
            files.sort_unstable();
            files.dedup();
            Node::Lake(LakeNode {
                root: scan.lake().root().to_path_buf(),
                columns: scan.columns().to_vec(),
                partitions,
                files: files
                    .into_iter()
                    .map(|i| {
                        let e = map.entry(i);
                        (i, e.path.to_string(), e.size_bytes, e.mtime_ms)
                    })
                    .collect(),
            })
        } else if let Some(scan) = node.downcast_ref::<TsFileScanExec>() {
            let (start, end) = scan.time_range();
            Node::TsFile(TsFileNode {
                path: scan.path().to_path_buf(),
                table: scan.table().to_string(),
                columns: scan.columns().to_vec(),
                start,
                end,
                tags: scan.tags().to_vec(),
            })
        } else {
            return Err(codec_err(format!("cannot encode {}", node.name())));
        };
        serde_json::to_writer(buf, &encoded).map_err(|e| codec_err(e.to_string()))
    }
}
