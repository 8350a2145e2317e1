//! The text layer: the scanning and inference core shared by the row formats. File bytes and
//! line scanning ([`scan`]), skipping delimited records ([`skip`]), number classification and keys ([`numbers`]), column type
//! inference and statistics ([`infer`]), runs of records of one shape read from window masks
//! ([`rowshape`]) and the checkpoint reads ([`rowread`]). It uses the masks of [`crate::simd`]
//! and knows no format beyond the text grammar it scans.

pub(crate) mod blocks;
pub(crate) mod bounds;
pub(crate) mod encoding;
pub(crate) mod infer;
pub(crate) mod keys;
pub(crate) mod numbers;
pub(crate) mod rowread;
pub(crate) mod rowshape;
pub(crate) mod scan;
pub(crate) mod skip;
pub(crate) mod split;
