//! What the two scans ([`crate::LakeScanExec`], [`crate::TsFileScanExec`]) share as
//! DataFusion leaf plans: their plan properties, the trait methods of a plan without
//! children, and the stream of batches read on a blocking thread of their own.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::PlanProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;

/// Batches a blocking reader may be ahead of the consumer of its stream.
const AHEAD: usize = 2;

/// The properties of a bounded leaf scan of `partitions` partitions (at least one) that
/// emits batches as it reads them.
pub(crate) fn leaf_properties(schema: SchemaRef, partitions: usize) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(schema),
        Partitioning::UnknownPartitioning(partitions.max(1)),
        EmissionType::Incremental,
        Boundedness::Bounded,
    ))
}

/// A stream of the batches `read` produces on a blocking thread: `read` hands each batch to
/// its argument, which returns false once the stream is dropped (then `read` should stop).
/// An error `read` returns ends the stream after the batches before it.
pub(crate) fn read_on_blocking_thread(
    schema: SchemaRef,
    read: impl FnOnce(&mut dyn FnMut(RecordBatch) -> bool) -> Result<()> + Send + 'static,
) -> SendableRecordBatchStream {
    let mut builder = RecordBatchReceiverStreamBuilder::new(schema, AHEAD);
    let tx = builder.tx();
    builder.spawn_blocking(move || read(&mut |batch| tx.blocking_send(Ok(batch)).is_ok()));
    builder.build()
}

/// The methods of `ExecutionPlan` that every leaf scan implements alike: its name, its
/// properties (field `props`), no children and no expressions.
macro_rules! leaf_plan_methods {
    ($name:literal) => {
        fn name(&self) -> &str {
            $name
        }

        fn properties(&self) -> &std::sync::Arc<datafusion::physical_plan::PlanProperties> {
            &self.props
        }

        fn children(&self) -> Vec<&std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
            Vec::new()
        }

        fn apply_expressions(
            &self,
            _f: &mut dyn FnMut(
                &std::sync::Arc<dyn datafusion::physical_expr::PhysicalExpr>,
            ) -> datafusion::common::Result<
                datafusion::common::tree_node::TreeNodeRecursion,
            >,
        ) -> datafusion::common::Result<datafusion::common::tree_node::TreeNodeRecursion> {
            Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
        }

        fn with_new_children(
            self: std::sync::Arc<Self>,
            _children: Vec<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>>,
        ) -> datafusion::common::Result<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>>
        {
            Ok(self)
        }
    };
}

pub(crate) use leaf_plan_methods;
