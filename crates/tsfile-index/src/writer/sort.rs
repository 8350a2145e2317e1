//! Writing rows that arrive in any order (`bazan tsfile import`): the batches are
//! concatenated, ordered by device and time, checked for duplicate timestamps within a
//! device, and written as one sorted stream.

use arrow_array::{RecordBatch, UInt32Array};
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;

use super::arrow as conv;
use super::error::{WriteError, WriteResult};
use super::file::TsFileWriter;

/// Rows written per call of [`TsFileWriter::write_table`] while importing, so that the
/// chunk-group memory threshold is checked regularly.
const SLICE_ROWS: usize = 1 << 20;

impl TsFileWriter {
    /// Writes rows of table `table` given in any order: they are ordered by device (TAG
    /// values) and time first. Two rows of one device with the same time are an error naming
    /// the device and the time, and nothing is written then.
    pub fn write_table_unsorted(
        &mut self,
        table: &str,
        time_column: &str,
        batches: &[RecordBatch],
    ) -> WriteResult<()> {
        let Some(first) = batches.first() else {
            return Ok(());
        };
        let batch = concat_batches(&first.schema(), batches)
            .map_err(|e| WriteError::schema(format!("input batches disagree: {e}")))?;
        let times = super::file::time_values(&batch, time_column)?;
        let tag_names = self.tag_names(table)?;
        let tags: Vec<conv::TagColumn<'_>> = tag_names
            .iter()
            .map(|n| conv::TagColumn::new(batch.column_by_name(n).map(|a| a.as_ref())))
            .collect();
        let key = |row: usize| -> Vec<Option<&str>> { tags.iter().map(|a| a.get(row)).collect() };
        let keys: Vec<Vec<Option<&str>>> = (0..batch.num_rows()).map(key).collect();
        let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            keys[a].cmp(&keys[b]).then(times[a].cmp(&times[b]))
        });
        for w in order.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if keys[a] == keys[b] && times[a] == times[b] {
                let mut device = vec![table.to_string()];
                device.extend(
                    keys[a]
                        .iter()
                        .map(|s| s.map_or_else(|| "null".to_string(), str::to_string)),
                );
                return Err(WriteError::TimeOrder {
                    kind: "duplicate",
                    device: device.join("."),
                    series: String::new(),
                    time: times[a],
                    previous: times[a],
                });
            }
        }
        let indices = UInt32Array::from(order);
        let sorted = take_record_batch(&batch, &indices)
            .map_err(|e| WriteError::schema(format!("cannot reorder the rows: {e}")))?;
        let mut start = 0;
        while start < sorted.num_rows() {
            let len = SLICE_ROWS.min(sorted.num_rows() - start);
            self.write_table(table, time_column, &sorted.slice(start, len))?;
            start += len;
        }
        Ok(())
    }
}
