//! `[output]`: what a run writes besides the results contract's files. The core does not
//! read it; the Python layer does (`flent = true`: a Flent data file, docs/flent.md).

use super::error::Result;
use super::table::Table;
use serde_json::Value;

/// `[output] flent = false`: validated and normalised (every default filled in).
pub(super) fn parse_output(v: &Value) -> Result<Value> {
    let mut t = Table::new("output", v)?;
    t.boolean("flent", false)?;
    Ok(Value::Object(t.finish()?))
}
