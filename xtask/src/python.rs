//! The python surface of the generated operations (see CONTRIBUTING.md): files
//! made from the declarations. (To be written.)

use crate::declaration::Declarations;

/// Every file this generator writes: (path from the repository's root, contents).
pub fn files(_declarations: &Declarations) -> Result<Vec<(&'static str, String)>, String> {
    Ok(Vec::new())
}
