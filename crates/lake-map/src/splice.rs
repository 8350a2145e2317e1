//! The map file an update writes when most entries are kept (`docs/lake-map.md` §2.5): the
//! old file's record batches whose entries are all kept, in order and unchanged, are copied
//! as they are stored (compressed), and only the record batches holding a new, changed or
//! removed entry are encoded again. When rows were added or removed before a copied record
//! batch, its `first_global_row` buffer is the one buffer written anew (stored uncompressed,
//! which Arrow IPC body compression allows buffer by buffer), its metadata patched in place.
//!
//! The result is a plain Arrow IPC file with the old file's schema, dictionary and number of
//! record batches. `None` when the old map cannot be spliced (not loaded from a schema-3 file
//! with one dictionary, an `etag` column, a schema value the dictionary lacks, ...): the
//! caller then writes the whole map.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, BinaryArray, DictionaryArray, Int32Array, RecordBatch};
use arrow_ipc::Block;
use arrow_ipc::convert::fb_to_schema;
use arrow_ipc::reader::read_footer_length;
use arrow_ipc::writer::{
    DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions, write_message,
};
use arrow_schema::{DataType, Schema};

use crate::lake_map::{DAMAGED, EntryFrom, LakeMap, MapEntry, entries_to_batch};

/// A record batch message of the old file.
struct OldBatch {
    block: Block,
    /// Its entries in the old map.
    rows: Range<usize>,
}

/// One record batch of the new file.
enum Part {
    /// Old record batch `.0`, its entries at output positions starting at `.1`.
    Copied(usize, usize),
    /// The entries at these output positions, encoded again.
    Encoded(Range<usize>),
}

/// The bytes of the map file holding, in order, the entries `from` names (entries of `old`
/// or of `fresh`), or `None` when `old` cannot be spliced.
pub(crate) fn spliced(
    old: &LakeMap,
    from: &[EntryFrom],
    fresh: &[MapEntry],
    options: &IpcWriteOptions,
) -> Option<Vec<u8>> {
    let bytes = old.mapped_bytes()?;
    if old.map_schema() != 3 || from.is_empty() || old.is_empty() {
        return None;
    }
    let n = bytes.len();
    let (footer, schema, footer_bytes) = footer_of(bytes)?;
    if schema.fields().len() != 10 {
        return None;
    }
    let dicts: Vec<Block> = footer
        .dictionaries()
        .map(|v| v.iter().copied().collect())
        .unwrap_or_default();
    let list = footer.recordBatches()?;
    if dicts.len() > 1 || list.is_empty() {
        return None;
    }
    // The old record batches and the entries each holds.
    let mut batches = Vec::with_capacity(list.len());
    let mut at = 0usize;
    for block in list.iter() {
        let rows = message(bytes, block)?.1;
        batches.push(OldBatch {
            block: *block,
            rows: at..at + rows,
        });
        at += rows;
    }
    if at != old.total_files() {
        return None;
    }
    let parts = layout(old, from, &batches)?;

    // First rows of the output, as every writer numbers them.
    let mut firsts = Vec::with_capacity(from.len());
    let mut next = 0i64;
    for f in from {
        firsts.push(next);
        let rows = match *f {
            EntryFrom::Old { index, .. } => old.head(index).row_count,
            EntryFrom::New(j) => fresh.get(j)?.row_count,
        };
        next = next.checked_add(i64::try_from(rows).ok()?)?;
    }
    let firsts_buffer = buffer_index(&schema, "first_global_row")? + 1;
    let dictionary = dictionary_of(old, &schema)?;

    // The magic and the schema message, then the dictionary, the record batches, the footer.
    let start = dicts
        .iter()
        .chain(batches.iter().map(|b| &b.block))
        .map(|b| usize::try_from(b.offset()).ok())
        .min()
        .flatten()?;
    let mut out = Vec::with_capacity(n + n / 8);
    out.extend_from_slice(bytes.get(..start)?);
    let mut new_dicts = Vec::with_capacity(dicts.len());
    for d in &dicts {
        let offset = out.len();
        out.extend_from_slice(block_bytes(bytes, d)?);
        new_dicts.push(Block::new(
            offset as i64,
            d.metaDataLength(),
            d.bodyLength(),
        ));
    }
    let mut new_batches = Vec::with_capacity(batches.len());
    for part in &parts {
        let offset = out.len();
        let block = match part {
            Part::Copied(c, p) => {
                let b = &batches[*c];
                let old_firsts = b.rows.clone().map(|i| old.head(i).first_global_row as i64);
                let new_firsts = &firsts[*p..*p + b.rows.len()];
                if old_firsts.eq(new_firsts.iter().copied()) {
                    out.extend_from_slice(block_bytes(bytes, &b.block)?);
                    b.block
                } else {
                    let (meta, body) =
                        with_buffer(bytes, &b.block, firsts_buffer, &le_bytes(new_firsts))?;
                    out.extend_from_slice(&meta);
                    out.extend_from_slice(&body);
                    Block::new(0, i32::try_from(meta.len()).ok()?, body.len() as i64)
                }
            }
            Part::Encoded(range) => {
                let entries: Vec<MapEntry> = range
                    .clone()
                    .map(|p| {
                        let mut e = match from[p] {
                            EntryFrom::Old { index, mtime_ms } => {
                                let mut e = old.entry(index).to_owned_entry();
                                e.mtime_ms = mtime_ms;
                                // A value that cannot be read is not written again: the
                                // whole map is then rebuilt, which names it.
                                let damaged = [Some(&e.row_groups_json), e.stats_json.as_ref()]
                                    .into_iter()
                                    .chain([e.schema_json.as_ref()])
                                    .any(|v| v.is_some_and(|v| v == DAMAGED));
                                if damaged {
                                    return None;
                                }
                                Some(e)
                            }
                            EntryFrom::New(j) => Some(fresh.get(j)?.clone()),
                        }?;
                        e.first_global_row = firsts[p] as u64;
                        Some(e)
                    })
                    .collect::<Option<_>>()?;
                let batch = stored_batch(&entries, old, &schema, dictionary.as_ref())?;
                // The tracker numbers the dictionaries as it meets them in the schema; the
                // dictionary it encodes is the old file's, copied above, and left out.
                let generator = IpcDataGenerator::default();
                let mut tracker = DictionaryTracker::new(false);
                generator.schema_to_bytes_with_dictionary_tracker(&schema, &mut tracker, options);
                let (_, encoded) = generator
                    .encode(
                        &batch,
                        &mut tracker,
                        options,
                        &mut IpcWriteContext::default(),
                    )
                    .ok()?;
                let (meta, body) = write_message(&mut out, encoded, options).ok()?;
                let written = Block::new(offset as i64, i32::try_from(meta).ok()?, body as i64);
                // `first_global_row` stored as it is, as the writer stores it.
                let (meta, body) = with_buffer(
                    &out,
                    &written,
                    firsts_buffer,
                    &le_bytes(&firsts[range.clone()]),
                )?;
                out.truncate(offset);
                out.extend_from_slice(&meta);
                out.extend_from_slice(&body);
                Block::new(0, i32::try_from(meta.len()).ok()?, body.len() as i64)
            }
        };
        new_batches.push(Block::new(
            offset as i64,
            block.metaDataLength(),
            block.bodyLength(),
        ));
    }
    // The old footer with the new blocks written over the old ones: the schema and the
    // number of blocks are the same, so nothing else in it moves.
    let mut new_footer = footer_bytes.to_vec();
    let mut patch = |vector: &[u8], blocks: &[Block]| -> Option<()> {
        let pos = (vector.as_ptr() as usize).checked_sub(footer_bytes.as_ptr() as usize)?;
        for (k, b) in blocks.iter().enumerate() {
            new_footer
                .get_mut(pos + 24 * k..pos + 24 * (k + 1))?
                .copy_from_slice(&b.0);
        }
        Some(())
    };
    if let Some(v) = footer.dictionaries() {
        patch(v.bytes(), &new_dicts)?;
    }
    patch(list.bytes(), &new_batches)?;
    out.extend_from_slice(&new_footer);
    out.extend_from_slice(&bytes[n - 10..]);
    Some(out)
}

/// A map file as the writer stores it (`docs/lake-map.md` §2): `bytes`, an Arrow IPC file
/// of map schema 3 whose entries' first global rows are `firsts`, with every record batch's
/// `first_global_row` buffer stored uncompressed (length prefix -1), so that a load reads it
/// in place instead of decompressing it. `None` when `bytes` is not laid out so (its
/// record batches' row counts do not add up to `firsts`, say): it is then stored as it is.
pub(crate) fn with_plain_firsts(bytes: &[u8], firsts: &[i64]) -> Option<Vec<u8>> {
    let n = bytes.len();
    let (footer, schema, footer_bytes) = footer_of(bytes)?;
    let k = buffer_index(&schema, "first_global_row")? + 1;
    let list = footer.recordBatches()?;
    // Everything before the first record batch (magic, schema, dictionary) stays in place.
    let start = list
        .iter()
        .map(|b| usize::try_from(b.offset()).ok())
        .min()
        .flatten()?;
    let mut out = Vec::with_capacity(n + firsts.len() * 8);
    out.extend_from_slice(bytes.get(..start)?);
    let mut blocks = Vec::with_capacity(list.len());
    let mut at = 0usize;
    for block in list.iter() {
        if usize::try_from(block.offset()).ok()? < start {
            return None;
        }
        let rows = message(bytes, block)?.1;
        let values = firsts.get(at..at.checked_add(rows)?)?;
        at += rows;
        let offset = out.len();
        if rows == 0 {
            out.extend_from_slice(block_bytes(bytes, block)?);
            blocks.push(Block::new(
                offset as i64,
                block.metaDataLength(),
                block.bodyLength(),
            ));
            continue;
        }
        let (meta, body) = with_buffer(bytes, block, k, &le_bytes(values))?;
        out.extend_from_slice(&meta);
        out.extend_from_slice(&body);
        blocks.push(Block::new(
            offset as i64,
            i32::try_from(meta.len()).ok()?,
            body.len() as i64,
        ));
    }
    if at != firsts.len() {
        return None;
    }
    let mut new_footer = footer_bytes.to_vec();
    let pos = (list.bytes().as_ptr() as usize).checked_sub(footer_bytes.as_ptr() as usize)?;
    for (i, b) in blocks.iter().enumerate() {
        new_footer
            .get_mut(pos + 24 * i..pos + 24 * (i + 1))?
            .copy_from_slice(&b.0);
    }
    out.extend_from_slice(&new_footer);
    out.extend_from_slice(&bytes[n - 10..]);
    Some(out)
}

/// The new file's record batches, as many as the old file's: each old record batch whose
/// entries the output holds in order, unchanged and side by side, is copied; the output
/// entries between two copied record batches are encoded again into as many record batches
/// as the old ones between them.
fn layout(old: &LakeMap, from: &[EntryFrom], batches: &[OldBatch]) -> Option<Vec<Part>> {
    let mut position: Vec<Option<usize>> = vec![None; old.total_files()];
    for (p, f) in from.iter().enumerate() {
        if let EntryFrom::Old { index, mtime_ms } = *f
            && mtime_ms == old.head(index).mtime_ms
        {
            *position.get_mut(index)? = Some(p);
        }
    }
    // Where each copyable old record batch starts in the output.
    let mut copied: Vec<Option<usize>> = batches
        .iter()
        .map(|b| {
            if b.rows.is_empty() {
                return None;
            }
            let p = (*position.get(b.rows.start)?)?;
            b.rows
                .clone()
                .all(|i| position[i] == Some(p + (i - b.rows.start)))
                .then_some(p)
        })
        .collect();
    loop {
        let mut parts = Vec::with_capacity(batches.len());
        // The output position after the last copied batch, and the old batches since.
        let mut at = 0usize;
        let mut pending = 0usize;
        let mut demote = None;
        for (c, b) in batches.iter().enumerate() {
            let Some(p) = copied[c] else {
                pending += 1;
                continue;
            };
            if p < at {
                return None;
            }
            if pending == 0 && p > at {
                // Entries to encode, but no old record batch to stand in for.
                demote = Some(c);
                break;
            }
            split(at..p, pending, &mut parts);
            parts.push(Part::Copied(c, p));
            at = p + b.rows.len();
            pending = 0;
        }
        if demote.is_none() {
            if pending == 0 && at < from.len() {
                demote = copied.iter().rposition(Option::is_some);
            } else {
                split(at..from.len(), pending, &mut parts);
                return Some(parts);
            }
        }
        *copied.get_mut(demote?)? = None;
    }
}

/// Output positions `range` as `k` record batches of near-equal size.
fn split(range: Range<usize>, k: usize, parts: &mut Vec<Part>) {
    let len = range.len();
    for i in 0..k {
        let a = range.start + i * len / k;
        let b = range.start + (i + 1) * len / k;
        parts.push(Part::Encoded(a..b));
    }
}

/// A block's bytes (metadata and body) in the file.
fn block_bytes<'a>(bytes: &'a [u8], block: &Block) -> Option<&'a [u8]> {
    let offset = usize::try_from(block.offset()).ok()?;
    let meta = usize::try_from(block.metaDataLength()).ok()?;
    let body = usize::try_from(block.bodyLength()).ok()?;
    bytes.get(offset..offset.checked_add(meta)?.checked_add(body)?)
}

/// Where a block's message flatbuffer starts (after the continuation marker and length),
/// and its row count when it is a record batch.
fn message(bytes: &[u8], block: &Block) -> Option<(usize, usize)> {
    let all = block_bytes(bytes, block)?;
    let meta = usize::try_from(block.metaDataLength()).ok()?;
    let start = if all.get(..4)? == [0xff; 4] { 8 } else { 4 };
    let message = arrow_ipc::root_as_message(all.get(start..meta)?).ok()?;
    let rows = message.header_as_record_batch()?.length();
    Some((start, usize::try_from(rows).ok()?))
}

/// The index of the first buffer of column `name` in a record batch body (flat columns:
/// three buffers for text, two for integers and dictionary keys).
fn buffer_index(schema: &Schema, name: &str) -> Option<usize> {
    let at = schema.index_of(name).ok()?;
    let mut k = 0;
    for f in &schema.fields()[..at] {
        k += match f.data_type() {
            DataType::Utf8 | DataType::Binary => 3,
            DataType::Int64 | DataType::Dictionary(_, _) => 2,
            _ => return None,
        };
    }
    Some(k)
}

fn le_bytes(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The record batch message of `block` with buffer `k` holding `data` (stored uncompressed):
/// its metadata (the buffer list and the body length patched in place) and its body.
fn with_buffer(bytes: &[u8], block: &Block, k: usize, data: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let all = block_bytes(bytes, block)?;
    let meta_len = usize::try_from(block.metaDataLength()).ok()?;
    let (start, _) = message(bytes, block)?;
    let fb = all.get(start..meta_len)?;
    let message = arrow_ipc::root_as_message(fb).ok()?;
    let batch = message.header_as_record_batch()?;
    let buffers = batch.buffers()?;
    let spans: Vec<(usize, usize)> = buffers
        .iter()
        .map(|b| {
            Some((
                usize::try_from(b.offset()).ok()?,
                usize::try_from(b.length()).ok()?,
            ))
        })
        .collect::<Option<_>>()?;
    let body = all.get(meta_len..)?;
    let (offset, _) = *spans.get(k)?;
    let end = spans.get(k + 1).map_or(body.len(), |s| s.0);
    if end < offset || end > body.len() || offset % 8 != 0 {
        return None;
    }
    // A compressed body's buffers each start with their uncompressed length, -1 when the
    // buffer is stored as it is.
    let mut new = Vec::with_capacity(data.len() + 16);
    if batch.compression().is_some() {
        new.extend_from_slice(&(-1i64).to_le_bytes());
    }
    new.extend_from_slice(data);
    let len = new.len();
    new.resize(len.div_ceil(8) * 8, 0);
    let shift = new.len() as i64 - (end - offset) as i64;
    let mut new_body = Vec::with_capacity(body.len() + new.len());
    new_body.extend_from_slice(&body[..offset]);
    new_body.extend_from_slice(&new);
    new_body.extend_from_slice(&body[end..]);

    let mut meta = all[..meta_len].to_vec();
    let list = (buffers.bytes().as_ptr() as usize).checked_sub(fb.as_ptr() as usize)? + start;
    for (i, &(o, l)) in spans.iter().enumerate() {
        let (o, l) = match i.cmp(&k) {
            std::cmp::Ordering::Less => (o as i64, l as i64),
            std::cmp::Ordering::Equal => (o as i64, len as i64),
            std::cmp::Ordering::Greater => (o as i64 + shift, l as i64),
        };
        let at = list + 16 * i;
        meta.get_mut(at..at + 8)?.copy_from_slice(&o.to_le_bytes());
        meta.get_mut(at + 8..at + 16)?
            .copy_from_slice(&l.to_le_bytes());
    }
    // Message.bodyLength, a scalar of the message table.
    let field = message._tab.vtable().get(arrow_ipc::Message::VT_BODYLENGTH);
    if field == 0 || message.bodyLength() != body.len() as i64 {
        return None;
    }
    let at = start + message._tab.loc() + usize::from(field);
    meta.get_mut(at..at + 8)?
        .copy_from_slice(&(new_body.len() as i64).to_le_bytes());
    Some((meta, new_body))
}

/// The old file's `schema_json` dictionary: its values, and the key of each.
struct Dictionary {
    values: ArrayRef,
    keys: HashMap<Vec<u8>, i32>,
}

/// The dictionary of the old file's `schema_json` when the file stores it so (`None` inside
/// when it is plain text); `None` when another column is a dictionary.
fn dictionary_of(old: &LakeMap, schema: &Schema) -> Option<Option<Dictionary>> {
    let mut found = None;
    for f in schema.fields() {
        match (f.name().as_str(), f.data_type()) {
            ("schema_json", DataType::Dictionary(k, v))
                if k.as_ref() == &DataType::Int32 && v.as_ref() == &DataType::Utf8 =>
            {
                let values: BinaryArray = old.schema_dictionary()?;
                let keys = (0..values.len())
                    .filter(|&i| !values.is_null(i))
                    .map(|i| Some((values.value(i).to_vec(), i32::try_from(i).ok()?)))
                    .collect::<Option<HashMap<_, _>>>()?;
                let values: ArrayRef =
                    Arc::new(arrow_array::StringArray::try_from_binary(values).ok()?);
                found = Some(Dictionary { values, keys });
            }
            (_, DataType::Dictionary(_, _)) => return None,
            _ => {}
        }
    }
    Some(found)
}

/// `entries` as a record batch of the old file's schema (`schema_json` keyed into the old
/// dictionary; `None` when a value is not in it).
fn stored_batch(
    entries: &[MapEntry],
    old: &LakeMap,
    schema: &Schema,
    dictionary: Option<&Dictionary>,
) -> Option<RecordBatch> {
    let plain = entries_to_batch(entries, old.config()).ok()?;
    let mut columns = plain.columns().to_vec();
    if let (Some(d), Ok(i)) = (dictionary, schema.index_of("schema_json")) {
        let text = plain
            .column(i)
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()?;
        let keys: Int32Array = text
            .iter()
            .map(|v| match v {
                None => Some(None),
                Some(v) => d.keys.get(v.as_bytes()).map(|&k| Some(k)),
            })
            .collect::<Option<_>>()?;
        let array = DictionaryArray::<Int32Type>::try_new(keys, Arc::clone(&d.values)).ok()?;
        columns[i] = Arc::new(array);
    }
    RecordBatch::try_new(Arc::new(schema.clone()), columns).ok()
}

/// The footer of the Arrow IPC file `bytes`, the schema it states and its bytes.
fn footer_of(bytes: &[u8]) -> Option<(arrow_ipc::Footer<'_>, arrow_schema::Schema, &[u8])> {
    let n = bytes.len();
    let mut tail = [0u8; 10];
    tail.copy_from_slice(bytes.get(n.checked_sub(10)?..)?);
    let footer_len = read_footer_length(tail).ok()?;
    let footer_start = n.checked_sub(10 + footer_len)?;
    let footer_bytes = bytes.get(footer_start..n - 10)?;
    let footer = arrow_ipc::root_as_footer(footer_bytes).ok()?;
    let schema = fb_to_schema(footer.schema()?);
    Some((footer, schema, footer_bytes))
}
