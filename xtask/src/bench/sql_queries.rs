//! The queries of `cargo xtask bench sql` on our side, shared with `bench sql --workers`: the
//! five figures' queries, made from two facts the map answers.

/// The bench's queries on our side, with the names it prints.
pub struct OurQueries {
    /// `(name, query)` of each figure.
    pub queries: Vec<(&'static str, String)>,
    /// The `id` range of the selective filter.
    pub id_range: (i64, i64),
}

/// The queries whose first cells [`queries_from`] takes: the first `_gid` of `p08.csv` and
/// the least `id` of `p04.csv`.
pub const FACTS: [&str; 2] = [
    "select min(_gid) from lake where _path = 'p08.csv'",
    "select min(id), max(id) from lake where _path = 'p04.csv'",
];

/// The five queries, from the answers to [`FACTS`].
pub fn queries_from(first_p08: i64, id_lo: i64) -> OurQueries {
    let g = first_p08 + 2_900_000;
    let (a, b) = (id_lo + 1_000_000, id_lo + 1_009_999);
    let not_arrow = "_path not like '%.arrow'";
    let queries = vec![
        (
            "count(*) of the lake (CSV+NDJSON+Parquet)",
            format!("select count(*) from lake where {not_arrow}"),
        ),
        (
            "100 rows by _gid deep in a 3M-row CSV",
            format!("select * from lake where _gid between {g} and {}", g + 99),
        ),
        (
            "selective filter on sorted id (10,000 rows)",
            format!(
                "select count(*), sum(v) from lake where id between {a} and {b} and {not_arrow}"
            ),
        ),
        (
            "group by code over the Parquet files",
            "select code, count(*), sum(v), avg(x) from lake where _path like '%.parquet' group by code"
                .to_string(),
        ),
        (
            "group by code over the CSV+NDJSON files",
            "select code, count(*), sum(v), avg(x) from lake where _path like '%.csv' or _path like '%.ndjson' group by code"
                .to_string(),
        ),
    ];
    OurQueries {
        queries,
        id_range: (a, b),
    }
}
