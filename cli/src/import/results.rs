//! The import's result file: one line per row, in the input's order, written atomically (a
//! temporary file fsynced, renamed over the old one, the folder fsynced), each cell safe in a
//! spreadsheet. No access token in it.

use std::path::Path;

use super::create::Outcome;
use super::rows::Row;
use crate::error::CliError;
use crate::safe_text::csv_cell;

/// The columns of the result file.
const COLUMNS: [&str; 6] = [
    "line",
    "uniqueUserIdentifier",
    "username",
    "result",
    "userId",
    "reason",
];

/// Writes the result file at `path`; `raw`: `--raw-csv-cells` (cells as they are, formulas
/// included).
pub fn write(path: &Path, rows: &[Row], outcomes: &[Outcome], raw: bool) -> Result<(), CliError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let csv_error = |e: csv::Error| CliError::Usage(format!("{}: {e}", path.display()));
    writer.write_record(COLUMNS).map_err(csv_error)?;
    for (row, outcome) in rows.iter().zip(outcomes) {
        let (user_id, reason) = match outcome {
            Outcome::Created { user_id, note } | Outcome::AlreadyThere { user_id, note } => {
                (user_id.as_str(), note.as_str())
            }
            Outcome::Failed { reason, .. } | Outcome::NotAttempted { reason } => {
                ("", reason.as_str())
            }
        };
        let line = row.line.to_string();
        let (uid, username) = (row.text("uniqueUserIdentifier"), row.text("username"));
        let cells = [
            line.as_str(),
            &uid,
            &username,
            outcome.name(),
            user_id,
            reason,
        ];
        writer
            .write_record(
                cells
                    .map(|cell| csv_cell(cell, raw))
                    .iter()
                    .map(|c| c.as_bytes()),
            )
            .map_err(csv_error)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    crate::export::write_atomically(path, &bytes)
}
