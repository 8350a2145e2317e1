//! `cargo xtask fixtures`: regenerates everything in `testdata/` deterministically. Each
//! generator registers itself in [`generators`] and writes below the folder it is given.

pub mod lake;
pub mod tsfile;
pub mod tsfile_official;
pub mod writers;

use std::path::Path;

/// A registered fixture generator.
pub struct Generator {
    /// Its name (also the sub-folder of `testdata/` it owns).
    pub name: &'static str,
    /// Writes the fixtures into `testdata/<name>`.
    pub run: fn(&Path) -> anyhow::Result<()>,
}

/// Every registered generator.
pub fn generators() -> Vec<Generator> {
    vec![
        Generator {
            name: "lake",
            run: lake::generate,
        },
        Generator {
            name: "tsfile",
            run: tsfile::generate,
        },
        Generator {
            name: "tsfile-official",
            run: tsfile_official::generate,
        },
        Generator {
            name: "writers",
            run: writers::generate,
        },
    ]
}

/// `cargo xtask fixtures [NAME…]`.
pub fn main(names: &[String]) -> anyhow::Result<u8> {
    let testdata = crate::workspace_root().join("testdata");
    let all = generators();
    if all.is_empty() {
        println!("no fixture generator is registered yet");
        return Ok(0);
    }
    for generator in all {
        if !names.is_empty() && !names.iter().any(|n| n == generator.name) {
            continue;
        }
        let dir = testdata.join(generator.name);
        println!("fixtures: writing {}", dir.display());
        (generator.run)(&dir)?;
    }
    Ok(0)
}
